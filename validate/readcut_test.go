package validate

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadCutLineNotJudged: a line that a failed read cuts (an I/O error,
// validate interrupted: cmd/e2atap) did not end there, and is not judged
// as one: no e2a.decode that no producer wrote; the complete lines before
// it are judged and the error returned. At the end of the input the last
// line without a newline is a line (TestReadLastLineWithoutNewline).
func TestReadCutLineNotJudged(t *testing.T) {
	cut := errors.New("cut")
	for _, tc := range []struct {
		name string
		tail string
	}{
		{"short", resp(1, "request_id", "a")[:40]},
		{"long", refOrder("a", 1, strings.Repeat("x", 600<<10))[:500<<10]}, // past bufio's buffer
	} {
		t.Run(tc.name, func(t *testing.T) {
			col := &collector{}
			cfg := DefaultConfig()
			cfg.IdleTimeout = 0
			e := NewEngine(cfg, col)
			r := io.MultiReader(strings.NewReader(resp(0, "request_id", "a")+"\n"+tc.tail), iotest.ErrReader(cut))
			last, err := Read(r, "cap", FormatJSONL, ReadOptions{}, e)
			if !errors.Is(err, cut) {
				t.Fatalf("error %v, want the read's", err)
			}
			if last != 1 {
				t.Errorf("last index %d, want 1 (the complete line)", last)
			}
			if len(col.findings) != 0 {
				t.Errorf("findings %+v, want none", col.findings)
			}
		})
	}
}

// TestReadLastLineWithoutNewline: at the end of the input, a last line
// without its newline is judged as a line, in both of readJSONL's ways.
func TestReadLastLineWithoutNewline(t *testing.T) {
	for _, delta := range []string{"x", strings.Repeat("x", 600<<10)} {
		col := &collector{}
		cfg := DefaultConfig()
		cfg.IdleTimeout = 0
		e := NewEngine(cfg, col)
		in := resp(0, "request_id", "a") + "\n" + refOrder("a", 1, delta) + "\n" + final(3, "request_id", "a")[:60]
		last, err := Read(strings.NewReader(in), "cap", FormatJSONL, ReadOptions{}, e)
		if err != nil || last != 3 {
			t.Fatalf("Read: %d, %v; want 3 records, no error", last, err)
		}
		if len(col.findings) != 1 || col.findings[0].Rule != "e2a.decode" {
			t.Errorf("findings %+v, want one e2a.decode for the cut last line", col.findings)
		}
	}
}
