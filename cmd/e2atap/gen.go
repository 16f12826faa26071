package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/e2atap/e2atap/internal/gen"
)

const genUsage = `Usage: e2atap gen [flags]

Writes synthetic E2A traffic shaped like the reference implementation's
(requests and responses as JSON lines, streaming chats with keepalives,
unary calls, server push, interrupts) with a labelled rate of injected
faults, for trying e2atap out, benchmarks and tests. The summary of the
injected faults goes to standard error.

Flags:
`

func cmdGen(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("gen", stderr)
	cfg := gen.DefaultConfig()
	records := fs.Int64("records", 10000, "records to write")
	size := fs.String("size", "", "write about this much instead of --records (e.g. 100M, 1G)")
	out := fs.String("o", "-", "output file (- for standard output)")
	faults := fs.String("faults", "all", "comma-separated faults to inject: "+faultNames()+", all or none")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "random seed (the same seed writes the same traffic)")
	fs.Float64Var(&cfg.FaultRate, "fault-rate", cfg.FaultRate, "share of streams that carry a fault")
	fs.IntVar(&cfg.Concurrent, "concurrent", cfg.Concurrent, "streams interleaved at once")
	if done, code := parseFlags(fs, genUsage, args, stdout); done {
		return code
	}
	var errs []string
	fl, err := parseFaults(*faults)
	if err != nil {
		errs = append(errs, "--faults: "+err.Error())
	}
	cfg.Faults = fl
	var limit int64
	if *size != "" {
		if limit, err = parseSize(*size); err != nil {
			errs = append(errs, "--size: "+err.Error())
		}
	}
	if cfg.FaultRate < 0 || cfg.FaultRate > 1 {
		errs = append(errs, fmt.Sprintf("--fault-rate: %g is not between 0 and 1", cfg.FaultRate))
	}
	if len(errs) > 0 || fs.NArg() > 0 {
		if fs.NArg() > 0 {
			errs = append(errs, fmt.Sprintf("unexpected arguments %q", fs.Args()))
		}
		fmt.Fprintf(stderr, "e2atap gen: %s\n", strings.Join(errs, "; "))
		fs.Usage()
		return exitUsage
	}
	w := stdout
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintf(stderr, "e2atap gen: %v\n", err)
			return exitUsage
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	g := gen.New(cfg)
	var n, written int64
	for (limit == 0 && n < *records) || (limit > 0 && written < limit) {
		if n%65536 == 0 && ctx.Err() != nil {
			break
		}
		m := g.Next()
		bw.Write(m.Data)
		bw.WriteByte('\n')
		written += int64(len(m.Data)) + 1
		n++
	}
	for _, m := range g.Drain() {
		bw.Write(m.Data)
		bw.WriteByte('\n')
		n++
	}
	if err := bw.Flush(); err != nil {
		fmt.Fprintf(stderr, "e2atap gen: %v\n", err)
		return exitUsage
	}
	inj := g.Injected()
	fmt.Fprintf(stderr, "wrote %d records; injected faults:", n)
	for _, f := range gen.AllFaults {
		fmt.Fprintf(stderr, " %s=%d", f, inj[f])
	}
	fmt.Fprintln(stderr)
	return exitOK
}

func faultNames() string {
	var s []string
	for _, f := range gen.AllFaults {
		s = append(s, string(f))
	}
	return strings.Join(s, ", ")
}

func parseFaults(s string) ([]gen.Fault, error) {
	switch s {
	case "all", "":
		return gen.AllFaults, nil
	case "none":
		return []gen.Fault{}, nil
	}
	var out []gen.Fault
	for _, name := range strings.Split(s, ",") {
		f, err := gen.ParseFault(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	}
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a size like 100M or 1G", s)
	}
	return n * mult, nil
}
