package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/e2atap/e2atap/internal/gen"
	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/tap/logdir"
	natstap "github.com/e2atap/e2atap/tap/nats"
	"github.com/e2atap/e2atap/validate"
)

// countSink counts records the engine judged.
type countSink struct{ n atomic.Int64 }

func (c *countSink) Record(*validate.RecordInfo)      { c.n.Add(1) }
func (c *countSink) Finding(*validate.Finding)        {}
func (c *countSink) StreamStart(*validate.StreamInfo) {}
func (c *countSink) StreamEnd(*validate.StreamInfo)   {}

func benchRecords(n int) [][]byte {
	g := gen.New(gen.Config{Seed: 9, Concurrent: 16, MinChunks: 4, MaxChunks: 16, FaultRate: 0.02, KeepaliveRate: 0.05, Sessions: 64})
	out := make([][]byte, n)
	for i := range out {
		out[i] = g.Next().Data
	}
	return out
}

// startLive runs a live engine (as `e2atap run` does) and returns a
// tap.EmitFunc into it.
func startLive(b *testing.B, sink validate.Sink) (emit tap.EmitFunc, stop func()) {
	lc := validate.DefaultLiveConfig()
	lc.Engine.IdleTimeout = 0
	lc.JoinWindow = 0
	live := validate.NewLive(lc, sink)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { live.Run(ctx); close(done) }()
	emit = func(ctx context.Context, m tap.Message) error {
		if m.ConnClosed || m.Reconnected {
			return nil
		}
		return live.Submit(ctx, validate.Input{Tap: m.Tap, Pos: validate.Position(m.Pos), Time: m.Time, Data: m.Data, FromLog: m.FromLog})
	}
	return emit, func() { cancel(); <-done }
}

// BenchmarkEngineAlone is the baseline for the tap benchmarks: the same
// records read from memory straight into a sharded engine.
func BenchmarkEngineAlone(b *testing.B) {
	recs := benchRecords(b.N)
	data := bytes.Join(recs, []byte("\n"))
	sink := &countSink{}
	vc := validate.DefaultConfig()
	vc.IdleTimeout = 0
	run := validate.NewSharded(2, vc, sink)
	b.ReportAllocs()
	b.ResetTimer()
	validate.Read(bytes.NewReader(data), "bench", validate.FormatJSONL, validate.ReadOptions{FromLog: true}, run)
	run.Finish(validate.ReasonEOF, &validate.Input{})
	b.ReportMetric(float64(sink.n.Load())/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkLogdirIntoEngine: a log file tailed by the logdir tap into the
// live engine, as `e2atap run` wires it; timed until the engine judged
// every line.
func BenchmarkLogdirIntoEngine(b *testing.B) {
	dir := b.TempDir()
	recs := benchRecords(b.N)
	if err := os.WriteFile(filepath.Join(dir, "a.jsonl"), append(bytes.Join(recs, []byte("\n")), '\n'), 0o644); err != nil {
		b.Fatal(err)
	}
	sink := &countSink{}
	emit, stop := startLive(b, sink)
	defer stop()
	cfg := logdir.DefaultConfig()
	cfg.Name, cfg.Paths, cfg.Positions = "logs", []string{filepath.Join(dir, "*.jsonl")}, filepath.Join(dir, "pos.json")
	cfg.PollInterval = 10 * time.Millisecond
	t, err := logdir.New(cfg, &tap.Stats{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	b.ReportAllocs()
	b.ResetTimer()
	go func() { done <- t.Run(ctx, emit) }()
	for sink.n.Load() < int64(b.N) {
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	cancel()
	<-done
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkNATSIntoEngine: messages published to an in-process nats-server,
// read by the nats tap into the live engine; timed until the engine judged
// every message.
func BenchmarkNATSIntoEngine(b *testing.B) {
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		b.Fatal(err)
	}
	srv.Start()
	defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
	if !srv.ReadyForConnections(10 * time.Second) {
		b.Fatal("nats-server not ready")
	}
	recs := benchRecords(b.N)
	sink := &countSink{}
	emit, stop := startLive(b, sink)
	defer stop()
	cfg := natstap.DefaultConfig()
	cfg.Name, cfg.URL, cfg.Subjects = "mesh", srv.ClientURL(), []string{"agent.>"}
	stats := &tap.Stats{}
	t, err := natstap.New(cfg, stats, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- t.Run(ctx, emit) }()
	for !stats.UpstreamUp.Load() {
		time.Sleep(time.Millisecond)
	}
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	time.Sleep(50 * time.Millisecond) // the tap's subscription reaches the server
	b.ReportAllocs()
	b.ResetTimer()
	for i, r := range recs {
		nc.Publish("agent.chat", r)
		// Keep the publisher within the tap's queue: a benchmark of
		// throughput, not of the drop path.
		for int64(i)-sink.n.Load() > 4096 {
			time.Sleep(50 * time.Microsecond)
		}
	}
	nc.Flush()
	for sink.n.Load()+int64(stats.Drops[tap.DropQueueFull].Load()) < int64(b.N) {
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	cancel()
	<-done
	if d := stats.Drops[tap.DropQueueFull].Load(); d > 0 {
		b.Logf("%d messages dropped by the tap's queue", d)
	}
	b.ReportMetric(float64(sink.n.Load())/b.Elapsed().Seconds(), "records/s")
}
