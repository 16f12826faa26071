package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit statuses scripts can trust.
const (
	exitOK       = 0
	exitFindings = 1
	exitUsage    = 2
)

// version is set by the linker (-X main.version=...).
var version = "dev"

const usage = `e2atap: protocol-aware observability for E2A agent traffic and EventMesh frames.

Usage:
  e2atap <command> [flags] [args]

Commands:
  run        the sidecar: taps, validation, metrics, traces, redacted logs
  validate   check captures and logs offline (JSON lines or EventMesh frame files)
  decode     print each record or frame as one JSON line (a dissector)
  gen        write synthetic reference-shaped traffic with labelled faults
  demo       everything on one machine: embedded NATS, simulated Gateway and
             AgentServer with injected faults, e2atap between them, a live view
  version    print the version

Run 'e2atap <command> --help' for the flags of a command.
`

func main() {
	ctx, stop := signalContext()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// signalContext is done on SIGINT or SIGTERM (the sidecar then drains).
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// run dispatches a command; it is main without the process, for tests.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "validate":
		return cmdValidate(ctx, rest, stdin, stdout, stderr)
	case "decode":
		return cmdDecode(ctx, rest, stdin, stdout, stderr)
	case "run":
		return cmdRun(ctx, rest, stdout, stderr)
	case "gen":
		return cmdGen(ctx, rest, stdout, stderr)
	case "demo":
		return cmdDemo(ctx, rest, stdout, stderr)
	case "version", "--version":
		fmt.Fprintf(stdout, "e2atap %s\n", version)
		return exitOK
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "e2atap: unknown command %q\n\n%s", cmd, usage)
	return exitUsage
}

// newFlagSet makes a command's flag set: errors and usage go to stderr.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args with usage as the help text. done reports that
// the command should return code now: 0 after --help, 2 on a bad flag.
func parseFlags(fs *flag.FlagSet, usage string, args []string) (done bool, code int) {
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return true, exitOK
		}
		return true, exitUsage
	}
	return false, 0
}

// openInput opens a named input; "-" is standard input.
func openInput(name string, stdin io.Reader) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(stdin), nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s: is a directory", name)
	}
	return f, nil
}
