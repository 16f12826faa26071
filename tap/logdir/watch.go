package logdir

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// startWatcher starts the goroutine that turns filesystem events into wakes.
// Events are only a hint that makes the tailer quicker; the periodic poll
// and rescan are what it relies on, so a watcher that cannot start (no
// inotify instances left, an unsupported filesystem) is logged, not fatal.
func (t *Tailer) startWatcher(wg *sync.WaitGroup) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.log.Warn("filesystem events unavailable; polling only", "err", err)
		t.fsw = nil
		return
	}
	t.fsw = w
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if ev.Has(fsnotify.Write) {
					t.writes.add(ev.Name)
					wake(t.pollWake)
				} else {
					// Create, Rename, Remove, Chmod: which files exist may
					// have changed (a rotation, a new directory).
					wake(t.rescanWake)
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				// Most likely an event queue overflow: events were lost,
				// so look at everything again.
				t.writes.markAll()
				wake(t.rescanWake)
			}
		}
	}()
}

// watchDirs keeps the watch list equal to the directories the globs can
// match in. For a directory that does not exist yet, its nearest existing
// ancestor is watched instead, so that its creation wakes a rescan.
func (t *Tailer) watchDirs() {
	if t.fsw == nil {
		return
	}
	want := make(map[string]bool)
	for _, pat := range t.cfg.Paths {
		dir := filepath.Dir(pat)
		if hasMeta(dir) {
			matches, _ := filepath.Glob(dir)
			for _, m := range matches {
				if isDir(m) {
					want[m] = true
				}
			}
			dir = staticPrefix(dir)
		}
		for !isDir(dir) {
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
		if isDir(dir) {
			want[dir] = true
		}
	}
	// The watcher's own list is the truth: a deleted directory's watch
	// goes away by itself, and the directory may come back.
	watched := make(map[string]bool)
	for _, d := range t.fsw.WatchList() {
		watched[d] = true
		if !want[d] {
			_ = t.fsw.Remove(d)
		}
	}
	for d := range want {
		if watched[d] {
			continue
		}
		if err := t.fsw.Add(d); err != nil {
			t.warnOnce(d+"\x00watch", "cannot watch directory; polling it", "dir", d, "err", err)
		}
	}
}

func hasMeta(p string) bool { return strings.ContainsAny(p, `*?[\`) }

// staticPrefix is the leading part of a pattern with no glob characters.
func staticPrefix(p string) string {
	for hasMeta(p) {
		p = filepath.Dir(p)
	}
	return p
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// maxWritten bounds the names a writtenSet holds; past it, every closed
// file is looked at.
const maxWritten = 4096

// writtenSet collects the names of files that had write events since the
// tailer last looked, so that closed files are looked at (stat) when they
// were written rather than all of them every PollInterval. The watcher
// goroutine adds; Run's goroutine takes.
type writtenSet struct {
	mu    sync.Mutex
	names map[string]struct{}
	all   bool // overflowed or events were lost: look at every closed file
}

func (s *writtenSet) add(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.all:
	case len(s.names) >= maxWritten:
		s.all, s.names = true, nil
	default:
		if s.names == nil {
			s.names = make(map[string]struct{})
		}
		s.names[name] = struct{}{}
	}
}

func (s *writtenSet) markAll() {
	s.mu.Lock()
	s.all, s.names = true, nil
	s.mu.Unlock()
}

// take returns what was collected and starts over.
func (s *writtenSet) take() (names map[string]struct{}, all bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	names, all = s.names, s.all
	s.names, s.all = nil, false
	return names, all
}
