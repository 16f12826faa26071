package kafkatap

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/tap/tlsfiles"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Planted secrets: none may appear in any output of the tap.
const (
	kafkaPass  = "CRPSkafkaGoodPassw0rd"
	kafkaWrong = "CRPSkafkaWrongPassw0rd"
)

// String is everything logged so far.
func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func writeSecret(t *testing.T, dir, name, v string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(v), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// secureCluster starts kfake with SASL (the mechanism's superuser) and,
// with pki, TLS.
func secureCluster(t *testing.T, mechanism string, pki *tlsfiles.TestPKI, mutual bool) []string {
	t.Helper()
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(1, "agent.events"), kfake.EnableSASL(), kfake.Superuser(mechanism, "e2atap", kafkaPass)}
	if pki != nil {
		cfg, err := pki.ServerConfig(mutual)
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, kfake.TLS(cfg))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

func producerSASL(mechanism string) kgo.Opt {
	switch mechanism {
	case SASLPlain:
		return kgo.SASL(plain.Auth{User: "e2atap", Pass: kafkaPass}.AsMechanism())
	case SASLScramSHA256:
		return kgo.SASL(scram.Auth{User: "e2atap", Pass: kafkaPass}.AsSha256Mechanism())
	}
	return kgo.SASL(scram.Auth{User: "e2atap", Pass: kafkaPass}.AsSha512Mechanism())
}

// TestSASLMechanisms: the tap authenticates with each mechanism, the
// password read from its file, and reads what a producer wrote; over TLS
// against the test CA, SCRAM-SHA-256 with a client certificate (mutual).
func TestSASLMechanisms(t *testing.T) {
	dir := t.TempDir()
	pki, err := tlsfiles.WriteTestPKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	pw := writeSecret(t, dir, "password", kafkaPass+"\n")
	for _, c := range []struct {
		mech        string
		tls, mutual bool
	}{{SASLPlain, true, false}, {SASLScramSHA256, true, true}, {SASLScramSHA512, false, false}, {"scram-sha-512", true, false}} {
		t.Run(c.mech, func(t *testing.T) {
			var p *tlsfiles.TestPKI
			cfg := Config{Name: "bus", Topics: []string{"agent.events"}, Start: "earliest", SASL: SASL{Mechanism: c.mech, Username: "e2atap", PasswordFile: pw}}
			popts := []kgo.Opt{producerSASL(strings.ToUpper(c.mech))}
			if c.tls {
				p = pki
				cfg.TLS = tlsfiles.Files{CAFile: pki.CAFile}
				if c.mutual {
					cfg.TLS.CertFile, cfg.TLS.KeyFile = pki.ClientCert, pki.ClientKey
				}
				tc, _ := tlsfiles.Client(cfg.TLS, nil)
				popts = append(popts, kgo.DialTLSConfig(tc))
			}
			brokers := secureCluster(t, strings.ToUpper(c.mech), p, c.mutual)
			cfg.Brokers = brokers
			prod := newClient(t, brokers, popts...)
			produce(t, prod, &kgo.Record{Topic: "agent.events", Value: []byte(`{"n":1}`)})
			var logs syncBuffer
			col := &collector{}
			stats, _ := startTapLog(t, cfg, slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), col)
			waitFor(t, "the record through SASL", func() bool { m, _ := col.data(); return len(m) == 1 && string(m[0].Data) == `{"n":1}` })
			if n := stats.Errors[tap.ErrHandshake].Load(); n != 0 {
				t.Errorf("%d handshake errors with good credentials", n)
			}
			if strings.Contains(logs.String(), kafkaPass) {
				t.Errorf("the password is in the log")
			}
		})
	}
}

// TestSASLWrongPassword: refused credentials are handshake errors, logged
// once as an outage (never the password), the tap keeps running and
// retrying, and it reads the password file again: once fixed, it reads.
// A tap without the CA does not trust the brokers (also a handshake error).
func TestSASLWrongPassword(t *testing.T) {
	dir := t.TempDir()
	pki, err := tlsfiles.WriteTestPKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	brokers := secureCluster(t, SASLScramSHA256, pki, false)
	tc, _ := tlsfiles.Client(tlsfiles.Files{CAFile: pki.CAFile}, nil)
	prod := newClient(t, brokers, producerSASL(SASLScramSHA256), kgo.DialTLSConfig(tc))
	produce(t, prod, &kgo.Record{Topic: "agent.events", Value: []byte(`{"n":2}`)})

	pw := writeSecret(t, dir, "password", kafkaWrong)
	var logs syncBuffer
	col := &collector{}
	stats, _ := startTapLog(t, Config{Name: "bus", Brokers: brokers, Topics: []string{"agent.events"}, Start: "earliest",
		TLS: tlsfiles.Files{CAFile: pki.CAFile}, SASL: SASL{Mechanism: SASLScramSHA256, Username: "e2atap", PasswordFile: pw}},
		slog.New(slog.NewJSONHandler(&logs, nil)), col)
	waitFor(t, "handshake errors", func() bool { return stats.Errors[tap.ErrHandshake].Load() >= 2 })
	if m, _ := col.data(); len(m) != 0 {
		t.Fatalf("read %d records with a wrong password", len(m))
	}
	waitFor(t, "the refusal logged", func() bool {
		return strings.Contains(logs.String(), "kafka broker unreachable") && strings.Contains(logs.String(), "session setup failed (SASL credentials")
	})
	writeSecret(t, dir, "password", kafkaPass+"\n")
	waitFor(t, "the record once the password file is fixed", func() bool { m, _ := col.data(); return len(m) == 1 })
	if n := strings.Count(logs.String(), "kafka broker unreachable"); n > 2 {
		t.Errorf("%d outage lines: want one at its start", n)
	}
	for _, s := range []string{kafkaPass, kafkaWrong} {
		if strings.Contains(logs.String(), s) {
			t.Errorf("a password is in the log:\n%s", logs.String())
		}
	}

	// No ca_file: the test CA is not trusted.
	stats2, _ := startTap(t, Config{Name: "bus2", Brokers: brokers, Topics: []string{"agent.events"}, Group: "other",
		TLS: tlsfiles.Files{ServerName: "localhost"}, SASL: SASL{Mechanism: SASLScramSHA256, Username: "e2atap", PasswordFile: pw}}, &collector{})
	waitFor(t, "a TLS handshake error", func() bool { return stats2.Errors[tap.ErrHandshake].Load() >= 1 })
	if n := stats2.Errors[tap.ErrDial].Load(); n != 0 {
		t.Errorf("%d dial errors: an untrusted broker is a handshake error", n)
	}
}

// TestSecurityConfigErrors: each problem names its key and file, none
// quotes the password.
func TestSecurityConfigErrors(t *testing.T) {
	dir := t.TempDir()
	pw := writeSecret(t, dir, "password", kafkaPass)
	missing := filepath.Join(dir, "missing")
	empty := writeSecret(t, dir, "empty", "\n")
	base := Config{Name: "k", Brokers: []string{"127.0.0.1:9092"}, Topics: []string{"t"}}
	for _, c := range []struct {
		sasl SASL
		tls  tlsfiles.Files
		want []string
	}{
		{sasl: SASL{Mechanism: "GSSAPI", Username: "u", PasswordFile: pw}, want: []string{`sasl.mechanism "GSSAPI"`}},
		{sasl: SASL{Mechanism: "PLAIN", PasswordFile: pw}, want: []string{"sasl.username is missing"}},
		{sasl: SASL{Mechanism: "PLAIN", Username: "u"}, want: []string{"sasl.password_file is missing"}},
		{sasl: SASL{Mechanism: "PLAIN", Username: "u", PasswordFile: missing}, want: []string{"sasl.password_file", missing, "no such file"}},
		{sasl: SASL{Mechanism: "PLAIN", Username: "u", PasswordFile: empty}, want: []string{"sasl.password_file", empty, "is empty"}},
		{tls: tlsfiles.Files{CAFile: missing}, want: []string{"tls: ca_file", missing}},
		{tls: tlsfiles.Files{CertFile: pw}, want: []string{"cert_file and key_file go together"}},
		{tls: tlsfiles.Files{ClientCAFile: pw}, want: []string{"client_ca_file is a server's setting"}},
	} {
		cfg := base
		cfg.SASL, cfg.TLS = c.sasl, c.tls
		_, err := New(cfg, new(tap.Stats), discard)
		if err == nil {
			t.Errorf("%+v %+v: no error", c.sasl, c.tls)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v %+v: %q does not say %q", c.sasl, c.tls, err, w)
			}
		}
		if strings.Contains(err.Error(), kafkaPass) {
			t.Errorf("the password is in %q", err)
		}
	}
}
