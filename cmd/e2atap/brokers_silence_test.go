package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// lines returns the log lines with the given msg.
func (l *lockedBuffer) lines(msg string) []map[string]any {
	var out []map[string]any
	for _, s := range strings.Split(l.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(s), &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestBrokersDownAtStartAreLogged (issue 8, fault k): e2atap run starts
// with its NATS server and its Kafka broker both unreachable. It runs and
// is ready anyway, logs each outage once (naming the tap and the broker,
// without the URL's credentials) and not again while it lasts, and once
// the brokers come up it logs that they are back, with the outage's
// duration and failed attempts, and reads from both.
func TestBrokersDownAtStartAreLogged(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	natsPort, kafkaPort := freePort(t), freePort(t)
	dir := t.TempDir()
	listen := freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
taps:
  - {name: mesh, type: nats, url: "nats://e2atap:s3cret@127.0.0.1:%d", subjects: ["e2a.>"]}
  - {name: mesh-kafka, type: kafka, brokers: ["127.0.0.1:%d"], topics: [eventmesh-stream], start: earliest}
outputs:
  findings: {path: %q}
`, listen, natsPort, kafkaPort, filepath.Join(dir, "findings.jsonl"))), 0o644)

	cmd, logs := startE2atap(t, nil, "run", "--config", cfgPath, "--log-level", "debug")

	pollUntil(t, "both outages logged", 20*time.Second, func() bool {
		return len(logs.lines("nats server unreachable")) > 0 && len(logs.lines("kafka broker unreachable")) > 0
	})
	waitReady(t, listen)
	time.Sleep(3 * time.Second) // the tap keeps retrying: no more lines
	down := map[string][]map[string]any{
		"mesh":       logs.lines("nats server unreachable"),
		"mesh-kafka": logs.lines("kafka broker unreachable"),
	}
	wantAddr := map[string]string{"mesh": fmt.Sprintf("nats://127.0.0.1:%d", natsPort), "mesh-kafka": fmt.Sprintf("127.0.0.1:%d", kafkaPort)}
	if n := len(logs.lines("upstream is down")); n != 0 {
		t.Errorf("%d more lines about the same outages (one line per outage, from the tap)", n)
	}
	for name, ls := range down {
		if len(ls) != 1 {
			t.Errorf("tap %s: %d unreachable lines, want 1", name, len(ls))
			continue
		}
		if ls[0]["tap"] != name || ls[0]["addr"] != wantAddr[name] || ls[0]["err"] == "" {
			t.Errorf("tap %s: unreachable line %v; want the tap, addr %s and the error", name, ls[0], wantAddr[name])
		}
	}

	srv := startNATS(t, natsPort)
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(kafkaPort), kfake.SeedTopics(1, "eventmesh-stream"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	pollUntil(t, "both back", 30*time.Second, func() bool {
		return len(logs.lines("nats server reachable again")) > 0 && len(logs.lines("kafka broker reachable again")) > 0
	})
	for _, msg := range []string{"nats server reachable again", "kafka broker reachable again"} {
		ls := logs.lines(msg)
		if len(ls) != 1 {
			t.Errorf("%d lines %q, want 1", len(ls), msg)
			continue
		}
		if n, _ := ls[0]["failed_attempts"].(float64); n < 2 {
			t.Errorf("%q: failed_attempts %v", msg, ls[0]["failed_attempts"])
		}
		if s, _ := ls[0]["outage_seconds"].(float64); s < 3 {
			t.Errorf("%q: outage_seconds %v, want at least 3", msg, ls[0]["outage_seconds"])
		}
	}

	// Traffic flows through both.
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	pollUntil(t, "the nats tap's subscription", 20*time.Second, func() bool { return subscribed(srv, "e2a.>") })
	rec := []byte(`{"jsonrpc":"2.0","id":"r1","method":"chat.send","params":{"session_id":"s1","text":"hi"}}`)
	nc.Publish("e2a.x", rec)
	nc.Flush()
	prod, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	if err := prod.ProduceSync(context.Background(), &kgo.Record{Topic: "eventmesh-stream", Value: rec}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, "a message through each tap", 30*time.Second, func() bool {
		m := scrapeQuiet(listen)
		return containsLine(m, `e2atap_tap_messages_total{direction="none",tap="mesh"} 1`) &&
			containsLine(m, `e2atap_tap_messages_total{direction="none",tap="mesh-kafka"} 1`)
	})
	if strings.Contains(logs.String(), "s3cret") {
		t.Error("the log holds the NATS URL's password")
	}
	stopProcess(t, cmd)
}

func scrapeQuiet(addr string) string {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
