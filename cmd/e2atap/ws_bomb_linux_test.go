package main

// A zip bomb through the ws tap, under a real CPU limit (RLIMIT_CPU, set
// with prlimit(2): Linux).

import (
	"bufio"
	"bytes"
	"compress/flate"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// zipBomb is a permessage-deflate payload (the final 00 00 ff ff taken
// off) that inflates to gib GiB of zeros: a 4 MiB block of zeros
// compresses, once the window is all zeros, to the same 4084 bytes every
// time, so the bomb is built in a few milliseconds instead of compressed.
func zipBomb(t *testing.T, gib int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	zeros := make([]byte, 4<<20)
	var segs [][]byte
	for range 3 {
		start := buf.Len()
		w.Write(zeros)
		w.Flush()
		segs = append(segs, bytes.Clone(buf.Bytes()[start:]))
	}
	if !bytes.Equal(segs[1], segs[2]) {
		t.Fatal("compress/flate no longer repeats itself on zeros: build the bomb another way")
	}
	bomb := segs[0]
	for range gib*256 - 1 {
		bomb = append(bomb, segs[1]...)
	}
	return bytes.TrimSuffix(bomb, []byte{0, 0, 0xff, 0xff})
}

// deflateSink is an upstream that agrees to permessage-deflate with
// context takeover both ways (as the reference's websockets does) and
// swallows everything; got hashes what it received after its 101.
func deflateSink(t *testing.T) (url string, got func() (int64, [32]byte)) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	h := sha256.New()
	var n int64
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				br := bufio.NewReader(nc)
				req, err := http.ReadRequest(br)
				if err != nil {
					return // the tap's health probe
				}
				key := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
				fmt.Fprintf(nc, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n",
					base64.StdEncoding.EncodeToString(key[:]))
				buf := make([]byte, 64<<10)
				for {
					k, err := br.Read(buf)
					mu.Lock()
					h.Write(buf[:k])
					n += int64(k)
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return "ws://" + ln.Addr().String(), func() (int64, [32]byte) {
		mu.Lock()
		defer mu.Unlock()
		var sum [32]byte
		copy(sum[:], h.Sum(nil))
		return n, sum
	}
}

// TestZipBombCostsTheRelayNoTime: a Gateway sends compressed messages of
// 1 MiB that inflate to 1 GiB each (zip bombs) through the real binary,
// with context takeover, as the reference's peers negotiate it. The relay
// passes them byte for byte, their copies are dropped as oversize (a loss,
// no finding), and the process keeps within a CPU limit (RLIMIT_CPU) that
// inflating them whole breaks: the mirror used to follow each bomb to its
// end for the window, on the relay goroutine, before the bomb's last
// bytes went on (0.3 s of CPU a bomb; killed here). It now lets the window
// go once a message passes 4 × max_message_bytes.
func TestZipBombCostsTheRelayNoTime(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	// Inflated whole, 16 GiB: about 5 s of CPU on an idle core. The run
	// takes 0.05-0.08 s of CPU (0.6-0.9 s under the race detector).
	const bombs = 16
	cpuSeconds := uint64(2)
	if raceEnabled {
		cpuSeconds = 4
	}
	dir := t.TempDir()
	upstream, got := deflateSink(t)
	listen, wsListen := freeAddr(t), freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	findings := filepath.Join(dir, "findings.jsonl")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
taps:
  - {name: agent-ws, type: ws, listen: %s, upstream: %q, max_message_bytes: 1048576}
outputs:
  findings: {path: %q}
`, listen, wsListen, upstream, findings)), 0o644)
	cmd, _ := startProcessArgs(t, cfgPath)
	lim := unix.Rlimit{Cur: cpuSeconds, Max: cpuSeconds}
	if err := unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_CPU, &lim, nil); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	waitReady(t, listen)

	nc, err := net.Dial("tcp", wsListen)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	fmt.Fprintf(nc, "GET / HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n", wsListen)
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Extensions") != "permessage-deflate" {
		t.Fatalf("handshake through the tap: %v %v", resp, err)
	}
	bomb := zipBomb(t, 1)
	// One masked text frame with RSV1 (compressed); a zero masking key
	// leaves the payload as it is.
	frame := append([]byte{0x80 | 0x40 | 0x1, 0x80 | 127}, binary.BigEndian.AppendUint64(nil, uint64(len(bomb)))...)
	frame = append(append(frame, 0, 0, 0, 0), bomb...)
	sent := sha256.New()
	for range bombs {
		sent.Write(frame)
	}
	go func() {
		for range bombs {
			if _, err := nc.Write(frame); err != nil {
				return
			}
		}
	}()
	want := int64(bombs * len(frame))
	deadline := time.Now().Add(120 * time.Second) // a hang guard
	for {
		if n, _ := got(); n >= want {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("e2atap ended while relaying the bombs (RLIMIT_CPU %d s): %v", cpuSeconds, err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the upstream did not get the bombs within 120 s")
		}
	}
	if n, sum := got(); n != want || sum != [32]byte(sent.Sum(nil)) {
		t.Fatalf("the upstream got %d bytes, want the %d sent, byte for byte", n, want)
	}
	if d := metric(t, listen, `e2atap_tap_dropped_total{reason="oversize",tap="agent-ws"}`); !strings.HasSuffix(d, fmt.Sprintf(" %d", bombs)) {
		t.Errorf("oversize drops: %q, want %d", d, bombs)
	}
	nc.Close() // the Gateway leaves without a closing handshake: no drain to wait out
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("e2atap did not exit 0 on SIGTERM: %v", err)
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-exited
		t.Fatal("e2atap did not stop within 60s of SIGTERM")
	}
	t.Logf("e2atap used %v of CPU (user %v, system %v)", cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime(), cmd.ProcessState.UserTime(), cmd.ProcessState.SystemTime())
	if fs := readFindings(t, findings); len(fs) != 0 {
		t.Fatalf("findings %v: a copy dropped as oversize is a loss, never a finding", fs)
	}
}
