package logdir

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/tap/logdir/positions"
)

func TestValidate(t *testing.T) {
	if err := func() error { c := DefaultConfig(); c.Name, c.Paths = "x", []string{"/a/*.jsonl"}; return c.Validate() }(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	bad := Config{Paths: []string{"/a/[", ""}, StartAt: "middle"}
	err := bad.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"name", "syntax error", "empty pattern", "max_line_bytes", "poll_interval",
		"rescan_interval", "save_interval", "start_at"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
	if _, err := New(bad, nil, nil); err == nil {
		t.Error("New accepted a bad config")
	}
}

// (1) Lines appended in bursts, some split in the middle, arrive in order,
// exactly once, with their positions.
func TestBurstsInOrderExactlyOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jsonl")
	var c collector
	r := start(t, testConfig(dir, "*.jsonl"), c.emit)

	const total = 5000
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	var want []string
	var buf []byte
	for n := 1; n <= total; n++ {
		line := numbered(0, n)
		if n%7 == 0 {
			line += "\r" // CRLF lines lose the \r too
		}
		want = append(want, strings.TrimSuffix(line, "\r"))
		buf = append(buf, line...)
		buf = append(buf, '\n')
		if rng.IntN(50) == 0 || n == total {
			cut := rng.IntN(len(buf)) // split a line across two writes
			f.Write(buf[:cut])
			time.Sleep(time.Millisecond)
			f.Write(buf[cut:])
			buf = buf[:0]
		}
	}
	waitFor(t, 20*time.Second, "all lines", func() bool { return c.len() >= total })
	time.Sleep(30 * time.Millisecond) // anything extra would show up now
	r.stop(t)

	msgs := c.snapshot()
	var got []string
	var off int64
	for i, m := range msgs {
		got = append(got, string(m.Data))
		wantPos := tap.Position{Kind: tap.PosLine, Name: path, Line: int64(i + 1), Offset: off}
		if m.Pos != wantPos || m.Tap != "logs" || !m.FromLog || m.Dir != tap.DirNone || m.Gap || m.Time.IsZero() || m.Charged != 0 {
			t.Fatalf("message %d: %+v, want pos %+v", i, m, wantPos)
		}
		off += int64(len(m.Data)) + 1
		if (i+1)%7 == 0 {
			off++
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("lines (-want +got):\n%s", diff)
	}
	if n := r.stats.Messages[tap.DirNone].Load(); n != total {
		t.Errorf("Stats messages = %d, want %d", n, total)
	}
	if r.stats.Up.Load() {
		t.Error("Up after Run returned")
	}
	if lag := r.stats.Lag.Load(); lag != 0 {
		t.Errorf("Lag = %d after reading everything", lag)
	}
}

// (2) Rename rotation under load: every line arrives exactly once and in
// order per file, including the lines the writer put into a file after the
// tailer last looked and before it was renamed away (and, one rotation
// later, deleted by being renamed over).
func TestRenameRotationUnderLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jsonl")
	var c collector
	r := start(t, testConfig(dir, "*.jsonl"), c.emit)

	// Like logrotate's "create" mode: the file is renamed while the writer
	// still holds it, the writer puts a few more lines into the renamed
	// file, then opens a new file at the name. A generation lives a little
	// longer than a rescan interval (a file created and rotated out of the
	// globs before the tailer ever looks is never seen: see doc.go).
	const total, perFile, afterRename = 6000, 400, 5
	writerDone := make(chan error, 1)
	go func() {
		writerDone <- func() error {
			var f *os.File
			for n := 1; n <= total; n++ {
				gen, i := (n-1)/perFile, (n-1)%perFile
				switch i {
				case 0:
					if f != nil {
						f.Close()
					}
					var err error
					if f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o644); err != nil {
						return err
					}
				case perFile - afterRename:
					// name → name.1; the previous name.1 is unlinked.
					if err := os.Rename(path, path+".1"); err != nil {
						return err
					}
				}
				if _, err := f.WriteString(numbered(gen, n) + "\n"); err != nil {
					return err
				}
				if n%25 == 0 {
					time.Sleep(3 * time.Millisecond)
				}
			}
			return f.Close()
		}()
	}()
	if err := <-writerDone; err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for c.len() < total && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	r.stop(t)
	if c.len() < total {
		have := make(map[int]bool)
		for _, m := range c.snapshot() {
			_, n := parseNumbered(t, m.Data)
			have[n] = true
		}
		var missing []int
		for n := 1; n <= total; n++ {
			if !have[n] {
				missing = append(missing, n)
			}
		}
		t.Fatalf("%d lines missing: %v", len(missing), missing[:min(len(missing), 20)])
	}

	seen := make(map[int]bool)
	last := make(map[int]int)    // gen → last n
	lines := make(map[int]int64) // gen → last Pos.Line
	for _, m := range c.snapshot() {
		gen, n := parseNumbered(t, m.Data)
		if seen[n] {
			t.Fatalf("line %d twice", n)
		}
		seen[n] = true
		if n <= last[gen] {
			t.Fatalf("gen %d: line %d after %d", gen, n, last[gen])
		}
		last[gen] = n
		if want := int64(n - gen*perFile); m.Pos.Line != want {
			t.Fatalf("line %d: Pos.Line = %d, want %d (line within its file)", n, m.Pos.Line, want)
		}
		lines[gen] = m.Pos.Line
	}
	if len(seen) != total {
		t.Fatalf("got %d distinct lines, want %d", len(seen), total)
	}
	if d := r.stats.Drops[tap.DropUpstreamGap].Load(); d != 0 {
		t.Errorf("rename rotation counted %d gaps", d)
	}
}

// (3) Copy-truncate under load. A writer appends while a rotator copies
// the file and truncates it, as logrotate's copytruncate does (with a
// random pause in between, its race window). What this proves: no line is
// emitted twice, lines come in file order (the rest of each generation
// from its copy), and the only lines ever lost are, in each generation, a
// suffix: those appended between the copy and the truncation, in neither
// file. Each truncation where the tailer saw more than the copy holds is
// one counted loss and one Lost message. Lines written after a truncation
// are never lost.
func TestCopyTruncateUnderLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jsonl")
	var c collector
	r := start(t, testConfig(dir, "app.jsonl"), c.emit)

	const total, rotations = 8000, 8
	var written atomic.Int64
	writerDone := make(chan error, 1)
	go func() {
		writerDone <- func() error {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				return err
			}
			defer f.Close()
			for n := 1; n <= total; n++ {
				if _, err := f.WriteString(numbered(0, n) + "\n"); err != nil {
					return err
				}
				written.Store(int64(n))
				if n%40 == 0 {
					time.Sleep(300 * time.Microsecond)
				}
			}
			return nil
		}()
	}()
	// The rotator: copy to a name the glob does not match, then truncate.
	// starts[g] is the first line of generation g+1 (from the next copy or
	// the live file), learnt afterwards from the copies.
	for i := 1; i <= rotations; i++ {
		target := int64(i * total / (rotations + 2))
		waitFor(t, 20*time.Second, "writer progress", func() bool { return written.Load() >= target })
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "copy."+string(rune('a'+i))), data, 0o644); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond) // the race window
		if err := os.Truncate(path, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-writerDone; err != nil {
		t.Fatal(err)
	}
	// Generation boundaries: each copy starts where the previous truncation
	// cut; the live file holds the last generation.
	var genStart []int
	for i := 1; i <= rotations; i++ {
		data, _ := os.ReadFile(filepath.Join(dir, "copy."+string(rune('a'+i))))
		if len(data) == 0 {
			continue
		}
		_, n := parseNumbered(t, data[:bytes.IndexByte(data, '\n')])
		genStart = append(genStart, n)
	}
	live, _ := os.ReadFile(path)
	_, liveFirst := parseNumbered(t, live[:bytes.IndexByte(live, '\n')])
	genStart = append(genStart, liveFirst, total+1)

	// The last generation is never truncated: all of it must arrive.
	waitFor(t, 20*time.Second, "the live file's lines", func() bool {
		ms := c.snapshot()
		return len(ms) > 0 && func() bool { _, n := parseNumbered(t, ms[len(ms)-1].Data); return n == total }()
	})
	r.stop(t)

	got := make(map[int]bool)
	prev, fromCopies := 0, 0
	for _, m := range c.snapshot() {
		_, n := parseNumbered(t, m.Data)
		if n <= prev {
			t.Fatalf("line %d after %d: duplicate or out of order", n, prev)
		}
		prev = n
		got[n] = true
		if m.Pos.Name != path {
			fromCopies++
		}
	}
	lost := 0
	for g := 0; g+1 < len(genStart); g++ {
		// Within a generation, once a line is missing every later line of
		// that generation is missing too.
		missing := false
		for n := genStart[g]; n < genStart[g+1]; n++ {
			switch {
			case !got[n]:
				missing = true
				lost++
			case missing:
				t.Fatalf("generation starting at %d: line %d arrived after an earlier line was lost", genStart[g], n)
			}
		}
	}
	for n := liveFirst; n <= total; n++ {
		if !got[n] {
			t.Fatalf("line %d, written after the last truncation, was lost", n)
		}
	}
	// A loss is counted only where the tailer saw more than the copy
	// holds; each is one Lost control message.
	drops := int(r.stats.Drops[tap.DropTruncated].Load())
	if drops > rotations {
		t.Errorf("truncations counted as losses = %d, more than %d rotations", drops, rotations)
	}
	if n := len(c.losses()); n != drops {
		t.Errorf("Lost messages = %d, losses counted = %d", n, drops)
	}
	t.Logf("%d rotations, %d losses counted, %d lines read from the copies, %d of %d lines lost in the copy-truncate windows",
		rotations, drops, fromCopies, lost, total)

}

// (4) A partial last line waits for its newline, and on shutdown its offset
// is not committed.
func TestPartialLineWaits(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jsonl")
	cfg := testConfig(dir, "*.jsonl")
	appendFile(t, path, `{"a":1}`+"\n"+`{"b":`)
	var c collector
	r := start(t, cfg, c.emit)
	waitFor(t, 5*time.Second, "first line", func() bool { return c.len() >= 1 })
	time.Sleep(5 * cfg.PollInterval)
	if n := c.len(); n != 1 {
		t.Fatalf("%d messages before the newline, want 1", n)
	}
	appendFile(t, path, `2}`)
	time.Sleep(5 * cfg.PollInterval)
	if n := c.len(); n != 1 {
		t.Fatalf("%d messages before the newline, want 1", n)
	}
	r.stop(t)
	entries, _, err := positions.Load(cfg.Positions)
	if err != nil || len(entries) != 1 {
		t.Fatalf("positions: %v %+v", err, entries)
	}
	if e := entries[0]; e.Offset != 8 || e.Line != 1 {
		t.Fatalf("committed offset %d line %d, want 8 1 (the partial line is not committed)", e.Offset, e.Line)
	}

	// The next run reads the completed line, whole, once.
	appendFile(t, path, "\n")
	r = start(t, cfg, c.emit)
	waitFor(t, 5*time.Second, "second line", func() bool { return c.len() >= 2 })
	time.Sleep(5 * cfg.PollInterval)
	r.stop(t)
	var got []string
	for _, m := range c.snapshot() {
		got = append(got, string(m.Data))
	}
	if diff := cmp.Diff([]string{`{"a":1}`, `{"b":2}`}, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if m := c.snapshot()[1]; m.Pos.Line != 2 || m.Pos.Offset != 8 {
		t.Errorf("second line at %+v", m.Pos)
	}
}

// A byte order mark at the start of a file is not part of its first line;
// positions still count it (they are file offsets).
func TestByteOrderMarkSkipped(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jsonl")
	cfg := testConfig(dir, "*.jsonl")
	appendFile(t, path, "\xef\xbb\xbf"+`{"a":1}`+"\n"+"\xef\xbb\xbf"+`{"b":2}`+"\n")
	var c collector
	r := start(t, cfg, c.emit)
	waitFor(t, 5*time.Second, "two lines", func() bool { return c.len() >= 2 })
	r.stop(t)
	msgs := c.snapshot()
	var got []string
	for _, m := range msgs {
		got = append(got, string(m.Data))
	}
	// Only the file's first bytes are a byte order mark; a later one is
	// the line's own (and the engine says so).
	if diff := cmp.Diff([]string{`{"a":1}`, "\xef\xbb\xbf" + `{"b":2}`}, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if p := msgs[1].Pos; p.Offset != 11 || p.Line != 2 {
		t.Errorf("second line at %+v, want offset 11 line 2", p)
	}
}

// (5) A 50 MiB line with a 1 MiB limit is skipped without being held: the
// tailer's buffers stay near the limit and the allocation during the run
// stays far below the line's size. It is counted and reported with its
// head, and the next line is fine; no loss is reported for the tap.
func TestOversizeLineNotBuffered(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jsonl")
	cfg := testConfig(dir, "*.jsonl")
	cfg.MaxLineBytes = 1 << 20
	const huge = 50 << 20
	type report struct {
		pos     tap.Position
		n       int64
		headLen int
		headOK  bool
	}
	var reports []report
	var mu sync.Mutex
	cfg.OnOversize = func(pos tap.Position, n int64, head []byte) {
		mu.Lock()
		reports = append(reports, report{pos, n, len(head), bytes.Count(head, []byte("x")) == len(head)})
		mu.Unlock()
	}
	stats := new(tap.Stats)
	tl, err := New(cfg, stats, nil)
	if err != nil {
		t.Fatal(err)
	}

	first := `{"first":true}`
	appendFile(t, path, first+"\n")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var c collector
	r := startTailer(t, tl, stats, c.emit)
	waitFor(t, 5*time.Second, "first line", func() bool { return c.len() >= 1 })

	// Write the huge line while the tailer reads it, from one reused chunk.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	for i := 0; i < huge/len(chunk); i++ {
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	last := `{"last":true}`
	f.WriteString("\n" + last + "\n")
	f.Close()
	waitFor(t, 20*time.Second, "last line", func() bool { return c.len() >= 2 })
	r.stop(t)
	runtime.ReadMemStats(&after)

	msgs := c.snapshot()
	if len(msgs) != 2 || string(msgs[0].Data) != first || string(msgs[1].Data) != last {
		t.Fatalf("messages: %d", len(msgs))
	}
	// The oversize line is reported on its own (OnOversize): the next
	// line is not a Gap, which would make every open stream unjudgeable.
	if m := msgs[1]; m.Pos.Line != 3 || m.Pos.Offset != int64(len(first)+1+huge+1) {
		t.Errorf("line after the oversize one: pos %+v", m.Pos)
	}
	if l := c.losses(); len(l) != 0 {
		t.Errorf("losses %+v: an oversize line gaps its own stream only", l)
	}
	if n := stats.Messages[tap.DirNone].Load(); n != 3 {
		t.Errorf("messages = %d, want 3 (the dropped line counts as seen)", n)
	}
	want := []report{{tap.Position{Kind: tap.PosLine, Name: path, Offset: int64(len(first) + 1), Line: 2}, huge, OversizeHead, true}}
	if diff := cmp.Diff(want, reports, cmp.AllowUnexported(report{})); diff != "" {
		t.Errorf("OnOversize (-want +got):\n%s", diff)
	}
	if d := stats.Drops[tap.DropOversize].Load(); d != 1 {
		t.Errorf("DropOversize = %d", d)
	}
	if tl.maxBuf > cfg.MaxLineBytes+readSize {
		t.Errorf("largest buffer %d bytes, limit %d", tl.maxBuf, cfg.MaxLineBytes+readSize)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("allocated %d MiB while skipping a %d MiB line", alloc>>20, huge>>20)
	}
	t.Logf("largest buffer %d KiB, allocated %d KiB during the run", tl.maxBuf>>10, (after.TotalAlloc-before.TotalAlloc)>>10)
}

// Short lines over a small limit, found whole in one read.
func TestOversizeSmallLimit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jsonl")
	cfg := testConfig(dir, "*.jsonl")
	cfg.MaxLineBytes = 10
	var sizes []int64
	var heads []string
	cfg.OnOversize = func(_ tap.Position, n int64, head []byte) {
		sizes = append(sizes, n)
		heads = append(heads, string(head))
	}
	appendFile(t, path, "short\n"+strings.Repeat("y", 11)+"\n0123456789\n"+strings.Repeat("z", 500)+"\nend\n")
	var c collector
	r := start(t, cfg, c.emit)
	waitFor(t, 5*time.Second, "lines", func() bool { return c.len() >= 3 })
	r.stop(t)
	var got []string
	for _, m := range c.snapshot() {
		got = append(got, string(m.Data))
	}
	if diff := cmp.Diff([]string{"short", "0123456789", "end"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{11, 500}, sizes); diff != "" {
		t.Errorf("oversize lengths (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{strings.Repeat("y", 11), strings.Repeat("z", 500)}, heads); diff != "" {
		t.Errorf("oversize heads (-want +got):\n%s", diff)
	}
}

func writeNumbered(t testing.TB, path string, from, to int) {
	t.Helper()
	var b strings.Builder
	for n := from; n <= to; n++ {
		b.WriteString(numbered(0, n))
		b.WriteByte('\n')
	}
	appendFile(t, path, b.String())
}

// (6) Restart after a clean shutdown in the middle of a file: every line is
// processed exactly once across the two runs.
func TestRestartCleanExactlyOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jsonl")
	cfg := testConfig(dir, "*.jsonl")
	const total, stopAt = 20000, 7000
	writeNumbered(t, path, 1, total/2)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var a collector
	a.after = func(n int) {
		if n == stopAt {
			cancel() // the engine is shutting down: it refuses what comes next
		}
	}
	tl, err := New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.Run(ctx, a.emit); err != nil {
		t.Fatal(err)
	}
	writeNumbered(t, path, total/2+1, total)

	var b collector
	r := start(t, cfg, b.emit)
	waitFor(t, 20*time.Second, "the rest", func() bool { return b.len() >= total-stopAt })
	time.Sleep(50 * time.Millisecond)
	r.stop(t)

	all := append(a.snapshot(), b.snapshot()...)
	if len(a.snapshot()) != stopAt || len(all) != total {
		t.Fatalf("first run %d lines, both %d; want %d, %d", a.len(), len(all), stopAt, total)
	}
	for i, m := range all {
		if _, n := parseNumbered(t, m.Data); n != i+1 || m.Pos.Line != int64(n) {
			t.Fatalf("message %d is line %d (Pos.Line %d)", i, n, m.Pos.Line)
		}
	}
}

// (6, crash) The first run dies without its final save, as under SIGKILL.
// What holds: nothing is lost, and the second run repeats exactly the lines
// accepted after the last periodic save, with the same positions.
func TestRestartAfterCrash(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jsonl")
	cfg := testConfig(dir, "*.jsonl")
	cfg.SaveInterval = 5 * time.Millisecond
	const total, crashAt = 20000, 13000
	writeNumbered(t, path, 1, total)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var a collector
	a.after = func(n int) {
		if n%1000 == 0 {
			time.Sleep(cfg.SaveInterval) // let periodic saves happen
		}
		if n == crashAt {
			cancel()
		}
	}
	tl, err := New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tl.noFinalSave = true
	if err := tl.Run(ctx, a.emit); err != nil {
		t.Fatal(err)
	}
	entries, _, err := positions.Load(cfg.Positions)
	if err != nil || len(entries) != 1 {
		t.Fatalf("positions: %v %+v", err, entries)
	}
	saved := entries[0]
	if saved.Line <= 0 || saved.Line >= crashAt {
		t.Fatalf("last periodic save at line %d; the test wants one strictly inside the first run", saved.Line)
	}

	var b collector
	r := start(t, cfg, b.emit)
	waitFor(t, 20*time.Second, "the rest", func() bool { return b.len() >= total-int(saved.Line) })
	time.Sleep(50 * time.Millisecond)
	r.stop(t)

	am, bm := a.snapshot(), b.snapshot()
	if len(bm) != total-int(saved.Line) {
		t.Fatalf("second run: %d lines, want %d", len(bm), total-int(saved.Line))
	}
	for i, m := range bm {
		if _, n := parseNumbered(t, m.Data); n != int(saved.Line)+1+i {
			t.Fatalf("second run message %d is line %d", i, n)
		}
	}
	// The repeated lines are exactly those after the save, same positions.
	for _, m := range bm[:crashAt-int(saved.Line)] {
		if orig := am[m.Pos.Line-1]; orig.Pos != m.Pos || !bytes.Equal(orig.Data, m.Data) {
			t.Fatalf("repeat differs: %+v vs %+v", orig.Pos, m.Pos)
		}
	}
	t.Logf("crash after line %d, last save at line %d: %d lines repeated, none lost", crashAt, saved.Line, crashAt-int(saved.Line))
}

// A file truncated while the tailer was down is read from the start, and
// the gap is counted; a positions file, once it exists, makes unknown files
// start at the beginning even with StartAt "end".
func TestRestartTruncatedWhileDown(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jsonl")
	cfg := testConfig(dir, "*.jsonl")
	cfg.StartAt = StartEnd
	writeNumbered(t, path, 1, 10)
	var a collector
	r := start(t, cfg, a.emit)
	time.Sleep(5 * cfg.PollInterval)
	writeNumbered(t, path, 11, 12)
	waitFor(t, 5*time.Second, "appended lines", func() bool { return a.len() >= 2 })
	r.stop(t)
	if _, n := parseNumbered(t, a.snapshot()[0].Data); n != 11 || a.len() != 2 {
		t.Fatalf("StartAt end: first line %d, %d lines", n, a.len())
	}

	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	writeNumbered(t, path, 100, 102)
	writeNumbered(t, filepath.Join(dir, "new.jsonl"), 200, 201)
	var b collector
	r = start(t, cfg, b.emit)
	waitFor(t, 5*time.Second, "lines", func() bool { return b.len() >= 5 })
	r.stop(t)
	var got []int
	for _, m := range b.snapshot() {
		_, n := parseNumbered(t, m.Data)
		got = append(got, n)
	}
	if diff := cmp.Diff([]int{100, 101, 102, 200, 201}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if d := r.stats.Drops[tap.DropTruncated].Load(); d != 1 {
		t.Errorf("DropTruncated = %d", d)
	}
	if l := b.losses(); len(l) != 1 || l[0].after != 0 || l[0].LossReason != tap.DropTruncated {
		t.Errorf("losses %+v, want one before the first line", l)
	}
}

// (8) A glob whose directory does not exist yet.
func TestDirectoryAppearsLater(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir, "later/*/*.jsonl")
	var c collector
	r := start(t, cfg, c.emit)
	waitFor(t, 5*time.Second, "Up", r.stats.Up.Load)
	time.Sleep(3 * cfg.PollInterval)
	sub := filepath.Join(dir, "later", "agent")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	writeNumbered(t, filepath.Join(sub, "a.jsonl"), 1, 3)
	writeNumbered(t, filepath.Join(sub, "b.txt"), 1, 3) // not matched
	waitFor(t, 5*time.Second, "lines", func() bool { return c.len() >= 3 })
	time.Sleep(3 * cfg.RescanInterval)
	r.stop(t)
	if n := c.len(); n != 3 {
		t.Fatalf("%d lines, want 3", n)
	}
}

// Many files at once; a deleted file is finished and then dropped.
func TestManyFilesAndDeletion(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir, "*.jsonl")
	var c collector
	r := start(t, cfg, c.emit)
	const files, per = 20, 200
	for i := range files {
		writeNumbered(t, filepath.Join(dir, string(rune('a'+i))+".jsonl"), 1, per/2)
	}
	waitFor(t, 10*time.Second, "first half", func() bool { return c.len() >= files*per/2 })
	for i := range files {
		p := filepath.Join(dir, string(rune('a'+i))+".jsonl")
		writeNumbered(t, p, per/2+1, per)
		if i%2 == 0 {
			os.Remove(p) // written, then deleted before the tailer may have read it
		}
	}
	waitFor(t, 10*time.Second, "all", func() bool { return c.len() >= files*per })
	waitFor(t, 5*time.Second, "deleted files closed", func() bool {
		entries, _, _ := positions.Load(cfg.Positions)
		return len(entries) == files/2
	})
	r.stop(t)
	perFile := make(map[string]int)
	for _, m := range c.snapshot() {
		_, n := parseNumbered(t, m.Data)
		if n != perFile[m.Pos.Name]+1 {
			t.Fatalf("%s: line %d after %d", m.Pos.Name, n, perFile[m.Pos.Name])
		}
		perFile[m.Pos.Name] = n
	}
	if len(perFile) != files {
		t.Fatalf("%d files seen", len(perFile))
	}
}

// A failing emit stops Run with its error; the line it failed on is not
// committed and comes again on the next run.
func TestEmitErrorStopsAndLineComesAgain(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir, "*.jsonl")
	writeNumbered(t, filepath.Join(dir, "a.jsonl"), 1, 5)
	tl, err := New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	err = tl.Run(context.Background(), func(_ context.Context, m tap.Message) error {
		if calls++; calls == 3 {
			return errStop
		}
		return nil
	})
	if !errors.Is(err, errStop) {
		t.Fatalf("Run = %v", err)
	}
	var c collector
	r := start(t, cfg, c.emit)
	waitFor(t, 5*time.Second, "lines", func() bool { return c.len() >= 3 })
	r.stop(t)
	if _, n := parseNumbered(t, c.snapshot()[0].Data); n != 3 || c.len() != 3 {
		t.Fatalf("second run starts at line %d with %d lines", n, c.len())
	}
}
