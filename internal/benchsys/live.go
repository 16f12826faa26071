package main

// The live part: `e2atap run`'s taps against real brokers and a real log
// writer at stepped rates, each step run for the tap and for the bare
// client of the same transport (internal/benchsys/bare), interleaved, on
// the same records (e2atap gen's, profile jiuwenswarm, ~920 bytes each).
//
// A step holds when nothing is lost (every record sent was judged — for
// the bare client, received — and no drop was counted) and the consumer
// keeps up: it has everything at most drainSlack (plus a tenth of the
// step) after the producer stops, so that a longer step would not lose
// either. Catch-up steps (JetStream, Kafka) read a backlog from its start
// and give the rate from the first record to the last.

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/e2atap/e2atap/internal/gen"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/twmb/franz-go/pkg/kgo"
)

var (
	liveRates    = flag.String("live-rates", "50k,100k,150k,200k", "live part: core NATS publish rates (msgs/s), stepped")
	liveLogRates = flag.String("live-log-rates", "50k,100k,150k,200k", "live part: log writer rates (lines/s), stepped")
	liveBursts   = flag.String("live-bursts", "50k,100k,200k,300k", "live part: core NATS burst sizes (messages published at once)")
	liveDur      = flag.Duration("live-duration", 5*time.Second, "live part: how long each sustained step runs")
	liveCatchup  = flag.Int("live-catchup", 300_000, "live part: records in the JetStream and Kafka backlogs read from their start")
	liveRounds   = flag.Int("live-rounds", 1, "live part: interleaved rounds per step")
	livePart     = flag.Int("live-partitions", 4, "live part: partitions of the Kafka topic")
	liveMax      = flag.Int("live-max-records", 2_000_000, "live part: records generated at most (~920 bytes each, held in memory); a step that sends more repeats them")
	liveOnly     = flag.String("live-only", "nats,burst,logdir,jetstream,kafka", "live part: which of its parts to run")
	liveProfile  = flag.String("live-cpuprofile", "", "live part: write a CPU profile of each e2atap run to this directory (go tool pprof)")
	liveRecLog   = flag.Bool("live-record-log", false, "live part: e2atap run also writes the redacted record log (outputs.log, content mask, as the shipped Kubernetes configuration does) to a file in its run directory")
	liveAlso     = flag.String("live-also", "", "live part: more e2atap binaries (comma-separated) measured in the catch-up parts beside -e2atap's, interleaved (an A/B on a loaded machine)")
	liveShards   = flag.String("live-shards", "", "live part: streams.shards of e2atap run (comma-separated: the catch-up parts run every binary with each; empty: the binary's default)")
)

// drainSlack is how long after the producer stops a consumer that keeps up
// may still be working off what was in flight.
const drainSlack = time.Second

type live struct {
	e2atap, bare, dir           string
	also                        []variant // -live-also × -live-shards past the first: "alt1" is also[0]
	shards                      int       // streams.shards of "e2atap" (0: the binary's default)
	brokerPid                   int       // the brokers process (nats-server and kfake)
	natsURL, monitor, kafkaAddr string
	data                        []byte // records, each followed by '\n'
	offs                        []int  // record i is data[offs[i]:offs[i+1]-1]
	seq                         int    // distinguishes runs (groups, files)
}

func (l *live) records() int { return len(l.offs) - 1 }

// rec is record i, past the last generated one from the start again (the
// streams then repeat: the engine reports findings on them, which costs it
// some CPU; -live-max-records says when).
func (l *live) rec(i int) []byte { return l.line(i)[:len(l.line(i))-1] }

// line is record i with its newline.
func (l *live) line(i int) []byte {
	i %= l.records()
	return l.data[l.offs[i]:l.offs[i+1]]
}

// result is one consumer's figures for one step.
// variant is one e2atap run measured in the catch-up parts: a binary and
// its streams.shards (0: the binary's default).
type variant struct {
	bin    string
	shards int
}

func (v variant) String() string {
	if v.shards == 0 {
		return v.bin
	}
	return fmt.Sprintf("%s, %d shard(s)", v.bin, v.shards)
}

type result struct {
	who            string
	sent           int
	achieved       float64 // producer's rate (records/s)
	got            int64   // judged (e2atap) or received (bare)
	dropped, slow  int64
	drain          time.Duration // after the producer stopped
	cpu, wall      time.Duration // wall: from the first record sent (or read) to the last
	rate           float64       // catch-up: records/s from first to last
	held           bool
	short          bool // the producer fell short of the step's rate
	stallOrTimeout bool
	peakRSS        int64         // catch-up: the consumer's peak resident set (VmHWM), bytes
	counted        int64         // catch-up: records judged (or received) in the window cpu covers
	brokerCPU      time.Duration // catch-up: the brokers' process's CPU in the window cpu covers
	window         time.Duration // catch-up: the wall time cpu and brokerCPU cover
	faults         int64         // catch-up: the consumer's minor page faults in that window
}

func (r result) lost() int64 { return max(int64(r.sent)-r.got, 0) }

func liveBench(bin, e2atap string) {
	must(build(bin, "bare", "./internal/benchsys/bare"))
	must(build(bin, "brokers", "./internal/benchsys/brokers"))
	l := &live{e2atap: e2atap, bare: filepath.Join(bin, "bare"), dir: filepath.Join(*dir, "live")}
	bins := []string{e2atap}
	for _, b := range strings.Split(*liveAlso, ",") {
		if b = strings.TrimSpace(b); b != "" {
			bins = append(bins, b)
		}
	}
	shards := []int{0}
	if *liveShards != "" {
		var err error
		shards, err = parseCounts(*liveShards)
		must(err)
	}
	for _, b := range bins {
		for _, n := range shards {
			l.also = append(l.also, variant{bin: b, shards: n})
		}
	}
	l.shards, l.also = l.also[0].shards, l.also[1:]
	must(os.RemoveAll(l.dir))
	must(os.MkdirAll(l.dir, 0o755))
	defer os.RemoveAll(l.dir)

	rates, err := parseCounts(*liveRates)
	must(err)
	logRates, err := parseCounts(*liveLogRates)
	must(err)
	bursts, err := parseCounts(*liveBursts)
	must(err)
	need := *liveCatchup
	for _, r := range append(rates, logRates...) {
		need = max(need, int(float64(r)*liveDur.Seconds()*1.02)+1)
	}
	for _, b := range bursts {
		need = max(need, b)
	}
	if need > *liveMax {
		fmt.Printf("note: the steps send up to %d records; %d are generated (-live-max-records) and repeated: the engine finds violations in the repeats\n", need, *liveMax)
		need = *liveMax
	}
	l.generate(need)

	stopBrokers := l.startBrokers()
	defer stopBrokers()

	fmt.Printf("## Live taps: e2atap run beside the bare client, same machine, same run, interleaved (%d round(s))\n", *liveRounds)
	if *liveRecLog {
		fmt.Println("e2atap run writes the redacted record log too (-live-record-log: outputs.log, content mask, to disk)")
	}
	fmt.Printf("Records: e2atap gen (seed 7, no faults), %d records, %.0f bytes each on average; profile jiuwenswarm.\n",
		l.records(), float64(len(l.data)-l.records())/float64(l.records()))
	fmt.Printf("Held = zero loss (judged or received = sent, no drop counted) and caught up within %v + 10%% of the step after the producer stops.\n", drainSlack)
	fmt.Println("CPU = user+sys of the consumer process (e2atap run, or the bare client) over the step; brokers and producer run in their own processes.")
	fmt.Println()

	var goals []string
	part := map[string]bool{}
	for _, p := range strings.Split(*liveOnly, ",") {
		part[strings.TrimSpace(p)] = true
	}
	if part["nats"] {
		core := l.steps("NATS core, sustained", "msgs/s", rates, func(who string, rate int) result {
			return l.natsCore(who, rate, int(float64(rate)*liveDur.Seconds()), false)
		})
		goals = append(goals, goalLine("NATS core ≥ 150 k msgs/s sustained, zero loss", core["e2atap"] >= 150_000, core))
	}
	if part["burst"] {
		burst := l.steps("NATS core, bursts (published as fast as the publisher can)", "messages", bursts, func(who string, n int) result {
			return l.natsCore(who, 0, n, true)
		})
		goals = append(goals, goalLine("NATS core: a 200 k-message burst, zero loss", burst["e2atap"] >= 200_000, burst))
	}
	if part["logdir"] {
		logs := l.steps("logdir, a writer appending to a file", "lines/s", logRates, l.logdir)
		goals = append(goals, goalLine("logdir keeps up with a writer at ≥ 150 k lines/s", logs["e2atap"] >= 150_000, logs))
	}
	if part["jetstream"] {
		js := l.catchup("JetStream catch-up", l.jetstream, l.fillJetStream)
		goals = append(goals, ratioGoal("JetStream catch-up ≥ 0.9× the bare client", js))
	}
	if part["kafka"] {
		kf := l.catchup("Kafka catch-up", l.kafka, l.fillKafka)
		goals = append(goals, ratioGoal("Kafka catch-up ≥ 0.9× the bare client", kf))
	}

	fmt.Println("### Live goals")
	for _, g := range goals {
		fmt.Println("  " + g)
	}
	fmt.Println()
}

// ceiling is what limits a catch-up on this machine: the CPU per record
// of the broker, of the bare client and of the engine, and the highest
// rate any consumer that judges every record could reach on the cores it
// shares with the broker.
type ceiling struct {
	cores                    int
	brokerBare, brokerE2atap float64 // µs of broker CPU per record, serving the bare client, serving e2atap
	client, engine           float64 // µs per record: the bare client, the engine (e2atap validate)
	busyBare                 float64 // cores the bare run keeps busy (client + broker)
	rate                     float64 // records/s at most
	bare                     float64 // the bare client's rate, its best round (the least loaded)
}

// ceilingOf reads a catch-up's figures (catchup's map): a consumer that
// judges every record spends at least the client's CPU (to receive it)
// and the engine's (to judge it) on every record, and the broker spends
// its own serving it; on cores CPUs shared with the broker, it reads at
// most cores ÷ (broker + client + engine) records a second.
func ceilingOf(out map[string][]float64, cores int) ceiling {
	c := ceiling{cores: cores}
	med := func(k string) float64 {
		if len(out[k]) == 0 {
			return 0
		}
		return median(out[k])
	}
	c.brokerBare, c.brokerE2atap = med("broker:bare"), med("broker:e2atap")
	c.client, c.engine, c.busyBare = med("cpu:bare"), med("cpu:engine1"), med("cores:bare")
	if c.engine == 0 {
		c.engine = med("cpu:validate")
	}
	// The CPU figures hold on a loaded machine, the bare client's rate
	// does not: its best round is the nearest to an idle machine's.
	for _, r := range out["bare"] {
		c.bare = max(c.bare, r)
	}
	if per := c.brokerE2atap + c.client + c.engine; per > 0 {
		c.rate = float64(cores) / per * 1e6
	}
	return c
}

func (c ceiling) ratio() float64 { return c.rate / max(c.bare, 1) }

// oneShard is the bound of one shard: the engine's thread judges every
// record (records/s; 0 when not measured).
func (c ceiling) oneShard() float64 {
	if c.engine <= 0 {
		return 0
	}
	return min(1e6/c.engine, c.rate)
}

func (c ceiling) String() string {
	return fmt.Sprintf("ceiling: broker CPU µs/record %.2f serving the bare client, %.2f serving e2atap; bare client %.2f; engine (e2atap validate --shards 1) %.2f; "+
		"the bare run keeps %.2f of %d cores busy; a consumer that judges every record needs ≥ %.2f µs of CPU a record with its broker, "+
		"so ≤ %s records/s on %d cores = %.2f× the bare client's best round; "+
		"on one shard (streams.shards' default on 2 CPUs) the engine's one thread alone bounds it at %s/s = %.2f×",
		c.brokerBare, c.brokerE2atap, c.client, c.engine, c.busyBare, c.cores, c.brokerE2atap+c.client+c.engine,
		human(c.rate), c.cores, c.ratio(), human(c.oneShard()), c.oneShard()/max(c.bare, 1))
}

func goalLine(name string, met bool, held map[string]int) string {
	s := "MISSED"
	if met {
		s = "met"
	}
	return fmt.Sprintf("%-52s %-6s (e2atap %s, bare client %s)", name+":", s, human(float64(held["e2atap"])), human(float64(held["bare"])))
}

func ratioGoal(name string, rate map[string][]float64) string {
	e, b := rate["e2atap"], rate["bare"]
	if len(e) == 0 || len(e) != len(b) {
		return name + ": not measured"
	}
	// Paired by round: each round ran both, one after the other.
	var pr []float64
	for i := range e {
		pr = append(pr, e[i]/max(b[i], 1))
	}
	sort.Float64s(pr)
	s := "MISSED"
	if median(pr) >= 0.9 {
		s = "met"
	}
	line := fmt.Sprintf("%-52s %-6s (%s per round; e2atap %s/s, bare client %s/s; CPU µs/record: e2atap run %.2f, e2atap validate %.2f, bare client %.2f)",
		name+":", s, fmtRatio(pr), human(median(e)), human(median(b)), median(rate["cpu:e2atap"]), median(rate["cpu:validate"]), median(rate["cpu:bare"]))
	if c := ceilingOf(rate, runtime.NumCPU()); c.rate > 0 {
		line += fmt.Sprintf("; ceiling %.2f× (%s/s: %d cores ÷ %.2f µs a record, broker %.2f + client %.2f + engine %.2f), e2atap at %.0f%% of it",
			c.ratio(), human(c.rate), c.cores, c.brokerE2atap+c.client+c.engine, c.brokerE2atap, c.client, c.engine, 100*median(e)/c.rate)
	}
	return line
}

// steps runs every step for both consumers, interleaved, prints a row per
// run and returns the highest step each held in every round.
func (l *live) steps(title, unit string, steps []int, run func(who string, step int) result) map[string]int {
	fmt.Printf("### %s\n", title)
	l.printCeiling(300_000)
	fmt.Printf("  %-9s %-7s %9s %10s %9s %8s %8s %5s %7s %8s %8s %9s %s\n", "step", "who", "sent", "achieved/s", "got", "lost", "dropped", "slow", "drain", "CPU", "wall", "CPU-µs/rec", "")
	best := map[string]int{}
	for _, step := range steps {
		// A round where the producer fell short says nothing of the
		// consumer: a step is held when every judged round held, and at
		// least one was judged.
		ok := map[string]bool{"e2atap": true, "bare": true}
		judged := map[string]int{}
		for r := 0; r < *liveRounds; r++ {
			order := []string{"e2atap", "bare"}
			if r%2 == 1 {
				order = []string{"bare", "e2atap"}
			}
			for _, who := range order {
				res := run(who, step)
				if !res.short {
					judged[who]++
					ok[who] = ok[who] && res.held
				}
				mark := "held"
				switch {
				case res.short:
					mark = "producer short of the rate: not judged"
				case !res.held:
					mark = "NOT HELD"
				}
				fmt.Printf("  %-9s %-7s %9d %10s %9d %8d %8d %5d %7s %8s %8s %9.2f %s\n", human(float64(step)), who, res.sent,
					human(res.achieved), res.got, res.lost(), res.dropped, res.slow, res.drain.Round(time.Millisecond),
					res.cpu.Round(10*time.Millisecond), res.wall.Round(time.Millisecond),
					float64(res.cpu.Microseconds())/float64(max(res.got, 1)), mark)
			}
		}
		for who, held := range ok {
			if held && judged[who] > 0 && step > best[who] {
				best[who] = step
			}
		}
	}
	fmt.Printf("  highest step held with zero loss (%s): e2atap %s, bare client %s\n\n", unit, human(float64(best["e2atap"])), human(float64(best["bare"])))
	return best
}

// ceiling is the engine's own rate on this machine now: e2atap validate of
// the same records from a file, on two shards (wall and CPU; run uses
// half the CPUs, one on two). A step above it cannot be held by any tap:
// what limits it is the engine.
func (l *live) ceiling(n int) sample { return l.validate(n, 2) }

// validate is e2atap validate of the first n records from a file, on
// shards shards.
func (l *live) validate(n, shards int) sample {
	n = min(n, l.records())
	path := filepath.Join(l.dir, fmt.Sprintf("ceiling-%d.jsonl", n))
	if _, err := os.Stat(path); err != nil {
		must(os.WriteFile(path, l.data[:l.offs[n]], 0o644))
	}
	return runCmd([]string{l.e2atap, "validate", "--quiet", "--shards", strconv.Itoa(shards), "--fail-on", "never", path})
}

func (l *live) printCeiling(n int) {
	s := l.ceiling(n)
	fmt.Printf("  engine ceiling now (e2atap validate --shards 2, the same %d records from a file): %s records/s wall, %.2f µs CPU/record; load %s\n",
		n, human(float64(n)/s.wall.Seconds()), float64(s.cpu.Microseconds())/float64(n), loadavg())
}

// catchup fills a backlog once and reads it from its start with both
// consumers, interleaved; it returns each one's rates.
func (l *live) catchup(title string, run func(who string) result, fill func(n int)) map[string][]float64 {
	fmt.Printf("### %s: a backlog of %d records read from its start\n", title, *liveCatchup)
	fmt.Println("  rate and CPU from the first record judged (the bare client: received) to the last; connecting, creating a consumer and joining a group are left out for both")
	fill(*liveCatchup)
	// A warm-up read by the bare client, not counted: the first consumer
	// after the fill ran slower whoever it was (e2atap's slot 2.65 µs of
	// CPU a record where the same binary later took 1.75-2.03; the broker
	// 0.27 µs a record serving it, 0.07-0.14 after), so the slot that
	// came first in a round carried the broker's settling.
	warm := run("bare")
	fmt.Printf("  (warm-up, not counted: the bare client read %d records at %s/s)\n", warm.got, human(warm.rate))
	// The engine's own ceiling on this machine now: e2atap validate of the
	// same records from a file, on two shards. Its CPU per record is the
	// engine's (and the file's): what run spends beyond it is the tap's and
	// its client's.
	fmt.Printf("  %-8s %9s %9s %8s %8s %10s %8s %8s %9s %8s %10s %6s %10s\n", "who", "backlog", "got", "lost", "dropped", "rate/s", "CPU", "wall", "CPU-µs/rec", "peak RSS", "broker-µs", "cores", "faults/rec")
	out := map[string][]float64{}
	for r := 0; r < max(*liveRounds, 1); r++ {
		order := []string{"e2atap", "bare", "validate"}
		for i := range l.also {
			order = append(order, fmt.Sprintf("alt%d", i+1))
		}
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, who := range order {
			if who == "validate" {
				n := min(*liveCatchup, l.records())
				s := l.ceiling(n)
				rate := float64(n) / s.wall.Seconds()
				out[who] = append(out[who], rate)
				out["cpu:"+who] = append(out["cpu:"+who], float64(s.cpu.Microseconds())/float64(n))
				fmt.Printf("  %-8s %9d %9s %8s %8s %10s %8s %8s %9.2f   (e2atap validate --shards 2 of the same records from a file: the engine's ceiling)\n",
					who, n, "", "", "", human(rate), s.cpu.Round(10*time.Millisecond), s.wall.Round(time.Millisecond),
					float64(s.cpu.Microseconds())/float64(n))
				// The engine's own CPU a record: one shard, one core
				// (two shards cost more CPU than the engine needs).
				s1 := l.validate(n, 1)
				out["cpu:engine1"] = append(out["cpu:engine1"], float64(s1.cpu.Microseconds())/float64(n))
				fmt.Printf("  %-8s %9d %9s %8s %8s %10s %8s %8s %9.2f   (e2atap validate --shards 1: the engine's CPU a record, for the ceiling)\n",
					"engine1", n, "", "", "", human(float64(n)/s1.wall.Seconds()), s1.cpu.Round(10*time.Millisecond), s1.wall.Round(time.Millisecond),
					float64(s1.cpu.Microseconds())/float64(n))
				continue
			}
			res := run(who)
			out[who] = append(out[who], res.rate)
			perRec := float64(res.cpu.Microseconds()) / float64(max(res.counted, 1))
			out["cpu:"+who] = append(out["cpu:"+who], perRec)
			broker := float64(res.brokerCPU.Microseconds()) / float64(max(res.counted, 1))
			out["broker:"+who] = append(out["broker:"+who], broker)
			cores := (res.cpu + res.brokerCPU).Seconds() / max(res.window.Seconds(), 1e-9)
			out["cores:"+who] = append(out["cores:"+who], cores)
			fmt.Printf("  %-8s %9d %9d %8d %8d %10s %8s %8s %9.2f %6d MB %10.2f %6.2f %10.3f\n", who, res.sent, res.got, res.lost(), res.dropped,
				human(res.rate), res.cpu.Round(10*time.Millisecond), res.wall.Round(time.Millisecond), perRec, res.peakRSS>>20, broker, cores,
				float64(res.faults)/float64(max(res.counted, 1)))
		}
	}
	e, b, v := out["e2atap"], out["bare"], out["validate"]
	fmt.Printf("  e2atap run ÷ bare client: %.2f×; e2atap run ÷ e2atap validate: %.2f× (wall rates, medians); load %s\n",
		median(e)/max(median(b), 1), median(e)/max(median(v), 1), loadavg())
	for i, v := range l.also {
		a := fmt.Sprintf("alt%d", i+1)
		fmt.Printf("  %s (%s) ÷ bare client: %.2f×; CPU µs/record %.2f (e2atap %.2f)\n", a, v,
			median(out[a])/max(median(b), 1), median(out["cpu:"+a]), median(out["cpu:e2atap"]))
	}
	c := ceilingOf(out, runtime.NumCPU())
	out["ceiling"] = []float64{c.rate}
	fmt.Println("  " + c.String())
	fmt.Println()
	return out
}

func (l *live) generate(n int) {
	cfg := gen.DefaultConfig()
	cfg.Seed, cfg.FaultRate = 7, 0
	g := gen.New(cfg)
	l.data = make([]byte, 0, n*940)
	l.offs = make([]int, 0, n+1)
	for range n {
		l.offs = append(l.offs, len(l.data))
		l.data = append(l.data, g.Next().Data...)
		l.data = append(l.data, '\n')
	}
	l.offs = append(l.offs, len(l.data))
}

func (l *live) startBrokers() (stop func()) {
	cmd := child(filepath.Join(filepath.Dir(l.bare), "brokers"), filepath.Join(l.dir, "jetstream"), strconv.Itoa(*livePart))
	in, err := cmd.StdinPipe()
	must(err)
	out, err := cmd.StdoutPipe()
	must(err)
	cmd.Stderr = os.Stderr
	must(cmd.Start())
	l.brokerPid = cmd.Process.Pid
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		switch k {
		case "nats":
			l.natsURL = v
		case "monitor":
			l.monitor = v
		case "kafka":
			l.kafkaAddr = v
		}
		if k == "ready" {
			break
		}
	}
	if l.natsURL == "" || l.kafkaAddr == "" {
		fail(errors.New("brokers did not start"))
	}
	return func() { in.Close(); cmd.Wait() }
}

// consumer is a running e2atap or bare client.
type consumer struct {
	cmd      *exec.Cmd
	who      string
	metrics  string // e2atap: its /metrics URL
	tap      string
	mu       sync.Mutex
	last     [5]int64 // bare: its latest report
	waitDone chan struct{}
	stderr   strings.Builder
}

// every is how often c is polled: a scrape of e2atap's /metrics costs it
// CPU, the bare client's reports cost nothing more.
func (c *consumer) every() time.Duration {
	if c.who == "bare" {
		return 20 * time.Millisecond
	}
	return 50 * time.Millisecond
}

func (c *consumer) progress() (got, dropped, slow int64) {
	if c.who == "bare" {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.last[0], c.last[1], c.last[2]
	}
	resp, err := http.Get(c.metrics)
	if err != nil {
		return -1, 0, 0
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	tapLabel := `tap="` + c.tap + `"`
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, tapLabel) {
			continue
		}
		name, _, _ := strings.Cut(line, "{")
		sp := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			continue
		}
		switch {
		case name == "e2atap_records_total":
			got += int64(v)
		case name == "e2atap_tap_dropped_total":
			dropped += int64(v)
		case name == "e2atap_tap_errors_total" && strings.Contains(line, `reason="slow_consumer"`):
			slow += int64(v)
		}
	}
	return got, dropped, slow
}

// peakRSS is the process's peak resident set so far (VmHWM), from /proc.
func (c *consumer) peakRSS() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// cpu is the process's user+sys time so far, from /proc.
func (c *consumer) cpu() time.Duration { return procCPU(c.cmd.Process.Pid) }

// faults is the process's minor page faults so far, from /proc (0 where
// there is no /proc): each costs the kernel a zeroed page.
func (c *consumer) faults() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	n, _ := strconv.ParseInt(f[7], 10, 64) // minflt is field 10
	return n
}

// procCPU is process pid's user+sys time so far, from /proc (0 where there
// is no /proc).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	// After the command: state is field 3; utime and stime are 14 and 15.
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * (time.Second / 100) // USER_HZ
}

func (c *consumer) stop() {
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.waitDone:
	case <-time.After(20 * time.Second):
		c.cmd.Process.Kill()
		<-c.waitDone
	}
}

// startE2atap runs e2atap run with one tap (taps: the YAML of its list
// entry) and waits for /readyz.
func (l *live) startE2atap(tapName, tapYAML string) *consumer {
	return l.startE2atapBin(variant{bin: l.e2atap, shards: l.shards}, tapName, tapYAML)
}

// e2atapOf is the binary of consumer who ("e2atap", or "altN" of
// -live-also); ok false for the bare client.
func (l *live) e2atapOf(who string) (v variant, ok bool) {
	if who == "e2atap" {
		return variant{bin: l.e2atap, shards: l.shards}, true
	}
	var i int
	if _, err := fmt.Sscanf(who, "alt%d", &i); err == nil && i >= 1 && i <= len(l.also) {
		return l.also[i-1], true
	}
	return variant{}, false
}

func (l *live) startE2atapBin(v variant, tapName, tapYAML string) *consumer {
	bin := v.bin
	streams := ""
	if v.shards > 0 {
		streams = fmt.Sprintf("streams: {shards: %d}\n", v.shards)
	}
	l.seq++
	addr := freePort()
	run := filepath.Join(l.dir, fmt.Sprintf("run-%d", l.seq))
	must(os.MkdirAll(run, 0o755))
	cfg := filepath.Join(run, "e2atap.yaml")
	must(os.WriteFile(cfg, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
%staps:
  - %s
outputs:
  findings: {path: %q}
%s`, addr, streams, tapYAML, filepath.Join(run, "findings.jsonl"), recordLogYAML(run))), 0o644))
	args := []string{"run", "--config", cfg}
	if *liveProfile != "" {
		must(os.MkdirAll(*liveProfile, 0o755))
		args = append(args, "--cpuprofile", filepath.Join(*liveProfile, fmt.Sprintf("%s-%d.pprof", tapName, l.seq)))
	}
	c := &consumer{cmd: child(bin, args...), who: "e2atap", tap: tapName, metrics: "http://" + addr + "/metrics", waitDone: make(chan struct{})}
	c.cmd.Stderr = &c.stderr
	must(c.cmd.Start())
	go func() { c.cmd.Wait(); close(c.waitDone) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return c
			}
		}
		select {
		case <-c.waitDone:
			fail(fmt.Errorf("e2atap run exited: %s", c.stderr.String()))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			fail(fmt.Errorf("e2atap run not ready: %s", c.stderr.String()))
		}
	}
}

func (l *live) startBare(args ...string) *consumer {
	c := &consumer{cmd: child(l.bare, args...), who: "bare", waitDone: make(chan struct{})}
	out, err := c.cmd.StdoutPipe()
	must(err)
	c.cmd.Stderr = &c.stderr
	must(c.cmd.Start())
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var v [5]int64
			if _, err := fmt.Sscanf(sc.Text(), "n %d %d %d %d %d", &v[0], &v[1], &v[2], &v[3], &v[4]); err == nil {
				c.mu.Lock()
				c.last = v
				c.mu.Unlock()
			}
		}
		io.Copy(io.Discard, out)
	}()
	go func() { c.cmd.Wait(); close(c.waitDone) }()
	return c
}

// drain polls c until it has sent records (judged, or dropped) or makes no
// progress for stall; it returns when the last progress was seen.
func drain(c *consumer, sent int, stall time.Duration) (got, dropped, slow int64, last time.Time, stalled bool) {
	last = time.Now()
	start, startGot := last, int64(-1)
	prev := int64(-1)
	for {
		got, dropped, slow = c.progress()
		now := time.Now()
		if got+dropped != prev {
			prev, last = got+dropped, now
		}
		if got >= int64(sent) || got+dropped >= int64(sent) {
			return got, dropped, slow, now, false
		}
		if now.Sub(last) > stall {
			return got, dropped, slow, last, true
		}
		if startGot < 0 {
			startGot = got + dropped
		}
		// A scrape of e2atap's /metrics costs it about a millisecond of
		// CPU: look again after half the time the rest should take at the
		// rate so far (at most every(), at least every 5 ms), so that when
		// the last record was judged is known within a few ms, as the bare
		// client says it of itself, and few scrapes are charged to e2atap.
		wait := c.every()
		if d := now.Sub(start); d > 0 && got+dropped > startGot {
			rate := float64(got+dropped-startGot) / d.Seconds()
			rest := time.Duration(float64(int64(sent)-got-dropped) / rate * float64(time.Second))
			wait = min(max(rest/2, 5*time.Millisecond), 4*c.every())
		}
		time.Sleep(wait)
	}
}

// subscriptions is the nats-server's subscription count.
func (l *live) subscriptions() int {
	resp, err := http.Get(l.monitor + "/subsz")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	const key = `"num_subscriptions":`
	i := strings.Index(string(b), key)
	if i < 0 {
		return -1
	}
	s := strings.TrimLeft(string(b[i+len(key):]), " ")
	end := strings.IndexAny(s, ",}\n")
	n, _ := strconv.Atoi(strings.TrimSpace(s[:end]))
	return n
}

func (l *live) waitSubscribed(base int, c *consumer) {
	deadline := time.Now().Add(30 * time.Second)
	for l.subscriptions() <= base {
		if time.Now().After(deadline) {
			fail(fmt.Errorf("%s did not subscribe: %s", c.who, c.stderr.String()))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitUnsubscribed waits until a stopped consumer's subscription is gone
// from the server (it drops it once it sees the connection close), so
// that the next step's count of subscriptions before its consumer starts
// does not include it: a step whose base counted a subscription about to
// go saw its own consumer's only as a return to that base, and waited for
// a subscription it had (one live run of two failed so: "e2atap did not
// subscribe").
func (l *live) waitUnsubscribed(base int) {
	deadline := time.Now().Add(10 * time.Second)
	for l.subscriptions() > base && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
}

// natsCore publishes n records on a core subject, at rate records/s (0: as
// fast as the publisher can, a burst), to e2atap's nats tap or the bare
// subscriber.
func (l *live) natsCore(who string, rate, n int, burst bool) result {
	subj := fmt.Sprintf("bench.core.%d", l.seq+1)
	base := l.subscriptions()
	var c *consumer
	if who == "e2atap" {
		c = l.startE2atap("nats", fmt.Sprintf(`{name: nats, type: nats, url: %q, subjects: [%q]}`, l.natsURL, subj))
	} else {
		l.seq++
		c = l.startBare("nats", l.natsURL, subj)
	}
	defer func() {
		c.stop()
		l.waitUnsubscribed(base)
	}()
	l.waitSubscribed(base, c)
	pub, err := nats.Connect(l.natsURL, nats.ReconnectBufSize(-1))
	must(err)
	defer pub.Close()
	cpu0 := c.cpu()
	start := time.Now()
	pace(rate, n, func(i int) { must(pub.Publish(subj, l.rec(i))) })
	must(pub.FlushTimeout(time.Minute))
	stopped := time.Now()
	return finish(who, c, n, start, stopped, cpu0, float64(rate), burst)
}

// pace calls send(i) for i in [0, n) at rate calls/s (0: at once).
func pace(rate, n int, send func(i int)) {
	start := time.Now()
	for i := 0; i < n; {
		due := n
		if rate > 0 {
			due = min(n, int(float64(rate)*time.Since(start).Seconds())+1)
		}
		for ; i < due; i++ {
			send(i)
		}
		if i < n {
			time.Sleep(200 * time.Microsecond)
		}
	}
}

func finish(who string, c *consumer, n int, start, stopped time.Time, cpu0 time.Duration, rate float64, burst bool) result {
	got, dropped, slow, last, stalled := drain(c, n, 3*time.Second)
	res := result{who: who, sent: n, got: got, dropped: dropped, slow: slow, cpu: c.cpu() - cpu0,
		wall: last.Sub(start), stallOrTimeout: stalled}
	res.achieved = float64(n) / stopped.Sub(start).Seconds()
	res.drain = max(last.Sub(stopped), 0)
	slack := drainSlack + stopped.Sub(start)/10
	res.held = !stalled && got >= int64(n) && dropped == 0 && (burst || res.drain <= slack)
	if !burst && res.achieved < 0.95*rate {
		// The producer could not keep the rate (a loaded machine): the
		// step says nothing about the consumer.
		res.held, res.short = false, true
	}
	return res
}

// logdir appends rate lines/s to a fresh file for the step's duration.
func (l *live) logdir(who string, rate int) result {
	l.seq++
	logs := filepath.Join(l.dir, fmt.Sprintf("logs-%d", l.seq))
	must(os.MkdirAll(logs, 0o755))
	file := filepath.Join(logs, "agent.jsonl")
	var c *consumer
	if who == "e2atap" {
		c = l.startE2atap("logs", fmt.Sprintf(`{name: logs, type: logdir, paths: [%q], positions: %q}`,
			filepath.Join(logs, "*.jsonl"), filepath.Join(logs, "positions.json")))
	} else {
		c = l.startBare("tail", file)
	}
	defer c.stop()
	n := int(float64(rate) * liveDur.Seconds())
	f, err := os.Create(file)
	must(err)
	cpu0 := c.cpu()
	start := time.Now()
	// One write per pacing tick, as a logger with a buffered writer does.
	var buf []byte
	next := 0
	pace(rate, n, func(i int) {
		buf = append(buf, l.line(i)...)
		if i == n-1 || len(buf) >= 256<<10 || time.Since(start) > time.Duration(next)*time.Millisecond {
			_, err := f.Write(buf)
			must(err)
			buf = buf[:0]
			next = int(time.Since(start)/time.Millisecond) + 1
		}
	})
	must(f.Close())
	stopped := time.Now()
	return finish(who, c, n, start, stopped, cpu0, float64(rate), false)
}

func (l *live) fillJetStream(n int) {
	nc, err := nats.Connect(l.natsURL)
	must(err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	must(err)
	ctx := context.Background()
	_, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: "BENCH", Subjects: []string{"bench.js"}, Storage: jetstream.FileStorage})
	must(err)
	for i := 0; i < n; i++ {
		if _, err := js.PublishAsync("bench.js", l.rec(i)); err != nil {
			must(err)
		}
		if i%2000 == 1999 || i == n-1 {
			select {
			case <-js.PublishAsyncComplete():
			case <-time.After(time.Minute):
				fail(errors.New("jetstream: publishing the backlog timed out"))
			}
		}
	}
}

func (l *live) jetstream(who string) result {
	var c *consumer
	if v, ok := l.e2atapOf(who); ok {
		c = l.startE2atapBin(v, "js", fmt.Sprintf(`{name: js, type: nats, url: %q, jetstream: [{stream: BENCH, start_seq: 1}]}`, l.natsURL))
	} else {
		l.seq++
		c = l.startBare("js", l.natsURL, "BENCH")
	}
	return l.catchupRun(who, c, *liveCatchup)
}

func (l *live) fillKafka(n int) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(l.kafkaAddr), kgo.DefaultProduceTopic("bench"),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.MaxBufferedRecords(100_000))
	must(err)
	defer cl.Close()
	ctx := context.Background()
	var firstErr error
	var mu sync.Mutex
	for i := 0; i < n; i++ {
		v := l.rec(i)
		// Keyed by stream, as the topics e2atap taps are.
		cl.Produce(ctx, &kgo.Record{Key: streamKey(v), Value: v}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				firstErr = cmpErr(firstErr, err)
				mu.Unlock()
			}
		})
	}
	must(cl.Flush(ctx))
	must(firstErr)
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// streamKey is the record's request_id (or nothing).
func streamKey(v []byte) []byte {
	const k = `"request_id": "`
	s := string(v)
	i := strings.Index(s, k)
	if i < 0 {
		return nil
	}
	j := strings.IndexByte(s[i+len(k):], '"')
	if j < 0 {
		return nil
	}
	return v[i+len(k) : i+len(k)+j]
}

func (l *live) kafka(who string) result {
	l.seq++
	group := fmt.Sprintf("bench-%d", l.seq)
	var c *consumer
	if v, ok := l.e2atapOf(who); ok {
		c = l.startE2atapBin(v, "kafka", fmt.Sprintf(`{name: kafka, type: kafka, brokers: [%q], topics: [bench], group: %s, start: earliest}`, l.kafkaAddr, group))
	} else {
		c = l.startBare("kafka", l.kafkaAddr, "bench", group)
	}
	return l.catchupRun(who, c, *liveCatchup)
}

// catchupRun waits for c's first record, then for the n-th, and gives the
// rate between them.
func (l *live) catchupRun(who string, c *consumer, n int) result {
	defer c.stop()
	deadline := time.Now().Add(30 * time.Second)
	var got0 int64
	var t0 time.Time
	var cpu0, broker0 time.Duration
	var faults0 int64
	for {
		got, _, _ := c.progress()
		if got > 0 {
			// CPU from here on, per record from here on: what the
			// consumer spent connecting, creating its consumer or joining
			// its group (and e2atap on the scrapes that waited for it) is
			// not per-record work, for either.
			got0, t0, cpu0, broker0, faults0 = got, time.Now(), c.cpu(), procCPU(l.brokerPid), c.faults()
			break
		}
		if time.Now().After(deadline) {
			fail(fmt.Errorf("%s: nothing read from the backlog in 30 s: %s", who, c.stderr.String()))
		}
		time.Sleep(c.every() / 4)
	}
	got, dropped, slow, last, stalled := drain(c, n, 3*time.Second)
	res := result{who: who, sent: n, got: got, dropped: dropped, slow: slow, cpu: c.cpu() - cpu0, wall: last.Sub(t0), stallOrTimeout: stalled, peakRSS: c.peakRSS(),
		brokerCPU: procCPU(l.brokerPid) - broker0, faults: c.faults() - faults0}
	res.window = last.Sub(t0)
	res.rate = float64(got-got0) / last.Sub(t0).Seconds()
	res.counted = got - got0
	if c.who == "bare" {
		// It says itself when its first and last records came.
		c.mu.Lock()
		first, end := c.last[3], c.last[4]
		c.mu.Unlock()
		if end > first {
			res.wall = time.Duration(end - first)
			res.rate = float64(got-1) / res.wall.Seconds()
		}
	}
	res.held = !stalled && got >= int64(n) && dropped == 0
	return res
}

// parseCounts reads "50k,100k,1.5M,2000".
func parseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		mult := 1.0
		switch {
		case strings.HasSuffix(f, "k"):
			mult, f = 1e3, strings.TrimSuffix(f, "k")
		case strings.HasSuffix(f, "M"):
			mult, f = 1e6, strings.TrimSuffix(f, "M")
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("bad count %q", f)
		}
		out = append(out, int(v*mult))
	}
	return out, nil
}

func freePort() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	defer ln.Close()
	return ln.Addr().String()
}

// recordLogYAML is the outputs.log line of a run with -live-record-log:
// the shipped configuration's record log, in the run's directory.
func recordLogYAML(run string) string {
	if !*liveRecLog {
		return ""
	}
	return fmt.Sprintf("  log: {path: %q, content: mask, max_record_bytes: 65536, rotate_bytes: 104857600}\n", filepath.Join(run, "records.jsonl"))
}
