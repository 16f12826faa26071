package ws

import (
	"context"
	"crypto/tls"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/tap/tlsfiles"
)

// TestListenTLS: with tls files the tap serves wss:// to the Gateway,
// relays to a plain ws:// upstream, and mirrors the decrypted messages; a
// client speaking plain ws:// to the TLS port is not served.
func TestListenTLS(t *testing.T) {
	dir := t.TempDir()
	cf, kf := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if _, err := tlsfiles.WriteSelfSigned(cf, kf, 1); err != nil {
		t.Fatal(err)
	}
	up := goServer(t, nil, echo)
	h := startTap(t, up, func(c *Config) { c.TLS = tlsfiles.Files{CertFile: cf, KeyFile: kf} }, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	c, _, err := websocket.Dial(ctx, "wss://"+h.p.Addr().String()+"/agent", &websocket.DialOptions{HTTPClient: client})
	if err != nil {
		t.Fatalf("wss:// through the tap: %v", err)
	}
	defer c.CloseNow()
	msg := []byte(`{"request_id":"q1","method":"chat.send"}`)
	if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
		t.Fatal(err)
	}
	_, got, err := c.Read(ctx)
	if err != nil || string(got) != string(msg) {
		t.Fatalf("echo through a TLS listener: %q, %v", got, err)
	}
	c.Close(websocket.StatusNormalClosure, "")
	deadline := time.Now().Add(10 * time.Second)
	for len(h.dataOf(tap.DirUpstream)) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if d := h.dataOf(tap.DirUpstream); len(d) == 0 || string(d[0]) != string(msg) {
		t.Fatalf("the mirror did not get the decrypted message: %q", d)
	}
	// Plain ws:// to the TLS port: no upgrade.
	pctx, pcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer pcancel()
	if pc, _, err := websocket.Dial(pctx, h.url("/agent"), nil); err == nil {
		pc.CloseNow()
		t.Fatal("a plain ws:// client was upgraded on a TLS listener")
	}
}

func TestListenTLSBadFilesFailNew(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Name, cfg.Listen, cfg.Upstream = "t", "127.0.0.1:0", "ws://127.0.0.1:1"
	cfg.TLS = tlsfiles.Files{CertFile: "/nonexistent.crt", KeyFile: "/nonexistent.key"}
	if _, err := New(cfg, nil, nil); err == nil {
		t.Fatal("New accepted certificate files that do not exist")
	}
}
