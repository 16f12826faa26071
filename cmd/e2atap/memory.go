package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
)

// MemoryConfig sizes the one byte budget for everything the taps hold for
// the engine (DESIGN.md, "One byte budget"): mirror copies, messages queued
// for the engine, partial fragments. Past it a copy is dropped as a loss
// (or, for a tap that can read slower, the tap waits).
type MemoryConfig struct {
	// BudgetBytes is the budget's size. 0 derives it from the memory limit
	// of the container (cgroup) and GOMEMLIMIT, the smaller: a quarter of
	// it, at least budgetFloor; budgetDefault when no limit is known. -1 is
	// unlimited (for tests and benchmarks, never in production).
	BudgetBytes int64 `yaml:"budget_bytes"`
}

const (
	// budgetShare: the budget is limit/budgetShare. The rest is headroom
	// for the engine's stream table, the relay's own buffers, the Go
	// runtime and the garbage collector's slack.
	budgetShare = 4
	// budgetFloor keeps a budget that holds at least two maximal WebSocket
	// messages (8 MiB), whatever the limit.
	budgetFloor = 16 << 20
	// budgetDefault is the budget when no memory limit is known.
	budgetDefault = 256 << 20
	// goLimitPercent is where the Go memory limit is set, in percent of the
	// cgroup limit, when GOMEMLIMIT is not set: the collector works harder
	// before the kernel kills the process.
	goLimitPercent = 90
	// budgetMinBytes is the smallest budget a configuration may set.
	budgetMinBytes = 1 << 20
)

// budgetChoice is the budget chosen at start and why.
type budgetChoice struct {
	Budget int64  // bytes; <= 0 unlimited
	Source string // where it came from, for the start log and /healthz
	// Limit is the memory limit it was derived from (0: none known).
	Limit int64
	// CgroupLimit is the container's limit (0: none), and GoLimit what the
	// Go runtime was set to because of it (0: left alone).
	CgroupLimit int64
	GoLimit     int64
}

// chooseBudget decides the budget. configured is memory.budget_bytes;
// root is the file system holding /proc and /sys (os.DirFS("/"); tests
// inject a fake); goLimit is the Go runtime's memory limit as
// debug.SetMemoryLimit(-1) reports it (math.MaxInt64 when GOMEMLIMIT is
// not set).
func chooseBudget(configured int64, root fs.FS, goLimit int64) budgetChoice {
	cg, cgSource := cgroupMemoryLimit(root)
	c := budgetChoice{CgroupLimit: cg}
	goSet := goLimit > 0 && goLimit < math.MaxInt64
	if cg > 0 && !goSet {
		c.GoLimit = cg / 100 * goLimitPercent
	}
	var limitSource string
	switch {
	case goSet && (cg == 0 || goLimit < cg):
		c.Limit, limitSource = goLimit, "GOMEMLIMIT"
	case cg > 0:
		c.Limit, limitSource = cg, cgSource
	}
	switch {
	case configured < 0:
		c.Budget, c.Source = 0, "memory.budget_bytes (unlimited)"
		return c
	case configured > 0:
		c.Budget, c.Source = configured, "memory.budget_bytes"
		return c
	case c.Limit == 0:
		c.Budget, c.Source = budgetDefault, "default (no memory limit known)"
		return c
	}
	c.Budget = max(c.Limit/budgetShare, budgetFloor)
	c.Source = fmt.Sprintf("1/%d of %s", budgetShare, limitSource)
	return c
}

// cgroupMemoryLimit is the memory limit of the cgroup this process is in,
// and the file it was read from; 0 when there is none. It takes the
// smallest limit of the cgroup and its ancestors that are visible (a
// container without its own cgroup namespace sees the host's hierarchy).
func cgroupMemoryLimit(root fs.FS) (int64, string) {
	self, _ := fs.ReadFile(root, "proc/self/cgroup")
	if _, err := fs.Stat(root, "sys/fs/cgroup/cgroup.controllers"); err == nil {
		return smallestLimit(root, "sys/fs/cgroup", cgroupPath(self, ""), "memory.max")
	}
	return smallestLimit(root, "sys/fs/cgroup/memory", cgroupPath(self, "memory"), "memory.limit_in_bytes")
}

// cgroupPath finds the path of the cgroup in /proc/self/cgroup: the
// unified hierarchy ("0::/path") when controller is "", else the v1
// hierarchy whose controllers include it ("4:memory:/path").
func cgroupPath(self []byte, controller string) string {
	sc := bufio.NewScanner(bytes.NewReader(self))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if controller == "" && parts[0] == "0" && parts[1] == "" {
			return parts[2]
		}
		for _, c := range strings.Split(parts[1], ",") {
			if controller != "" && c == controller {
				return parts[2]
			}
		}
	}
	return "/"
}

// smallestLimit reads file in mount/cg and in each of its ancestors up to
// mount, and returns the smallest limit found.
func smallestLimit(root fs.FS, mount, cg, file string) (int64, string) {
	var best int64
	var from string
	dir := path.Clean("/" + cg)
	for {
		p := path.Join(mount, dir, file)
		if n, err := readLimit(root, p); err == nil && n > 0 && (best == 0 || n < best) {
			best, from = n, "/"+p
		}
		if dir == "/" {
			break
		}
		dir = path.Dir(dir)
	}
	return best, from
}

// errNoLimit: the file says there is no limit.
var errNoLimit = errors.New("no limit")

// readLimit parses a cgroup limit file: a byte count, or "max" (v2). v1
// writes a huge page-aligned number for no limit.
func readLimit(root fs.FS, p string) (int64, error) {
	b, err := fs.ReadFile(root, p)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	if s == "max" || s == "" {
		return 0, errNoLimit
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, err
	}
	if n <= 0 || n >= 1<<62 {
		return 0, errNoLimit
	}
	return n, nil
}

// mib formats bytes for logs and /healthz.
func mib(n int64) string {
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}

// The collector's pace in e2atap run, when GOGC is not set: Go's default
// (GOGC 100: the heap grows to twice what is live before the next
// collection) with a floor, gcFloor, under which the heap may always grow.
// The taps' clients allocate every message they read (nats.go a Msg and a
// copy of its payload) while run's live heap is small (the stream tables
// are off the heap): at GOGC 100 a JetStream catch-up at 250 k msgs/s
// collected a 10 MB heap about 30 times a second, 13-15 % of the CPU. A
// fixed GOGC of 400 cut that, but also grew the Kafka tap's heap (its
// client holds whole fetches: ~75 MB live) to five times that, for no CPU
// (peak RSS 175 MB to 380 MB). The floor costs a small heap at most
// gcFloor and a large one nothing. The memory limit stays the ceiling:
// the Go memory limit (90 % of the cgroup's, or GOMEMLIMIT; lowered by the
// stream tables) makes the collector run earlier whenever the heap nears
// it, and the floor is at most a quarter of a known limit.
const (
	gcFloor = 64 << 20
	// gcMaxPercent bounds the GOGC the floor asks for (a live heap of a
	// few MB would ask for thousands).
	gcMaxPercent = 1000
)

// gcChoice decides the collector's pace: gogc is the GOGC environment
// variable, limit the memory limit chooseBudget found (0: none). floor is
// 0 when the pace is the operator's (GOGC set): the runtime has it.
func gcChoice(gogc string, limit int64) (floor int64, source string) {
	if gogc != "" {
		return 0, "GOGC"
	}
	floor = gcFloor
	if limit > 0 {
		floor = min(floor, limit/4)
	}
	return floor, "e2atap run's default (GOGC not set): GOGC 100 with a heap floor"
}

// validateGCFloor is e2atap validate's floor: its live heap is a few MB
// (the stream tables are off the heap), and the runtime's first heap goal,
// 4 MB, made a run of a million frames (1.5 MB allocated: the ended
// streams' tombstones, the read buffer, the frame cache) collect once, 5 %
// of its CPU with the write barriers on the hot path while it marked. It
// is smaller than run's: a floor costs up to itself in peak RSS, and a run
// of a million open JSON streams (collected every few MB) is to stay under
// 100 bytes a stream: 16 MB made it 95-104, 8 MB 78-93 (77-91 without).
const validateGCFloor = 8 << 20

// gcPercentFor is the GOGC that lets a heap of live bytes grow to floor
// before the next collection, and at least Go's default of 100.
func gcPercentFor(live, floor uint64) int {
	if live == 0 || live >= floor/2 {
		return 100
	}
	return int(min(max((floor-live)*100/live, 100), gcMaxPercent))
}

// gcFirstPercent is the GOGC that puts the first collection at floor:
// before it the runtime's goal is its minimum heap, 4 MB at GOGC 100,
// scaled by GOGC (nothing is measured live yet).
func gcFirstPercent(floor uint64) int {
	return int(min(max(floor*100/(4<<20), 100), gcMaxPercent))
}

// startGCFloor keeps the heap goal at floor or above: until the first
// collection by a GOGC that puts it at floor (gcFirstPercent), then, after
// every collection (a cleanup of an object allocated for it), by a GOGC
// from the heap found live. There is one per process: a later call sets
// its floor. The returned function stops it and restores GOGC.
func startGCFloor(floor int64) (stop func()) {
	gcFloorMu.Lock()
	defer gcFloorMu.Unlock()
	g := gcFloorRun
	if g == nil {
		g = &gcFloorState{sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}}
		g.prev = debug.SetGCPercent(100)
		gcFloorRun = g
		g.arm()
	}
	g.mu.Lock()
	g.floor = uint64(floor)
	g.retune()
	g.mu.Unlock()
	return func() {
		gcFloorMu.Lock()
		defer gcFloorMu.Unlock()
		g.mu.Lock()
		defer g.mu.Unlock()
		if !g.stopped {
			g.stopped = true
			debug.SetGCPercent(g.prev)
			gcFloorRun = nil
		}
	}
}

var (
	gcFloorMu  sync.Mutex
	gcFloorRun *gcFloorState
)

type gcFloorState struct {
	floor   uint64
	mu      sync.Mutex
	stopped bool
	prev    int
	sample  []metrics.Sample
	percent int
}

// gcSentinel is collected by each collection, which runs its cleanup: a
// pointer makes it a small object of its own (the tiny allocator packs
// pointer-free ones together, and may keep them alive).
type gcSentinel struct{ _ *gcFloorState }

func (g *gcFloorState) arm() {
	runtime.AddCleanup(&gcSentinel{}, func(g *gcFloorState) { g.tune() }, g)
}

func (g *gcFloorState) tune() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return
	}
	g.retune()
	g.arm()
}

// retune sets GOGC for the floor: from the heap found live by the last
// collection, or, before the first, to put it at the floor.
func (g *gcFloorState) retune() {
	metrics.Read(g.sample)
	var live, cycles uint64
	if g.sample[0].Value.Kind() == metrics.KindUint64 {
		live = g.sample[0].Value.Uint64()
	}
	if g.sample[1].Value.Kind() == metrics.KindUint64 {
		cycles = g.sample[1].Value.Uint64()
	}
	p := gcPercentFor(live, g.floor)
	if cycles == 0 {
		p = gcFirstPercent(g.floor)
	}
	if p != g.percent {
		g.percent = p
		debug.SetGCPercent(p)
	}
}
