package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/internal/secretaudit"
)

// A sixth corpus (testdata/sweep6, its own generator and seed): the ways
// producers print a credential that the earlier corpora lack — the debug
// and repr forms of languages, XML, HTML and form bodies, protobuf text,
// SQL, command lines, HTTP Digest/NTLM/proxy authorization, presigned URL
// signatures, service-account and OAuth JSON — and the leaks the fifth
// sweep left out, each with near-misses. Every output is held to the
// partial-leak checker; the values go to the audit streams, the E2A fields
// of sweep5Places, and streams that cut each value across two deltas at
// several offsets (sweep6Cuts).

// sweep6Family is a line of the corpus: cut_accept says why a cut of it
// across two deltas is masked with no split finding, nocut why it is cut
// at no offset (a leak left, listed in gen.py).
type sweep6Family struct {
	secretaudit.Family
	CutAccept string `json:"cut_accept"`
	NoCut     string `json:"nocut"`
}

// sweep6Cut holds the families' cut_accept and nocut, by name.
var sweep6Cut = map[string]sweep6Family{}

// loadSweep6 is the corpus's families (credentials) and near-misses,
// with the eighth corpus's (testdata/sweep8: producers' config files,
// env and command lines, and the leaks h-secrets8 fixed) and the ninth's
// (testdata/sweep9: what tools print of their state — tracebacks' locals,
// kubectl and Helm YAML, curl -v, git credential fill, Terraform state,
// HAR — config files, PowerShell, encodings, and leaks h-secrets9
// fixed) and the eleventh's (testdata/sweep11: passwords and tokens a
// command line or a call takes as a plain argument, values after a ':'
// no key names, the leaks h-secrets11 fixed) and the twelfth's
// (testdata/sweep12: the leaks h-secrets12's audit found — "<label> key:",
// table cells, passwords servers print, escaped CJK labels in JSON text,
// prefixed tokens after a URL-encoded separator) and the thirteenth's
// (testdata/sweep13: h-secrets14's — password flags URL-encoded with
// "%20", passwords given to passwd, usermod, openssl passwd and mkpasswd,
// Argo CD's initial password, Twilio's token after its SID, URL-encoded
// CJK labels and e-mail addresses, code after a credential key as
// near-misses; and h-secrets15's: prose URL-encoded with "%20" or encoded
// twice, openssl passwd and mkpasswd with no flag, usermod -p in encoded
// quotes, expect's glob prompt and brace form, mongosh -p after a quoted
// URL, a password that looks like a call) and the fourteenth's
// (testdata/sweep14: h-secrets16's — "<vendor>_KEY" with a plain hex
// value in env dumps, docker inspect, kubectl describe, YAML, JSON and
// CLI flags, an unknown tool's "<word>_KEY" masked with no finding, the
// tokens of the tools agents call; data-structure keys, hashes and
// publishable keys as near-misses), the fifteenth's (testdata/sweep15:
// h-secrets17's — "my pwd is <pw>" and "password是<pw>", "API Key为：<v>"
// and "Secret Key：<v>", "stripekey=<hex>", an Oracle connect string under
// "-u"; "pwd" and its path, stack traces' "passwd.go:123" and words that
// end in "key" as near-misses) and the seventeenth's
// (testdata/sweep17: h-audit17's — a credential as the one argument of a
// setter or a builder's method, setPassword("…"), .password("…"),
// .setApiKey("…"; getters, checks and variables as near-misses), and a
// credential helper's name under a credential-named key, Docker's
// "credsStore", as a near-miss) and the eighteenth's (testdata/sweep18:
// h-secrets18's — a password's label beyond ASCII, "contraseña:",
// "пароль:", "mot de passe :", also \u-escaped; WordPress's salts in
// define('AUTH_KEY', '…'); .token("…"), .clientSecret("…"),
// withCredentials(user, pw); ${VAR} references, Terraform's "(sensitive
// value)" and words holding a label as near-misses), which join this test rather than
// starting processes of their own.
func loadSweep6(t *testing.T) (fams, nears []secretaudit.Family) {
	t.Helper()
	for _, c := range []struct {
		dir         string
		fams, nears int // at least
	}{{"sweep6", 50, 20}, {"sweep8", 40, 15}, {"sweep9", 30, 15}, {"sweep11", 20, 12}, {"sweep12", 18, 12}, {"sweep13", 34, 29}, {"sweep14", 28, 13}, {"sweep15", 16, 9}, {"sweep17", 18, 12}, {"sweep18", 21, 9}} {
		dir := c.dir
		f, err := os.Open(filepath.Join("testdata", dir, "families.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		n0, m0 := len(fams), len(nears)
		for sc.Scan() {
			var a sweep6Family
			if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
				t.Fatal(err)
			}
			if _, dup := sweep6Cut[a.Name]; dup && sweep6Cut[a.Name].Value != a.Value {
				t.Fatalf("%s: family %s is in an earlier corpus", dir, a.Name)
			}
			sweep6Cut[a.Name] = a
			if a.Near {
				nears = append(nears, a.Family)
			} else {
				fams = append(fams, a.Family)
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(fams)-n0 < c.fams || len(nears)-m0 < c.nears {
			t.Fatalf("only %d families and %d near-misses in the %s corpus", len(fams)-n0, len(nears)-m0, dir)
		}
	}
	return fams, nears
}

// sweep6CutAt is where stream cut-<n>-<k> cuts family n's value: at its
// first core's start (the key in one delta, the secret in the next), a
// third and two thirds into that core, and a quarter into the value.
func sweep6CutAt(a secretaudit.Family) []int {
	if sweep6Cut[a.Name].NoCut != "" {
		return nil
	}
	v := a.Value
	at := []int{len(v) / 4}
	if len(a.Cores) > 0 {
		if i := strings.Index(v, a.Cores[0]); i >= 0 {
			n := len(a.Cores[0])
			at = append(at, i, i+n/3, i+2*n/3)
		}
	}
	var out []int
	seen := map[int]bool{}
	for _, c := range at {
		if c > 0 && c < len(v) && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

// sweep6Cuts is stream cut-<n>-<k> of every family: its value cut across
// two text deltas at sweep6CutAt's k-th offset.
func sweep6Cuts(fams []secretaudit.Family, id string) []byte {
	ts := "2026-12-08T00:00:00Z"
	var b bytes.Buffer
	for n, a := range fams {
		for k, c := range sweep6CutAt(a) {
			rid := fmt.Sprintf(id, n, k)
			b.WriteString(jsonLine(map[string]any{"protocol_version": "1.0", "request_id": rid, "session_id": "sess-" + rid, "channel": "web",
				"method": "chat.send", "timestamp": ts, "identity_origin": "user", "params": map[string]any{"query": "hi"}}))
			b.WriteByte('\n')
			resp := func(seq int, final bool, status, kind string, body map[string]any) {
				b.WriteString(jsonLine(map[string]any{"protocol_version": "1.0", "response_id": fmt.Sprintf("r-%s-%d", rid, seq), "request_id": rid,
					"sequence": seq, "is_final": final, "status": status, "response_kind": kind, "timestamp": ts,
					"provenance": map[string]any{"source_protocol": "e2a"}, "body": body}))
				b.WriteByte('\n')
			}
			resp(0, false, "in_progress", "e2a.chunk", map[string]any{"delta_kind": "text", "delta": "run: " + a.Value[:c]})
			resp(1, false, "in_progress", "e2a.chunk", map[string]any{"delta_kind": "text", "delta": a.Value[c:] + "\n"})
			resp(2, true, "succeeded", "e2a.complete", map[string]any{"result": map[string]any{}})
		}
	}
	return b.Bytes()
}

// sweep6Extra is the records after the audit streams: the places and cuts
// of every family, then the near-misses' places and cuts.
func sweep6Extra(fams, nears []secretaudit.Family) []byte {
	b := sweep5Places(fams, "place-%03d")
	b = append(b, sweep6Cuts(fams, "cut-%03d-%d")...)
	b = append(b, sweep5Places(nears, "near-%03d")...)
	return append(b, sweep6Cuts(nears, "nearcut-%03d-%d")...)
}

// sweep6Findings checks that every family is an e2a.secret finding of
// its audit, places and cut streams, and that no near-miss stream is one.
func sweep6Findings(t *testing.T, what string, fams, nears []secretaudit.Family, findings []byte) {
	t.Helper()
	secret := sweep5Secret(findings)
	for n, a := range fams {
		if a.Accept != "" {
			continue // masked, no finding: why is in its line
		}
		rids := []string{fmt.Sprintf("audit-%03d", n), fmt.Sprintf("place-%03d", n)}
		for k := range sweep6CutAt(a) {
			if sweep6Cut[a.Name].CutAccept == "" {
				rids = append(rids, fmt.Sprintf("cut-%03d-%d", n, k))
			}
		}
		for _, rid := range rids {
			if !secret[rid] {
				t.Errorf("%s: family %s: no e2a.secret finding on its stream %s", what, a.Name, rid)
			}
		}
	}
	for n, a := range nears {
		rids := []string{fmt.Sprintf("near-%03d", n)}
		for k := range sweep6CutAt(a) {
			rids = append(rids, fmt.Sprintf("nearcut-%03d-%d", n, k))
		}
		for _, rid := range rids {
			if secret[rid] {
				t.Errorf("%s: near-miss %s is an e2a.secret finding (stream %s)", what, a.Name, rid)
			}
		}
	}
}

// TestSweep6Offline: no run of 10 characters of a secret part of the
// sweep6 corpus shows in validate's findings, its record log (content
// kept) or decode --show-content; every family is an e2a.secret finding
// in every place and cut, no near-miss is one.
func TestSweep6Offline(t *testing.T) {
	fams, nears := loadSweep6(t)
	dir := t.TempDir()
	capture, whole := filepath.Join(dir, "sweep6.jsonl"), filepath.Join(dir, "sweep6-whole.jsonl")
	extra := sweep6Extra(fams, nears)
	if err := os.WriteFile(capture, append(auditCapture(t, fams, true), extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	// decode reads a record at a time: the cuts are for the outputs that
	// join a stream's deltas.
	places := append(sweep5Places(fams, "place-%03d"), sweep5Places(nears, "near-%03d")...)
	if err := os.WriteFile(whole, append(auditCapture(t, fams, false), places...), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _ := validateKeep(t, fams, capture)
	sweep6Findings(t, "validate", fams, nears, stdout)
	runs := [][]string{{"decode", "--show-content", whole}}
	if !raceEnabled {
		runs = append(runs, []string{"validate", capture})
	}
	for _, c := range runs {
		out, stderr, _ := corpusProcess(t, nil, nil, c...)
		name := strings.Join(c[:len(c)-1], " ")
		auditCheck(t, fams, name+" stdout", out)
		auditCheck(t, fams, name+" stderr", append(stderr, ' '))
	}
}

// TestSweep6Run: the logdir tap of e2atap run reads the sweep6 corpus
// (places, cuts and near-misses too); its record log, findings log, debug
// log lines, observe --records, /metrics and /healthz show no run of 10
// characters of a secret part, and the findings log has the same
// e2a.secret findings as validate.
func TestSweep6Run(t *testing.T) {
	fams, nears := loadSweep6(t)
	finds := auditRunWith(t, fams, sweep6Extra(fams, nears))
	sweep6Findings(t, "run", fams, nears, finds)
}
