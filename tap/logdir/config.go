package logdir

import (
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
	// emit) for every line longer than MaxLineBytes, with its position and
	// length in bytes (without the newline). It must not block for long.
	OnOversize func(pos tap.Position, length int64)
}

// DefaultConfig returns the defaults: 1 MiB lines, poll every 250ms (filesystem
// events usually wake the tailer sooner), rescan every 2s, save every 1s,
// start at the beginning.
func DefaultConfig() Config {
	return Config{
		MaxLineBytes:   1 << 20,
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
