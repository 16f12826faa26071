package logdir

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/tap/logdir/positions"
)

// Fault tests (issue 8, faults c, e, g, h): real files, real limits. Each
// fails without its fix; the comment says how it failed.

// (c) A corrupt positions file (empty, garbage, cut short) does not stop
// the tap: it is moved aside, counted, and the tap goes on from the files'
// ends after reporting a loss and a rejoin, so nothing is read twice and no
// open stream is judged across what was skipped. New files are read from
// their start. Before: Run returned "positions file is corrupt: EOF" and
// the process exited 1.
func TestCorruptPositionsRecovers(t *testing.T) {
	for name, corrupt := range map[string]func(good []byte) []byte{
		"empty":     func([]byte) []byte { return nil },
		"garbage":   func([]byte) []byte { return []byte("\x00\x17not json at all\xff") },
		"cut short": func(good []byte) []byte { return good[:len(good)/2] },
		"bad value": func(good []byte) []byte { return bytes.Replace(good, []byte(`"offset": `), []byte(`"offset": -`), 1) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "app.jsonl")
			cfg := testConfig(dir, "*.jsonl")
			writeNumbered(t, path, 1, 100)
			var a collector
			r := start(t, cfg, a.emit)
			waitFor(t, 5*time.Second, "first run", func() bool { return a.len() >= 100 })
			r.stop(t)
			good, err := os.ReadFile(cfg.Positions)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cfg.Positions, corrupt(good), 0o644); err != nil {
				t.Fatal(err)
			}
			writeNumbered(t, path, 101, 150) // written while down: skipped, as a loss

			var b collector
			r = start(t, cfg, b.emit)
			waitFor(t, 5*time.Second, "Up", r.stats.Up.Load)
			writeNumbered(t, path, 151, 160)
			writeNumbered(t, filepath.Join(dir, "new.jsonl"), 1, 5)
			waitFor(t, 5*time.Second, "lines after the restart", func() bool { return b.len() >= 15 })
			time.Sleep(5 * cfg.PollInterval)
			r.stop(t) // fails the test if Run returned an error

			perFile := map[string][]int{}
			for _, m := range b.snapshot() {
				_, n := parseNumbered(t, m.Data)
				perFile[filepath.Base(m.Pos.Name)] = append(perFile[filepath.Base(m.Pos.Name)], n)
			}
			if got := perFile["app.jsonl"]; len(got) != 10 || got[0] != 151 || got[9] != 160 {
				t.Errorf("app.jsonl after the corrupt positions: lines %v, want 151..160 (nothing read twice)", got)
			}
			if got := perFile["new.jsonl"]; len(got) != 5 || got[0] != 1 {
				t.Errorf("a new file: lines %v, want 1..5", got)
			}
			l := b.losses()
			if len(l) != 1 || l[0].after != 0 || l[0].LossReason != tap.DropUpstreamGap {
				t.Errorf("losses %+v, want one before any line", l)
			}
			rejoined := false
			for _, c := range b.ctrl {
				rejoined = rejoined || (c.Reconnected && c.after == 0)
			}
			if !rejoined {
				t.Error("no Reconnected before the first line: streams first seen then would be judged as starting mid-stream")
			}
			if n := r.stats.Errors[tap.ErrPositions].Load(); n != 1 {
				t.Errorf("ErrPositions = %d, want 1", n)
			}
			aside, _ := filepath.Glob(cfg.Positions + ".corrupt-*")
			if len(aside) != 1 {
				t.Fatalf("corrupt files kept aside: %v", aside)
			}
			if kept, _ := os.ReadFile(aside[0]); !bytes.Equal(kept, corrupt(good)) {
				t.Error("the file kept aside is not the corrupt one")
			}
			if _, _, err := positions.Load(cfg.Positions); err != nil {
				t.Errorf("the positions file written after recovery: %v", err)
			}
		})
	}
}

// (c) At most keepCorrupt corrupt files are kept aside.
func TestCorruptPositionsKeepsFew(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir, "*.jsonl")
	for i := range keepCorrupt + 3 {
		if err := os.WriteFile(cfg.Positions, []byte("{"), 0o644); err != nil {
			t.Fatal(err)
		}
		var c collector
		r := start(t, cfg, c.emit)
		waitFor(t, 5*time.Second, "Up", r.stats.Up.Load)
		r.stop(t)
		aside, _ := filepath.Glob(cfg.Positions + ".corrupt-*")
		if want := min(i+1, keepCorrupt); len(aside) != want {
			t.Fatalf("run %d: %d files aside, want %d: %v", i, len(aside), want, aside)
		}
	}
}

// (c, more generally) A positions file that cannot be read (here: the path
// is a directory, EISDIR; as root, permissions cannot stand in) keeps the
// tap down and retrying, counted, instead of failing Run; once it can be
// read, the tap starts. A positions file that cannot be written (its
// directory is missing) is counted and retried, never fatal. Before: both
// made Run return an error, which stopped the process.
func TestPositionsUnreadableAndUnwritable(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir, "*.jsonl")
	if err := os.Mkdir(cfg.Positions, 0o755); err != nil {
		t.Fatal(err)
	}
	writeNumbered(t, filepath.Join(dir, "a.jsonl"), 1, 3)
	var c collector
	r := start(t, cfg, c.emit)
	waitFor(t, 5*time.Second, "retries", func() bool { return r.stats.Errors[tap.ErrPositions].Load() >= 2 })
	if r.stats.Up.Load() || c.len() != 0 {
		t.Fatalf("up %v with %d lines while the positions file cannot be read", r.stats.Up.Load(), c.len())
	}
	if err := os.Remove(cfg.Positions); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "lines once it can be read", func() bool { return c.len() >= 3 })
	r.stop(t)

	// Unwritable: the positions file's directory does not exist.
	cfg.Positions = filepath.Join(dir, "missing", "positions.json")
	var d collector
	r = start(t, cfg, d.emit)
	writeNumbered(t, filepath.Join(dir, "b.jsonl"), 1, 3)
	waitFor(t, 5*time.Second, "lines", func() bool { return d.len() >= 6 })
	waitFor(t, 5*time.Second, "failed saves counted", func() bool { return r.stats.Errors[tap.ErrPositions].Load() >= 2 })
	if err := os.Mkdir(filepath.Dir(cfg.Positions), 0o755); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "a save once it can be written", func() bool {
		_, exists, err := positions.Load(cfg.Positions)
		return exists && err == nil
	})
	r.stop(t)
}

// (g) Copy-truncate with a copy: the tailer is held back (a blocking emit)
// while the writer appends, copies the file and truncates it, then writes
// on. Everything arrives once and in order: the old content's rest from the
// copy (positions name the copy), then the new content; no loss is
// reported, so open streams stay judged across the rotation. Before: every
// truncation was a loss (Gap), and the rest of the old content was never
// read.
func TestCopyTruncateFinishesCopy(t *testing.T) {
	for _, tc := range []struct {
		name string
		glob string
		// seenFirst: the tailer's scans see the copy before the truncation.
		seenFirst bool
	}{
		{"copy not matched", "*.jsonl", false},
		{"copy matched, truncation first", "*.jsonl*", false},
		{"copy matched and seen first", "*.jsonl*", true},
	} {
		t.Run(tc.name, func(t *testing.T) { copyTruncate(t, tc.glob, tc.seenFirst) })
	}
}

func copyTruncate(t *testing.T, glob string, seenFirst bool) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jsonl")
	copyPath := path + ".1"
	cfg := testConfig(dir, glob)
	writeNumbered(t, path, 1, 2000)
	gate := make(chan struct{})
	var c collector
	c.after = func(n int) {
		if n == 100 {
			<-gate // the engine is slow: the tailer is behind
		}
	}
	r := start(t, cfg, c.emit)
	waitFor(t, 5*time.Second, "the tailer at line 100", func() bool { return c.len() >= 100 })
	writeNumbered(t, path, 2001, 2500)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copyPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if seenFirst {
		close(gate) // reading on, the tailer scans and finds the copy
		time.Sleep(4 * cfg.RescanInterval)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	writeNumbered(t, path, 2501, 2600) // shorter than what was read: the refilled file is noticed by its size
	if !seenFirst {
		close(gate)
	}
	waitFor(t, 10*time.Second, "all lines", func() bool { return c.len() >= 2600 })
	time.Sleep(4 * cfg.RescanInterval)
	r.stop(t)

	msgs := c.snapshot()
	if len(msgs) != 2600 {
		t.Fatalf("%d lines, want 2600", len(msgs))
	}
	fromCopy := 0
	for i, m := range msgs {
		_, n := parseNumbered(t, m.Data)
		if n != i+1 {
			t.Fatalf("message %d is line %d (%s): lost, repeated or out of order", i, n, m.Pos)
		}
		switch {
		case n <= 2500 && m.Pos.Name == copyPath:
			fromCopy++
			if m.Pos.Line != int64(n) {
				t.Fatalf("line %d from the copy at Pos.Line %d", n, m.Pos.Line)
			}
		case n > 2500 && (m.Pos.Name != path || m.Pos.Line != int64(n-2500)):
			t.Fatalf("line %d at %+v, want %s:%d", n, m.Pos, path, n-2500)
		}
	}
	if fromCopy == 0 && !seenFirst {
		t.Error("no line was read from the copy")
	}
	if l := c.losses(); len(l) != 0 || r.stats.Drops[tap.DropTruncated].Load() != 0 {
		t.Errorf("losses %+v, truncated drops %d: the copy held everything", l, r.stats.Drops[tap.DropTruncated].Load())
	}
	// A restart reads nothing again, from either file.
	var d collector
	r = start(t, cfg, d.emit)
	time.Sleep(4 * cfg.RescanInterval)
	r.stop(t)
	if d.len() != 0 {
		pb, _ := os.ReadFile(cfg.Positions)
		t.Errorf("a restart read %d lines again, first %s at %s\n%s", d.len(), d.snapshot()[0].Data, d.snapshot()[0].Pos, pb)
	}
	t.Logf("%d lines finished from the copy", fromCopy)
}

// (g) Copy-truncate without a copy: what was not read is a loss, counted
// once and reported as one Lost (and a rejoin) before the new content; no
// line is read twice.
func TestCopyTruncateWithoutCopyIsALoss(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jsonl")
	cfg := testConfig(dir, "*.jsonl")
	writeNumbered(t, path, 1, 2000)
	gate := make(chan struct{})
	var c collector
	c.after = func(n int) {
		if n == 100 {
			<-gate
		}
	}
	r := start(t, cfg, c.emit)
	waitFor(t, 5*time.Second, "the tailer at line 100", func() bool { return c.len() >= 100 })
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	writeNumbered(t, path, 3001, 3100)
	close(gate)
	waitFor(t, 10*time.Second, "the new content", func() bool {
		ms := c.snapshot()
		_, n := parseNumbered(t, ms[len(ms)-1].Data)
		return n == 3100
	})
	time.Sleep(5 * cfg.PollInterval)
	r.stop(t)

	prev, firstNew := 0, -1
	for i, m := range c.snapshot() {
		_, n := parseNumbered(t, m.Data)
		if n <= prev {
			t.Fatalf("line %d after %d", n, prev)
		}
		if n > 3000 && firstNew < 0 {
			firstNew = i
		}
		prev = n
	}
	l := c.losses()
	if len(l) != 1 || l[0].LossReason != tap.DropTruncated || l[0].after > firstNew {
		t.Errorf("losses %+v, want one DropTruncated before the first new line (index %d)", l, firstNew)
	}
	if d := r.stats.Drops[tap.DropTruncated].Load(); d != 1 {
		t.Errorf("DropTruncated = %d", d)
	}
}

// (g, restart) A file copy-truncated while the tailer was down: its copy is
// found by the checkpoint's fingerprint and finished from the checkpoint.
func TestCopyTruncateWhileDown(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jsonl")
	cfg := testConfig(dir, "*.jsonl")
	writeNumbered(t, path, 1, 50)
	var a collector
	r := start(t, cfg, a.emit)
	waitFor(t, 5*time.Second, "first run", func() bool { return a.len() >= 50 })
	r.stop(t)
	writeNumbered(t, path, 51, 80)
	data, _ := os.ReadFile(path)
	os.WriteFile(path+".1", data, 0o644)
	os.Truncate(path, 0)
	writeNumbered(t, path, 81, 90)

	var b collector
	r = start(t, cfg, b.emit)
	waitFor(t, 5*time.Second, "the rest", func() bool { return b.len() >= 40 })
	time.Sleep(5 * cfg.PollInterval)
	r.stop(t)
	for i, m := range b.snapshot() {
		if _, n := parseNumbered(t, m.Data); n != 51+i {
			t.Fatalf("message %d is line %d", i, n)
		}
	}
	if b.len() != 40 || len(b.losses()) != 0 {
		t.Fatalf("%d lines, losses %+v", b.len(), b.losses())
	}
}

// (h) The defaults take the reference's largest message (8 MiB) as one
// line, and a longer line's head is handed over (its stream is the one to
// gap), while the line itself is never held whole.
func TestOversizeDefaultsAndHead(t *testing.T) {
	if d := DefaultConfig().MaxLineBytes; d < 8<<20 {
		t.Fatalf("default max line %d bytes: below the reference's 8 MiB messages", d)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jsonl")
	cfg := testConfig(dir, "*.jsonl")
	var heads [][]byte
	var lengths []int64
	cfg.OnOversize = func(_ tap.Position, n int64, head []byte) {
		heads = append(heads, head)
		lengths = append(lengths, n)
	}
	big := `{"request_id":"r-big","sequence":7,"body":"` + strings.Repeat("a", 8<<20) + `"}`
	huge := `{"request_id":"r-huge","sequence":3,"body":"` + strings.Repeat("b", cfg.MaxLineBytes) + `"}`
	appendFile(t, path, big+"\n"+huge+"\n"+`{"after":1}`+"\n")
	var c collector
	r := start(t, cfg, c.emit)
	waitFor(t, 10*time.Second, "lines", func() bool { return c.len() >= 2 })
	r.stop(t)
	msgs := c.snapshot()
	if len(msgs) != 2 || len(msgs[0].Data) != len(big) || string(msgs[1].Data) != `{"after":1}` {
		t.Fatalf("%d messages", len(msgs))
	}
	if len(heads) != 1 || lengths[0] != int64(len(huge)) || len(heads[0]) != OversizeHead ||
		!bytes.HasPrefix(heads[0], []byte(`{"request_id":"r-huge","sequence":3,`)) {
		t.Fatalf("oversize reports: %d, lengths %v", len(heads), lengths)
	}
}

// (5) With a budget, each line is charged before emit (Message.Charged)
// and reading waits while the budget is spent: nothing is dropped.
func TestBudgetBackpressure(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir, "*.jsonl")
	line := numbered(0, 1)
	cfg.Budget = tap.NewBudget(int64(10 * len(line))) // room for about 10 lines
	writeNumbered(t, filepath.Join(dir, "a.jsonl"), 1, 1000)
	var c collector
	r := start(t, cfg, c.emit)
	waitFor(t, 5*time.Second, "the budget spent", func() bool { return c.len() >= 5 })
	time.Sleep(10 * cfg.PollInterval)
	n1 := c.len()
	time.Sleep(10 * cfg.PollInterval)
	if n2 := c.len(); n2 != n1 || n1 > 10 {
		t.Fatalf("%d then %d lines emitted with room for 10", n1, n2)
	}
	// The engine judges them one by one: each release lets more in.
	for i := 0; i < 1000; i++ {
		waitFor(t, 5*time.Second, "next line", func() bool { return c.len() > i })
		m := c.snapshot()[i]
		if m.Charged != len(m.Data) {
			t.Fatalf("line %d: charged %d for %d bytes", i, m.Charged, len(m.Data))
		}
		if used := cfg.Budget.Used(); used > cfg.Budget.Limit() {
			t.Fatalf("budget used %d of %d", used, cfg.Budget.Limit())
		}
		cfg.Budget.Release(m.Charged)
	}
	r.stop(t)
	if c.len() != 1000 || cfg.Budget.Used() != 0 {
		t.Fatalf("%d lines, %d bytes still charged", c.len(), cfg.Budget.Used())
	}
}

// (6) Durability order: a save takes its offsets, then calls BeforeSave
// (which waits for the engine while more lines are emitted), then writes
// those offsets, never later ones. A failing BeforeSave skips the save.
func TestBeforeSaveOrder(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.jsonl")
	cfg := testConfig(dir, "*.jsonl")
	cfg.BeforeSave = func(ctx context.Context) error { return context.DeadlineExceeded } // never confirmed
	writeNumbered(t, path, 1, 2000)
	var c collector
	r := start(t, cfg, c.emit)
	waitFor(t, 5*time.Second, "lines", func() bool { return c.len() >= 2000 })
	time.Sleep(5 * cfg.SaveInterval)
	r.stop(t)
	if _, exists, _ := positions.Load(cfg.Positions); exists || r.t.saves.Load() != 0 {
		t.Fatal("positions written although BeforeSave failed")
	}

	// Confirmed, but slowly: lines keep coming while BeforeSave waits.
	var emitted atomic.Int64
	var calls, bad atomic.Int64
	prevAt := int64(-1)
	cfg.BeforeSave = func(ctx context.Context) error {
		// The file now holds the previous save's offsets: they must not
		// be past what was emitted when that save called BeforeSave.
		if e, _, _ := positions.Load(cfg.Positions); len(e) == 1 && prevAt >= 0 && e[0].Line > prevAt {
			bad.Add(1)
		}
		at := emitted.Load()
		time.Sleep(3 * time.Millisecond) // the engine catching up
		prevAt = at
		calls.Add(1)
		return nil
	}
	writeNumbered(t, path, 2001, 40000)
	var d collector
	r = start(t, cfg, func(ctx context.Context, m tap.Message) error {
		if err := d.emit(ctx, m); err != nil {
			return err
		}
		emitted.Add(1)
		if emitted.Load()%50 == 0 {
			time.Sleep(100 * time.Microsecond)
		}
		return nil
	})
	// Lines 1..2000 were never committed: they come again.
	waitFor(t, 30*time.Second, "lines", func() bool { return d.len() >= 40000 })
	waitFor(t, 5*time.Second, "saves", func() bool { return calls.Load() >= 3 })
	r.stop(t)
	if bad.Load() != 0 {
		t.Fatalf("%d saves wrote offsets taken after BeforeSave was called", bad.Load())
	}
	e, _, err := positions.Load(cfg.Positions)
	if err != nil || len(e) != 1 || e[0].Line != 40000 {
		t.Fatalf("final positions %v %+v", err, e)
	}
	t.Logf("%d confirmed saves", calls.Load())
}

// (e) Rename rotation of more files than MaxOpenFiles, under load: files
// take turns for descriptors, and a closed file that is renamed is known
// again by inode (and fingerprint) under its new name. With globs that
// match the rotated names, every line arrives once and in order per file
// and generation, and nothing is lost; with globs that do not, a line may
// be lost only if a loss was reported for it (never silently).
func TestRenameRotationOverOpenFileBound(t *testing.T) {
	for _, tc := range []struct {
		glob    string
		matched bool
	}{{"*.jsonl*", true}, {"*.jsonl", false}} {
		t.Run(tc.glob, func(t *testing.T) {
			dir := t.TempDir()
			cfg := testConfig(dir, tc.glob)
			cfg.MaxOpenFiles = 4
			var c collector
			r := start(t, cfg, c.emit)
			const files, gens, perGen, afterRename = 12, 3, 150, 5
			fds := make([]*os.File, files)
			name := func(i int) string { return filepath.Join(dir, fmt.Sprintf("app-%02d.jsonl", i)) }
			open := func(i int) {
				f, err := os.OpenFile(name(i), os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o644)
				if err != nil {
					t.Fatal(err)
				}
				fds[i] = f
			}
			for i := range files {
				open(i)
			}
			total := 0
			for g := range gens {
				for k := 1; k <= perGen; k++ {
					for i := range files {
						if k == perGen-afterRename && g < gens-1 {
							// Renamed while the writer holds it; it writes a few
							// more lines there before it reopens the name.
							if err := os.Rename(name(i), fmt.Sprintf("%s.%d", name(i), g+1)); err != nil {
								t.Fatal(err)
							}
						}
						if _, err := fds[i].WriteString(numbered(i*100+g, k) + "\n"); err != nil {
							t.Fatal(err)
						}
						total++
					}
					if k%10 == 0 {
						time.Sleep(2 * time.Millisecond)
					}
				}
				if g < gens-1 {
					for i := range files {
						fds[i].Close()
						open(i)
					}
				}
			}
			for _, f := range fds {
				f.Close()
			}
			if tc.matched {
				waitFor(t, 20*time.Second, "every line", func() bool { return c.len() >= total })
			}
			time.Sleep(6 * cfg.RescanInterval)
			r.stop(t)

			last := map[int]int{}
			for _, m := range c.snapshot() {
				gen, n := parseNumbered(t, m.Data)
				if n <= last[gen] {
					t.Fatalf("file %d generation %d: line %d after %d (read again or out of order)", gen/100, gen%100, n, last[gen])
				}
				last[gen] = n
			}
			missing := total - c.len()
			losses := len(c.losses())
			t.Logf("%d lines written, %d missing, %d losses reported, %d scan errors", total, missing, losses, r.stats.Errors[tap.ErrScan].Load())
			if tc.matched && (missing != 0 || losses != 0) {
				t.Fatalf("%d lines missing, %d losses: the rotated names are matched, nothing may be lost", missing, losses)
			}
			if missing > 0 && losses == 0 {
				t.Fatalf("%d lines lost silently", missing)
			}
		})
	}
}

// (h) The head handed over is the line's first min(64 KiB, length) bytes
// however the line arrives: here in small writes while the tailer reads,
// with a limit far below the head's size.
func TestOversizeHeadAcrossReads(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jsonl")
	cfg := testConfig(dir, "*.jsonl")
	cfg.MaxLineBytes = 100
	heads := make(chan []byte, 1)
	cfg.OnOversize = func(_ tap.Position, n int64, head []byte) { heads <- head }
	var c collector
	r := start(t, cfg, c.emit)
	line := make([]byte, 200<<10)
	for i := range line {
		line[i] = 'a' + byte(i%26)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off < len(line); off += 1 << 10 {
		f.Write(line[off : off+1<<10])
		if off%(16<<10) == 0 {
			time.Sleep(cfg.PollInterval / 2)
		}
	}
	f.WriteString("\n{}\n")
	f.Close()
	waitFor(t, 5*time.Second, "the next line", func() bool { return c.len() >= 1 })
	r.stop(t)
	select {
	case head := <-heads:
		if !bytes.Equal(head, line[:OversizeHead]) {
			t.Fatalf("head of %d bytes, want the line's first %d", len(head), OversizeHead)
		}
	default:
		t.Fatal("no oversize report")
	}
}

// (e) A scan that fails is not a deletion. The directory of a tracked file
// is swapped for a symlink loop (ELOOP: the scan cannot read it; as root,
// permissions cannot stand in), longer than the grace after which a file
// the scans no longer see is forgotten, then put back. The file is read on
// through its descriptor, the failure is counted, and nothing is read
// twice. Before: filepath.Glob ignored the error, the file looked deleted,
// was forgotten, and read again from 0 once the directory was back.
func TestFailedScanIsNotADeletion(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "logs.real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	// logs is a symlink, so that it can be swapped atomically (rename over
	// it): a moment with no directory at all would be a real deletion.
	logs := filepath.Join(dir, "logs")
	point := func(target string) {
		tmp := filepath.Join(dir, "link.tmp")
		if err := os.Symlink(target, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, logs); err != nil {
			t.Fatal(err)
		}
	}
	point("logs.real")
	path := filepath.Join(logs, "a.jsonl")
	cfg := testConfig(dir, "logs/*.jsonl")
	writeNumbered(t, path, 1, 50)
	var c collector
	r := start(t, cfg, c.emit)
	waitFor(t, 5*time.Second, "first lines", func() bool { return c.len() >= 50 })

	point("logs") // logs -> logs: ELOOP
	waitFor(t, 5*time.Second, "a failed scan", func() bool { return r.stats.Errors[tap.ErrScan].Load() > 0 })
	time.Sleep(4 * cfg.RescanInterval) // past the grace of a file that went away
	writeNumbered(t, filepath.Join(real, "a.jsonl"), 51, 60)
	waitFor(t, 5*time.Second, "lines while the scans fail", func() bool { return c.len() >= 60 })
	if r.stats.UpstreamUp.Load() {
		t.Error("UpstreamUp while the scans fail")
	}
	point("logs.real")
	time.Sleep(4 * cfg.RescanInterval)
	writeNumbered(t, path, 61, 70)
	waitFor(t, 5*time.Second, "lines after", func() bool { return c.len() >= 70 })
	time.Sleep(4 * cfg.RescanInterval)
	r.stop(t)
	for i, m := range c.snapshot() {
		if _, n := parseNumbered(t, m.Data); n != i+1 {
			t.Fatalf("message %d is line %d: read again or lost", i, n)
		}
	}
	if c.len() != 70 || len(c.losses()) != 0 {
		t.Fatalf("%d lines, losses %+v", c.len(), c.losses())
	}
	if !r.stats.UpstreamUp.Load() {
		t.Error("UpstreamUp false once the scans work again")
	}
}

// (g) A small file (under the 1 KiB fingerprint) copy-truncated with globs
// that match the copy: the copy is known by the file's whole content so
// far and its name, and is not read again.
func TestCopyTruncateSmallFileCopyMatched(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jsonl")
	cfg := testConfig(dir, "*.jsonl*")
	writeNumbered(t, path, 1, 5) // ~300 bytes
	var c collector
	r := start(t, cfg, c.emit)
	waitFor(t, 5*time.Second, "first lines", func() bool { return c.len() >= 5 })
	writeNumbered(t, path, 6, 8)
	data, _ := os.ReadFile(path)
	// Like cp: the copy is created empty (and found so by a scan), then
	// filled.
	os.WriteFile(path+".1", nil, 0o644)
	time.Sleep(4 * cfg.RescanInterval)
	appendFile(t, path+".1", string(data[:100]))
	time.Sleep(4 * cfg.RescanInterval)
	appendFile(t, path+".1", string(data[100:]))
	time.Sleep(4 * cfg.RescanInterval)
	os.Truncate(path, 0)
	writeNumbered(t, path, 9, 10)
	// A file named like a copy that is not one (it starts empty too) is
	// read from its start.
	other := path + ".other"
	os.WriteFile(other, nil, 0o644)
	time.Sleep(4 * cfg.RescanInterval)
	writeNumbered(t, other, 500, 502)
	waitFor(t, 5*time.Second, "all lines", func() bool { return c.len() >= 13 })
	time.Sleep(4 * cfg.RescanInterval)
	r.stop(t)
	var got []int
	for _, m := range c.snapshot() {
		_, n := parseNumbered(t, m.Data)
		got = append(got, n)
	}
	want := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 500, 501, 502}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("lines (-want +got):\n%s", diff)
	}
	if len(c.losses()) != 0 {
		t.Fatalf("losses %+v", c.losses())
	}
	// Nothing is read again after a restart.
	var d collector
	r = start(t, cfg, d.emit)
	time.Sleep(4 * cfg.RescanInterval)
	r.stop(t)
	if d.len() != 0 {
		t.Errorf("a restart read %d lines again", d.len())
	}
}

// (b, h) Many files each in the middle of a long line do not each hold up
// to MaxLineBytes: what long unfinished lines hold beyond a read chunk is
// bounded (2 × MaxLineBytes) across files; a file whose line needs more
// waits its turn, and every line still arrives whole.
func TestLongUnfinishedLinesBounded(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir, "*.jsonl")
	cfg.MaxLineBytes = 1 << 20
	const files, long = 8, 900 << 10
	tl, err := New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var c collector
	r := startTailer(t, tl, tl.stats, c.emit)
	lines := make([]string, files)
	for i := range files {
		lines[i] = fmt.Sprintf(`{"file":%d,"pad":"%s"}`, i, strings.Repeat(string(rune('a'+i)), long))
		appendFile(t, filepath.Join(dir, fmt.Sprintf("f%d.jsonl", i)), lines[i][:long]) // no newline yet
	}
	time.Sleep(20 * cfg.PollInterval)
	for i := range files {
		appendFile(t, filepath.Join(dir, fmt.Sprintf("f%d.jsonl", i)), lines[i][long:]+"\n")
	}
	waitFor(t, 10*time.Second, "every long line", func() bool { return c.len() >= files })
	r.stop(t)
	got := map[string]bool{}
	for _, m := range c.snapshot() {
		got[string(m.Data)] = true
	}
	for i, l := range lines {
		if !got[l] {
			t.Fatalf("line of file %d did not arrive whole", i)
		}
	}
	if limit := 2 * int64(cfg.MaxLineBytes); tl.maxPartial > limit {
		t.Fatalf("long unfinished lines held %d bytes beyond their chunks, bound %d", tl.maxPartial, limit)
	}
	t.Logf("at most %d KiB held by unfinished long lines (8 files × 900 KiB)", tl.maxPartial>>10)
}
