package logdir

import (
	"log/slog"
	"time"
)

// faultRepeat is how often a fault that goes on is logged again.
const faultRepeat = time.Minute

// fault is one kind of trouble of the tailer (scans failing, opens
// failing, saves failing) as the operator sees it: logged once when it
// starts, at most every faultRepeat while it lasts (with how often it
// happened meanwhile), and once when it ends. The caller counts every
// occurrence in Stats.Errors. A fault belongs to one goroutine.
type fault struct {
	what    string // "scan", "open", "save positions"
	active  bool
	since   time.Time
	count   uint64 // occurrences since it started
	lastLog time.Time
}

// fail records one occurrence.
func (f *fault) fail(log *slog.Logger, now time.Time, err error, args ...any) {
	f.count++
	switch {
	case !f.active:
		f.active, f.since, f.count, f.lastLog = true, now, 1, now
		log.Warn(f.what+" failing; retrying", append(args, "err", err)...)
	case now.Sub(f.lastLog) >= faultRepeat:
		f.lastLog = now
		log.Warn(f.what+" still failing; retrying", append(args, "err", err, "since", f.since, "failures", f.count)...)
	}
}

// ok records a success; it ends the fault if one was going on.
func (f *fault) ok(log *slog.Logger, now time.Time) {
	if !f.active {
		return
	}
	log.Info(f.what+" works again", "since", f.since, "for", now.Sub(f.since).Round(time.Millisecond).String(), "failures", f.count)
	f.active, f.count = false, 0
}
