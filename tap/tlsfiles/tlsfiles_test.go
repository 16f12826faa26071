package tlsfiles

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

func writeCert(t *testing.T, certFile, keyFile string, n int64) *x509.Certificate {
	t.Helper()
	c, err := WriteSelfSigned(certFile, keyFile, n)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func serve(t *testing.T, cfg *tls.Config) string {
	t.Helper()
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
				c.(*tls.Conn).Handshake()
				c.Write([]byte("ok"))
				c.Close()
			}()
		}
	}()
	return l.Addr().String()
}

func servedSerial(t *testing.T, addr string) int64 {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
}

func TestReloadsChangedFilesAndKeepsTheOldOnError(t *testing.T) {
	dir := t.TempDir()
	cf, kf := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	writeCert(t, cf, kf, 1)
	r, err := New(Files{CertFile: cf, KeyFile: kf})
	if err != nil {
		t.Fatal(err)
	}
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	r.now = func() time.Time { return time.Unix(0, clock.Load()) }
	var reloads, errs atomic.Int32
	r.OnReload = func() { reloads.Add(1) }
	r.OnError = func(error) { errs.Add(1) }
	cfg, err := r.Config()
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, cfg)
	if s := servedSerial(t, addr); s != 1 {
		t.Fatalf("serial %d, want 1", s)
	}
	// Renewed in place: served after the next check.
	writeCert(t, cf, kf, 2)
	clock.Add(int64(2 * time.Second))
	if s := servedSerial(t, addr); s != 2 {
		t.Fatalf("after renewal: serial %d, want 2", s)
	}
	if reloads.Load() != 1 {
		t.Errorf("reloads %d, want 1", reloads.Load())
	}
	// A half-written key: reported, the last good certificate stays.
	os.WriteFile(kf, []byte("-----BEGIN EC PRIVATE KEY-----\ngarbage"), 0o600)
	clock.Add(int64(2 * time.Second))
	if s := servedSerial(t, addr); s != 2 {
		t.Fatalf("after a broken key: serial %d, want the old 2", s)
	}
	if errs.Load() == 0 {
		t.Error("a failed reload was not reported")
	}
}

func TestValidateNamesTheProblem(t *testing.T) {
	if err := (Files{CertFile: "x.crt"}).Validate(); err == nil {
		t.Error("a missing key_file was accepted")
	}
	dir := t.TempDir()
	cf, kf := filepath.Join(dir, "a.crt"), filepath.Join(dir, "a.key")
	writeCert(t, cf, kf, 1)
	other := filepath.Join(dir, "b.key")
	writeCert(t, filepath.Join(dir, "b.crt"), other, 2)
	if err := (Files{CertFile: cf, KeyFile: other}).Validate(); err == nil {
		t.Error("a key that does not match the certificate was accepted")
	}
	if err := (Files{CertFile: cf, KeyFile: kf}).Validate(); err != nil {
		t.Error(err)
	}
}

func TestMutualTLS(t *testing.T) {
	dir := t.TempDir()
	cf, kf := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	ca := writeCert(t, cf, kf, 7)
	caFile := filepath.Join(dir, "ca.crt")
	os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}), 0o600)
	r, err := New(Files{CertFile: cf, KeyFile: kf, ClientCAFile: caFile})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := r.Config()
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, cfg)
	c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err == nil {
		buf := make([]byte, 2)
		_, err = c.Read(buf)
		c.Close()
	}
	if err == nil {
		t.Fatal("a client without a certificate was served under mutual TLS")
	}
	pair, _ := tls.LoadX509KeyPair(cf, kf)
	c, err = tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2)
	if _, err := c.Read(buf); err != nil || string(buf) != "ok" {
		t.Fatalf("a client with a good certificate: %q %v", buf, err)
	}
	c.Close()
}
