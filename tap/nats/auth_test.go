package natstap

import (
	"bytes"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/tap/tlsfiles"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// Planted secrets: none may appear in any output of the tap.
const (
	goodPass  = "CRPSnatsGoodPassw0rd"
	wrongPass = "CRPSnatsWrongPassw0rd"
	goodToken = "CRPSnatsGoodToken0123"
)

// startSecureServer starts an in-process nats-server with opts set by
// the caller (TLS, users, a token), core NATS only.
func startSecureServer(t *testing.T, set func(*server.Options)) *server.Server {
	t.Helper()
	o := &server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true}
	set(o)
	s, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(func() { stopServer(s) })
	return s
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// syncBuffer is a log sink for a test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// receives checks that what a client publishes on subject reaches the tap.
func receives(t *testing.T, nc *nats.Conn, subject string, c *collector) {
	t.Helper()
	waitSubscribed(t, nc, subject, c)
	if err := nc.Publish(subject, []byte(`{"x":1}`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the message through the secured connection", func() bool {
		msgs, _ := c.data()
		return len(msgs) > 0 && string(msgs[len(msgs)-1].Data) == `{"x":1}`
	})
}

// TestTLSMutualWithUserPassword: a server that requires TLS with client
// certificates and a user/password; the tap trusts the test CA
// (tls.ca_file), presents its certificate and reads the password from
// its file (with the trailing newline a Secret file often has).
func TestTLSMutualWithUserPassword(t *testing.T) {
	dir := t.TempDir()
	pki, err := tlsfiles.WriteTestPKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	srvTLS, err := pki.ServerConfig(true)
	if err != nil {
		t.Fatal(err)
	}
	s := startSecureServer(t, func(o *server.Options) {
		o.TLSConfig, o.TLS, o.TLSVerify = srvTLS, true, true
		o.Username, o.Password = "e2atap", goodPass
	})
	pw := writeFile(t, dir, "password", goodPass+"\n")
	pub, err := nats.Connect(s.ClientURL(), nats.RootCAs(pki.CAFile), nats.ClientCert(pki.ClientCert, pki.ClientKey), nats.UserInfo("e2atap", goodPass))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pub.Close)

	var logs syncBuffer
	stats := new(tap.Stats)
	c := &collector{}
	runTap(t, Config{Name: "mesh", URL: s.ClientURL(), Subjects: []string{"agent.>"},
		TLS:  tlsfiles.Files{CAFile: pki.CAFile, CertFile: pki.ClientCert, KeyFile: pki.ClientKey},
		Auth: Auth{User: "e2atap", PasswordFile: pw}}, stats, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), c)
	waitFor(t, "up", stats.UpstreamUp.Load)
	receives(t, pub, "agent.a", c)
	if strings.Contains(logs.String(), goodPass) {
		t.Errorf("the password is in the log:\n%s", logs.String())
	}

	// Without the CA the server is not trusted: a handshake error, counted.
	stats2 := new(tap.Stats)
	runTap(t, Config{Name: "mesh2", URL: s.ClientURL(), Subjects: []string{"agent.>"}, ReconnectWait: 20 * time.Millisecond, ReconnectMaxWait: 50 * time.Millisecond,
		TLS:  tlsfiles.Files{CertFile: pki.ClientCert, KeyFile: pki.ClientKey},
		Auth: Auth{User: "e2atap", PasswordFile: pw}}, stats2, discard, &collector{})
	waitFor(t, "a handshake error counted", func() bool { return stats2.Errors[tap.ErrHandshake].Load() > 0 })
	if stats2.UpstreamUp.Load() {
		t.Error("up with an untrusted server")
	}

	// insecure_skip_verify connects without the CA, and says loudly that
	// nothing is checked.
	var warn syncBuffer
	stats3 := new(tap.Stats)
	runTap(t, Config{Name: "mesh3", URL: s.ClientURL(), Subjects: []string{"agent.>"},
		TLS:  tlsfiles.Files{CertFile: pki.ClientCert, KeyFile: pki.ClientKey, InsecureSkipVerify: true},
		Auth: Auth{User: "e2atap", PasswordFile: pw}}, stats3, slog.New(slog.NewTextHandler(&warn, nil)), &collector{})
	waitFor(t, "up without verification", stats3.UpstreamUp.Load)
	if !strings.Contains(warn.String(), "level=WARN") || !strings.Contains(warn.String(), "insecure_skip_verify is set") {
		t.Errorf("no warning for insecure_skip_verify:\n%s", warn.String())
	}
}

// TestTokenAndNKeyAuth: token_file and nkey_file authenticate.
func TestTokenAndNKeyAuth(t *testing.T) {
	dir := t.TempDir()
	s := startSecureServer(t, func(o *server.Options) { o.Authorization = goodToken })
	pub, err := nats.Connect(s.ClientURL(), nats.Token(goodToken))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pub.Close)
	stats, c := new(tap.Stats), &collector{}
	runTap(t, Config{Name: "tok", URL: s.ClientURL(), Subjects: []string{"agent.>"}, Auth: Auth{TokenFile: writeFile(t, dir, "token", goodToken)}}, stats, discard, c)
	waitFor(t, "up with a token", stats.UpstreamUp.Load)
	receives(t, pub, "agent.t", c)

	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := kp.Seed()
	pk, _ := kp.PublicKey()
	ns := startSecureServer(t, func(o *server.Options) { o.Nkeys = []*server.NkeyUser{{Nkey: pk}} })
	seedFile := writeFile(t, dir, "user.nk", string(seed)+"\n")
	o, _ := nats.NkeyOptionFromSeed(seedFile)
	npub, err := nats.Connect(ns.ClientURL(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(npub.Close)
	stats, c = new(tap.Stats), &collector{}
	runTap(t, Config{Name: "nk", URL: ns.ClientURL(), Subjects: []string{"agent.>"}, Auth: Auth{NKeyFile: seedFile}}, stats, discard, c)
	waitFor(t, "up with an nkey", stats.UpstreamUp.Load)
	receives(t, npub, "agent.n", c)
}

// TestWrongPasswordIsCountedAndRetried: a refused password is a clear,
// rate-limited log line and a tap_errors{reason="handshake"} count, never a
// crash or a Run error; the tap keeps trying, reads the file again at
// every attempt, and connects once the Secret is fixed. The password shows
// in no log line and no error. Credentials in the URL keep working.
func TestWrongPasswordIsCountedAndRetried(t *testing.T) {
	dir := t.TempDir()
	s := startSecureServer(t, func(o *server.Options) { o.Username, o.Password = "e2atap", goodPass })
	pw := writeFile(t, dir, "password", wrongPass)
	var logs syncBuffer
	stats, c := new(tap.Stats), &collector{}
	runTap(t, Config{Name: "mesh", URL: s.ClientURL(), Subjects: []string{"agent.>"}, ReconnectWait: 20 * time.Millisecond, ReconnectMaxWait: 100 * time.Millisecond,
		Auth: Auth{User: "e2atap", PasswordFile: pw}}, stats, slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), c)
	// The client reports the first refusal of its first connect (later
	// attempts of it go unreported); one after a connection is each counted.
	waitFor(t, "a handshake error counted", func() bool { return stats.Errors[tap.ErrHandshake].Load() >= 1 })
	if stats.UpstreamUp.Load() || stats.Errors[tap.ErrDial].Load() != 0 {
		t.Errorf("up %v, dial errors %d: a refused password is a handshake error", stats.UpstreamUp.Load(), stats.Errors[tap.ErrDial].Load())
	}
	// The outage's first line (its own, with the server's reason) comes
	// just before the refusal's: wait for the refusal's.
	waitFor(t, "the refusal logged", func() bool {
		l := logs.String()
		return strings.Contains(l, "nats server refused the connection") && strings.Contains(strings.ToLower(l), "authorization violation")
	})
	if n := strings.Count(logs.String(), "nats server refused the connection"); n != 1 {
		t.Errorf("the refusal logged %d times: want once at the start of the outage", n)
	}

	// The Secret is fixed: the next attempt reads the new file.
	writeFile(t, dir, "password", goodPass+"\n")
	waitFor(t, "up after the password file was fixed", stats.UpstreamUp.Load)
	pub, err := nats.Connect(s.ClientURL(), nats.UserInfo("e2atap", goodPass))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pub.Close)
	receives(t, pub, "agent.w", c)
	for _, secret := range []string{goodPass, wrongPass} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("a password is in the log:\n%s", logs.String())
		}
	}

	// nats://user:password@host, as before.
	stats, c = new(tap.Stats), &collector{}
	runTap(t, Config{Name: "inurl", URL: "nats://e2atap:" + goodPass + "@" + strings.TrimPrefix(s.ClientURL(), "nats://"), Subjects: []string{"agent.>"}}, stats, discard, c)
	waitFor(t, "up with credentials in the URL", stats.UpstreamUp.Load)
	receives(t, pub, "agent.u", c)
}

// TestAuthConfigErrors: every problem names its key and file, none quotes
// a secret, and Run is never reached.
func TestAuthConfigErrors(t *testing.T) {
	dir := t.TempDir()
	pw := writeFile(t, dir, "password", goodPass)
	empty := writeFile(t, dir, "empty", "\n")
	missing := filepath.Join(dir, "missing")
	notCreds := writeFile(t, dir, "bad.creds", goodPass)
	notSeed := writeFile(t, dir, "bad.nk", goodPass)
	base := Config{Name: "m", URL: "nats://127.0.0.1:4222", Subjects: []string{"a"}}
	for _, c := range []struct {
		auth Auth
		tls  tlsfiles.Files
		url  string
		want []string
	}{
		{auth: Auth{User: "u"}, want: []string{"user and password_file go together"}},
		{auth: Auth{PasswordFile: pw}, want: []string{"user and password_file go together"}},
		{auth: Auth{User: "u", PasswordFile: missing}, want: []string{"password_file", missing, "no such file"}},
		{auth: Auth{TokenFile: empty}, want: []string{"token_file", empty, "is empty"}},
		{auth: Auth{TokenFile: pw, CredsFile: notCreds}, want: []string{"set one of"}},
		{auth: Auth{CredsFile: notCreds}, want: []string{"creds_file", notCreds, "not a NATS credentials file"}},
		{auth: Auth{CredsFile: missing}, want: []string{"creds_file", missing}},
		{auth: Auth{NKeyFile: notSeed}, want: []string{"nkey_file", notSeed}},
		{auth: Auth{TokenFile: pw}, url: "nats://u:" + goodPass + "@127.0.0.1:4222", want: []string{"the url carries credentials too"}},
		{tls: tlsfiles.Files{CAFile: missing}, want: []string{"tls: ca_file", missing}},
		{tls: tlsfiles.Files{ClientCAFile: pw}, want: []string{"client_ca_file is a server's setting"}},
	} {
		cfg := base
		cfg.Auth, cfg.TLS = c.auth, c.tls
		if c.url != "" {
			cfg.URL = c.url
		}
		_, err := New(cfg, new(tap.Stats), discard)
		if err == nil {
			t.Errorf("%+v %+v: no error", c.auth, c.tls)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v %+v: %q does not say %q", c.auth, c.tls, err, w)
			}
		}
		if strings.Contains(err.Error(), goodPass) {
			t.Errorf("the secret is in the error %q", err)
		}
	}
}

// TestPasswordRotatedOnTheServer: the server changes the password (a
// reload) and drops the tap; each refused reconnect is a handshake error
// and an outage (not a log line per attempt), and once the Secret file
// holds the new password the next reconnect reads it and the tap is back.
func TestPasswordRotatedOnTheServer(t *testing.T) {
	dir := t.TempDir()
	opts := &server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true, Username: "e2atap", Password: goodPass}
	s := startSecureServer(t, func(o *server.Options) { *o = *opts })
	pw := writeFile(t, dir, "password", goodPass)
	var logs syncBuffer
	stats, c := new(tap.Stats), &collector{}
	runTap(t, Config{Name: "mesh", URL: s.ClientURL(), Subjects: []string{"agent.>"}, ReconnectWait: 20 * time.Millisecond, ReconnectMaxWait: 50 * time.Millisecond,
		Auth: Auth{User: "e2atap", PasswordFile: pw}}, stats, slog.New(slog.NewJSONHandler(&logs, nil)), c)
	waitFor(t, "up", stats.UpstreamUp.Load)

	const rotated = "CRPSnatsRotatedPassw0rd"
	o := *opts
	o.Port = s.Addr().(*net.TCPAddr).Port
	o.Password = rotated
	if err := s.ReloadOptions(&o); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "refused reconnects counted", func() bool { return stats.Errors[tap.ErrHandshake].Load() >= 3 })
	if n := strings.Count(logs.String(), "nats server refused the connection"); n != 1 {
		t.Errorf("%d log lines of the refusal: want one at the start of the outage\n%s", n, logs.String())
	}
	if !strings.Contains(strings.ToLower(logs.String()), "authorization violation") {
		t.Errorf("the server's reason is not logged:\n%s", logs.String())
	}
	writeFile(t, dir, "password", rotated+"\n")
	waitFor(t, "up with the rotated password", stats.UpstreamUp.Load)
	pub, err := nats.Connect(s.ClientURL(), nats.UserInfo("e2atap", rotated))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pub.Close)
	receives(t, pub, "agent.r", c)
	for _, secret := range []string{goodPass, rotated} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("a password is in the log:\n%s", logs.String())
		}
	}
}
