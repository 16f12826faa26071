package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestReloadWhileEveryTapFlows: SIGHUPs that change the configuration
// (a rule's severity, no tap's settings) while records flow through a
// logdir, a NATS and a Kafka tap at once cost nothing: every record is
// judged once, every stream ends succeeded, no finding, and no loss (a
// tap restarted by a reload would lose or re-read: a NATS reconnect
// without replay, a Kafka rejoin, a logdir re-read). The ws tap's
// connection across reloads is TestReloadOnSIGHUP's.
func TestReloadWhileEveryTapFlows(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	srv := startNATS(t, port)
	kh := newKafkaHarness(t)
	logPath := filepath.Join(dir, "logs", "app.jsonl")
	os.MkdirAll(filepath.Dir(logPath), 0o755)
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	listen := freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	findings := filepath.Join(dir, "findings.jsonl")
	config := func(legacy string) []byte {
		return []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
rules: {e2a.legacy: %s}
taps:
  - {name: logs, type: logdir, paths: [%q], positions: %q}
  - {name: mesh, type: nats, url: %q, subjects: ["e2a.>"]}
  - {name: kmesh, type: kafka, brokers: [%q], topics: [%s], group: e2atap-reload, start: earliest}
outputs:
  findings: {path: %q}
`, listen, legacy, filepath.Join(dir, "logs", "*.jsonl"), filepath.Join(dir, "positions.json"), srv.ClientURL(), kh.brokers[0], kh.topic, findings))
	}
	os.WriteFile(cfgPath, config("info"), 0o644)
	cmd, stderr := startProcessArgs(t, cfgPath, "--reload-interval", "0")
	waitReady(t, listen)
	pollUntil(t, "the NATS tap's subscription", 20*time.Second, func() bool { return subscribed(srv, "e2a.>") })
	pub, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()

	// Each tap gets streams of 4 records, 16 open at a time, until the
	// reloads are done.
	const perStream = 4
	var streams [3]atomic.Int64 // sent, whole
	stop := make(chan struct{})
	var wg sync.WaitGroup
	sendErr := make(chan error, 3)
	send := func(k int, id string, rec string) error {
		switch k {
		case 0:
			_, err := logFile.WriteString(rec + "\n")
			return err
		case 1:
			return pub.Publish("e2a.traffic", []byte(rec))
		default:
			kh.prod.Produce(context.Background(), &kgo.Record{Topic: kh.topic, Key: []byte(id), Value: []byte(rec)}, func(_ *kgo.Record, err error) {
				if err != nil {
					select {
					case sendErr <- err:
					default:
					}
				}
			})
			return nil
		}
	}
	for k, prefix := range []string{"L", "N", "K"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for batch := 0; ; batch++ {
				select {
				case <-stop:
					return
				default:
				}
				var recs [16][]string
				for i := range recs {
					recs[i] = e2aStream(fmt.Sprintf("%s%d-%d", prefix, batch, i), 0, perStream-1, false, true)
				}
				for seq := range perStream {
					for i := range recs {
						if err := send(k, fmt.Sprintf("%s%d-%d", prefix, batch, i), recs[i][seq]); err != nil {
							sendErr <- err
							return
						}
					}
				}
				if k == 2 {
					if err := kh.prod.Flush(context.Background()); err != nil {
						sendErr <- err
						return
					}
				}
				streams[k].Add(int64(len(recs)))
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	reloads := 0
	for i := range 6 {
		// Every tap has sent streams since the last reload.
		var before [3]int64
		for k := range streams {
			before[k] = streams[k].Load()
		}
		pollUntil(t, "records to flow through every tap", 30*time.Second, func() bool {
			for k := range streams {
				if streams[k].Load() < before[k]+32 {
					return false
				}
			}
			return true
		})
		os.WriteFile(cfgPath, config([]string{"off", "info"}[i%2]), 0o644)
		cmd.Process.Signal(syscall.SIGHUP)
		reloads++
		pollUntil(t, "the reload to be logged", 20*time.Second, func() bool {
			return strings.Count(stderr.String(), `"msg":"configuration reloaded"`) >= reloads
		})
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-sendErr:
		t.Fatalf("sending: %v", err)
	default:
	}
	if err := pub.Flush(); err != nil {
		t.Fatal(err)
	}
	taps := []string{"logs", "mesh", "kmesh"}
	var metrics string
	pollUntil(t, "every record to be judged", 60*time.Second, func() bool {
		metrics = scrapeQuiet(listen)
		for k, tp := range taps {
			if recordsJudged(metrics, tp) < float64(streams[k].Load()*perStream) {
				return false
			}
		}
		return true
	})
	stopProcess(t, cmd)
	for k, tp := range taps {
		if got, want := recordsJudged(metrics, tp), float64(streams[k].Load()*perStream); got != want {
			t.Errorf("tap %s: %v records judged, %v sent", tp, got, want)
		}
		if got := sumMetric(metrics, `e2atap_streams_total{outcome="succeeded"`, `tap="`+tp+`"`); got != float64(streams[k].Load()) {
			t.Errorf("tap %s: %v streams succeeded, %d sent", tp, got, streams[k].Load())
		}
		if got := sumMetric(metrics, "e2atap_tap_dropped_total{", `tap="`+tp+`"`); got != 0 {
			t.Errorf("tap %s: %v losses across the reloads", tp, got)
		}
	}
	if got := readFindings(t, findings); len(got) != 0 {
		t.Errorf("%d findings on clean traffic across reloads, first %+v", len(got), got[0])
	}
	t.Logf("%d reloads; streams through logdir, NATS, Kafka: %d, %d, %d", reloads, streams[0].Load(), streams[1].Load(), streams[2].Load())
}
