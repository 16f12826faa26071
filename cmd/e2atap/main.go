package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
)

// Exit statuses scripts can trust.
const (
	exitOK       = 0
	exitFindings = 1
	exitUsage    = 2
	// exitInternal: validate skipped records for a defect of e2atap (a
	// panic while judging them, recovered): its verdicts are incomplete.
	exitInternal = 3
)

// version is set by the linker (-X main.version=...); without it, the
// module's build info says what was built (a tagged module version, or
// the VCS revision of a source build).
var version = "dev"

func init() { version = resolveVersion(version, debug.ReadBuildInfo) }

// resolveVersion keeps a linker-set version; otherwise it reads the build
// info: the main module's version ("v1.2.3" when installed with go
// install) or the VCS revision and a "-dirty" mark.
func resolveVersion(linked string, read func() (*debug.BuildInfo, bool)) string {
	if linked != "dev" && linked != "" {
		return linked
	}
	bi, ok := read()
	if !ok {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "dev-" + rev
}

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
  completion print a shell completion script (bash, zsh or fish)
  observe    follow a running sidecar's findings and stream outcomes live
  version    print the version

Run 'e2atap help <command>' (or 'e2atap <command> --help') for the flags of
a command. Flags may come before or after file names; '--' ends them.
`

// commands are the names 'e2atap help' and the completions know.
var commands = []string{"run", "validate", "decode", "gen", "demo", "observe", "completion", "version", "help"}

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
	// Every error of every command passes the policy (under the process's
	// key: the configuration's is not read yet).
	if _, ok := stderr.(*policyWriter); !ok {
		stderr = newPolicy(nil).writer(stderr)
	}
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
	case "observe":
		return cmdObserve(ctx, rest, stdout, stderr)
	case "completion":
		return cmdCompletion(rest, stdout, stderr)
	case "version", "--version":
		fmt.Fprintf(stdout, "e2atap %s\n", version)
		return exitOK
	case "help", "-h", "--help":
		if len(rest) > 0 && rest[0] != "help" {
			if !knownCommand(rest[0]) {
				fmt.Fprintf(stderr, "e2atap help: unknown command %q\n", rest[0])
				return exitUsage
			}
			return run(ctx, []string{rest[0], "--help"}, stdin, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "e2atap: unknown command %q\nRun 'e2atap help' for the list of commands.\n", cmd)
	return exitUsage
}

func knownCommand(name string) bool {
	for _, c := range commands {
		if c == name {
			return true
		}
	}
	return false
}

// newFlagSet makes a command's flag set: errors go to stderr.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args with usage as the help text. done reports that
// the command should return code now: 0 after --help (the help goes to
// stdout, as a requested output), 2 on a bad flag (one line on stderr and
// a pointer to --help, not the whole flag list). Flags may follow file
// names, as in most command-line tools; "--" ends the flags.
func parseFlags(fs *flag.FlagSet, usage string, args []string, stdout io.Writer) (done bool, code int) {
	stderr := fs.Output()
	hint := func() { fmt.Fprintf(stderr, "Run 'e2atap %s --help' for usage.\n", fs.Name()) }
	defer func() { fs.Usage = hint }()
	var positional []string
	for {
		// Errors are printed by us, once, with the command's name.
		fs.SetOutput(io.Discard)
		fs.Usage = func() {}
		err := fs.Parse(args)
		fs.SetOutput(stderr)
		fs.Usage = hint
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fmt.Fprint(stdout, usage)
			fs.PrintDefaults()
			fs.SetOutput(stderr)
			return true, exitOK
		}
		if err != nil {
			fmt.Fprintf(stderr, "e2atap %s: %v\n", fs.Name(), err)
			fs.Usage()
			return true, exitUsage
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		// fs.Parse stops at the first non-flag; "--" was consumed by it
		// when it came first, in which case everything left is positional.
		if consumedDoubleDash(args, rest) {
			positional = append(positional, rest...)
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	// Leave the positional arguments where fs.Args() finds them.
	_ = fs.Parse(append([]string{"--"}, positional...))
	return false, 0
}

// consumedDoubleDash reports whether fs.Parse stopped at a "--" (args and
// rest are what it was given and what it left).
func consumedDoubleDash(args, rest []string) bool {
	n := len(args) - len(rest)
	return n > 0 && args[n-1] == "--"
}

const completionUsage = `Usage: e2atap completion bash|zsh|fish

Prints a shell completion script for e2atap's commands and flags:
  source <(e2atap completion bash)
  e2atap completion zsh > "${fpath[1]}/_e2atap"
  e2atap completion fish > ~/.config/fish/completions/e2atap.fish
`

func cmdCompletion(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		fmt.Fprint(stdout, completionUsage)
		return exitOK
	}
	if len(args) != 1 {
		fmt.Fprintln(stderr, "e2atap completion: name one shell: bash, zsh or fish")
		return exitUsage
	}
	cmds := strings.Join(commands, " ")
	switch args[0] {
	case "bash":
		fmt.Fprintf(stdout, bashCompletion, cmds)
	case "zsh":
		fmt.Fprintf(stdout, "#compdef e2atap\nautoload -U +X bashcompinit && bashcompinit\n"+bashCompletion, cmds)
	case "fish":
		for _, c := range commands {
			fmt.Fprintf(stdout, "complete -c e2atap -n __fish_use_subcommand -f -a %s\n", c)
		}
		fmt.Fprintln(stdout, "complete -c e2atap -n '__fish_seen_subcommand_from validate decode' -F")
	default:
		fmt.Fprintf(stderr, "e2atap completion: unknown shell %q (want bash, zsh or fish)\n", args[0])
		return exitUsage
	}
	return exitOK
}

// bashCompletion completes commands, then a command's flags (read from its
// own --help, so they never go stale), then file names.
const bashCompletion = `_e2atap() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "%s" -- "$cur"))
    return
  fi
  if [[ "$cur" == -* ]]; then
    local flags
    flags=$(e2atap "${COMP_WORDS[1]}" --help 2>/dev/null | sed -n 's/^  \(-[a-z0-9-]*\).*/-\1/p')
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _e2atap e2atap
`

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
