package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/e2atap/e2atap/frame"
)

func TestChooseBudget(t *testing.T) {
	const mi = 1 << 20
	unset := int64(math.MaxInt64)
	v2 := func(self, limit string) fstest.MapFS {
		fsys := fstest.MapFS{
			"proc/self/cgroup":                 {Data: []byte(self)},
			"sys/fs/cgroup/cgroup.controllers": {Data: []byte("cpu memory pids\n")},
		}
		if limit != "" {
			fsys["sys/fs/cgroup/memory.max"] = &fstest.MapFile{Data: []byte(limit)}
		}
		return fsys
	}
	nested := v2("0::/kubepods/pod1/ctr\n", "max\n")
	nested["sys/fs/cgroup/kubepods/pod1/memory.max"] = &fstest.MapFile{Data: []byte("536870912\n")}
	nested["sys/fs/cgroup/kubepods/pod1/ctr/memory.max"] = &fstest.MapFile{Data: []byte("max\n")}
	v1 := fstest.MapFS{
		"proc/self/cgroup": {Data: []byte("12:pids:/docker/x\n4:cpu,memory:/docker/x\n0::/\n")},
		"sys/fs/cgroup/memory/docker/x/memory.limit_in_bytes": {Data: []byte("268435456\n")},
	}
	v1None := fstest.MapFS{
		"proc/self/cgroup":                           {Data: []byte("4:memory:/\n")},
		"sys/fs/cgroup/memory/memory.limit_in_bytes": {Data: []byte("9223372036854771712\n")},
	}
	for _, c := range []struct {
		name       string
		configured int64
		fsys       fstest.MapFS
		goLimit    int64
		budget     int64
		source     string
		goSet      int64
	}{
		{"v2 limit, no GOMEMLIMIT", 0, v2("0::/\n", "268435456\n"), unset, 64 * mi, "1/4 of /sys/fs/cgroup/memory.max", 268435456 / 100 * 90},
		{"v2 no limit", 0, v2("0::/\n", "max\n"), unset, 256 * mi, "default (no memory limit known)", 0},
		{"no cgroup files at all", 0, fstest.MapFS{}, unset, 256 * mi, "default (no memory limit known)", 0},
		{"GOMEMLIMIT smaller than the cgroup", 0, v2("0::/\n", "1073741824\n"), 200 * mi, 50 * mi, "1/4 of GOMEMLIMIT", 0},
		{"cgroup smaller than GOMEMLIMIT", 0, v2("0::/\n", "134217728\n"), 1 << 30, 32 * mi, "1/4 of /sys/fs/cgroup/memory.max", 0},
		{"GOMEMLIMIT only", 0, fstest.MapFS{}, 400 * mi, 100 * mi, "1/4 of GOMEMLIMIT", 0},
		{"floor", 0, v2("0::/\n", "33554432\n"), unset, 16 * mi, "1/4 of /sys/fs/cgroup/memory.max", 33554432 / 100 * 90},
		{"an ancestor's limit", 0, nested, unset, 128 * mi, "1/4 of /sys/fs/cgroup/kubepods/pod1/memory.max", 536870912 / 100 * 90},
		{"v1 limit", 0, v1, unset, 64 * mi, "1/4 of /sys/fs/cgroup/memory/docker/x/memory.limit_in_bytes", 268435456 / 100 * 90},
		{"v1 no limit", 0, v1None, unset, 256 * mi, "default (no memory limit known)", 0},
		{"configured", 10 * mi, v2("0::/\n", "268435456\n"), unset, 10 * mi, "memory.budget_bytes", 268435456 / 100 * 90},
		{"unlimited", -1, fstest.MapFS{}, unset, 0, "memory.budget_bytes (unlimited)", 0},
		{"garbage in memory.max", 0, v2("0::/\n", "lots\n"), unset, 256 * mi, "default (no memory limit known)", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := chooseBudget(c.configured, c.fsys, c.goLimit)
			if got.Budget != c.budget || got.Source != c.source || got.GoLimit != c.goSet {
				t.Errorf("chooseBudget = budget %d (%s) source %q go limit %d; want %d (%s) %q %d",
					got.Budget, mib(got.Budget), got.Source, got.GoLimit, c.budget, mib(c.budget), c.source, c.goSet)
			}
		})
	}
	// A configured budget still knows the limit, so that run warns when
	// the budget leaves too little of it.
	if c := chooseBudget(200*mi, v2("0::/\n", "268435456\n"), unset); c.Limit != 268435456 || c.Budget <= c.Limit/2 {
		t.Errorf("configured 200 MiB under a 256 MiB limit: %+v", c)
	}
}

func TestGCChoice(t *testing.T) {
	const source = "e2atap run's default (GOGC not set): GOGC 100 with a heap floor"
	for _, c := range []struct {
		limit, floor int64
	}{
		{0, gcFloor},          // no limit known
		{1 << 30, gcFloor},    // a limit far above the floor
		{128 << 20, 32 << 20}, // a quarter of a small limit
	} {
		if floor, src := gcChoice("", c.limit); floor != c.floor || src != source {
			t.Errorf("GOGC unset, limit %d: gcChoice = %d %q, want %d, run's default", c.limit, floor, src, c.floor)
		}
	}
	// The operator's GOGC (a number, or off) is left to the runtime.
	for _, env := range []string{"100", "off"} {
		if floor, src := gcChoice(env, 0); floor != 0 || src != "GOGC" {
			t.Errorf("GOGC=%s: gcChoice = %d %q, want the operator's", env, floor, src)
		}
	}
}

func TestGCFirstPercent(t *testing.T) {
	const mi = 1 << 20
	for _, c := range []struct {
		floor uint64
		want  int
	}{
		{2 * mi, 100},           // under the runtime's own minimum heap
		{validateGCFloor, 200},  // validate's: the first collection at 8 MB
		{16 * mi, 400},          // 16 MB
		{gcFloor, gcMaxPercent}, // run's 64 MB: as far as the bound lets it
	} {
		if got := gcFirstPercent(c.floor); got != c.want {
			t.Errorf("gcFirstPercent(%d MB) = %d, want %d", c.floor/mi, got, c.want)
		}
	}
}

// TestValidateGCFloor: e2atap validate (a process of its own, GOGC not
// set) does not collect its small heap at the runtime's first goal of
// 4 MB: a file of 50 000 ended streams (their tombstones are what it
// allocates) is collected at least once at GOGC 100 and less often
// without GOGC, the floor's pace. Not under the race detector: its
// runtime starts the process with a heap past the first goal already.
func TestValidateGCFloor(t *testing.T) {
	if raceEnabled {
		t.Skip("the race runtime's heap at start is past the first goal")
	}
	path := filepath.Join(t.TempDir(), "short.frames")
	var b []byte
	for i := range 50_000 {
		sid := fmt.Sprintf("s-%08d", i)
		for seq := range 2 {
			var err error
			if b, err = frame.AppendFrame(b, frame.TypeStreamChunk, uint8(seq), int32(seq), []frame.Attr{{Name: "sid", Value: sid}}, []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	collections := func(gogc string) int {
		t.Helper()
		cmd := exec.Command(os.Args[0], "validate", "--shards", "1", "--quiet", path)
		var env []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GODEBUG=") {
				env = append(env, kv)
			}
		}
		env = append(env, "E2ATAP_BE_MAIN=1", "GODEBUG=gctrace=1")
		if gogc != "" {
			env = append(env, "GOGC="+gogc)
		}
		cmd.Env = env
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("GOGC=%q: %v\n%s", gogc, err, errOut.String())
		}
		if !strings.Contains(out.String(), "100000 records, 0 findings") {
			t.Fatalf("GOGC=%q: %s", gogc, out.String())
		}
		n := 0
		for _, l := range strings.Split(errOut.String(), "\n") {
			if strings.HasPrefix(l, "gc ") {
				n++
			}
		}
		return n
	}
	paced, floored := collections("100"), collections("")
	if paced == 0 || floored >= paced {
		t.Errorf("collections: %d at GOGC 100, %d with validate's floor: want fewer, and some at GOGC 100", paced, floored)
	}
}

func TestGCPercentFor(t *testing.T) {
	const mi = 1 << 20
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 100},           // nothing measured yet
		{10 * mi, 540},     // the goal is the floor: 10 MB may grow to 64
		{64 * mi / 5, 400}, // a fifth of the floor: GOGC 400
		{32 * mi, 100},     // half the floor and above: Go's default
		{1 << 30, 100},     // a large heap: Go's default
		{1 * mi, gcMaxPercent},
	} {
		if got := gcPercentFor(c.live, 64*mi); got != c.want {
			t.Errorf("gcPercentFor(%d MB live) = %d, want %d", c.live/mi, got, c.want)
		}
	}
}

// TestGCFloor: the runtime's GOGC follows the live heap after each
// collection: above 100 while it is small, 100 once it is half the floor.
func TestGCFloor(t *testing.T) {
	gogc := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	percent := func() uint64 { metrics.Read(gogc); return gogc[0].Value.Uint64() }
	stop := startGCFloor(256 << 20)
	defer stop()
	waitGC := func(what string, ok func(uint64) bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !ok(percent()) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: GOGC %d", what, percent())
			}
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitGC("a small live heap", func(p uint64) bool { return p > 100 })
	// 200 MB live, more than half the floor: Go's default.
	hold := make([][]byte, 200)
	for i := range hold {
		hold[i] = make([]byte, 1<<20)
		hold[i][0] = 1
	}
	waitGC("200 MB live", func(p uint64) bool { return p == 100 })
	runtime.KeepAlive(hold)
	hold = nil
	waitGC("the heap small again", func(p uint64) bool { return p > 100 })
	stop()
	if p := percent(); p != 100 {
		t.Errorf("GOGC %d after stop, want the 100 it was", p)
	}
}
