// Command benchsys is `make bench-system`: whole-process benchmarks of the
// real e2atap binary beside the tools a user would otherwise reach for (jq,
// a Python json.loads loop, a plain Go encoding/json loop, a plain Go frame
// reader), on the same files, in interleaved rounds, measured by CPU time
// (user+sys, from the kernel's rusage of each child) and by wall time.
//
// The microbenchmarks (go test -bench) measure the engine's inner loops
// and leave out what a user pays for: reading the file, process start,
// the output, the garbage collector under a real heap. This measures that.
//
// Single-core figures pin every process to CPU 0 with taskset, so that a
// tool with more threads does not win by using the second core; the shard
// figures let e2atap use both cores.
//
// The live part (live.go) drives the taps of `e2atap run` against a real
// nats-server, a kfake cluster and a log writer at stepped rates, beside
// the bare client of each transport.
package main

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/e2atap/e2atap/frame"
)

type sample struct {
	wall, cpu time.Duration
	maxRSS    int64 // bytes
}

type tool struct {
	name string
	args func(file string) []string
}

type corpus struct {
	name    string
	file    string
	records int
	bytes   int64
	frames  bool
}

var (
	dir      = flag.String("dir", filepath.Join(os.TempDir(), "e2atap-bench"), "where corpora and binaries are kept (reused across runs)")
	size     = flag.String("size", "100M", "size of the generated capture (e2atap gen --size)")
	rounds   = flag.Int("rounds", 3, "interleaved rounds per corpus and tool")
	open     = flag.Int("open-streams", 1_000_000, "open streams for the memory figure (0: skip)")
	framesN  = flag.Int("frames", 1_000_000, "frames in the frame corpus")
	only     = flag.String("only", "", "comma-separated parts to run: single,shards,memory,live (default all)")
	noPin    = flag.Bool("no-pin", false, "do not pin single-core runs with taskset")
	repoRoot = flag.String("root", ".", "the repository root")
	binFlag  = flag.String("e2atap", "", "measure this e2atap binary instead of building ./cmd/e2atap (a before/after comparison)")
)

func main() {
	flag.Parse()
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fail(err)
	}
	bin := filepath.Join(*dir, "bin")
	must(build(bin, "e2atap", "./cmd/e2atap"))
	must(build(bin, "goloop", "./internal/benchsys/goloop"))
	must(build(bin, "frameloop", "./internal/benchsys/frameloop"))
	e2atap := filepath.Join(bin, "e2atap")
	if *binFlag != "" {
		e2atap = *binFlag
	}

	parts := map[string]bool{"single": true, "shards": true, "recordlog": true, "memory": true, "live": true}
	if *only != "" {
		parts = map[string]bool{}
		for _, p := range strings.Split(*only, ",") {
			parts[p] = true
		}
	}
	fmt.Printf("e2atap bench-system: %d rounds, interleaved; CPU = user+sys of the child (rusage); %s\n", *rounds, time.Now().Format(time.RFC3339))
	fmt.Printf("load before: %s\n\n", loadavg())

	if parts["single"] || parts["shards"] || parts["recordlog"] {
		// The memory part writes its own files: -only memory skips these.
		json := jsonCorpora(e2atap)
		fr := frameCorpus()
		if parts["single"] {
			single(e2atap, bin, json, fr)
		}
		if parts["shards"] {
			shards(e2atap, []corpus{json[0], fr})
		}
	}
	if parts["recordlog"] {
		recordLog(e2atap, jsonCorpora(e2atap)[0])
	}
	if parts["memory"] && *open > 0 {
		memory(e2atap)
	}
	if parts["live"] {
		liveBench(bin, e2atap)
	}
	fmt.Printf("\nload after: %s\n", loadavg())
}

func single(e2atap, bin string, json []corpus, fr corpus) {
	py := filepath.Join(*repoRoot, "internal", "benchsys", "loop.py")
	jsonTools := []tool{
		{"e2atap", func(f string) []string {
			return []string{e2atap, "validate", "--quiet", "--shards", "1", "--fail-on", "never", f}
		}},
		{"go-encoding/json", func(f string) []string { return []string{filepath.Join(bin, "goloop"), f} }},
		{"python-json.loads", func(f string) []string { return []string{"python3", py, f} }},
	}
	if _, err := exec.LookPath("jq"); err == nil {
		jsonTools = append(jsonTools, tool{"jq", func(f string) []string {
			return []string{"jq", "-c", "[.request_id,.sequence,.is_final,.status,.response_kind]", f}
		}})
	} else {
		fmt.Println("jq not found: its column is left out (apt-get install jq)")
	}
	frameTools := []tool{
		{"e2atap", func(f string) []string {
			return []string{e2atap, "validate", "--quiet", "--shards", "1", "--fail-on", "never", "--format", "frames", f}
		}},
		{"go-frame-reader", func(f string) []string { return []string{filepath.Join(bin, "frameloop"), f} }},
	}
	fmt.Println("## One core (taskset -c 0, --shards 1): e2atap's throughput and its ratio to each baseline")
	fmt.Println("Ratio = baseline CPU / e2atap CPU (and wall), per round; median [min–max] over rounds.")
	fmt.Println()
	var perByte []struct {
		name string
		nsB  float64
	}
	for _, c := range append(json, fr) {
		tools := jsonTools
		if c.frames {
			tools = frameTools
		}
		res := map[string][]sample{}
		warm(c.file)
		for r := 0; r < *rounds; r++ {
			for _, t := range tools {
				res[t.name] = append(res[t.name], runPinned(t.args(c.file)))
			}
		}
		e := res["e2atap"]
		cpuRate := rates(c.records, e, func(s sample) time.Duration { return s.cpu })
		wallRate := rates(c.records, e, func(s sample) time.Duration { return s.wall })
		unit := "records"
		if c.frames {
			unit = "frames"
		}
		fmt.Printf("### %s: %d %s, %.0f MB\n", c.name, c.records, unit, float64(c.bytes)/1e6)
		fmt.Printf("  e2atap: %s %s per CPU-s, %s per wall-s, %.1f ns CPU per byte\n", fmtRate(cpuRate), unit, fmtRate(wallRate),
			median(nsPerByte(c.bytes, e)))
		if !c.frames {
			perByte = append(perByte, struct {
				name string
				nsB  float64
			}{c.name, median(nsPerByte(c.bytes, e))})
		}
		for _, t := range tools[1:] {
			b := res[t.name]
			fmt.Printf("  ÷ %-18s CPU %s   wall %s   (%s: %s %s per CPU-s)\n", t.name+":",
				fmtRatio(ratios(b, e, func(s sample) time.Duration { return s.cpu })),
				fmtRatio(ratios(b, e, func(s sample) time.Duration { return s.wall })),
				t.name, fmtRate(rates(c.records, b, func(s sample) time.Duration { return s.cpu })), unit)
		}
		fmt.Println()
	}
	cheapest := perByte[0].nsB
	for _, p := range perByte {
		if p.nsB < cheapest {
			cheapest = p.nsB
		}
	}
	fmt.Println("CPU per byte of each JSON shape relative to the cheapest (goal: none above 1.5×):")
	for _, p := range perByte {
		fmt.Printf("  %-12s %.2f×\n", p.name, p.nsB/cheapest)
	}
	fmt.Println()
}

// recordLog is validate with the redacted record log written (as the
// sidecar's shipped configuration writes records.jsonl) beside validate
// alone and beside programs that rewrite every record as compact JSON
// with no redaction: jq -c . and Python's json.loads and json.dumps. The
// log goes to /dev/null, so that the disk is not measured.
func recordLog(e2atap string, c corpus) {
	py := filepath.Join(*repoRoot, "internal", "benchsys", "rewrite.py")
	tools := []tool{
		{"e2atap --log", func(f string) []string {
			return []string{e2atap, "validate", "--quiet", "--shards", "1", "--fail-on", "never", "--log", os.DevNull, f}
		}},
		{"e2atap (no log)", func(f string) []string {
			return []string{e2atap, "validate", "--quiet", "--shards", "1", "--fail-on", "never", f}
		}},
		{"python-rewrite", func(f string) []string { return []string{"python3", py, f} }},
	}
	if _, err := exec.LookPath("jq"); err == nil {
		tools = append(tools, tool{"jq -c .", func(f string) []string { return []string{"jq", "-c", ".", f} }})
	}
	fmt.Println("## The redacted record log, one core: validate --log beside rewriting each record as JSON")
	fmt.Println("Ratio = other CPU / e2atap --log CPU (and wall), per round; median [min–max] over rounds.")
	res := map[string][]sample{}
	warm(c.file)
	for r := 0; r < *rounds; r++ {
		for _, t := range tools {
			res[t.name] = append(res[t.name], runPinned(t.args(c.file)))
		}
	}
	e := res[tools[0].name]
	fmt.Printf("### %s: %d records, %.0f MB\n", c.name, c.records, float64(c.bytes)/1e6)
	fmt.Printf("  e2atap --log: %s records per CPU-s, %s per wall-s, %.1f ns CPU per byte\n",
		fmtRate(rates(c.records, e, func(s sample) time.Duration { return s.cpu })),
		fmtRate(rates(c.records, e, func(s sample) time.Duration { return s.wall })), median(nsPerByte(c.bytes, e)))
	for _, t := range tools[1:] {
		b := res[t.name]
		fmt.Printf("  ÷ %-18s CPU %s   wall %s   (%s: %s records per CPU-s)\n", t.name+":",
			fmtRatio(ratios(b, e, func(s sample) time.Duration { return s.cpu })),
			fmtRatio(ratios(b, e, func(s sample) time.Duration { return s.wall })),
			t.name, fmtRate(rates(c.records, b, func(s sample) time.Duration { return s.cpu })))
	}
	fmt.Println()
}

func shards(e2atap string, cs []corpus) {
	fmt.Println("## Two shards against one (both cores free; goal: wall ≥ 1.8×, CPU ≤ 1.1×)")
	for _, c := range cs {
		args := func(n string) []string {
			a := []string{e2atap, "validate", "--quiet", "--shards", n, "--fail-on", "never"}
			if c.frames {
				a = append(a, "--format", "frames")
			}
			return append(a, c.file)
		}
		var one, two, pair []sample
		warm(c.file)
		for r := 0; r < *rounds; r++ {
			one = append(one, runCmd(args("1")))
			two = append(two, runCmd(args("2")))
			pair = append(pair, runPair(args("1")))
		}
		fmt.Printf("  %-12s wall speed-up %s   CPU 2 shards ÷ 1 shard %s\n", c.name,
			fmtRatio(ratios(one, two, func(s sample) time.Duration { return s.wall })),
			fmtRatio(ratios(two, one, func(s sample) time.Duration { return s.cpu })))
		fmt.Printf("  %-12s the machine's floor: two independent 1-shard runs at once, one a core, CPU ÷ two alone %s\n", "",
			fmtRatio(pairRatios(pair, one)))
	}
	fmt.Println("  (The floor is what two busy cores cost this machine with nothing shared: no sharding can use")
	fmt.Println("  less CPU than it. On a VM whose two vCPUs share a physical core, or on a host busy with other")
	fmt.Println("  guests, it is well above 1.)")
	fmt.Println()
}

// pairRatios is, round by round, the CPU a run took beside another
// (half a pair's) ÷ the CPU it took alone.
func pairRatios(pair, one []sample) []float64 {
	out := make([]float64, len(pair))
	for i := range pair {
		out[i] = pair[i].cpu.Seconds() / 2 / one[i].cpu.Seconds()
	}
	sort.Float64s(out)
	return out
}

// runPair runs two copies of args at once, each pinned to its own core
// (taskset -c 0 and -c 1), and sums them: wall is the later end, CPU the
// sum of both.
func runPair(args []string) sample {
	var out [2]sample
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := args
			if !*noPin {
				a = append([]string{"taskset", "-c", fmt.Sprint(i)}, args...)
			}
			out[i] = runCmd(a)
		}()
	}
	wg.Wait()
	return sample{wall: max(out[0].wall, out[1].wall), cpu: out[0].cpu + out[1].cpu, maxRSS: max(out[0].maxRSS, out[1].maxRSS)}
}

// memory: bytes per open stream at the process level, as the peak RSS of
// a run holding N open streams less that of a run holding 1000 (the
// process's baseline: binary, runtime, buffers), divided by the difference
// of open streams. Peak RSS is the kernel's (rusage maxrss): whatever the
// process mapped and touched, heap, stream tables off the heap and
// collector headroom alike. Four shapes of 36-byte request ids: UUIDs, as
// the reference sends them, "req_" and hex, random base64url, random
// printable ASCII (the engine keeps them in 16, 20, 27 and 30 bytes).
func memory(e2atap string) {
	fmt.Printf("## Memory: %d open streams, 36-byte request ids (goal: ≤ 100 bytes per stream)\n", *open)
	for _, shape := range []string{"uuid", "other", "base64url", "printable"} {
		big := filepath.Join(*dir, fmt.Sprintf("open-%s-%d.jsonl", shape, *open))
		small := filepath.Join(*dir, fmt.Sprintf("open-%s-1000.jsonl", shape))
		writeOpen(big, *open, shape)
		writeOpen(small, 1000, shape)
		args := func(f string) []string {
			return []string{e2atap, "validate", "--quiet", "--shards", "1", "--fail-on", "never", "--max-streams", fmt.Sprint(*open * 2), f}
		}
		var per, bigs, smalls []float64
		for r := 0; r < *rounds; r++ {
			b := runPinned(args(big))
			s := runPinned(args(small))
			per = append(per, float64(b.maxRSS-s.maxRSS)/float64(*open-1000))
			bigs, smalls = append(bigs, float64(b.maxRSS)/(1<<20)), append(smalls, float64(s.maxRSS)/(1<<20))
		}
		sort.Float64s(per)
		sort.Float64s(bigs)
		sort.Float64s(smalls)
		fmt.Printf("  %-5s ids: peak RSS %.1f MiB [%.1f–%.1f] with %d open, %.1f MiB [%.1f–%.1f] with 1000 (baseline)\n",
			shape, median(bigs), bigs[0], bigs[len(bigs)-1], *open, median(smalls), smalls[0], smalls[len(smalls)-1])
		fmt.Printf("  %-5s ids: peak RSS per open stream, (big − baseline) ÷ (%d − 1000): %.0f bytes [%.0f–%.0f]\n", shape, *open, median(per), per[0], per[len(per)-1])
	}
	fmt.Println()
}

// writeOpen writes n records, each opening a stream that never ends:
// request ids are random UUIDs (shape uuid), "req_" and 32 hex digits
// (other), random base64url characters (base64url) or random printable
// ASCII but '"' and '\' (printable), 36 bytes each.
func writeOpen(path string, n int, shape string) {
	if _, err := os.Stat(path); err == nil {
		return
	}
	f, err := os.Create(path)
	must(err)
	w := bufio.NewWriterSize(f, 1<<20)
	var b [16]byte
	for i := 0; i < n; i++ {
		rand.Read(b[:])
		h := hex.EncodeToString(b[:])
		id := h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
		switch shape {
		case "other":
			id = "req_" + h
		case "base64url", "printable":
			alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
			if shape == "printable" {
				alphabet = " !#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_`abcdefghijklmnopqrstuvwxyz{|}~"
			}
			var r [36]byte
			rand.Read(r[:])
			for j := range r {
				r[j] = alphabet[int(r[j])%len(alphabet)]
			}
			id = string(r[:])
		}
		fmt.Fprintf(w, `{"protocol_version": "1.0", "response_id": "%s", "request_id": "%s", "sequence": 0, "is_final": false, "status": "in_progress", "response_kind": "e2a.chunk", "timestamp": "2026-03-29T12:00:00.005000+00:00", "body": {"delta_kind": "text", "delta": "tok"}}`+"\n", id, id)
	}
	must(w.Flush())
	must(f.Close())
}

func jsonCorpora(e2atap string) []corpus {
	gen := filepath.Join(*dir, "gen-"+*size+".jsonl")
	if _, err := os.Stat(gen); err != nil {
		fmt.Printf("generating %s …\n", gen)
		must(exec.Command(e2atap, "gen", "--size", *size, "--seed", "7", "--fault-rate", "0", "-o", gen).Run())
	}
	py := filepath.Join(*repoRoot, "internal", "benchsys", "corpus.py")
	out := []corpus{newCorpus("gen", gen, false)}
	for _, v := range []struct {
		name, ascii, pct, extra string
	}{{"py-ascii", "1", "0", ""}, {"py-utf8", "0", "0", ""}, {"py-esc8", "1", "8", ""}, {"py-esc100", "1", "100", ""},
		{"py-ext", "1", "0", "ext"}, {"py-nested", "1", "0", "nested"},
		{"py-code", "1", "0", "code"}, {"py-toolres", "1", "0", "toolres"}, {"py-b64", "1", "0", "b64"}, {"py-img", "1", "0", "img"},
		{"py-logs", "1", "0", "logs"}} {
		p := filepath.Join(*dir, v.name+"-"+*size+".jsonl")
		if _, err := os.Stat(p); err != nil {
			fmt.Printf("generating %s …\n", p)
			cmd := exec.Command("python3", py, gen, p, v.ascii, v.pct, v.extra)
			cmd.Stderr = os.Stderr
			must(cmd.Run())
		}
		out = append(out, newCorpus(v.name, p, false))
	}
	return out
}

// frameCorpus writes streams of ~200-byte STREAM_CHUNK frames, 8 streams
// interleaved, each ending with a done chunk.
func frameCorpus() corpus {
	p := filepath.Join(*dir, fmt.Sprintf("frames-%d.frames", *framesN))
	if _, err := os.Stat(p); err != nil {
		f, err := os.Create(p)
		must(err)
		w := bufio.NewWriterSize(f, 1<<20)
		const perStream, lanes = 50, 8
		seqs := make([]int, lanes)
		ids := make([]int, lanes)
		next := 0
		for i := range ids {
			ids[i] = next
			next++
		}
		data := []byte(strings.Repeat("model output text ", 7)[:120])
		var buf []byte
		for i := 0; i < *framesN; i++ {
			l := i % lanes
			var flags uint8
			if seqs[l] == perStream-1 {
				flags = 1
			}
			sid := fmt.Sprintf("agent-7:%08d-0000-4000-8000-000000000000", ids[l])
			buf, err = frame.AppendFrame(buf[:0], 2, flags, int32(seqs[l]), []frame.Attr{{Name: "sid", Value: sid}, {Name: "etype", Value: "text"}}, data)
			must(err)
			w.Write(buf)
			seqs[l]++
			if flags == 1 {
				seqs[l], ids[l] = 0, next
				next++
			}
		}
		must(w.Flush())
		must(f.Close())
	}
	return newCorpus("frames", p, true)
}

func newCorpus(name, path string, frames bool) corpus {
	st, err := os.Stat(path)
	must(err)
	c := corpus{name: name, file: path, bytes: st.Size(), frames: frames}
	if frames {
		c.records = *framesN
		return c
	}
	f, err := os.Open(path)
	must(err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		c.records++
	}
	return c
}

// warm reads path once, untimed, before a corpus's rounds, so that every
// tool of every round reads it from the page cache: a file evicted since
// it was written (a 200 MB corpus among others, the host reclaiming) made
// the first tool of the first round pay for the disk, and the kernel's
// part of e2atap's CPU looked like 20–26 % where it is 4–7 % with the file
// cached. Each round's first tool still finds it cached only if the
// machine keeps it: page-cache residency is the kernel's to decide.
func warm(path string) {
	f, err := os.Open(path)
	must(err)
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	must(err)
}

func runPinned(args []string) sample {
	if !*noPin {
		args = append([]string{"taskset", "-c", "0"}, args...)
	}
	return runCmd(args)
}

func runCmd(args []string) sample {
	cmd := exec.Command(args[0], args[1:]...)
	var errb strings.Builder
	cmd.Stderr = &errb
	cmd.Stdout = nil // discarded: /dev/null
	start := time.Now()
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 2 {
			fail(fmt.Errorf("%s: %v\n%s", strings.Join(args, " "), err, errb.String()))
		}
	}
	wall := time.Since(start)
	cpu, rss := usage(cmd.ProcessState)
	return sample{wall: wall, cpu: cpu, maxRSS: rss}
}

func rates(n int, s []sample, d func(sample) time.Duration) []float64 {
	out := make([]float64, len(s))
	for i, x := range s {
		out[i] = float64(n) / d(x).Seconds()
	}
	sort.Float64s(out)
	return out
}

// ratios pairs the rounds: baseline[i] ÷ e2atap[i].
func ratios(base, e []sample, d func(sample) time.Duration) []float64 {
	out := make([]float64, len(e))
	for i := range e {
		out[i] = d(base[i]).Seconds() / d(e[i]).Seconds()
	}
	sort.Float64s(out)
	return out
}

func nsPerByte(n int64, s []sample) []float64 {
	out := make([]float64, len(s))
	for i, x := range s {
		out[i] = float64(x.cpu.Nanoseconds()) / float64(n)
	}
	sort.Float64s(out)
	return out
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func fmtRate(v []float64) string {
	return fmt.Sprintf("%s [%s–%s]", human(median(v)), human(v[0]), human(v[len(v)-1]))
}

func fmtRatio(v []float64) string {
	return fmt.Sprintf("%.2f× [%.2f–%.2f]", median(v), v[0], v[len(v)-1])
}

func human(x float64) string {
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%.2f M", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.0f k", x/1e3)
	}
	return fmt.Sprintf("%.0f", x)
}

// build builds pkg as the image and `make build` do: static
// (CGO_ENABLED=0: no dynamic loader at start) and -trimpath. The Go
// baselines are built the same way.
func build(bin, name, pkg string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(bin, name), pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Dir = *repoRoot
	cmd.Stderr = os.Stderr
	return cmd.Run()
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.TrimSpace(string(b))
}

func must(err error) {
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench-system:", err)
	os.Exit(2)
}
