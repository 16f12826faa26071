package logdir

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/e2atap/e2atap/tap"
)

// Where to start in a file for which there is no checkpoint.
const (
	StartBeginning = "beginning"
	StartEnd       = "end"
)

// Config configures a Tailer. Start from DefaultConfig.
type Config struct {
	// Name is the tap name (Message.Tap, metric label).
	Name string
	// Paths are glob patterns (filepath.Match syntax) of the files to tail,
	// e.g. /var/log/agent/*.jsonl. Directories need not exist yet.
	Paths []string
	// Positions is the checkpoint file; "" keeps no checkpoints (every
	// start is a first start).
	Positions string
	// MaxLineBytes is the longest line emitted (without its newline). A
	// longer line is skipped without being held in memory, counted as
	// tap.DropOversize and reported to OnOversize.
	MaxLineBytes int
	// MaxOpenFiles bounds the descriptors the tailer holds. Files beyond it
	// take turns: a file read to its end is closed for one that has data
	// waiting, and is known again by device, inode and fingerprint when it
	// is reopened. When the process runs out of descriptors (EMFILE) the
	// bound is lowered by itself until opens succeed again.
	MaxOpenFiles int
	// PollInterval is how often open files are checked for new data when
	// no filesystem event arrives.
	PollInterval time.Duration
	// RescanInterval is how often the globs are expanded again: the truth
	// about which files exist (filesystem events are only a hint).
	RescanInterval time.Duration
	// SaveInterval is how often the positions file is written while
	// running (it is also written when Run returns). It bounds what a crash
	// repeats: see the package documentation.
	SaveInterval time.Duration
	// StartAt is where to start in a file found at the very first start
	// (no positions file yet) and for which there is therefore no
	// checkpoint: StartBeginning or StartEnd. Files that appear later, or
	// while a positions file exists, are always read from the beginning, so
	// that rotation loses nothing.
	StartAt string
	// OnOversize, if set, is called (from Run's goroutine, in order with
	// emit) for every line longer than MaxLineBytes, with its position, its
	// length in bytes (without the newline) and its head: the first
	// min(length, OversizeHead) bytes, owned by the callee, from which the
	// engine reads the line's request_id and sequence so that only that
	// stream is gapped. A blocking OnOversize is backpressure, like emit.
	OnOversize func(pos tap.Position, length int64, head []byte)
	// Budget, if set, is charged the bytes of every line before it is
	// emitted (Acquire: reading waits while the budget is spent; a line is
	// never dropped for it) and Message.Charged says how many; the engine
	// releases them once it has judged the line.
	Budget *tap.Budget
	// BeforeSave, if set, is called before the positions file is written,
	// after the offsets to write were taken: it returns once everything
	// emitted before that point is judged and logged (DESIGN.md's
	// durability order). An error skips that save (the previous positions
	// stay; nothing is lost, more is read again after a crash). It is
	// called from one goroutine at a time, never from Run's, so it may
	// wait for the engine to consume what Run emits; it must return when
	// ctx is done (the last save, after Run's ctx ended, gets a ctx of its
	// own with 10s).
	BeforeSave func(context.Context) error
}

// OversizeHead is the most of an oversize line handed to OnOversize.
const OversizeHead = 64 << 10

// DefaultMaxLineBytes is 10 MiB. The reference AgentServer accepts
// messages up to 8 MiB (AGENT_WS_MAX_MESSAGE_BYTES) and sends frames up to
// its 6 MiB send budget; a log line that holds one such message verbatim
// (e2atap's own record log, an agent logging its frames as JSON lines) is
// the message plus a record envelope of a few hundred bytes to a few KiB.
// 10 MiB takes the largest message the reference lets through with 2 MiB
// to spare for that envelope and for escaping, while keeping a line being
// read within a small multiple of what the engine holds for one record.
const DefaultMaxLineBytes = 10 << 20

// DefaultConfig returns the defaults: 10 MiB lines, 256 open files, poll
// every 250ms (filesystem events usually wake the tailer sooner), rescan
// every 2s, save every 1s, start at the beginning.
func DefaultConfig() Config {
	return Config{
		MaxLineBytes:   DefaultMaxLineBytes,
		MaxOpenFiles:   256,
		PollInterval:   250 * time.Millisecond,
		RescanInterval: 2 * time.Second,
		SaveInterval:   time.Second,
		StartAt:        StartBeginning,
	}
}

// Validate reports every problem of the configuration at once.
func (c Config) Validate() error {
	var errs []error
	if c.Name == "" {
		errs = append(errs, errors.New("logdir: name is empty"))
	}
	if len(c.Paths) == 0 {
		errs = append(errs, errors.New("logdir: paths is empty"))
	}
	for _, p := range c.Paths {
		if p == "" {
			errs = append(errs, errors.New("logdir: paths: empty pattern"))
			continue
		}
		if _, err := filepath.Match(p, ""); err != nil {
			errs = append(errs, fmt.Errorf("logdir: paths: %q: %w", p, err))
		}
	}
	if c.MaxLineBytes <= 0 {
		errs = append(errs, fmt.Errorf("logdir: max_line_bytes must be > 0, got %d", c.MaxLineBytes))
	}
	if c.MaxOpenFiles <= 0 {
		errs = append(errs, fmt.Errorf("logdir: max_open_files must be > 0, got %d", c.MaxOpenFiles))
	}
	if c.PollInterval <= 0 {
		errs = append(errs, fmt.Errorf("logdir: poll_interval must be > 0, got %s", c.PollInterval))
	}
	if c.RescanInterval <= 0 {
		errs = append(errs, fmt.Errorf("logdir: rescan_interval must be > 0, got %s", c.RescanInterval))
	}
	if c.SaveInterval <= 0 {
		errs = append(errs, fmt.Errorf("logdir: save_interval must be > 0, got %s", c.SaveInterval))
	}
	if c.StartAt != StartBeginning && c.StartAt != StartEnd {
		errs = append(errs, fmt.Errorf("logdir: start_at must be %q or %q, got %q", StartBeginning, StartEnd, c.StartAt))
	}
	return errors.Join(errs...)
}
