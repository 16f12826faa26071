package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// sweep16Run is n bytes of alphabet a drawn by a generator seeded with
// seed: the same value at every run, one that reads as random.
func sweep16Run(a string, n, seed int) string {
	r := rand.New(rand.NewPCG(uint64(seed), 16))
	b := make([]byte, n)
	for k := range b {
		b[k] = a[r.IntN(len(a))]
	}
	return string(b)
}

const (
	s16Hex   = "0123456789abcdef"
	s16Alnum = "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYz"
	s16Lower = "a3d5f7h9k1m2p4r6t8v0xz"
	s16Word  = "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYz-_"
	s16Upper = "AB3DE5FG7HJ9KL1MN2PQ4RS6TU8VW0XYZ"
)

// TestSweep16AgentTools: the tokens of the tools AI agents call (search,
// scraping, sandboxes, inference, CI), by their vendors' formats: the
// hex-only ones were printed, the rest masked as high_entropy with no
// finding. Each is a vendor_token now, plain, in JSON text, as an env
// line and URL-encoded; its near-misses (names, flags, identifiers that
// start with the same short prefix) are not masked at all.
func TestSweep16AgentTools(t *testing.T) {
	re := "re_" + sweep16Run(s16Alnum, 8, 1) + "_" + sweep16Run(s16Alnum, 24, 2)
	toks := []string{
		"fc-" + sweep16Run(s16Hex, 32, 3),         // Firecrawl
		"e2b_" + sweep16Run(s16Hex, 40, 4),        // E2B
		"bkua_" + sweep16Run(s16Hex, 40, 5),       // Buildkite
		"tvly-" + sweep16Run(s16Alnum, 32, 6),     // Tavily
		"tvly-dev-" + sweep16Run(s16Alnum, 32, 7), // Tavily
		"jina_" + sweep16Run(s16Alnum, 60, 8),     // Jina
		"nvapi-" + sweep16Run(s16Word, 64, 9),     // NVIDIA
		"csk-" + sweep16Run(s16Lower, 48, 10),     // Cerebras
		"llx-" + sweep16Run(s16Alnum, 48, 11),     // LlamaCloud
		"fo1_" + sweep16Run(s16Word, 43, 12),      // Fly.io
		"phx_" + sweep16Run(s16Alnum, 47, 13),     // PostHog
		"rpa_" + sweep16Run(s16Upper, 44, 14),     // RunPod
		"tgp_v1_" + sweep16Run(s16Word, 43, 15),   // Together AI
		"fw_" + sweep16Run(s16Alnum, 24, 16),      // Fireworks
		re,                                        // Resend
		"bb_live_" + sweep16Run(s16Word, 27, 17),  // Browserbase
	}
	var forms []sweep7Form
	for _, tok := range toks {
		forms = append(forms,
			sweep7Form{tok, tok, false},
			sweep7Form{"export TOOL_CONFIG=" + tok, tok, false},
			sweep7Form{`{"headers": {"x-tool": "` + tok + `"}}`, tok, false},
			sweep7Form{"curl -s https://api.example.com/v1/run -H 'X-Tool: " + tok + "' -d q=1", tok, false},
		)
	}
	for _, f := range forms {
		if k, ok := credentialKind(f.s); ok && k != KindVendorToken {
			t.Errorf("kind %v: %s", k, mask6(f.s, f.secret))
		}
	}
	checkSweep7(t, forms, true, nil)
	nears := []string{
		"fc-layer-1 fc-layer-2 .fc-grid", "fc-" + sweep16Run(s16Hex, 20, 3), "fc-" + strings.Repeat("7", 32),
		"abfc-" + sweep16Run(s16Hex, 32, 3), "req-fc-" + sweep16Run(s16Hex, 32, 3), "8e03978e-40d5-43e8-bc93-6894a57f9324-fc-" + sweep16Run(s16Hex, 32, 3),
		"e2b_sandbox_id=sbx_1", "e2b_" + sweep16Run(s16Hex, 30, 4),
		"bkua_" + sweep16Run(s16Hex, 16, 5),
		"tvly-client tvly-dev-server", "tvly-" + sweep16Run(s16Lower, 16, 6),
		"from jina_embeddings_v3 import x", "jina_reader_" + sweep16Run(s16Lower, 12, 8),
		"nvapi-docs nvapi-key", "csk-1234 csk-reader",
		"llx-parse --fast", "fo1_test", "phx_click phx-click phx_socket_ref",
		"rpa_bot_runner", "tgp_v1_test",
		"fw_update --force", "fw_version=2.1.3 fw_printenv bootcmd", "fw_" + sweep16Run(s16Lower, 24, 16),
		"re_compile_pattern_for_all_the_things_ok", "p = re.compile(r'x')", "re_match_all_the_names_in_the_file",
		"re_" + sweep16Run(s16Lower, 8, 1) + "_" + sweep16Run(s16Lower, 24, 2),
		"bb_live_session bb_live_reload", "bb_live_" + sweep16Run(s16Lower, 27, 17),
	}
	for _, s := range nears {
		if m, ok := Find(s, 0); ok {
			t.Errorf("masked (%v): %q in %s", m.Kind, s[m.Start:m.End], s)
		}
	}
}

// TestSweep16VendorKeys: "<vendor>_KEY" (env, YAML, JSON keys, CLI flags)
// with a plain hex value was printed: the key classifier knew only
// api/secret/license… before "key", and hex-only values read as hashes.
// A known vendor before "key" is a credential (a finding, as API_KEY);
// an unknown word is KeyNamedKey, its value masked (high_entropy, no
// finding) where it reads as a key; a data-structure word, a public key,
// a key id or a hash is printed as it is.
func TestSweep16VendorKeys(t *testing.T) {
	h32, h40, h64 := sweep16Run(s16Hex, 32, 21), sweep16Run(s16Hex, 40, 22), sweep16Run(s16Hex, 64, 23)
	rnd := sweep16Run(s16Alnum, 32, 24)
	checkSweep7(t, []sweep7Form{
		{"STRIPE_KEY=" + h32, h32, false},
		{"ELEVENLABS_KEY=" + h32, h32, false},
		{"DEEPGRAM_KEY=" + h40 + "\nWANDB_MODE=online", h40, false},
		{"export WANDB_KEY=" + h40, h40, false},
		{"SERPAPI_KEY=\"" + h64 + "\"", h64, false},
		{"search:\n  serper_key: " + h40 + "\n  gl: us", h40, false},
		{`{"serpapiKey": "` + h64 + `", "engine": "google"}`, h64, false},
		{`"Env": ["PATH=/usr/bin", "ASSEMBLYAI_KEY=` + h32 + `"]`, h32, false},
		{"Environment:\n      DEEPGRAM_KEY:  " + h40 + "\n      LOG_LEVEL: info", h40, false},
		{"python agent.py --tavily-key " + rnd + " --max-results 5", rnd, false},
		{"serpapi --serpapi-key=" + h64 + " -q coffee", h64, false},
		{"MISTRAL_KEY=" + rnd, rnd, false},
		{"AzureSpeechKey=" + h32, h32, false},
	}, true, []string{
		"STRIPE_KEY=pk_live_" + rnd,
		"STRIPE_KEY=pk_test_" + rnd,
		"STRIPE_KEY=",
	})
	named := []string{
		"ACME_KEY=" + h32,
		"export ZYTE_KEY=" + h64,
		`{"bigmodelKey": "` + h40 + `"}`,
		"run --acme-key " + h40 + " --fast",
		"FOO_KEY=" + rnd,
	}
	for _, s := range named {
		m, ok := Find(s, 0)
		if !ok || m.Kind != KindHighEntropy || !keyLikeValue([]byte(s[m.Start:m.End])) {
			t.Errorf("not masked as a named key's value (%v %v): %s", ok, m.Kind, s)
		}
		if k, ok := credentialKind(s); ok {
			t.Errorf("a credential (%v): %s", k, s)
		}
	}
	for k, want := range map[string]KeyClass{
		"STRIPE_KEY": KeyCredential, "serpapiKey": KeyCredential, "deepgram-key": KeyCredential, "MY_WANDB_KEY": KeyCredential,
		"ACME_KEY": KeyNamedKey, "zyteKey": KeyNamedKey, "CACHE_KEY": KeyPlain, "S3_KEY": KeyPlain, "sha256Key": KeyPlain,
		"IDEMPOTENCY_KEY": KeyPlain, "PUBLIC_STRIPE_KEY": KeyPlain, "STRIPE_PUBLISHABLE_KEY": KeyPlain, "KEY_ID": KeyPlain,
		"api2Key": KeyPlain, "x_key": KeyPlain, "workspace_key": KeyPlain, "kafka_key": KeyPlain, "stripe_key_hint": KeyPlain,
	} {
		if got := ClassifyKey(k); got != want {
			t.Errorf("ClassifyKey(%q) = %v, want %v", k, got, want)
		}
	}
	uuid := "8e03978e-40d5-43e8-bc93-6894a57f9324"
	for _, s := range []string{
		"CACHE_KEY=" + h64, "IDEMPOTENCY_KEY=" + uuid, "Idempotency-Key: " + rnd, "IDEMPOTENCY_KEY=" + rnd,
		"PARTITION_KEY=user_id", "ROUTING_KEY=orders.created", "SORT_KEY=created_at", "PRIMARY_KEY=id", "PARTITION_KEY=" + h32,
		"OBJECT_KEY=uploads/2026/12/a.png", "S3_KEY=backups/db.sql.gz", "S3_KEY=" + h40, "PUBLIC_KEY=" + rnd,
		"KEY_ID=" + h32, "GIT_COMMIT_SHA=" + h40, "CONTENT_HASH=" + h64, "IMAGE_DIGEST=sha256:" + h64, `{"cacheKey": "` + h64 + `"}`,
		`{"dedupKey": "` + rnd + `", "rowKey": "` + h32 + `"}`, "--cache-key " + h64, "--partition-key " + rnd,
		"GPG_KEY=" + h40, "sha256_key: " + h64, "STRIPE_PUBLIC_KEY=" + rnd, "SSH_KEY=~/.ssh/id_ed25519", "ACME_KEY=ctrl+shift+k",
		"ACME_KEY=abc123", "ACME_KEY=" + uuid, "ACME_KEY=" + h32[:16], "ACME_KEY=" + strings.Repeat("7", 32),
		"monkey=" + h32, "turnkey: " + h32,
	} {
		if m, ok := Find(s, 0); ok {
			t.Errorf("masked (%v): %q in %s", m.Kind, s[m.Start:m.End], s)
		}
	}
}
