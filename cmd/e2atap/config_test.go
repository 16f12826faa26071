package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.yaml.in/yaml/v3"
)

// TestConfigErrors: unknown keys are errors that name the key, its line
// and its place; Validate reports every problem at once; secrets in URLs
// are not echoed.
func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"unknown-top", "profile: spec\ncolour: red\n", []string{`line 2: the top level: unknown key "colour" (it takes listen, memory`}},
		{"unknown-log", "outputs:\n  log: {path: /tmp/x, colr: 1}\n", []string{`line 2: outputs.log: unknown key "colr"`}},
		{"unknown-memory", "memory: {budget: 1}\n", []string{`line 1: memory: unknown key "budget" (did you mean "budget_bytes"?)`}},
		{"key-of-another-tap-type", "taps:\n  - {name: l, type: logdir, paths: [a], positions: p, upstream: ws://x}\n",
			[]string{`line 2: taps[0]: key "upstream" is not a setting of a logdir tap`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(c.yaml))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}

	cfg, err := ParseConfig([]byte(`profile: strict
listen: 9464
taps:
  - {name: "agent ws", type: ws, listen: 127.0.0.1:1, upstream: http://x}
  - {name: mesh, type: nats, url: "nats://user:hunter2@host:4222"}
  - {type: kafka, session_timeout: -1s, isolation: committed}
memory: {budget_bytes: 1000}
shutdown_timeout: 0s
`))
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.Validate()
	if err == nil {
		t.Fatal("an invalid configuration validated")
	}
	for _, w := range []string{"profile:", "listen:", `name "agent ws"`, "upstream:", "subjects or jetstream", "taps[2]: name is missing", "brokers:", "topics:", "session_timeout must be positive", `isolation: "committed" is not read_committed`, "memory.budget_bytes: 1000", "shutdown_timeout: 0s, want a positive duration"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Validate does not report %q:\n%v", w, err)
		}
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Error("Validate echoes a password")
	}
	if def := DefaultConfig(); def.Validate() == nil || !strings.Contains(def.Validate().Error(), "taps: none configured") {
		t.Error("the defaults alone (no tap) must not validate")
	}
}

// Two ws taps (or a tap and the HTTP listener) on one address are an
// error; on port 0 (the system picks a free port for each) they are not.
func TestConfigListenCollisions(t *testing.T) {
	cases := []struct {
		name, yaml string
		dup        bool
	}{
		{"same port", "listen: 127.0.0.1:9464\ntaps:\n  - {name: a, type: ws, listen: 127.0.0.1:9000, upstream: ws://h:1}\n  - {name: b, type: ws, listen: 127.0.0.1:9000, upstream: ws://h:1}\n", true},
		{"tap on the HTTP listener's port", "listen: 127.0.0.1:9000\ntaps:\n  - {name: a, type: ws, listen: 127.0.0.1:9000, upstream: ws://h:1}\n", true},
		{"port 0 twice", "listen: 127.0.0.1:0\ntaps:\n  - {name: a, type: ws, listen: 127.0.0.1:0, upstream: ws://h:1}\n  - {name: b, type: ws, listen: 127.0.0.1:0, upstream: ws://h:1}\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(c.yaml))
			if err != nil {
				t.Fatal(err)
			}
			err = cfg.Validate()
			if got := err != nil && strings.Contains(err.Error(), "is also used by"); got != c.dup {
				t.Errorf("collision reported: %v, want %v (%v)", got, c.dup, err)
			}
		})
	}
}

// The ws tap's timeouts are settings of the tap (issue 8 a).
func TestConfigWSTimeouts(t *testing.T) {
	cfg, err := ParseConfig([]byte("taps:\n  - {name: w, type: ws, listen: 127.0.0.1:1, upstream: ws://127.0.0.1:2, dial_timeout: 3s, handshake_timeout: 90s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Taps[0]; got.DialTimeout != 3*time.Second || got.HandshakeTimeout != 90*time.Second {
		t.Errorf("dial_timeout %v, handshake_timeout %v", got.DialTimeout, got.HandshakeTimeout)
	}
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
	cfg, err = ParseConfig([]byte("taps:\n  - {name: w, type: ws, listen: 127.0.0.1:1, upstream: \"ws://u:hunter2@x:2\", dial_timeout: -1s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "dial_timeout") {
		t.Errorf("a negative dial_timeout validated: %v", err)
	}
}

// TestConfigEveryProblem: the decoding of a file goes on past a bad key or
// value, so that every problem of the file and of its values (Validate on
// what could be decoded) is listed at once, each with its line and key path.
func TestConfigEveryProblem(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       []string // each must be one of the problems, whole or in part
		n          int      // how many problems exactly (0: at least len(want))
	}{
		{"typos on lines 4 and 6 (issue 11)", `profile: spec
streams:
  max: 10
  idel_timeout: 5m
taps:
  - {name: w, type: ws, listn: "127.0.0.1:1", upstream: "ws://127.0.0.1:2"}
`, []string{
			`line 4: streams: unknown key "idel_timeout" (did you mean "idle_timeout"?)`,
			`line 6: taps[0] (a ws tap): unknown key "listn" (did you mean "listen"?)`,
		}, 0},
		{"join_window abc hides nothing (issue 11)", `profile: nope
listen: localhost
streams:
  join_window: abc
  shards: 0
  queue: -1
  max_record_bytes: lots
memory: {budget_bytes: 10}
taps:
  - {name: "bad name", type: ws, listen: "127.0.0.1:99999", upstream: "http://x"}
  - {name: k, type: kafka, topics: []}
outputs:
  log: {path: /tmp/x.jsonl, content: all}
`, []string{
			"line 1: profile:",
			`line 2: listen: "localhost" is not host:port`,
			"line 4: streams.join_window: `abc` is not a duration",
			"line 5: streams.shards: 0, want 1 to 256",
			"line 6: streams.queue: -1, want at least 1",
			"line 7: streams.max_record_bytes: `lots` is not an integer",
			"line 8: memory.budget_bytes: 10",
			`line 10: taps[0] (bad name): name "bad name"`,
			`line 10: taps[0] (bad name): listen: "127.0.0.1:99999" is not host:port: port "99999"`,
			`line 10: taps[0] (bad name): upstream: "http://x" is not a ws:// or wss:// URL`,
			"line 11: taps[1] (k): brokers: at least one host:port is needed",
			"line 11: taps[1] (k): topics: at least one topic",
			`line 13: outputs.log.content: "all" is not mask, keep or drop`,
		}, 13},
		{"ports", `listen: "127.0.0.1:65536"
taps:
  - {name: w, type: ws, listen: "127.0.0.1:0", upstream: "ws://127.0.0.1:99999/a"}
  - {name: n, type: nats, url: "nats://127.0.0.1:4222,nats://h:123456", subjects: [a]}
  - {name: k, type: kafka, brokers: ["h:9092", "h", "h:0"], topics: [t]}
`, []string{
			`line 1: listen: "127.0.0.1:65536" is not host:port: port "65536"`,
			`line 3: taps[0] (w): upstream: "ws://127.0.0.1:99999/a": port "99999"`,
			`line 4: taps[1] (n): url: "nats://h:123456": port "123456"`,
			`line 5: taps[2] (k): brokers: "h" is not host:port: missing port in address`,
			`line 5: taps[2] (k): brokers: "h:0" is not host:port: port 0`,
		}, 5},
		{"a key at the wrong level, a duplicate, a bad type name", `join_window: 3s
profile: spec
profile: strict
taps:
  - {name: w, type: wss}
streams: [1, 2]
rules: {e2a.legacy: [off]}
`, []string{
			`line 1: the top level: unknown key "join_window" (it is a key of streams)`,
			`line 3: the top level: key "profile" is set twice (first on line 2)`,
			`line 5: taps[0] (w): type "wss" is not ws, logdir, nats or kafka (did you mean "ws"?)`,
			"line 6: streams: want a mapping of keys (key: value), not a list",
			"line 7: rules.e2a.legacy: want a string, not a list",
		}, 5},
		{"rule overrides, each on its line", "taps: []\nrules:\n  e2a.legacy: loud\n  e2a.seq_gapp: info\n  e2a.nope_nope_nope: off\n", []string{
			`line 3: rules.e2a.legacy: unknown severity "loud"`,
			`line 4: rules: unknown rule "e2a.seq_gapp" (did you mean "e2a.seq_gap"?)`,
			`line 5: rules: unknown rule "e2a.nope_nope_nope"`,
			"line 1: taps: none configured",
		}, 4},
		{"not YAML", "profile: spec\ntaps: [\n", []string{"not valid YAML"}, 1},
		{"a secret in the wrong form is not quoted", "outputs:\n  log: {path: /tmp/x, fingerprint_key: Secret0123456789}\n",
			[]string{"line 2: outputs.log.fingerprint_key: a key is not set in the file (it would be in a ConfigMap): set E2ATAP_FINGERPRINT_KEY"}, 0},
		{"an alias inside its own anchor", "taps:\n  - &t {name: a, type: ws, <<: *t}\n", []string{"line 2: taps[0]: alias *t is inside its own anchor"}, 0},
		{"two documents", "profile: spec\n---\nprofile: strict\n", []string{"line 2: a second YAML document"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, probs := parseChecked([]byte(c.yaml), func(string) string { return "" })
			got := make([]string, len(probs.errors()))
			for i, p := range probs.errors() {
				got[i] = p.String()
			}
			for _, w := range c.want {
				found := false
				for _, g := range got {
					found = found || strings.HasPrefix(g, w) || strings.Contains(g, w)
				}
				if !found {
					t.Errorf("no problem says %q; got:\n%s", w, strings.Join(got, "\n"))
				}
			}
			if c.n > 0 && len(got) != c.n {
				t.Errorf("%d problems, want %d:\n%s", len(got), c.n, strings.Join(got, "\n"))
			}
			for i := 1; i < len(probs); i++ {
				if a, b := probs[i-1].Line, probs[i].Line; b > 0 && (a == 0 || a > b) {
					t.Errorf("not in the order of the file: line %d before line %d", a, b)
				}
			}
		})
	}
}

// TestConfigEnvProblems: a value from the environment is named by its
// variable, and the OTEL_* variables the exporter reads are judged too,
// without ever printing a credential from them.
func TestConfigEnvProblems(t *testing.T) {
	const yamlOK = "taps:\n  - {name: mesh, type: nats, url: \"nats://127.0.0.1:4222\", subjects: [a]}\n"
	cases := []struct {
		name  string
		env   map[string]string
		want  []string
		never []string
	}{
		{"bad protocol", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
			[]string{`traces: OTEL_EXPORTER_OTLP_PROTOCOL="http/json": want grpc or http/protobuf`}, nil},
		{"endpoint port, sampler ratio, credentials", map[string]string{
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://user:s3cretPW@c:99999/v1/traces",
			"OTEL_EXPORTER_OTLP_HEADERS":         "authorization=Bearer tok-ABCDEF,broken",
			"OTEL_TRACES_SAMPLER":                "traceidratio",
			"OTEL_TRACES_SAMPLER_ARG":            "1.5",
		}, []string{
			`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="https://******@c:99999/v1/traces": port "99999"`,
			`OTEL_TRACES_SAMPLER_ARG="1.5": want a ratio in [0, 1]`,
			"OTEL_EXPORTER_OTLP_HEADERS",
		}, []string{"s3cretPW", "user:", "tok-ABCDEF", "Bearer"}},
		{"malformed endpoint with credentials", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://u:s3cretPW@bad host:4318"},
			[]string{"OTEL_EXPORTER_OTLP_ENDPOINT", "invalid character"}, []string{"s3cretPW"}},
		{"compression, TLS files of the OTLP exporter", map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT":           "https://c:4318",
			"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "zstd",
			"OTEL_EXPORTER_OTLP_CERTIFICATE":        "/nonexistent/ca.pem",
			"OTEL_EXPORTER_OTLP_CLIENT_KEY":         "/nonexistent/key.pem",
		}, []string{
			`traces: OTEL_EXPORTER_OTLP_TRACES_COMPRESSION="zstd": want gzip or none`,
			`traces: OTEL_EXPORTER_OTLP_CERTIFICATE="/nonexistent/ca.pem": cannot read the file`,
			`traces: OTEL_EXPORTER_OTLP_CLIENT_KEY="/nonexistent/key.pem": cannot read the file`,
			"CLIENT_CERTIFICATE and CLIENT_KEY go together",
		}, nil},
		{"nats url from its variable", map[string]string{"E2ATAP_TAP_MESH_URL": "nats://u:s3cretPW@h:99999"},
			[]string{`taps[0] (mesh): url: "nats://******@h:99999": port "99999": want a number from 1 to 65535 (from E2ATAP_TAP_MESH_URL)`}, []string{"s3cretPW"}},
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte(yamlOK), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, probs := checkConfig(path, func(k string) string { return c.env[k] }, environ(c.env), atStart)
			text := probs.errors().Error()
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("the problems do not say %q:\n%s", w, text)
				}
			}
			for _, n := range c.never {
				if strings.Contains(text, n) {
					t.Errorf("the problems print %q:\n%s", n, text)
				}
			}
		})
	}
	if _, probs := checkConfig(path, func(string) string { return "" }, nil, atStart); len(probs.errors()) > 0 {
		t.Errorf("a valid configuration: %v", probs)
	}
	// A typo in a variable's name is a warning; other OTel variables are not.
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPONT": "http://c:4318", "OTEL_BSP_MAX_QUEUE_SIZE": "10", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://m"}
	_, probs := checkConfig(path, func(k string) string { return env[k] }, environ(env), atStart)
	if len(probs) != 1 || !probs[0].Warning || probs[0].Msg != "traces: OTEL_EXPORTER_OTLP_ENDPONT is not a variable e2atap reads (did you mean OTEL_EXPORTER_OTLP_ENDPOINT?)" {
		t.Errorf("a misspelt OTEL_ variable: %v", probs)
	}
}

func environ(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

// TestConfigHostChecks: --check (and a start) finds what the machine
// lacks: output and positions directories that are missing or read-only,
// an output path that is a directory; --check warns of a busy port. It
// creates no file.
func TestConfigHostChecks(t *testing.T) {
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	os.Mkdir(ro, 0o555)
	os.Mkdir(filepath.Join(dir, "isdir.jsonl"), 0o755)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	free := freeAddr(t)
	// A read-only directory: a 0555 one, or for root (whom modes do not
	// stop) a read-only mount such as /proc/sys in a container.
	roOK := access(ro, wOK) != nil
	if !roOK && access("/proc/sys", wOK) != nil {
		ro, roOK = "/proc/sys", true
	}
	cases := []struct {
		name  string
		taps  string
		out   string
		mode  checkMode
		want  []string // errors
		warns []string
	}{
		{"missing output directory", `{name: w, type: ws, listen: "` + free + `", upstream: "ws://127.0.0.1:1"}`,
			`findings: {path: "` + dir + `/nope/findings.jsonl"}`, atStart,
			[]string{"outputs.findings.path: \"" + dir + "/nope/findings.jsonl\": directory " + dir + "/nope does not exist"}, nil},
		{"output path is a directory", `{name: w, type: ws, listen: "` + free + `", upstream: "ws://127.0.0.1:1"}`,
			`log: {path: "` + dir + `/isdir.jsonl"}`, forCheck,
			[]string{"outputs.log.path: \"" + dir + "/isdir.jsonl\": is a directory"}, nil},
		{"positions directory missing: an error for --check", `{name: l, type: logdir, paths: ["` + dir + `/*.jsonl"], positions: "` + dir + `/nope/p.json"}`,
			`findings: {path: "-"}`, forCheck, []string{"taps[0] (l): positions: \"" + dir + "/nope/p.json\": directory " + dir + "/nope does not exist"}, nil},
		{"positions directory missing: a warning at start (the tap is isolated)", `{name: l, type: logdir, paths: ["` + dir + `/logs/*.jsonl"], positions: "` + dir + `/nope/p.json"}`,
			`findings: {path: "-"}`, atStart, nil, []string{"taps[0] (l): positions:", "directory " + dir + "/logs does not exist (yet)"}},
		{"busy port: a warning for --check only", `{name: w, type: ws, listen: "` + busy.Addr().String() + `", upstream: "ws://127.0.0.1:1"}`,
			`findings: {path: "` + dir + `/f.jsonl"}`, forCheck, nil, []string{"taps[0] (w): listen: " + busy.Addr().String() + ": in use"}},
		{"busy port at start: the listener says it", `{name: w, type: ws, listen: "` + busy.Addr().String() + `", upstream: "ws://127.0.0.1:1"}`,
			`findings: {path: "` + dir + `/f.jsonl"}`, atStart, nil, nil},
	}
	if roOK {
		cases = append(cases, struct {
			name  string
			taps  string
			out   string
			mode  checkMode
			want  []string
			warns []string
		}{"read-only output directory", `{name: w, type: ws, listen: "` + free + `", upstream: "ws://127.0.0.1:1"}`,
			`findings: {path: "` + ro + `/f.jsonl"}`, forCheck, []string{"outputs.findings.path: \"" + ro + "/f.jsonl\": directory " + ro + " is not writable"}, nil})
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), fmt.Sprintf("c%d.yaml", i))
			y := fmt.Sprintf("listen: %q\ntaps:\n  - %s\noutputs:\n  %s\n", freeAddr(t), c.taps, c.out)
			os.WriteFile(p, []byte(y), 0o644)
			_, probs := checkConfig(p, func(string) string { return "" }, nil, c.mode)
			var errs, warns []string
			for _, pr := range probs {
				if pr.Warning {
					warns = append(warns, pr.String())
				} else {
					errs = append(errs, pr.String())
				}
			}
			check := func(kind string, got, want []string) {
				if len(got) != len(want) {
					t.Errorf("%d %s, want %d:\n%s", len(got), kind, len(want), strings.Join(got, "\n"))
					return
				}
				for j, w := range want {
					if !strings.Contains(got[j], w) || !strings.HasPrefix(got[j], "line ") {
						t.Errorf("%s %d: %q does not say %q (with its line)", kind, j, got[j], w)
					}
				}
			}
			check("errors", errs, c.want)
			check("warnings", warns, c.warns)
		})
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("the checks created files: %v", ents)
	}
}

// TestRunCheckProcess: the real binary's `run --config F --check` on a
// file with problems of every kind exits 2 and lists each one as
// FILE:LINE, with the OTEL_* variable by name and no credential; on a
// valid file it says so and warns of a busy listen port.
func TestRunCheckProcess(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte(`profile: spec
listen: "127.0.0.1:99999"
streams:
  join_window: abc
  idel_timeout: 5m
taps:
  - {name: w, type: ws, listen: "127.0.0.1:0", upstreem: "ws://127.0.0.1:1"}
outputs:
  findings: {path: "`+dir+`/missing/findings.jsonl"}
`), 0o644)
	env := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL=json", "OTEL_EXPORTER_OTLP_HEADERS=x-api-key=PLANTEDtoken99"}
	stdout, stderr, code := binaryProcess(t, os.Args[0], nil, env, "run", "--config", bad, "--check")
	if code != exitUsage {
		t.Errorf("exit %d, want %d", code, exitUsage)
	}
	if len(stdout) > 0 {
		t.Errorf("stdout: %s", stdout)
	}
	out := string(stderr)
	for _, w := range []string{
		bad + ":2: listen: \"127.0.0.1:99999\" is not host:port",
		bad + ":4: streams.join_window: `abc` is not a duration",
		bad + ":5: streams: unknown key \"idel_timeout\" (did you mean \"idle_timeout\"?)",
		bad + ":7: taps[0] (a ws tap): unknown key \"upstreem\" (did you mean \"upstream\"?)",
		bad + ":7: taps[0] (w): upstream is missing",
		bad + ":9: outputs.findings.path: \"" + dir + "/missing/findings.jsonl\": directory " + dir + "/missing does not exist",
		"environment: traces: OTEL_EXPORTER_OTLP_PROTOCOL=\"json\": want grpc or http/protobuf",
		": 7 problems:",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("stderr does not say %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "PLANTEDtoken99") {
		t.Errorf("a header value is printed:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); err == nil {
		t.Error("--check created the output directory")
	}
	// A start meets the same list before it starts anything.
	_, stderr, code = binaryProcess(t, os.Args[0], nil, env, "run", "--config", bad)
	if code != exitUsage || !strings.Contains(string(stderr), bad+":9: outputs.findings.path:") || !strings.Contains(string(stderr), ": 7 problems:") {
		t.Errorf("start: exit %d: %s", code, stderr)
	}

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte(fmt.Sprintf("listen: %q\ntaps:\n  - {name: w, type: ws, listen: %q, upstream: \"ws://127.0.0.1:1\"}\noutputs:\n  findings: {path: %q}\n",
		busy.Addr().String(), freeAddr(t), filepath.Join(dir, "findings.jsonl"))), 0o644)
	stdout, stderr, code = binaryProcess(t, os.Args[0], nil, nil, "run", "--config", good, "--check")
	if code != exitOK || string(stdout) != "configuration "+good+" is valid: 1 taps\n" {
		t.Errorf("exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	if w := good + ":1: warning: listen: " + busy.Addr().String() + ": in use"; !strings.Contains(string(stderr), w) {
		t.Errorf("stderr does not say %q: %s", w, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "findings.jsonl")); err == nil {
		t.Error("--check created the findings file")
	}
}

// TestConfigDecodeLikeYAML: on a valid file the key-by-key decoder gives
// what yaml's own strict decoding gives (over the same defaults).
func TestConfigDecodeLikeYAML(t *testing.T) {
	example, err := os.ReadFile("../../docs/e2atap.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]string{
		"the example": string(example),
		"every kind of value": `profile: strict
listen: "[::1]:9464"
streams: {max: 5, idle_timeout: 1m30s, join_window: 0s, finish_on_shutdown: true, max_record_bytes: 4096}
rules: {e2a.legacy: "off", e2a.seq_gap: info}
memory: {budget_bytes: -1}
tls: {cert_file: a.crt, key_file: a.key}
taps:
  - name: js
    type: nats
    url: nats://h:4222
    jetstream:
      - {stream: S, filter_subjects: [a.>, b.*], start_seq: 18446744073709551615}
    pending_bytes: 1048576
  - &k {name: k, type: kafka, brokers: [h:9092], topics: ["^t-.*"], regex: true, group: g, start: oldest}
  - {name: l, type: logdir, paths: [a, b], positions: p, max_line_bytes: 10, start_at: end, max_open_files: 3}
outputs:
  findings: {path: ~}
  log: {path: "-", content: drop, keep: 0}
`,
		"nulls keep the defaults": "streams:\nrules:\ntaps:\n",
		"anchors and merge keys":  "taps:\n  - &ws {name: a, type: ws, listen: \"127.0.0.1:1\", upstream: \"ws://h:2\", dial_timeout: 2s}\n  - <<: *ws\n    name: b\n    listen: \"127.0.0.1:3\"\n",
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ParseConfig([]byte(in))
			if err != nil {
				t.Fatal(err)
			}
			want, err := yamlConfig(in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Config{}, TapConfig{})); diff != "" {
				t.Errorf("(-yaml +ParseConfig):\n%s", diff)
			}
		})
	}
}

// TestDeployConfigChecks: the Kubernetes ConfigMap's configuration has no
// problem, and every directory it needs of the machine (outputs,
// positions, logs) is a volume the sidecar container mounts, writable
// where e2atap writes (the root filesystem is read-only there).
func TestDeployConfigChecks(t *testing.T) {
	b, err := os.ReadFile("../../deploy/kubernetes/base/configmap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal(b, &cm); err != nil {
		t.Fatal(err)
	}
	cfg, probs := parseChecked([]byte(cm.Data["e2atap.yaml"]), func(string) string { return "" })
	if len(probs) > 0 {
		t.Fatalf("the ConfigMap's configuration:\n%v", probs)
	}
	dep, err := os.ReadFile("../../deploy/kubernetes/base/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	mounts := map[string]bool{} // of the e2atap container: path → writable
	for _, m := range regexp.MustCompile(`(?m)^\s+mountPath: (\S+)\n(\s+readOnly: true)?`).FindAllStringSubmatch(string(dep), -1) {
		if _, seen := mounts[m[1]]; !seen { // the e2atap container comes first
			mounts[m[1]] = m[2] == ""
		}
	}
	need := map[string]bool{} // directory → must be writable
	for _, p := range []string{cfg.Outputs.Findings.Path, cfg.Outputs.Log.Path} {
		if p != "" && p != "-" {
			need[filepath.Dir(p)] = true
		}
	}
	for _, tc := range cfg.Taps {
		if tc.Type == "logdir" {
			need[filepath.Dir(tc.Positions)] = true
			for _, p := range tc.Paths {
				if _, ok := need[globDir(p)]; !ok {
					need[globDir(p)] = false // read only
				}
			}
		}
	}
	if len(need) == 0 {
		t.Fatal("the ConfigMap needs no directory: the test reads it wrong")
	}
	for dir, write := range need {
		w, ok := mounts[dir]
		switch {
		case !ok:
			t.Errorf("%s is not a volume of the e2atap container (its root filesystem is read-only)", dir)
		case write && !w:
			t.Errorf("%s is mounted read-only, and e2atap writes there", dir)
		}
	}
}

// TestReloadChecksNewOutputs: a reload to outputs whose directory does not
// exist is rejected with the problem named, before anything is closed:
// the running outputs keep being written.
func TestReloadChecksNewOutputs(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "agent")
	os.MkdirAll(logs, 0o755)
	src := filepath.Join(logs, "a.jsonl")
	os.WriteFile(src, nil, 0o644)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	write := func(outDir string) {
		os.WriteFile(cfgPath, []byte(fmt.Sprintf("listen: 127.0.0.1:0\ntaps:\n  - {name: logs, type: logdir, paths: [%q], positions: %q}\noutputs:\n  findings: {path: %q}\n",
			filepath.Join(logs, "*.jsonl"), filepath.Join(dir, "positions.json"), filepath.Join(outDir, "findings.jsonl"))), 0o644)
	}
	write(dir)
	cfg, err := LoadConfig(cfgPath, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var logBuf lockedBuffer
	sc, err := newSidecar(context.Background(), cfg, slog.New(slog.NewTextHandler(&logBuf, nil)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(cfgPath)
	sc.watchConfig(cfgPath, configHash(raw), nil, 0) // reloaded by hand
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sc.Run(ctx) }()
	defer func() { cancel(); <-done }()
	pollUntil(t, "the tap to start", 20*time.Second, func() bool { _, ok := sc.ready.Load("logs"); return ok })

	missing := filepath.Join(dir, "gone")
	write(missing)
	sc.reload(context.Background(), "test", nil)
	if sc.badHash == "" || sc.cfgHash != configHash(raw) {
		t.Fatalf("a reload to a missing output directory was applied (hash %q, rejected %q)", sc.cfgHash, sc.badHash)
	}
	if w := "directory " + missing + " does not exist"; !strings.Contains(logBuf.String(), w) {
		t.Errorf("the rejection does not say %q:\n%s", w, logBuf.String())
	}
	f, _ := os.OpenFile(src, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("not json\n")
	f.Close()
	pollUntil(t, "a finding in the running findings log", 20*time.Second, func() bool { return fileLines(filepath.Join(dir, "findings.jsonl")) >= 1 })
}

// yamlConfig is what yaml's own strict decoding makes of in over the
// defaults, with streams.shards' default resolved as ParseConfig resolves
// it where in leaves it out or null (it follows outputs.log.path:
// TestConfigShardsDefault). Whether yaml set it is told by a value no int
// in a file is taken for here.
func yamlConfig(in string) (Config, error) {
	const unset = math.MinInt
	want := DefaultConfig()
	want.Streams.Shards = unset
	dec := yaml.NewDecoder(strings.NewReader(in))
	dec.KnownFields(true)
	err := dec.Decode(&want)
	if want.Streams.Shards == unset {
		want.Streams.Shards = defaultShards(want.Outputs.Log.Path != "")
	}
	return want, err
}

// FuzzParseConfig: the key-by-key decoder never panics, lists problems in
// the order of the file, and where it finds none it agrees with yaml's own
// strict decoding.
func FuzzParseConfig(f *testing.F) {
	if b, err := os.ReadFile("../../docs/e2atap.example.yaml"); err == nil {
		f.Add(string(b))
	}
	f.Add("streams: {join_window: abc, shards: 2}\ntaps: [{name: a, type: ws, listn: x}]\n")
	f.Add("taps:\n  - &a {name: a, type: nats, url: nats://h:1, subjects: [x]}\n  - <<: *a\n    name: b\n")
	f.Add("rules: {e2a.legacy: off}\nmemory: {budget_bytes: -1}\n---\nx: 1\n")
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ParseConfig([]byte(in))
		var probs Problems
		if err != nil && !errors.As(err, &probs) {
			t.Fatalf("not Problems: %v", err)
		}
		for i := 1; i < len(probs); i++ {
			if a, b := probs[i-1].Line, probs[i].Line; b > 0 && (a == 0 || a > b) {
				t.Fatalf("out of order: %v", probs)
			}
		}
		if err != nil {
			return
		}
		want, err := yamlConfig(in)
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatalf("ParseConfig found no problem, yaml says: %v", err)
		}
		if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Config{}, TapConfig{}), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("(-yaml +ParseConfig):\n%s", diff)
		}
	})
}

// TestPortZeroListens: the HTTP listener and two ws taps all on port 0 (the
// system picks): a valid configuration, and the log says the address each
// got, the only place a user learns it; both taps relay there.
func TestPortZeroListens(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	upstream, _ := echoUpstream(t)
	cfgPath := filepath.Join(t.TempDir(), "e2atap.yaml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: 127.0.0.1:0
taps:
  - {name: ws-a, type: ws, listen: 127.0.0.1:0, upstream: %q}
  - {name: ws-b, type: ws, listen: 127.0.0.1:0, upstream: %q}
`, upstream, upstream)), 0o644)
	cmd, stderr := startProcessArgs(t, cfgPath)
	var running []map[string]any
	pollUntil(t, "the listening lines", 20*time.Second, func() bool {
		running = stderr.lines("e2atap running")
		return len(running) == 1 && len(stderr.lines("ws: listening")) == 2
	})
	listen, _ := running[0]["listen"].(string)
	waitReady(t, listen)
	seen := map[string]string{}
	for _, l := range stderr.lines("ws: listening") {
		name, _ := l["tap"].(string)
		addr, _ := l["addr"].(string)
		if _, port, err := net.SplitHostPort(addr); err != nil || port == "0" {
			t.Fatalf("tap %s: addr %q, want the port the system picked", name, addr)
		}
		seen[name] = addr
	}
	if len(seen) != 2 || seen["ws-a"] == seen["ws-b"] {
		t.Fatalf("listening lines by tap: %v, want ws-a and ws-b on two addresses", seen)
	}
	for name, addr := range seen {
		c := dialWS(t, addr)
		roundTrip(t, c, "relayed by "+name)
		c.Close()
	}
	stopProcess(t, cmd)
}

// TestConfigShardsDefault: streams.shards left out is half the CPUs, or
// every CPU with a record log (its redaction runs on the shards); one
// set in the file is kept whatever else is set.
func TestConfigShardsDefault(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	half := max(1, procs/2)
	for _, tc := range []struct {
		name, yaml string
		want       int
	}{
		{"no log", "profile: jiuwenswarm\n", half},
		{"record log", "outputs:\n  log:\n    path: /tmp/records.jsonl\n", procs},
		{"record log, shards set", "streams:\n  shards: 3\noutputs:\n  log:\n    path: /tmp/records.jsonl\n", 3},
		{"no log, shards set", "streams:\n  shards: 5\n", 5},
		{"record log, shards null", "streams: {shards: ~}\noutputs: {log: {path: /tmp/r.jsonl}}\n", procs},
		{"record log, shards empty", "streams:\n  shards:\noutputs: {log: {path: /tmp/r.jsonl}}\n", procs},
		{"record log, shards set to half", fmt.Sprintf("streams: {shards: %d}\noutputs: {log: {path: /tmp/r.jsonl}}\n", half), half},
	} {
		cfg, err := ParseConfig([]byte(tc.yaml))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if cfg.Streams.Shards != tc.want {
			t.Errorf("%s: streams.shards %d, want %d (GOMAXPROCS %d)", tc.name, cfg.Streams.Shards, tc.want, procs)
		}
	}
}
