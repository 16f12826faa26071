package tlsfiles

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serveMutual accepts TLS connections and sends back the serial number of
// each client certificate it saw.
func serveMutual(t *testing.T, p *TestPKI) string {
	t.Helper()
	cfg, err := p.ServerConfig(true)
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				tc := c.(*tls.Conn)
				if tc.Handshake() != nil {
					return
				}
				tc.Write([]byte(tc.ConnectionState().PeerCertificates[0].SerialNumber.String()))
			}()
		}
	}()
	return l.Addr().String()
}

func dialSerial(addr string, cfg *tls.Config) (string, error) {
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return "", err
	}
	defer c.Close()
	buf := make([]byte, 16)
	n, err := c.Read(buf)
	return string(buf[:n]), err
}

// TestClientMutualTLSAndRenewal: a client made by Client verifies the
// server against ca_file, presents its certificate, and presents a renewed
// one on a later connection (a reconnect) without being made again.
func TestClientMutualTLSAndRenewal(t *testing.T) {
	p, err := WriteTestPKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	addr := serveMutual(t, p)
	cfg, err := Client(Files{CAFile: p.CAFile, CertFile: p.ClientCert, KeyFile: p.ClientKey}, func(err error) { t.Logf("reload: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	if got, err := dialSerial(addr, cfg); err != nil || got != "3" {
		t.Fatalf("first connection: serial %q, %v", got, err)
	}
	if err := p.WriteClient(9); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := dialSerial(addr, cfg)
		if err == nil && got == "9" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the renewed client certificate was never presented: %q %v", got, err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Without ca_file the server's certificate (our own CA) is not trusted.
	cfg, err = Client(Files{CertFile: p.ClientCert, KeyFile: p.ClientKey}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dialSerial(addr, cfg); err == nil {
		t.Error("a server signed by an unknown CA was trusted")
	}
	// A wrong server_name is refused too.
	cfg, _ = Client(Files{CAFile: p.CAFile, CertFile: p.ClientCert, KeyFile: p.ClientKey, ServerName: "broker.example"}, nil)
	if _, err := dialSerial(addr, cfg); err == nil || !strings.Contains(err.Error(), "broker.example") {
		t.Errorf("server_name broker.example: %v", err)
	}
	// Without a client certificate the mutual-TLS server refuses.
	cfg, _ = Client(Files{CAFile: p.CAFile}, nil)
	if _, err := dialSerial(addr, cfg); err == nil {
		t.Error("served without a client certificate")
	}
}

// TestValidateClientNamesKeyAndFile: every problem names its key and file.
func TestValidateClientNamesKeyAndFile(t *testing.T) {
	dir := t.TempDir()
	p, err := WriteTestPKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nope.crt")
	notPEM := filepath.Join(dir, "junk.crt")
	os.WriteFile(notPEM, []byte("junk"), 0o600)
	unreadable := filepath.Join(dir, "locked.key")
	os.WriteFile(unreadable, []byte("x"), 0o000)
	for _, c := range []struct {
		f    Files
		want []string
	}{
		{Files{CAFile: missing}, []string{"ca_file", missing}},
		{Files{CAFile: notPEM}, []string{"ca_file", notPEM, "no PEM certificate"}},
		{Files{CertFile: p.ClientCert}, []string{"cert_file and key_file go together"}},
		{Files{CertFile: p.ClientCert, KeyFile: p.ServerKey}, []string{"cert_file, key_file", p.ClientCert}},
		{Files{CertFile: p.ClientCert, KeyFile: unreadable}, []string{"key_file", unreadable}},
	} {
		if c.f.KeyFile == unreadable && os.Geteuid() == 0 {
			continue // root reads everything
		}
		err := c.f.ValidateClient()
		if err == nil {
			t.Errorf("%+v: no error", c.f)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %q does not say %q", c.f, err, w)
			}
		}
		if _, err := Client(c.f, nil); err == nil {
			t.Errorf("Client(%+v) made a config", c.f)
		}
	}
	if err := (Files{CAFile: p.CAFile, CertFile: p.ClientCert, KeyFile: p.ClientKey, ServerName: "x"}).ValidateClient(); err != nil {
		t.Error(err)
	}
	if got := (Files{ClientCAFile: "a", CertFile: "b"}).ClientOnly(); got != nil {
		t.Errorf("ClientOnly %v", got)
	}
	if got := (Files{CAFile: "a", InsecureSkipVerify: true}).ClientOnly(); len(got) != 2 {
		t.Errorf("ClientOnly %v", got)
	}
}
