package demo

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/e2atap/e2atap/internal/gen"
)

// TestPeersInterrupt: connection.ack first, requests and responses logged
// one JSON line each, and after chat.interrupt the AgentServer sends
// nothing more for the session's chats (reference §7.5).
func TestPeersInterrupt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	as, err := NewAgentServer(AgentServerConfig{LogDir: t.TempDir(), Compress: true, PingInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	as.Start()
	gw, err := DialGateway(ctx, GatewayConfig{URL: as.URL() + "/any/path", Compress: true})
	if err != nil {
		t.Fatal(err)
	}
	req := []byte(`{"request_id": "r1", "session_id": "s1", "method": "chat.send", "is_stream": true}`)
	intr := []byte(`{"request_id": "r1-int", "session_id": "s1", "method": "chat.interrupt", "is_stream": false, "params": {"intent": "cancel"}}`)
	chunk := []byte(`{"request_id": "r1", "sequence": 0, "is_final": false}`)
	recv := func(ch <-chan []byte, want []byte) {
		t.Helper()
		select {
		case got := <-ch:
			if !bytes.Equal(got, want) {
				t.Fatalf("got %s, want %s", got, want)
			}
		case <-ctx.Done():
			t.Fatal("not delivered")
		}
	}
	if err := gw.Send(req); err != nil {
		t.Fatal(err)
	}
	recv(as.Received(), req)
	if _, err := as.Send(gen.Message{Dir: gen.ToClient, Stream: "r1", Data: chunk}); err != nil {
		t.Fatal(err)
	}
	recv(gw.Received(), chunk)
	if err := gw.Send(intr); err != nil {
		t.Fatal(err)
	}
	recv(as.Received(), intr)
	if _, err := as.Send(gen.Message{Dir: gen.ToClient, Stream: "r1", Data: chunk}); !errors.Is(err, ErrCancelled) {
		t.Fatalf("send after interrupt: %v, want ErrCancelled", err)
	}
	time.Sleep(30 * time.Millisecond) // a few pings cross
	if err := gw.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := as.Close(ctx); err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(as.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	want := string(req) + "\n" + string(chunk) + "\n" + string(intr) + "\n"
	if string(log) != want {
		t.Errorf("log:\n%s\nwant:\n%s", log, want)
	}
}
