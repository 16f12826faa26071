package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"

	kafkatap "github.com/e2atap/e2atap/tap/kafka"
	natstap "github.com/e2atap/e2atap/tap/nats"
	"github.com/e2atap/e2atap/validate"
)

// Crash consistency (DESIGN.md, "Durability order"; RULES.md: a record read
// again after a crash is recognised by its position and judged once).
//
// A tap that resumes from a saved position (logdir, Kafka, JetStream) reads
// again, after a crash, what it read after its last save. Those records are
// in the record log already, with their resume point ("at"). At start the
// sidecar reads the tail of its record log and learns, per tap and source,
// the points logged there; a message read again at one of them (same
// offset, same length) is judged silently (validate.Input.Silent): it
// rebuilds its stream's state, so that a stream open at the crash, which a
// Kafka tap reads again from its start, is judged whole, and nothing is
// reported or logged for it a second time. The marks of a
// source are dropped once its tap reads past them, or when a gap or a loss
// says the source is not the one that was logged (a truncation), so that a
// new file at the same name is judged whole.

// resumeTail is how much of the record log's end is read for marks: more
// than a tap reads between two position saves at any sane rate.
const resumeTail = 16 << 20

// resumeMarks are the resume points of the record log's tail that a tap
// may read again. Safe for concurrent use (taps emit from many goroutines).
type resumeMarks struct {
	active atomic.Int32 // taps with marks left: 0 is the fast path
	mu     sync.Mutex
	taps   map[string]*tapMarks
	// redact is the record log's redaction of a source (the log keeps the
	// redacted form).
	redact  func(string) string
	skipped atomic.Uint64
	// done is called once, when no tap has marks left.
	done func(skipped uint64)
}

type tapMarks struct {
	srcs  map[string]*srcMarks // redacted src → its points
	names map[string]string    // src as the tap names it → redacted
}

type srcMarks struct {
	hi  int64
	len map[int64]int // offset → length of the logged record
}

// loadResumeMarks reads the tail of the record log at path (and of
// path.1 when path is shorter than the tail: it may just have rotated).
func loadResumeMarks(path string, redact func(string) string) (*resumeMarks, error) {
	r := &resumeMarks{taps: map[string]*tapMarks{}, redact: redact}
	if path == "-" {
		return r, nil // standard output: nothing to read back
	}
	left := int64(resumeTail)
	var tails [][]byte
	for _, p := range []string{path, path + ".1"} {
		b, err := readTail(p, left)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return r, err
		}
		tails = append(tails, b)
		left -= int64(len(b))
		if left <= 0 {
			break
		}
	}
	for i := len(tails) - 1; i >= 0; i-- {
		r.learn(tails[i])
	}
	r.active.Store(int32(len(r.taps)))
	return r, nil
}

// readTail returns the last whole lines of the file within max bytes.
func readTail(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	from := fi.Size() - max
	if from < 0 {
		from = 0
	}
	b, err := io.ReadAll(io.NewSectionReader(f, from, fi.Size()-from))
	if err != nil {
		return nil, err
	}
	if from > 0 {
		// Started in the middle of a line: skip it.
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		} else {
			b = nil
		}
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1] // a torn last line is no record
	} else {
		b = nil
	}
	return b, nil
}

func (r *resumeMarks) learn(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		line := b[:i]
		b = b[i+1:]
		tapName, at, ok := validate.ReadLoggedAt(line)
		if !ok {
			continue
		}
		tm := r.taps[tapName]
		if tm == nil {
			tm = &tapMarks{srcs: map[string]*srcMarks{}, names: map[string]string{}}
			r.taps[tapName] = tm
		}
		sm := tm.srcs[at.Src]
		if sm == nil {
			sm = &srcMarks{len: map[int64]int{}}
			tm.srcs[at.Src] = sm
		}
		sm.len[at.Off] = at.Len
		sm.hi = max(sm.hi, at.Off)
	}
}

// seen reports whether in is a record the log holds already: it is then
// not submitted. Any other message of a source with marks clears them
// once it is past them (or says, by a gap, that the source changed).
func (r *resumeMarks) seen(in *validate.Input) bool {
	if r == nil || r.active.Load() == 0 {
		return false
	}
	src, off, ok := in.ResumePoint()
	if !ok {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	tm := r.taps[in.Tap]
	if tm == nil {
		return false
	}
	key, ok := tm.names[src]
	if !ok {
		key = r.redact(src)
		tm.names[src] = key
	}
	sm := tm.srcs[key]
	if sm == nil {
		return false
	}
	if in.Gap || off > sm.hi {
		r.dropLocked(in.Tap, tm, key)
		return false
	}
	if n, ok := sm.len[off]; ok && n == len(in.Data) {
		delete(sm.len, off)
		r.skipped.Add(1)
		return true
	}
	return false
}

// skippedCount is how many records read again were recognised.
func (r *resumeMarks) skippedCount() uint64 {
	if r == nil {
		return 0
	}
	return r.skipped.Load()
}

// lost drops the marks of a tap that lost messages in the scope of its
// sources (conn ""): what it reads next may not be what was logged.
func (r *resumeMarks) lost(tapName, conn string) {
	if r == nil || r.active.Load() == 0 || conn != "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.taps[tapName]; ok {
		delete(r.taps, tapName)
		r.decLocked()
	}
}

func (r *resumeMarks) decLocked() {
	if r.active.Add(-1) == 0 && r.done != nil {
		r.done(r.skipped.Load())
	}
}

func (r *resumeMarks) dropLocked(tapName string, tm *tapMarks, key string) {
	delete(tm.srcs, key)
	if len(tm.srcs) == 0 {
		delete(r.taps, tapName)
		r.decLocked()
	}
}

// syncOpen is sync for a Kafka tap's commit: it also says, per partition
// of the tap, the first offset of the oldest stream still open (as of the
// same barrier), past which the tap must not commit.
func (s *sidecar) syncOpen(ctx context.Context, tapName string) (kafkatap.OpenFirst, error) {
	open, err := s.live.SyncOpen(ctx, tapName)
	if err != nil {
		return nil, err
	}
	if err := s.syncOutputs(); err != nil {
		return nil, err
	}
	return func(topic string, partition int32) (int64, bool) {
		off, ok := open[validate.KafkaPartition{Tap: tapName, Topic: topic, Partition: partition}]
		return off, ok
	}, nil
}

// syncOpenJS is syncOpen for a nats tap's JetStream cursors: per stream
// (the Partition its messages carry), the first sequence of the oldest
// stream still open.
func (s *sidecar) syncOpenJS(ctx context.Context, tapName string) (natstap.OpenFirst, error) {
	open, err := s.live.SyncOpen(ctx, tapName)
	if err != nil {
		return nil, err
	}
	if err := s.syncOutputs(); err != nil {
		return nil, err
	}
	return func(partition int32) (int64, bool) {
		off, ok := open[validate.KafkaPartition{Tap: tapName, Partition: partition}]
		return off, ok
	}, nil
}

// sync returns once everything the taps handed over so far is judged and
// the findings and record logs are written out and fsynced (findings
// first: a record on disk has its findings on disk). A tap commits its
// positions only after it (logdir.Config.BeforeSave), so that what a crash
// makes it read again is in the record log, and recognised.
func (s *sidecar) sync(ctx context.Context) error {
	if err := s.live.Sync(ctx); err != nil {
		return err
	}
	return s.syncOutputs()
}

// syncOutputs writes out and fsyncs the findings log, then the record log.
func (s *sidecar) syncOutputs() error {
	out := s.outs.Load()
	var errs []error
	if out.find != nil {
		errs = append(errs, out.find.Sync())
	}
	if out.rec != nil {
		errs = append(errs, out.rec.Sync())
	}
	return errors.Join(errs...)
}
