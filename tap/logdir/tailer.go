package logdir

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/tap/logdir/positions"
)

// forgetAfter is how long a checkpoint of a file that is nowhere to be
// found is kept (a directory may be missing for a while, e.g. before a
// volume is mounted).
const forgetAfter = 24 * time.Hour

// ErrRunning is returned by Run when the Tailer is already running.
var ErrRunning = errors.New("logdir: tailer is already running")

// Tailer tails the files matched by the configured globs. Make it with New.
type Tailer struct {
	cfg   Config
	stats *tap.Stats
	log   *slog.Logger

	running atomic.Bool

	// Everything below belongs to Run's goroutine.
	files        []*tracked // in discovery order: an older file is drained first
	byKey        map[fileKey]*tracked
	restored     []restoredEntry // checkpoints not yet matched to an open file
	hadPositions bool
	dirty        bool
	scratch      []byte // discard reads and fingerprint checks; never emitted
	fpCheck      []byte
	warned       map[string]bool

	fsw *fsnotify.Watcher

	pollWake   chan struct{} // capacity 1: a pending wake is enough, more are dropped
	rescanWake chan struct{} // capacity 1, same policy
	// saveCh carries snapshots to the saver goroutine. Capacity 1: a
	// pending snapshot is replaced by a newer one, never queued behind it.
	saveCh chan []positions.Entry

	// Test hooks.
	noFinalSave bool // simulate a crash: Run returns without saving
	maxBuf      int  // largest line buffer allocated
}

type restoredEntry struct {
	positions.Entry
	// rewritten: its inode now holds other content; it may still match a
	// copy of the old content by fingerprint.
	rewritten bool
}

var _ tap.Source = (*Tailer)(nil)

// New checks cfg and returns a Tailer. stats may be nil (the Tailer then
// keeps its own); logger may be nil (nothing is logged).
func New(cfg Config, stats *tap.Stats, logger *slog.Logger) (*Tailer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if stats == nil {
		stats = new(tap.Stats)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Tailer{
		cfg:   cfg,
		stats: stats,
		log:   logger.With("tap", cfg.Name),
	}, nil
}

// Run tails until ctx is done, emitting every complete line once, in order
// per file. It returns nil when ctx ends, the emit error when emit fails for
// another reason, or an error when the positions file cannot be read. The
// positions are saved before it returns, whatever the reason. Run may be
// called again after it returned, not concurrently.
func (t *Tailer) Run(ctx context.Context, emit tap.EmitFunc) (err error) {
	if !t.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer t.running.Store(false)
	t.reset()
	if err := t.loadPositions(); err != nil {
		return err
	}

	var wg sync.WaitGroup
	t.startWatcher(&wg)
	wg.Add(1)
	go t.saver(&wg)
	defer func() {
		if t.fsw != nil {
			t.fsw.Close()
		}
		close(t.saveCh)
		wg.Wait()
		t.stats.Up.Store(false)
		if !t.noFinalSave {
			if serr := t.saveFinal(); serr != nil && err == nil {
				err = serr
			}
		}
		for _, tf := range t.files {
			tf.f.Close()
		}
		t.files, t.byKey = nil, nil
	}()

	now := time.Now()
	t.rescan(now, true)
	t.stats.Up.Store(true)
	nextRescan := now.Add(t.cfg.RescanInterval)
	nextSave := now.Add(t.cfg.SaveInterval)
	timer := time.NewTimer(t.cfg.PollInterval)
	defer timer.Stop()
	for {
		if err := t.drain(ctx, emit, &nextRescan, &nextSave); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("logdir %s: %w", t.cfg.Name, err)
		}
		if ctx.Err() != nil {
			return nil
		}
		now := time.Now()
		wake := min(nextRescan.Sub(now), t.cfg.PollInterval)
		if t.dirty {
			wake = min(wake, nextSave.Sub(now))
		}
		timer.Reset(max(wake, 0))
		rescan := false
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		case <-t.pollWake:
		case <-t.rescanWake:
			rescan = true
		}
		now = time.Now()
		if rescan || !now.Before(nextRescan) {
			t.rescan(now, false)
			nextRescan = now.Add(t.cfg.RescanInterval)
		}
	}
}

func (t *Tailer) reset() {
	t.files, t.byKey = nil, make(map[fileKey]*tracked)
	t.restored, t.hadPositions, t.dirty = nil, false, false
	t.warned = make(map[string]bool)
	t.pollWake = make(chan struct{}, 1)
	t.rescanWake = make(chan struct{}, 1)
	t.saveCh = make(chan []positions.Entry, 1)
	if t.scratch == nil {
		t.scratch = make([]byte, readSize)
		t.fpCheck = make([]byte, 0, fingerprintSize)
	}
}

// drain reads every file, round after round, until a round finds nothing
// new. A round gives each file at most roundBudget bytes, so one busy file
// does not starve the others; rescans and saves that fall due in between
// are done in between.
func (t *Tailer) drain(ctx context.Context, emit tap.EmitFunc, nextRescan, nextSave *time.Time) error {
	for {
		progress := false
		for _, tf := range t.files {
			t.checkFile(tf)
			n, err := t.readFile(ctx, emit, tf, roundBudget)
			if err != nil {
				if e := (errEmit{}); errors.As(err, &e) {
					return err
				}
				t.warnOnce(tf.path+"\x00read", "read failed; retrying", "path", tf.path, "err", err)
			}
			if n > 0 {
				progress = true
			}
			if ctx.Err() != nil {
				return nil
			}
			t.saveIfDue(nextSave)
		}
		now := time.Now()
		t.closeFinished(now)
		t.updateLag()
		t.saveIfDue(nextSave)
		if !progress {
			return nil
		}
		// A busy file must not delay noticing a rotation: a file created and
		// renamed away before a rescan is never seen.
		rescan := !now.Before(*nextRescan)
		select {
		case <-t.rescanWake:
			rescan = true
		default:
		}
		if rescan {
			t.rescan(now, false)
			*nextRescan = now.Add(t.cfg.RescanInterval)
		}
	}
}

func (t *Tailer) saveIfDue(next *time.Time) {
	if now := time.Now(); !now.Before(*next) {
		t.saveAsync()
		*next = now.Add(t.cfg.SaveInterval)
	}
}

// checkFile looks at tf's size and first bytes to notice a truncation (the
// file shrank below what was read, or its first bytes changed: truncated
// and refilled between two looks). The file is then read again from 0.
func (t *Tailer) checkFile(tf *tracked) {
	fi, err := tf.f.Stat()
	if err != nil {
		return
	}
	size, mtime := fi.Size(), fi.ModTime()
	if size == tf.size && mtime.Equal(tf.mtime) {
		return
	}
	now := time.Now()
	if size > tf.size {
		tf.lastGrowth = now
	}
	truncated := size < tf.readOff
	if !truncated && len(tf.fp) > 0 {
		cur, err := readPrefix(tf.f, t.fpCheck, len(tf.fp))
		truncated = err == nil && !bytes.Equal(cur, tf.fp)
	}
	tf.size, tf.mtime = size, mtime
	if truncated {
		t.stats.Drop(tap.DropUpstreamGap)
		t.log.Info("file truncated; reading it again from the start",
			"path", tf.path, "offset", tf.commitOff, "size", size)
		tf.restart()
		tf.lastGrowth = now
		t.dirty = true
	}
}

// closeFinished closes files that the globs no longer match (renamed away
// or deleted) once they have been read to the end and stayed quiet for a
// rescan interval: a writer may still finish its last lines into a file it
// has not yet reopened.
func (t *Tailer) closeFinished(now time.Time) {
	grace := t.cfg.RescanInterval
	kept := t.files[:0]
	for _, tf := range t.files {
		if tf.orphanSince.IsZero() || tf.readOff < tf.size ||
			now.Sub(tf.orphanSince) < grace || now.Sub(tf.lastGrowth) < grace {
			kept = append(kept, tf)
			continue
		}
		if tf.partial() {
			// The last line never got its newline: it is never emitted half.
			t.stats.Drop(tap.DropUpstreamGap)
			t.log.Info("file gone with an unfinished last line", "path", tf.path, "offset", tf.commitOff)
		}
		t.log.Debug("file finished", "path", tf.path, "inode", tf.key.ino, "offset", tf.commitOff)
		tf.f.Close()
		delete(t.byKey, tf.key)
		t.dirty = true
	}
	clear(t.files[len(kept):])
	t.files = kept
}

func (t *Tailer) updateLag() {
	var lag int64
	for _, tf := range t.files {
		if d := tf.size - tf.commitOff; d > 0 {
			lag += d
		}
	}
	t.stats.Lag.Store(lag)
}

// rescan expands the globs: new files are opened, files that moved are
// renamed, files that are no longer matched become orphans to finish.
func (t *Tailer) rescan(now time.Time, first bool) {
	seen := make(map[fileKey]bool, len(t.files))
	for _, pat := range t.cfg.Paths {
		matches, _ := filepath.Glob(pat) // the only error is a bad pattern, rejected by Validate
		for _, p := range matches {
			fi, err := os.Stat(p)
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			key := keyOf(fi, p)
			if seen[key] {
				continue
			}
			seen[key] = true
			if tf := t.byKey[key]; tf != nil {
				if tf.path != p {
					t.dirty = true
				}
				tf.path, tf.orphanSince = p, time.Time{}
				continue
			}
			t.open(p, fi, key, first, now)
		}
	}
	for _, tf := range t.files {
		if !seen[tf.key] && tf.orphanSince.IsZero() {
			tf.orphanSince = now
		}
	}
	kept := t.restored[:0]
	for _, e := range t.restored {
		if now.Sub(e.Seen) < forgetAfter {
			kept = append(kept, e)
		}
	}
	t.restored = kept
	t.watchDirs()
}

func keyOf(fi os.FileInfo, path string) fileKey {
	dev, ino, _, ok := fileID(fi)
	if !ok {
		return fileKey{path: path}
	}
	return fileKey{dev: dev, ino: ino}
}

// open starts tracking a file the globs matched for the first time: it
// resumes from a checkpoint when one matches, else starts at 0 (or at the
// end, on a first ever start with StartAt "end").
func (t *Tailer) open(path string, fi os.FileInfo, key fileKey, first bool, now time.Time) {
	f, err := os.Open(path)
	if err != nil {
		t.warnOnce(path, "cannot open file", "path", path, "err", err)
		return
	}
	delete(t.warned, path)
	size := fi.Size()
	fp, err := readPrefix(f, nil, int(min(size, fingerprintSize)))
	if err != nil {
		f.Close()
		t.warnOnce(path, "cannot read file", "path", path, "err", err)
		return
	}
	tf := &tracked{key: key, path: path, f: f, fp: fp, size: size, mtime: fi.ModTime(), lastGrowth: now}
	switch e, how := t.matchCheckpoint(key, fp, size); how {
	case resumed:
		tf.readOff, tf.commitOff, tf.line = e.Offset, e.Offset, e.Line
	case truncatedWhileDown:
		t.stats.Drop(tap.DropUpstreamGap)
		t.log.Info("file truncated while not running; reading it from the start", "path", path)
		tf.gap = true
	default:
		if first && !t.hadPositions && t.cfg.StartAt == StartEnd {
			off := lastLineEnd(f, size, t.scratch)
			tf.readOff, tf.commitOff = off, off
		}
	}
	t.files = append(t.files, tf)
	t.byKey[key] = tf
	t.dirty = true
	t.log.Debug("file opened", "path", path, "dev", key.dev, "inode", key.ino, "offset", tf.commitOff)
}

type matchKind uint8

const (
	noCheckpoint matchKind = iota
	resumed
	truncatedWhileDown
)

// matchCheckpoint finds the checkpoint of a newly opened file: same inode
// and same first bytes; or, failing that, a full-size fingerprint match (the
// file moved to another device, or the device number changed across a
// reboot, or it is the copy made by copy-truncate rotation). Same inode with
// other first bytes means it was truncated and rewritten while the tailer
// was down; that checkpoint stays, for a copy of the old content to match.
func (t *Tailer) matchCheckpoint(key fileKey, fp []byte, size int64) (positions.Entry, matchKind) {
	hashes := make(map[int]string, 2)
	sum := func(n int) string {
		h, ok := hashes[n]
		if !ok {
			h = positions.Sum(fp[:n])
			hashes[n] = h
		}
		return h
	}
	fits := func(e restoredEntry) bool {
		return e.FingerprintLen <= len(fp) && e.Offset <= size && sum(e.FingerprintLen) == e.Fingerprint
	}
	take := func(i int) (positions.Entry, matchKind) {
		e := t.restored[i].Entry
		t.restored = append(t.restored[:i], t.restored[i+1:]...)
		return e, resumed
	}
	sameInode := -1
	if key.path == "" {
		for i, e := range t.restored {
			if e.rewritten || e.Dev != key.dev || e.Inode != key.ino {
				continue
			}
			if fits(e) {
				return take(i)
			}
			sameInode = i
		}
	}
	for i, e := range t.restored {
		if e.FingerprintLen == fingerprintSize && fits(e) && (sameInode < 0 || i != sameInode) {
			return take(i)
		}
	}
	if sameInode >= 0 {
		t.restored[sameInode].rewritten = true
		return positions.Entry{}, truncatedWhileDown
	}
	return positions.Entry{}, noCheckpoint
}

func (t *Tailer) loadPositions() error {
	if t.cfg.Positions == "" {
		return nil
	}
	entries, exists, err := positions.Load(t.cfg.Positions)
	if err != nil {
		return fmt.Errorf("logdir %s: %w", t.cfg.Name, err)
	}
	t.hadPositions = exists
	for _, e := range entries {
		t.restored = append(t.restored, restoredEntry{Entry: e})
	}
	return nil
}

// snapshot returns the checkpoints of open files (their committed offsets:
// only lines emit accepted are behind them) and of checkpoints not yet
// matched. Taken on Run's goroutine, it is consistent.
func (t *Tailer) snapshot() []positions.Entry {
	now := time.Now()
	entries := make([]positions.Entry, 0, len(t.files)+len(t.restored))
	for _, tf := range t.files {
		entries = append(entries, positions.Entry{
			Path:           tf.path,
			Dev:            tf.key.dev,
			Inode:          tf.key.ino,
			FingerprintLen: len(tf.fp),
			Fingerprint:    positions.Sum(tf.fp),
			Offset:         tf.commitOff,
			Line:           tf.line,
			Seen:           now,
		})
	}
	for _, e := range t.restored {
		entries = append(entries, e.Entry)
	}
	return entries
}

// saveAsync hands a snapshot to the saver goroutine: an fsync can take long
// on a busy disk, and reading must not wait for it. If the saver is still
// busy with an older snapshot, the pending one is replaced (the newest
// checkpoint is all that matters).
func (t *Tailer) saveAsync() {
	if t.cfg.Positions == "" || !t.dirty {
		return
	}
	snap := t.snapshot()
	t.dirty = false
	select {
	case <-t.saveCh: // drop the older pending snapshot
	default:
	}
	t.saveCh <- snap // Run is the only sender: there is room now
}

// saver writes snapshots until saveCh is closed.
func (t *Tailer) saver(wg *sync.WaitGroup) {
	defer wg.Done()
	failing := false
	for snap := range t.saveCh {
		if err := positions.Save(t.cfg.Positions, snap); err != nil {
			if !failing {
				t.log.Warn("saving positions failed", "err", err)
			}
			failing = true
			continue
		}
		failing = false
	}
}

// saveFinal writes the last checkpoints synchronously, after the saver has
// stopped.
func (t *Tailer) saveFinal() error {
	if t.cfg.Positions == "" || !t.dirty {
		return nil
	}
	if err := positions.Save(t.cfg.Positions, t.snapshot()); err != nil {
		return fmt.Errorf("logdir %s: %w", t.cfg.Name, err)
	}
	t.dirty = false
	return nil
}

// warnOnce logs a problem the first time it happens for key, not on every
// poll.
func (t *Tailer) warnOnce(key, msg string, args ...any) {
	if t.warned[key] {
		return
	}
	t.warned[key] = true
	t.log.Warn(msg, args...)
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
