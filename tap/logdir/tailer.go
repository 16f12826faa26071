package logdir

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/tap/logdir/positions"
)

// forgetAfter is how long a checkpoint of a file that is nowhere to be
// found is kept (a directory may be missing for a while, e.g. before a
// volume is mounted).
const forgetAfter = 24 * time.Hour

// seenRefresh is how stale Entry.Seen of a file that is still there may
// get: refreshing it more often would rewrite an unchanged positions file.
const seenRefresh = time.Hour

// keepCorrupt is how many corrupt positions files are kept aside.
const keepCorrupt = 3

// finalSaveWait bounds how long the last save waits for BeforeSave.
const finalSaveWait = 10 * time.Second

// limitRestore is how long after the last EMFILE the lowered open-file
// bound is given back.
const limitRestore = time.Minute

// ErrRunning is returned by Run when the Tailer is already running.
var ErrRunning = errors.New("logdir: tailer is already running")

// Tailer tails the files matched by the configured globs. Make it with New.
type Tailer struct {
	cfg   Config
	stats *tap.Stats
	log   *slog.Logger

	running atomic.Bool

	// Everything below belongs to Run's goroutine, except where noted.
	files        []*tracked // in discovery order: an older file is drained first
	byKey        map[fileKey]*tracked
	restored     []restoredEntry // checkpoints not yet matched to a file
	hadPositions bool
	recovering   bool // the positions file was corrupt: see loadPositions
	dirty        bool
	scratch      []byte // discard reads and fingerprint checks; never emitted
	fpCheck      []byte
	warned       map[string]bool

	partial        int64     // held by long unfinished lines beyond readSize (newBuffer)
	partialLimit   int64     // 2 × MaxLineBytes
	nOpen          int       // descriptors held (files and copies)
	openLimit      int       // MaxOpenFiles, lowered for a while after EMFILE
	lastEMFILE     time.Time // when an open last failed for want of descriptors
	lastClosedStat time.Time
	scanFault      fault
	openFault      fault
	// pending are control messages (losses) to emit before the next line.
	pending  []tap.Message
	lastSent []positions.Entry // the last snapshot handed to the saver
	// firstSeen are files found by the first scan that could not be opened
	// then: where they start is decided as if they had been.
	firstSeen map[fileKey]bool
	// copies are finished copy-truncate copies not tracked (yet).
	copies map[fileKey]copyDone

	fsw    *fsnotify.Watcher
	writes writtenSet // names with write events, for closed files

	pollWake   chan struct{} // capacity 1: a pending wake is enough, more are dropped
	rescanWake chan struct{} // capacity 1, same policy
	// saveCh carries snapshots to the saver goroutine. Capacity 1: a
	// pending snapshot is replaced by a newer one, never queued behind it.
	saveCh chan []positions.Entry
	// Owned by the saver goroutine while it runs, by Run's after.
	saveFault  fault
	written    []positions.Entry // the last snapshot written
	saveFailed atomic.Bool       // the last save failed: try again even if nothing changed

	// Test hooks.
	noFinalSave bool         // simulate a crash: Run returns without saving
	maxBuf      int          // largest line buffer allocated
	maxPartial  int64        // largest partial seen
	saves       atomic.Int64 // positions files written
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
// per file. It returns nil when ctx ends and the emit error when emit fails
// for another reason; nothing else stops it: a positions file that cannot
// be read, a directory that cannot be scanned, a file that cannot be opened
// or a positions file that cannot be written are logged, counted in
// Stats.Errors and retried. The positions are saved before it returns,
// whatever the reason. Run may be called again after it returned, not
// concurrently.
func (t *Tailer) Run(ctx context.Context, emit tap.EmitFunc) (err error) {
	if !t.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer t.running.Store(false)
	t.reset()
	if !t.loadPositions(ctx) {
		return nil // ctx ended while the positions file could not be read
	}

	var wg sync.WaitGroup
	t.startWatcher(&wg)
	wg.Add(1)
	go t.saver(ctx, &wg)
	defer func() {
		if t.fsw != nil {
			t.fsw.Close()
		}
		close(t.saveCh)
		wg.Wait()
		t.stats.Up.Store(false)
		if !t.noFinalSave {
			t.saveFinal(ctx)
		}
		for _, tf := range t.files {
			t.closeFile(tf, time.Now())
			if tf.copy != nil {
				t.release(tf.copy.tf)
				tf.copy.tf.f.Close()
				t.nOpen--
			}
		}
		t.files, t.byKey = nil, nil
	}()

	now := time.Now()
	if t.recovering {
		// What the files got while the positions were unknown is not
		// read: streams open before are not judged across it, and streams
		// first seen now may start mid-stream.
		t.lose(tap.DropUpstreamGap)
	}
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
		if t.dirty || t.saveFailed.Load() {
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
	t.restored, t.hadPositions, t.recovering, t.dirty = nil, false, false, false
	t.warned = make(map[string]bool)
	t.firstSeen = make(map[fileKey]bool)
	t.copies = make(map[fileKey]copyDone)
	t.writes.take()
	t.nOpen, t.openLimit, t.lastEMFILE = 0, t.cfg.MaxOpenFiles, time.Time{}
	t.partial, t.partialLimit = 0, 2*int64(t.cfg.MaxLineBytes)
	t.scanFault = fault{what: "directory scan"}
	t.openFault = fault{what: "opening files"}
	t.saveFault = fault{what: "saving positions"}
	t.pending, t.lastSent, t.written = nil, nil, nil
	t.saveFailed.Store(false)
	t.pollWake = make(chan struct{}, 1)
	t.rescanWake = make(chan struct{}, 1)
	t.saveCh = make(chan []positions.Entry, 1)
	if t.scratch == nil {
		t.scratch = make([]byte, readSize)
		t.fpCheck = make([]byte, 0, fingerprintSize)
	}
}

// lose queues a loss for the whole tap (Message.Lost, scope ""), and a
// rejoin (Message.Reconnected): open streams are not judged across it, and
// a stream whose first records were in what was lost may start mid-stream.
func (t *Tailer) lose(reason uint8) {
	t.stats.Drop(reason)
	now := time.Now()
	t.pending = append(t.pending,
		tap.Message{Tap: t.cfg.Name, Time: now, Lost: true, LossReason: reason},
		tap.Message{Tap: t.cfg.Name, Time: now, Reconnected: true})
}

// flushPending emits the queued control messages, in order, before any
// line read after them.
func (t *Tailer) flushPending(ctx context.Context, emit tap.EmitFunc) error {
	for len(t.pending) > 0 {
		if err := emit(ctx, t.pending[0]); err != nil {
			return errEmit{err}
		}
		t.pending[0] = tap.Message{}
		t.pending = t.pending[1:]
	}
	t.pending = nil
	return nil
}

// drain reads every file, round after round, until a round finds nothing
// new. A round gives each file at most roundBudget bytes, so one busy file
// does not starve the others; rescans and saves that fall due in between
// are done in between.
func (t *Tailer) drain(ctx context.Context, emit tap.EmitFunc, nextRescan, nextSave *time.Time) error {
	for {
		if err := t.flushPending(ctx, emit); err != nil {
			return err
		}
		progress := false
		now := time.Now()
		var look closedLook
		if now.Sub(t.lastClosedStat) >= t.cfg.PollInterval {
			t.lastClosedStat = now
			look.now = now
			look.written, look.all = t.writes.take()
			look.all = look.all || t.fsw == nil // no events: poll them all
		}
		for _, tf := range t.files {
			if tf.copy != nil {
				n, done, err := t.readCopy(ctx, emit, tf)
				if err != nil {
					return err
				}
				if n > 0 {
					progress = true
				}
				if !done {
					continue
				}
			}
			if tf.shadowOf != nil {
				if look.wants(tf, t.cfg.RescanInterval) {
					t.lookShadow(tf)
				}
				continue
			}
			if !t.checkFile(tf, &look) {
				continue
			}
			if err := t.flushPending(ctx, emit); err != nil {
				return err // a loss goes out before what follows it
			}
			if tf.copy != nil {
				progress = true // a copy to finish first, next round
				continue
			}
			n, err := t.readFile(ctx, emit, tf, roundBudget)
			if err != nil {
				if e := (errEmit{}); errors.As(err, &e) {
					return err
				}
				t.stats.Error(tap.ErrScan)
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
		if err := t.flushPending(ctx, emit); err != nil {
			return err
		}
		now = time.Now()
		t.shrink(now)
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

// closedLook says which closed files a drain round looks at: none (now is
// zero: PollInterval has not passed), those with write events, or all.
type closedLook struct {
	now     time.Time
	written map[string]struct{}
	all     bool
}

// wants reports whether a closed file is looked at: it had a write event,
// or events are unavailable or were lost, or it has not been looked at for
// a rescan interval (events are only a hint).
func (l *closedLook) wants(tf *tracked, every time.Duration) bool {
	if l.now.IsZero() {
		return false
	}
	_, written := l.written[tf.path]
	if !l.all && !written && l.now.Sub(tf.lastStat) < every {
		return false
	}
	tf.lastStat = l.now
	return true
}

// checkFile looks at tf's size and first bytes to notice new data and a
// truncation (the file shrank below what was read, or its first bytes
// changed: truncated and refilled between two looks). It opens a closed
// file that has something new (a closed file is looked at by name: see
// closedLook), and reports whether tf is open to be read.
func (t *Tailer) checkFile(tf *tracked, look *closedLook) bool {
	if tf.f == nil {
		if tf.gone || !look.wants(tf, t.cfg.RescanInterval) {
			return false
		}
		fi, err := os.Stat(tf.path)
		if err != nil || keyOf(fi, tf.path) != tf.key {
			// Its name holds another file now, or none: a scan finds it
			// under its new name, or makes it an orphan.
			tf.gone = err == nil || errors.Is(err, fs.ErrNotExist)
			return false
		}
		if fi.Size() == tf.looked && fi.ModTime().Equal(tf.mtime) {
			return false
		}
		if !t.reopen(tf) {
			return false
		}
	}
	fi, err := tf.f.Stat()
	if err != nil {
		return true
	}
	size, mtime := fi.Size(), fi.ModTime()
	if size == tf.size && mtime.Equal(tf.mtime) {
		return true
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
	seen := max(tf.size, tf.readOff)
	tf.size, tf.mtime = size, mtime
	if truncated {
		t.truncated(tf, seen, now)
	}
	return true
}

// truncated handles a truncation of tf noticed while running: its copy,
// if one is found, is finished from the committed offset; else what was
// not read is lost. tf itself is then read again from 0.
func (t *Tailer) truncated(tf *tracked, seen int64, now time.Time) {
	from, line := tf.commitOff, tf.line
	t.release(tf)
	for _, sh := range t.files {
		if sh.shadowOf == tf {
			sh.tentative = false // a copy of the old content, never of the new
		}
	}
	tf.dropBuffer()
	lost := !t.startCopy(tf, prefixMatch{n: len(tf.fp), raw: tf.fp}, from, line, seen)
	if lost {
		t.log.Info("file truncated and no copy of its old content found; what was not read is lost",
			"path", tf.path, "offset", from, "seen", seen)
		t.lose(tap.DropTruncated)
	}
	tf.restart()
	tf.torn = lost // else readCopy says
	tf.lastGrowth = now
	t.dirty = true
}

// reopen opens a closed file again, making room if the bound is reached.
// The file must still be the one known (device and inode; its first bytes
// are checked by checkFile, which notices a rewrite).
func (t *Tailer) reopen(tf *tracked) bool {
	f, fi, ok := t.openFile(tf.path, tf, true)
	if !ok {
		return false
	}
	if keyOf(fi, tf.path) != tf.key {
		f.Close()
		t.nOpen--
		tf.gone = true
		return false
	}
	tf.f = f
	tf.closedActive = false
	t.log.Debug("file reopened", "path", tf.path, "offset", tf.commitOff)
	return true
}

// openFile opens path, within the bound on open files if bounded (closing
// the least recently read file that is at its end, other than keep, if
// needed; a new file is opened beyond it for a moment, see track). A
// failure is counted and logged as a fault; EMFILE also lowers the bound.
// It is never taken as the file being gone, except for ENOENT.
func (t *Tailer) openFile(path string, keep *tracked, bounded bool) (*os.File, os.FileInfo, bool) {
	now := time.Now()
	if t.openLimit < t.cfg.MaxOpenFiles && now.Sub(t.lastEMFILE) >= limitRestore {
		t.log.Info("giving back the open file bound", "max_open_files", t.cfg.MaxOpenFiles)
		t.openLimit = t.cfg.MaxOpenFiles
	}
	if bounded && t.nOpen >= t.openLimit && !t.evict(keep, now) {
		return nil, nil, false
	}
	f, err := os.Open(path)
	if err == nil {
		var fi os.FileInfo
		if fi, err = f.Stat(); err != nil {
			f.Close()
		} else {
			t.openFault.ok(t.log, now)
			t.nOpen++
			return f, fi, true
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, false
	}
	t.stats.Error(tap.ErrScan)
	if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
		t.lastEMFILE = now
		// Leave room for what else needs descriptors (scans, the
		// positions file, the rest of the process).
		if lower := max(1, t.nOpen-max(16, t.nOpen/8)); lower < t.openLimit {
			t.openLimit = lower
			t.log.Warn("out of file descriptors; holding fewer files open", "open", t.nOpen, "max_open_files", lower)
		}
	}
	t.openFault.fail(t.log, now, err, "path", path)
	return nil, nil, false
}

// evict closes the open file, other than keep, that was read least
// recently among those read to their end (as of the last stat), to make
// room for another. Idle files go first, so that files still being
// written stay open while they can.
func (t *Tailer) evict(keep *tracked, now time.Time) bool {
	var best *tracked
	bestIdle := false
	for _, tf := range t.files {
		if tf == keep || tf.f == nil || tf.readOff < tf.size || tf.discarding {
			continue
		}
		idle := now.Sub(tf.lastGrowth) >= t.cfg.RescanInterval
		if best == nil || (idle && !bestIdle) || (idle == bestIdle && tf.lastRead.Before(best.lastRead)) {
			best, bestIdle = tf, idle
		}
	}
	if best == nil {
		return false
	}
	t.closeFile(best, now)
	return true
}

// shrink closes files read to their end until the bound holds again (it
// is lowered after EMFILE; new files are opened beyond it for a moment).
func (t *Tailer) shrink(now time.Time) {
	for t.nOpen > t.openLimit && t.evict(nil, now) {
	}
}

// closeFile closes tf's descriptor; a partial last line is dropped and
// read again when it is reopened.
func (t *Tailer) closeFile(tf *tracked, now time.Time) {
	if tf.f == nil {
		return
	}
	tf.f.Close()
	tf.f = nil
	t.nOpen--
	tf.looked = tf.readOff
	tf.closedActive = now.Sub(tf.lastGrowth) < t.cfg.RescanInterval
	t.release(tf)
	tf.dropBuffer()
}

// closeFinished forgets files that the globs no longer match (renamed away
// or deleted) once they have been read to the end and stayed quiet for a
// rescan interval: a writer may still finish its last lines into a file it
// has not yet reopened. A file that went away while closed cannot be read
// any more: if it had unread bytes or was still being written when it was
// closed, that is a loss.
func (t *Tailer) closeFinished(now time.Time) {
	grace := t.cfg.RescanInterval
	kept := t.files[:0]
	for _, tf := range t.files {
		if tf.orphanSince.IsZero() || tf.copy != nil || (tf.f != nil && tf.readOff < tf.size) ||
			now.Sub(tf.orphanSince) < grace || now.Sub(tf.lastGrowth) < grace {
			kept = append(kept, tf)
			continue
		}
		switch {
		case tf.f != nil && tf.partial():
			// The last line never got its newline: it is never emitted half,
			// and the record it was is missing from its stream.
			t.log.Info("file gone with an unfinished last line", "path", tf.path, "offset", tf.commitOff)
			t.lose(tap.DropUpstreamGap)
		case tf.f == nil && tf.shadowOf == nil && (tf.closedActive || tf.size > tf.commitOff):
			t.log.Info("file went away while closed to make room; what it got since is lost",
				"path", tf.path, "offset", tf.commitOff)
			t.lose(tap.DropUpstreamGap)
		}
		t.log.Debug("file finished", "path", tf.path, "inode", tf.key.ino, "offset", tf.commitOff)
		t.closeFile(tf, now)
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

// rescan expands the globs: new files are tracked, files that moved are
// renamed, files that are no longer matched become orphans to finish. A
// scan that failed anywhere (EMFILE, EACCES, EIO) makes no file an orphan:
// a file the scan could not see is not taken as deleted.
func (t *Tailer) rescan(now time.Time, first bool) {
	t.shrink(now) // a scan needs a descriptor too
	seen := make(map[fileKey]bool, len(t.files))
	var scanErr error
	for _, pat := range t.cfg.Paths {
		matches, err := glob(pat)
		scanErr = errors.Join(scanErr, err)
		for _, p := range matches {
			fi, err := os.Stat(p)
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					scanErr = errors.Join(scanErr, err)
				}
				continue
			}
			if !fi.Mode().IsRegular() {
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
				tf.path, tf.orphanSince, tf.gone = p, time.Time{}, false
				if now.Sub(tf.seen) >= seenRefresh {
					tf.seen, t.dirty = now, true
				}
				continue
			}
			if !t.track(p, key, first, now) {
				seen[key] = false // not tracked yet: the next scan tries again
				if first {
					t.firstSeen[key] = true // but it was there at the start
				}
			}
		}
	}
	if scanErr != nil {
		t.stats.Error(tap.ErrScan)
		t.scanFault.fail(t.log, now, scanErr)
	} else {
		t.scanFault.ok(t.log, now)
		for _, tf := range t.files {
			if !seen[tf.key] && tf.orphanSince.IsZero() {
				tf.orphanSince = now
			}
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
	// What the tap reads from is healthy when it can be scanned and
	// opened: a metric and /healthz detail, never readiness.
	t.stats.UpstreamUp.Store(!t.scanFault.active && !t.openFault.active)
}

func keyOf(fi os.FileInfo, path string) fileKey {
	dev, ino, _, ok := fileID(fi)
	if !ok {
		return fileKey{path: path}
	}
	return fileKey{dev: dev, ino: ino}
}

// track starts tracking a file the globs matched for the first time: it
// resumes from a checkpoint when one matches, else starts at 0 (or at the
// end, on a first ever start with StartAt "end", and for the files found
// at start after a corrupt positions file). The file stays open if the
// bound allows, else it is closed until it is read. It reports false if the
// file could not be opened (tried again at the next scan).
func (t *Tailer) track(path string, key fileKey, first bool, now time.Time) bool {
	// Opened beyond the bound if it must be (and closed again below): its
	// fingerprint and checkpoint are needed now, and a file at its start
	// is not one that evict may close.
	if t.nOpen >= t.openLimit {
		t.evict(nil, now)
	}
	f, fi, ok := t.openFile(path, nil, false)
	if !ok {
		return false
	}
	if keyOf(fi, path) != key {
		f.Close() // replaced since the scan: the next scan sees the new one
		t.nOpen--
		return false
	}
	delete(t.warned, path)
	size := fi.Size()
	fp, err := readPrefix(f, nil, int(min(size, fingerprintSize)))
	if err != nil {
		f.Close()
		t.nOpen--
		t.warnOnce(path, "cannot read file", "path", path, "err", err)
		return false
	}
	tf := &tracked{key: key, path: path, f: f, fp: fp, size: size, mtime: fi.ModTime(), lastGrowth: now, seen: now}
	if of, tentative, done, isDone := t.shadowFor(path, key, fp); of != nil || isDone {
		// A copy-truncate copy the globs match: never read from 0.
		if isDone {
			tf.readOff, tf.commitOff, tf.line = done.off, done.off, done.line
		} else {
			tf.shadowOf, tf.tentative = of, tentative
			off := lastLineEnd(f, size, t.scratch)
			tf.readOff, tf.commitOff = off, off
			t.closeFile(tf, now)
		}
		t.log.Debug("file is a copy of a tracked file", "path", path, "offset", tf.commitOff)
		t.files = append(t.files, tf)
		t.byKey[key] = tf
		t.dirty = true
		delete(t.firstSeen, key)
		return true
	}
	if o := t.replaced(path, f, size); o != nil {
		// Read on from where the old one was: what it held is read.
		tf.readOff, tf.commitOff, tf.line = o.commitOff, o.commitOff, o.line
		t.log.Info("file replaced by one that holds all it held (rewritten whole, then renamed over it); reading on",
			"path", path, "offset", o.commitOff)
		t.forget(o, now)
		t.files = append(t.files, tf)
		t.byKey[key] = tf
		t.dirty = true
		delete(t.firstSeen, key)
		if t.nOpen > t.openLimit {
			t.closeFile(tf, now)
		}
		return true
	}
	switch e, i, how := t.matchCheckpoint(key, fp, size); how {
	case resumed:
		tf.readOff, tf.commitOff, tf.line = e.Offset, e.Offset, e.Line
	case truncatedWhileDown:
		m := prefixMatch{n: e.FingerprintLen, sum: e.Fingerprint}
		if t.startCopy(tf, m, e.Offset, e.Line, 0) {
			t.restored = append(t.restored[:i], t.restored[i+1:]...)
		} else {
			t.log.Info("file truncated while not running and no copy of its old content found; reading it from the start", "path", path)
			t.lose(tap.DropTruncated)
			tf.torn = true
		}
	default:
		if (first || t.firstSeen[key]) && ((!t.hadPositions && t.cfg.StartAt == StartEnd) || t.recovering) {
			off := lastLineEnd(f, size, t.scratch)
			tf.readOff, tf.commitOff = off, off
		}
	}
	t.files = append(t.files, tf)
	t.byKey[key] = tf
	t.dirty = true
	t.log.Debug("file opened", "path", path, "dev", key.dev, "inode", key.ino, "offset", tf.commitOff)
	delete(t.firstSeen, key)
	if t.nOpen > t.openLimit {
		t.closeFile(tf, now) // over the bound: it waits for its turn
	}
	return true
}

// maxReplaced bounds the content compared to tell that a file was
// rewritten whole with more at its end (replaced).
const maxReplaced = 64 << 20

// replaced finds the tracked file that the new file f at path took the
// place of and that it holds whole: the old file's content, to its
// current size, is f's first bytes. A writer that rewrites its log whole
// and renames it over the old one (an atomic save: temp file + rename,
// as transcript and session stores do) makes a new file of the same name
// each time; read from 0, every record of it was judged again
// (e2a.seq_regress, e2a.seq_dup, e2a.after_final). The old file must
// still be open (its content is compared, not its fingerprint) and at
// most maxReplaced long; else the new file is a new file.
func (t *Tailer) replaced(path string, f *os.File, size int64) *tracked {
	for _, o := range t.files {
		if o.path != path || o.f == nil || o.copy != nil || o.shadowOf != nil || o.discarding {
			continue
		}
		fi, err := o.f.Stat()
		if err != nil || fi.Size() > size || fi.Size() > maxReplaced || fi.Size() < o.commitOff {
			continue
		}
		if t.sameContent(o.f, f, fi.Size()) {
			return o
		}
	}
	return nil
}

// sameContent reports whether a and b hold the same first n bytes.
func (t *Tailer) sameContent(a, b *os.File, n int64) bool {
	half := len(t.scratch) / 2
	x, y := t.scratch[:half], t.scratch[half:]
	for off := int64(0); off < n; {
		k := int(min(int64(half), n-off))
		if i, _ := a.ReadAt(x[:k], off); i < k {
			return false
		}
		if i, _ := b.ReadAt(y[:k], off); i < k {
			return false
		}
		if !bytes.Equal(x[:k], y[:k]) {
			return false
		}
		off += int64(k)
	}
	return true
}

// forget stops tracking tf at once.
func (t *Tailer) forget(tf *tracked, now time.Time) {
	t.closeFile(tf, now)
	delete(t.byKey, tf.key)
	if i := slices.Index(t.files, tf); i >= 0 {
		t.files = slices.Delete(t.files, i, i+1)
	}
	t.dirty = true
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
// was down; that checkpoint (returned with its index) stays, for a copy of
// the old content to match.
func (t *Tailer) matchCheckpoint(key fileKey, fp []byte, size int64) (positions.Entry, int, matchKind) {
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
	take := func(i int) (positions.Entry, int, matchKind) {
		e := t.restored[i].Entry
		t.restored = append(t.restored[:i], t.restored[i+1:]...)
		return e, -1, resumed
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
		return t.restored[sameInode].Entry, sameInode, truncatedWhileDown
	}
	return positions.Entry{}, -1, noCheckpoint
}

// loadPositions reads the checkpoints. It reports false only if ctx ended
// first. A positions file that cannot be read (EACCES, EIO) is retried with
// backoff while the tap stays down: starting without it would read files
// again from a guessed place. A corrupt one (empty, garbage, cut short) is
// moved aside and the tailer starts in recovery: every file found now is
// read from its end (its last complete line), a loss and a rejoin are
// reported first, and files that appear later are read from the start. That
// reads nothing twice (no false e2a.after_final or duplicate) and judges no
// open stream across what was skipped (see doc.go).
func (t *Tailer) loadPositions(ctx context.Context) bool {
	if t.cfg.Positions == "" {
		return true
	}
	f := fault{what: "reading positions"}
	backoff := 100 * time.Millisecond
	for {
		entries, exists, err := positions.Load(t.cfg.Positions)
		now := time.Now()
		if err == nil {
			f.ok(t.log, now)
			t.hadPositions = exists
			for _, e := range entries {
				t.restored = append(t.restored, restoredEntry{Entry: e})
			}
			return true
		}
		t.stats.Error(tap.ErrPositions)
		if errors.Is(err, positions.ErrCorrupt) {
			aside, merr := positions.MoveAside(t.cfg.Positions, now, keepCorrupt)
			args := []any{"path", t.cfg.Positions, "err", err}
			if merr != nil {
				args = append(args, "move_err", merr)
			} else {
				args = append(args, "moved_to", aside)
			}
			t.log.Error("positions file is corrupt: moved aside; every file found now is read from its end, and a loss is reported", args...)
			t.hadPositions, t.recovering = true, true
			return true
		}
		f.fail(t.log, now, err, "path", t.cfg.Positions)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

// snapshot returns the checkpoints of tracked files (their committed
// offsets: only lines emit accepted are behind them) and of checkpoints
// not yet matched. Taken on Run's goroutine, it is consistent. A file whose
// copy is being finished keeps its old checkpoint (old fingerprint, offset
// in the copy) until the copy is done, so that a restart finds the copy
// again.
func (t *Tailer) snapshot() []positions.Entry {
	entries := make([]positions.Entry, 0, len(t.files)+len(t.restored))
	for _, tf := range t.files {
		e := positions.Entry{
			Path:           tf.path,
			Dev:            tf.key.dev,
			Inode:          tf.key.ino,
			FingerprintLen: len(tf.fp),
			Fingerprint:    tf.sum(),
			Offset:         tf.commitOff,
			Line:           tf.line,
			Seen:           tf.seen,
		}
		if cr := tf.copy; cr != nil {
			e.FingerprintLen, e.Fingerprint, e.Offset, e.Line = cr.oldLen, cr.oldSum, cr.tf.commitOff, cr.tf.line
		}
		entries = append(entries, e)
	}
	for _, e := range t.restored {
		entries = append(entries, e.Entry)
	}
	return entries
}

// saveAsync hands a snapshot to the saver goroutine, if it differs from the
// last one (or the last save failed): an fsync can take long on a busy
// disk, and BeforeSave waits for the engine, and reading must not wait for
// either. If the saver is still busy with an older snapshot, the pending
// one is replaced (the newest checkpoint is all that matters).
func (t *Tailer) saveAsync() {
	if t.cfg.Positions == "" {
		return
	}
	retry := t.saveFailed.Swap(false)
	if !t.dirty && !retry {
		return
	}
	snap := t.snapshot()
	t.dirty = false
	if !retry && slices.Equal(snap, t.lastSent) {
		return
	}
	t.lastSent = snap
	select {
	case <-t.saveCh: // drop the older pending snapshot
	default:
	}
	t.saveCh <- snap // Run is the only sender: there is room now
}

// saver writes snapshots until saveCh is closed.
func (t *Tailer) saver(ctx context.Context, wg *sync.WaitGroup) {
	defer wg.Done()
	for snap := range t.saveCh {
		t.write(ctx, snap)
	}
}

// write commits a snapshot: BeforeSave first (what was emitted before the
// snapshot is judged and logged), then the file. Failures are counted and
// logged as a fault, never fatal; the next save tries again.
func (t *Tailer) write(ctx context.Context, snap []positions.Entry) {
	if t.cfg.BeforeSave != nil {
		if err := t.cfg.BeforeSave(ctx); err != nil {
			t.saveFailed.Store(true)
			if ctx.Err() == nil {
				t.log.Debug("positions not saved: what was read is not confirmed yet", "err", err)
			}
			return
		}
	}
	now := time.Now()
	if err := positions.Save(t.cfg.Positions, snap); err != nil {
		t.stats.Error(tap.ErrPositions)
		t.saveFault.fail(t.log, now, err, "path", t.cfg.Positions)
		t.saveFailed.Store(true)
		return
	}
	t.saveFault.ok(t.log, now)
	t.written = snap
	t.saves.Add(1)
}

// saveFinal writes the last checkpoints synchronously, after the saver has
// stopped, if they differ from what was written.
func (t *Tailer) saveFinal(ctx context.Context) {
	if t.cfg.Positions == "" {
		return
	}
	snap := t.snapshot()
	if t.written != nil && slices.Equal(snap, t.written) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalSaveWait)
	defer cancel()
	t.write(ctx, snap)
	t.dirty = false
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
