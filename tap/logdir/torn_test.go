package logdir

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap"
)

// TestTruncationCutALine: a writer that buffers its output (stdio, a
// logging library flushing in blocks) has written half of line 21 when
// the file is copy-truncated (with a copy, or cut with none), and writes
// the rest of it at the start of the truncated file. That rest is dropped
// with the loss the truncation counts, never handed over as a line: the
// engine judged it an e2a.decode that no agent wrote. A writer that starts
// afresh loses its half line, and its first line is read.
func TestTruncationCutALine(t *testing.T) {
	line21 := numbered(0, 21)
	for _, tc := range []struct {
		name  string
		copy  bool
		after string // written to the truncated file before lines 22..30
		want  []int  // the lines read, in order
	}{
		{"copy, rest written", true, line21[25:] + "\n", append(seq(1, 20), seq(22, 30)...)},
		{"no copy, rest written", false, line21[25:] + "\n", append(seq(1, 20), seq(22, 30)...)},
		{"copy, writer starts afresh", true, "", append(seq(1, 20), seq(22, 30)...)},
		{"no copy, writer starts afresh", false, "", append(seq(1, 20), seq(22, 30)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "app.jsonl")
			cfg := testConfig(dir, "*.jsonl")
			writeNumbered(t, path, 1, 20)
			var c collector
			r := start(t, cfg, c.emit)
			waitFor(t, 5*time.Second, "the first lines", func() bool { return c.len() >= 20 })
			appendFile(t, path, line21[:25])  // half a line, flushed
			time.Sleep(10 * cfg.PollInterval) // held by the tailer
			if tc.copy {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path+".1", b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
			appendFile(t, path, tc.after)
			writeNumbered(t, path, 22, 30)
			waitFor(t, 5*time.Second, "line 30", func() bool {
				ms := c.snapshot()
				_, n := parseNumbered(t, ms[len(ms)-1].Data)
				return n == 30
			})
			time.Sleep(5 * cfg.PollInterval)
			r.stop(t)
			var got []int
			for _, m := range c.snapshot() {
				_, n := parseNumbered(t, m.Data) // fails on a torn line
				got = append(got, n)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("lines %v, want %v", got, tc.want)
			}
			if l := c.losses(); len(l) != 1 || l[0].LossReason != tap.DropTruncated {
				t.Errorf("losses %+v, want one DropTruncated", l)
			}
		})
	}
}

func seq(from, to int) []int {
	var s []int
	for n := from; n <= to; n++ {
		s = append(s, n)
	}
	return s
}
