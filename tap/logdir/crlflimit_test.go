package logdir

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap"
)

// TestCRLFLineAtTheLimit: a line of exactly MaxLineBytes that ends with
// CR LF is a line within the limit (the CR is not content: the line is
// emitted without it), also when the tailer reads its CR before its LF
// (a writer's two writes, a read that ends between them). The tailer
// took the CR with no LF yet for one byte over the limit, dropped the
// line as oversize, and the engine gapped its stream.
func TestCRLFLineAtTheLimit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jsonl")
	cfg := testConfig(dir, "*.jsonl")
	cfg.MaxLineBytes = 1000
	var mu sync.Mutex
	var oversize []int64
	cfg.OnOversize = func(_ tap.Position, n int64, _ []byte) {
		mu.Lock()
		oversize = append(oversize, n)
		mu.Unlock()
	}
	line := `{"pad":"` + strings.Repeat("p", cfg.MaxLineBytes-10) + `"}`
	if len(line) != cfg.MaxLineBytes {
		t.Fatalf("line of %d bytes", len(line))
	}
	// One write: the line before it, the line and its CR.
	appendFile(t, path, "{\"a\":1}\r\n"+line+"\r")
	var c collector
	r := start(t, cfg, c.emit)
	waitFor(t, 10*time.Second, "the line before", func() bool { return c.len() >= 1 })
	appendFile(t, path, "\n{\"b\":2}\r\n")
	waitFor(t, 10*time.Second, "the line after", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return c.len() >= 3 || c.len() >= 2 && len(oversize) > 0
	})
	r.stop(t)
	msgs := c.snapshot()
	if len(msgs) != 3 || string(msgs[1].Data) != line || string(msgs[2].Data) != `{"b":2}` {
		var got []string
		for _, m := range msgs {
			got = append(got, string(m.Data[:min(len(m.Data), 20)]))
		}
		t.Fatalf("lines %q (oversize %v), want the line at the limit between the two others", got, oversize)
	}
	if len(oversize) != 0 {
		t.Errorf("oversize reports %v", oversize)
	}
}

// TestOversizeLengthLFAfterCR: the length reported for a line over
// MaxLineBytes is its content, without its CR LF or LF, as offline
// validate counts it ("line of N bytes"), also when the tailer reads the
// CR before the LF (a writer's two writes; a read that ends between them):
// within the first buffer (a line of 3000 bytes) and past it (200,000
// bytes: the CR ends a read of the discarded rest). The tailer counted
// such a CR as content: one byte more than validate reported for the same
// line.
func TestOversizeLengthLFAfterCR(t *testing.T) {
	for _, n := range []int{3000, 200000} {
		for _, eol := range []string{"\n", "\r\n"} {
			t.Run(fmt.Sprintf("%d bytes %q", n, eol), func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "app.jsonl")
				cfg := testConfig(dir, "*.jsonl")
				cfg.MaxLineBytes = 1000
				var mu sync.Mutex
				var oversize []int64
				cfg.OnOversize = func(_ tap.Position, n int64, _ []byte) {
					mu.Lock()
					oversize = append(oversize, n)
					mu.Unlock()
				}
				line := `{"pad":"` + strings.Repeat("p", n-10) + `"}`
				// One write: the line before it, the long line and the
				// first byte of its end of line (CR, or none).
				appendFile(t, path, "{\"a\":1}"+eol+line+eol[:len(eol)-1])
				var c collector
				r := start(t, cfg, c.emit)
				waitFor(t, 10*time.Second, "the line before", func() bool { return c.len() >= 1 })
				appendFile(t, path, "\n{\"b\":2}"+eol)
				waitFor(t, 10*time.Second, "the line after", func() bool { return c.len() >= 2 })
				r.stop(t)
				mu.Lock()
				defer mu.Unlock()
				if len(oversize) != 1 || oversize[0] != int64(len(line)) {
					t.Errorf("oversize reports %v, want one of %d bytes (the line's content)", oversize, len(line))
				}
			})
		}
	}
}
