package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/tap/tlsfiles"
)

// TestConfigBrokerSecurity: the tls, auth and sasl blocks of the nats and
// kafka taps decode strictly (a typo names the key), reach the taps, and
// every problem names its line, key and file; no problem quotes a secret.
func TestConfigBrokerSecurity(t *testing.T) {
	dir := t.TempDir()
	pki, err := tlsfiles.WriteTestPKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	const secret = "CRPScfgBrokerPassw0rd"
	pw := filepath.Join(dir, "password")
	os.WriteFile(pw, []byte(secret+"\n"), 0o600)
	missing := filepath.Join(dir, "nope")

	good := fmt.Sprintf(`taps:
  - name: mesh
    type: nats
    url: "tls://127.0.0.1:4222"
    subjects: [agent.>]
    tls: {ca_file: %[1]q, cert_file: %[2]q, key_file: %[3]q, server_name: nats.internal}
    auth: {user: e2atap, password_file: %[4]q}
  - name: bus
    type: kafka
    brokers: ["127.0.0.1:9093"]
    topics: [agent.events]
    tls: {ca_file: %[1]q}
    sasl: {mechanism: SCRAM-SHA-512, username: e2atap, password_file: %[4]q}
`, pki.CAFile, pki.ClientCert, pki.ClientKey, pw)
	cfg, err := ParseConfig([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	n, k := cfg.Taps[0], cfg.Taps[1]
	if n.TLS.ServerName != "nats.internal" || n.TLS.CAFile != pki.CAFile || n.natsAuth().PasswordFile != pw || n.natsAuth().User != "e2atap" {
		t.Errorf("nats tap: %+v %+v", n.TLS, n.Auth)
	}
	if s := k.kafkaSASL(); s.Mechanism != "SCRAM-SHA-512" || s.Username != "e2atap" || s.PasswordFile != pw || k.TLS.CAFile != pki.CAFile {
		t.Errorf("kafka tap: %+v %+v", k.TLS, k.SASL)
	}

	// Typos and keys of the wrong block are decode problems with a line.
	for _, c := range []struct{ yaml, want string }{
		{"taps:\n  - {name: m, type: nats, url: nats://h:1, subjects: [a], auth: {usr: x}}\n", `line 2: taps[0].auth: unknown key "usr" (did you mean "user"?)`},
		{"taps:\n  - {name: b, type: kafka, brokers: [h:1], topics: [t], sasl: {mechanism: PLAIN, pasword_file: x}}\n", `line 2: taps[0].sasl: unknown key "pasword_file" (did you mean "password_file"?)`},
		{"taps:\n  - {name: b, type: kafka, brokers: [h:1], topics: [t], auth: {user: x}}\n", `key "auth" is not a setting of a kafka tap`},
		{"taps:\n  - {name: m, type: nats, url: nats://h:1, subjects: [a], sasl: {username: x}}\n", `key "sasl" is not a setting of a nats tap`},
	} {
		_, err := ParseConfig([]byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.yaml, err, c.want)
		}
	}

	bad := fmt.Sprintf(`listen: 127.0.0.1:9464
tls: {ca_file: %[1]q}
taps:
  - name: mesh
    type: nats
    url: "nats://127.0.0.1:4222"
    subjects: [agent.>]
    tls: {ca_file: %[2]q, client_ca_file: %[1]q}
    auth: {user: e2atap, password_file: %[2]q}
  - name: tok
    type: nats
    url: "nats://e2atap:%[3]s@127.0.0.1:4222"
    subjects: [agent.>]
    auth: {token_file: %[4]q}
  - name: bus
    type: kafka
    brokers: ["127.0.0.1:9093"]
    topics: [agent.events]
    tls: {cert_file: %[5]q}
    sasl: {mechanism: GSSAPI, username: e2atap, password_file: %[2]q}
  - name: w
    type: ws
    listen: 127.0.0.1:1
    upstream: ws://127.0.0.1:2
    tls: {cert_file: %[5]q, key_file: %[6]q, insecure_skip_verify: true}
`, pki.CAFile, missing, secret, pw, pki.ClientCert, pki.ClientKey)
	cfg, err = ParseConfig([]byte(bad))
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.Validate()
	if err == nil {
		t.Fatal("no problem")
	}
	for _, w := range []string{
		"line 2: tls: ca_file is a setting of a nats or kafka tap's tls",
		"line 8: taps[0] (mesh): tls: client_ca_file is a setting of a ws tap's tls",
		"line 8: taps[0] (mesh): tls: ca_file: open " + missing + ": no such file",
		"line 9: taps[0] (mesh): auth: password_file: " + missing + ": no such file",
		"line 14: taps[1] (tok): auth: the url carries credentials too",
		"line 19: taps[2] (bus): tls: cert_file and key_file go together",
		`line 20: taps[2] (bus): sasl.mechanism "GSSAPI"`,
		"line 20: taps[2] (bus): sasl.password_file: " + missing + ": no such file",
		"line 25: taps[3] (w): tls: insecure_skip_verify is a setting of a nats or kafka tap's tls",
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Validate does not say %q:\n%v", w, err)
		}
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("a problem quotes the password:\n%v", err)
	}
}

// TestReadmeSecuredBrokers: the README's example of secured brokers
// decodes with no problem (its files are not on this machine, so it is not
// validated) and sets what it says.
func TestReadmeSecuredBrokers(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "**Secured brokers.**")
	if i < 0 {
		t.Fatal("README has no secured brokers section")
	}
	s = s[i:]
	a := strings.Index(s, "```yaml\n") + len("```yaml\n")
	e := strings.Index(s[a:], "```")
	cfg, err := ParseConfig([]byte(s[a : a+e]))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Taps) != 2 || cfg.Taps[0].Auth.PasswordFile == "" || cfg.Taps[0].TLS.CAFile == "" || cfg.Taps[1].SASL.Mechanism != "SCRAM-SHA-512" {
		t.Errorf("the example sets %+v", cfg.Taps)
	}
}
