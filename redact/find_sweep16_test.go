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

