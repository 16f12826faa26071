package main

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap/tlsfiles"
)

// TestHTTPListenerTLS: with tls configured, the real binary serves
// /readyz and /metrics over TLS only, and serves a renewed certificate
// without a restart.
func TestHTTPListenerTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	dir := t.TempDir()
	cf, kf := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if _, err := tlsfiles.WriteSelfSigned(cf, kf, 1); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	logs := filepath.Join(dir, "logs")
	os.MkdirAll(logs, 0o755)
	os.WriteFile(cfgPath, []byte(fmt.Sprintf("listen: %s\ntls: {cert_file: %q, key_file: %q}\ntaps:\n  - {name: logs, type: logdir, paths: [%q], positions: %q}\n",
		addr, cf, kf, filepath.Join(logs, "*.jsonl"), filepath.Join(dir, "positions.json"))), 0o644)
	cmd, stderr := startProcessArgs(t, cfgPath)
	defer stopProcess(t, cmd)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	var serial int64
	get := func(path string) (int, string, error) {
		resp, err := client.Get("https://" + addr + path)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		serial = resp.TLS.PeerCertificates[0].SerialNumber.Int64()
		return resp.StatusCode, string(b), nil
	}
	pollUntil(t, "/readyz over TLS", 20*time.Second, func() bool { code, _, err := get("/readyz"); return err == nil && code == 200 })
	if code, body, _ := get("/metrics"); code != 200 || !strings.Contains(body, "e2atap_build_info") {
		t.Errorf("/metrics over TLS: %d", code)
	}
	if serial != 1 {
		t.Errorf("serial %d, want 1", serial)
	}
	if resp, err := (&http.Client{Timeout: 2 * time.Second}).Get("http://" + addr + "/readyz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("plain HTTP was served on a TLS listener")
		}
	}
	// net/http says so ("TLS handshake error"): a line of the JSON log, as
	// every line the process writes (before, plain text on stderr).
	pollUntil(t, "the failed handshake logged", 20*time.Second, func() bool { return strings.Contains(stderr.String(), "TLS handshake error") })
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if !json.Valid([]byte(l)) {
			t.Errorf("a log line that is not JSON: %q", l)
		}
	}
	// Renewed in place (as the kubelet swaps a Secret): served without a restart.
	if _, err := tlsfiles.WriteSelfSigned(cf, kf, 2); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, "the renewed certificate served", 20*time.Second, func() bool {
		client.CloseIdleConnections()
		_, _, err := get("/readyz")
		return err == nil && serial == 2
	})
}

func TestWSTapTLSConfig(t *testing.T) {
	dir := t.TempDir()
	cf, kf := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if _, err := tlsfiles.WriteSelfSigned(cf, kf, 1); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tls     string
		wantErr string
	}{
		{fmt.Sprintf("{cert_file: %q, key_file: %q}", cf, kf), ""},
		{fmt.Sprintf("{cert_file: %q}", cf), "cert_file and key_file are both required"},
		{`{cert_file: /nonexistent.crt, key_file: /nonexistent.key}`, "nonexistent.crt"},
	} {
		y := fmt.Sprintf("taps:\n  - {name: agent-ws, type: ws, listen: 127.0.0.1:0, upstream: ws://127.0.0.1:1, tls: %s}\n", c.tls)
		cfg, err := ParseConfig([]byte(y))
		if err == nil {
			err = cfg.Validate()
		}
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("tls %s: %v", c.tls, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("tls %s: error %v, want one naming %q", c.tls, err, c.wantErr)
		}
	}
}
