package natstap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/e2atap/e2atap/tap"
)

// The cursors file (Config.Positions): per JetStream stream, the sequence
// after the last message the engine has judged and written out, so that a
// tap started again (a restart, a crash, a reload) reads on from there,
// not from "new" (what was stored meanwhile was skipped, silently).
// Written like the logdir positions: whole, to a temporary file that is
// synced and renamed over the old one.

// cursorsVersion is the format version of the cursors file.
const cursorsVersion = 1

type cursorsDoc struct {
	Version int               `json:"version"`
	Streams map[string]uint64 `json:"streams"` // stream name → next sequence
	// Judged, per stream whose cursor is held back by a stream still
	// open: the sequence after the last message judged and written out
	// at the save. The messages from the cursor up to it are read again
	// only to rebuild the open streams' state (tap.Message.Reread).
	// Absent in files of earlier versions: everything read is judged.
	Judged map[string]uint64 `json:"judged,omitempty"`
}

// cursors is what a cursors file holds.
type cursors struct {
	next   map[string]uint64 // stream → sequence to read on from
	judged map[string]uint64 // stream → sequence after the last judged (> next only)
}

func (c cursors) clone() cursors {
	return cursors{next: maps.Clone(c.next), judged: maps.Clone(c.judged)}
}

func (c cursors) equal(o cursors) bool {
	return maps.Equal(c.next, o.next) && maps.Equal(c.judged, o.judged)
}

// loadCursors reads the cursors file; a missing one is no cursor.
func loadCursors(path string) (cursors, error) {
	c := cursors{next: map[string]uint64{}, judged: map[string]uint64{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return cursors{}, err
	}
	var d cursorsDoc
	if err := json.Unmarshal(b, &d); err != nil || d.Version != cursorsVersion || d.Streams == nil {
		return cursors{}, fmt.Errorf("%s: not a cursors file of version %d", path, cursorsVersion)
	}
	c.next = d.Streams
	for s, j := range d.Judged {
		if j > c.next[s] {
			c.judged[s] = j
		}
	}
	return c, nil
}

// saveCursors replaces the cursors file atomically.
func saveCursors(path string, c cursors) (err error) {
	d := cursorsDoc{Version: cursorsVersion, Streams: c.next}
	if len(c.judged) > 0 {
		d.Judged = c.judged
	}
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(b); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync() // the rename survives a power cut (where the filesystem can)
		d.Close()
	}
	return nil
}

// streamPartition is the Position.Partition of the messages of the tap's
// i-th JetStream stream (0 is core NATS).
func streamPartition(i int) int32 { return int32(i + 1) }

// handOverAll says, as Run ends, that every JetStream stream's open
// streams are read again from their start by whoever reads on from the
// cursors (this tap run again by a reload or its supervisor, or the next
// process): the engine drops them with no verdict (not a loss), so that it
// neither sees their start twice nor reports them missing. Only with a
// cursors file: without one, nothing reads them again.
func (r *run) handOverAll(ctx context.Context) {
	if len(r.emitted) == 0 {
		return
	}
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	now := time.Now()
	for i := range r.cfg.Streams {
		m := tap.Message{Tap: r.cfg.Name, Time: now, Lost: true, LossReason: tap.DropRebalance,
			Pos: tap.Position{Kind: tap.PosSubject, Partition: streamPartition(i), Offset: -1}}
		if r.emitFn(ctx, m) != nil {
			return
		}
	}
}

// finalSaveWait bounds the last save's wait for BeforeSave at a stop.
const finalSaveWait = 5 * time.Second

// saver writes the cursors every SaveInterval until ctx is done, then once
// more (the stream goroutines have stopped by then: Run waits for them
// first). What it writes is what was emitted before BeforeSave returned,
// so that a cursor never passes what the engine has judged and written out
// (DESIGN.md, "Durability order").
func (r *run) saver(ctx context.Context, streamsDone func()) {
	t := time.NewTicker(r.cfg.SaveInterval)
	defer t.Stop()
	saved := r.cursors.clone()
	for {
		select {
		case <-ctx.Done():
			streamsDone()
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalSaveWait)
			r.saveOnce(fctx, saved)
			cancel()
			return
		case <-t.C:
			r.saveOnce(ctx, saved)
		}
	}
}

// saveOnce writes the cursors if they moved since saved (updated): per
// stream, the sequence after the last message emitted, or the first of
// the oldest stream still open there, whichever is lower; and, where that
// is the open stream's, the sequence after the last message emitted as
// the judged mark (or the one saved before, if higher: this run may not
// have read up to it yet).
func (r *run) saveOnce(ctx context.Context, saved cursors) {
	now := saved.clone()
	for _, sc := range r.cfg.Streams {
		if v := r.emitted[sc.Stream].Load(); v > 0 {
			now.next[sc.Stream] = v
		}
	}
	emitted := maps.Clone(now.next)
	var open OpenFirst
	if r.cfg.BeforeSave != nil {
		var err error
		if open, err = r.cfg.BeforeSave(ctx); err != nil {
			return // not written out yet: next time
		}
	}
	if open != nil {
		for i, sc := range r.cfg.Streams {
			if first, ok := open(streamPartition(i)); ok && first > 0 && uint64(first) < now.next[sc.Stream] {
				now.next[sc.Stream] = uint64(first)
			}
		}
	}
	for s, e := range emitted {
		if j := max(e, now.judged[s]); j > now.next[s] {
			now.judged[s] = j
		} else {
			delete(now.judged, s)
		}
	}
	if now.equal(saved) {
		return
	}
	if err := saveCursors(r.cfg.Positions, now); err != nil {
		r.stats.Error(tap.ErrPositions)
		if !r.saveFailing {
			r.saveFailing = true
			r.log.Warn("saving the jetstream cursors failing; retrying (logged again when it works)", "path", r.cfg.Positions, "err", err)
		}
		return
	}
	if r.saveFailing {
		r.saveFailing = false
		r.log.Info("saving the jetstream cursors works again", "path", r.cfg.Positions)
	}
	maps.Copy(saved.next, now.next)
	clear(saved.judged)
	maps.Copy(saved.judged, now.judged)
}
