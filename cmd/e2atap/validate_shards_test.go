package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/internal/gen"
)

// TestValidateShardsSameOnFaultyTraffic: generated traffic with every
// fault, interrupts that cancel streams of other shards, undecodable and
// oversize lines, records without a request_id, blank lines, a file read
// in place (mapped) followed by the same bytes from standard input, gives
// byte-identical findings and summary for --shards 1, 2 and 4, with and
// without --log (which keeps the interrupts' barriers). --shards 8 would run
// 4: --max-streams 65536 gives 4 partitions, one per 16384 streams.
func TestValidateShardsSameOnFaultyTraffic(t *testing.T) {
	cfg := gen.DefaultConfig()
	cfg.Seed, cfg.FaultRate, cfg.InterruptRate, cfg.Concurrent = 17, 0.3, 0.1, 200
	g := gen.New(cfg)
	var b bytes.Buffer
	records := 12000 // 11 MB
	if raceEnabled {
		records = 4000 // 12 reads, each ten times dearer under the race detector
	}
	for i := 0; i < records; i++ {
		switch i % 997 {
		case 5:
			b.WriteString("{\"request_id\": \"cut-" + fmt.Sprint(i) + "\", \"sequence\": \n")
		case 11:
			b.WriteString(`{"protocol_version":"1.0","status":"in_progress","sequence":1}` + "\n")
		case 13:
			b.WriteString("  \n\n")
		case 17:
			b.WriteString(`{"request_id":"big","pad":"` + strings.Repeat("x", 5000) + "\"}\n")
		}
		b.Write(g.Next().Data)
		b.WriteByte('\n')
	}
	if b.Len() < 2<<20 {
		t.Fatalf("capture of %d bytes: too small to be mapped", b.Len())
	}
	capture := filepath.Join(t.TempDir(), "faulty.jsonl")
	if err := os.WriteFile(capture, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, log := range []bool{false, true} {
		var first string
		for _, shards := range []string{"1", "2", "4"} {
			args := []string{"validate", "--output", "json", "--fail-on", "never", "--max-line-bytes", "4096", "--max-streams", "65536", "--shards", shards}
			if log {
				args = append(args, "--log", filepath.Join(t.TempDir(), "records.jsonl"))
			}
			var out, errb bytes.Buffer
			code := run(context.Background(), append(args, capture, "-"), bytes.NewReader(b.Bytes()), &out, &errb)
			if code != exitOK {
				t.Fatalf("--shards %s: exit %d\n%s", shards, code, errb.String())
			}
			var summary []string
			for _, l := range strings.Split(timing.ReplaceAllString(errb.String(), "in T (R records/s)"), "\n") {
				if !strings.Contains(l, "capped at") {
					summary = append(summary, l)
				}
			}
			got := out.String() + "--- summary\n" + strings.Join(summary, "\n")
			for _, want := range []string{`"e2a.decode"`, `"e2a.missing_final"`, "cancelled"} {
				if !strings.Contains(got, want) {
					t.Fatalf("--shards %s: no %s in the output\n%.2000s", shards, want, got)
				}
			}
			if first == "" {
				first = got
				continue
			}
			if got != first {
				t.Errorf("--shards %s (--log %t): output differs from --shards 1", shards, log)
			}
		}
	}
}
