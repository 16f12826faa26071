package logdir

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRewrittenWholeAndRenamedOver: a writer that saves its log whole
// each time (a temp file renamed over it: transcript and session stores)
// makes a new file of the same name with the old content first. Its
// lines are read once: the new file goes on from where the old one was
// read to. Before, it was read again from 0 and every record was judged
// twice (e2a.seq_regress, e2a.seq_dup). A rewrite that does not hold the
// old content whole is a new file, read from 0.
func TestRewrittenWholeAndRenamedOver(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "session.jsonl")
	cfg := testConfig(dir, "*.jsonl")
	save := func(gen int, ns []int) {
		t.Helper()
		var b strings.Builder
		for _, n := range ns {
			b.WriteString(numbered(gen, n) + "\n")
		}
		tmp := filepath.Join(dir, ".session.tmp")
		if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	save(0, seq(1, 10))
	var c collector
	r := start(t, cfg, c.emit)
	waitFor(t, 5*time.Second, "the first save", func() bool { return c.len() >= 10 })
	save(0, seq(1, 25))
	waitFor(t, 5*time.Second, "the second save", func() bool { return c.len() >= 25 })
	save(0, seq(1, 40))
	waitFor(t, 5*time.Second, "the third save", func() bool { return c.len() >= 40 })
	save(1, seq(1, 5)) // another session's file: new content
	waitFor(t, 5*time.Second, "the new file", func() bool { return c.len() >= 45 })
	time.Sleep(10 * cfg.PollInterval)
	r.stop(t)
	var got []int
	for _, m := range c.snapshot() {
		gen, n := parseNumbered(t, m.Data)
		got = append(got, gen*100+n)
	}
	want := seq(1, 40)
	for n := 101; n <= 105; n++ {
		want = append(want, n)
	}
	if !slices.Equal(got, want) {
		t.Errorf("lines %v, want %v", got, want)
	}
	if l := c.losses(); len(l) != 0 {
		t.Errorf("losses %+v", l)
	}
}
