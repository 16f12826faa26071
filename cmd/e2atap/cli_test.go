package main

import (
	"bytes"
	"context"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &o, &e)
	return code, o.String(), e.String()
}

func TestHelpGoesToStdout(t *testing.T) {
	for _, args := range [][]string{
		{"validate", "--help"}, {"validate", "-h"}, {"help", "validate"},
		{"decode", "--help"}, {"run", "--help"}, {"gen", "--help"}, {"demo", "--help"},
		{"help", "decode"}, {"completion", "--help"},
	} {
		code, out, errOut := runCLI(t, args...)
		if code != exitOK {
			t.Errorf("%v: exit %d, want 0", args, code)
		}
		if !strings.Contains(out, "Usage: e2atap") {
			t.Errorf("%v: the help is not on stdout:\n%s", args, out)
		}
		if errOut != "" {
			t.Errorf("%v: stderr not empty: %q", args, errOut)
		}
	}
	// help validate is validate's help, not the top-level list.
	_, out, _ := runCLI(t, "help", "validate")
	if !strings.Contains(out, "Usage: e2atap validate") || !strings.Contains(out, "-fail-on") {
		t.Errorf("help validate printed:\n%s", out)
	}
	if code, _, _ := runCLI(t, "help", "nope"); code != exitUsage {
		t.Errorf("help of an unknown command: exit %d, want 2", code)
	}
}

func TestUsageErrorIsShort(t *testing.T) {
	code, out, errOut := runCLI(t, "validate", "--no-such-flag", "x.jsonl")
	if code != exitUsage {
		t.Fatalf("exit %d, want 2", code)
	}
	if out != "" {
		t.Errorf("stdout on a usage error: %q", out)
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "no-such-flag") || !strings.Contains(lines[1], "--help") {
		t.Errorf("want the error and a pointer to --help, got:\n%s", errOut)
	}
}

func TestFlagsAfterFileNames(t *testing.T) {
	// validate x.jsonl --profile spec: --profile is a flag, not a file.
	code, out, errOut := runCLI(t, "validate", "../../testdata/clean.jsonl", "--profile", "spec", "--output", "json", "--fail-on", "never")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(errOut, "open --profile") {
		t.Fatalf("a flag after the file was taken as a file: %s", errOut)
	}
	// Under spec, the reference's response_id == request_id is a finding;
	// it shows that --profile spec took effect.
	if !strings.Contains(out, "e2a.response_id_dup") {
		t.Errorf("--profile spec after the file name had no effect; stdout:\n%s", out)
	}
	// "--" ends the flags: what follows is a file, even if it starts with -.
	code, _, errOut = runCLI(t, "validate", "--", "--profile")
	if code != exitUsage || !strings.Contains(errOut, "open --profile") {
		t.Errorf("after --, --profile should be a file name: exit %d, %s", code, errOut)
	}
}

func TestMissingInputPrintsNoSummary(t *testing.T) {
	code, out, errOut := runCLI(t, "validate", "testdata/does-not-exist.jsonl")
	if code != exitUsage {
		t.Errorf("exit %d, want 2", code)
	}
	if out != "" {
		t.Errorf("stdout for a missing input: %q (a script would read it as a clean result)", out)
	}
	if !strings.Contains(errOut, "does-not-exist.jsonl") {
		t.Errorf("stderr does not name the file: %q", errOut)
	}
}

func TestValidateOfAConfigFileHints(t *testing.T) {
	_, _, errOut := runCLI(t, "validate", "--fail-on", "never", "../../docs/e2atap.example.yaml")
	if !strings.Contains(errOut, "run --config ../../docs/e2atap.example.yaml --check") {
		t.Errorf("no hint towards run --check: %s", errOut)
	}
}

func TestResolveVersion(t *testing.T) {
	info := func(mainVersion string, settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			bi := &debug.BuildInfo{Settings: settings}
			bi.Main.Version = mainVersion
			return bi, true
		}
	}
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123"}
	for _, c := range []struct {
		name, linked string
		read         func() (*debug.BuildInfo, bool)
		want         string
	}{
		{"linker wins", "v1.4.0", info("v9.9.9"), "v1.4.0"},
		{"module version", "dev", info("v1.2.3"), "v1.2.3"},
		{"vcs revision", "dev", info("(devel)", rev), "dev-0123456789ab"},
		{"dirty tree", "dev", info("(devel)", rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"}), "dev-0123456789ab-dirty"},
		{"nothing known", "dev", info("(devel)"), "dev"},
		{"no build info", "dev", func() (*debug.BuildInfo, bool) { return nil, false }, "dev"},
	} {
		if got := resolveVersion(c.linked, c.read); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestCompletion(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		code, out, _ := runCLI(t, "completion", sh)
		if code != exitOK || !strings.Contains(out, "validate") {
			t.Errorf("completion %s: exit %d:\n%s", sh, code, out)
		}
	}
	if code, _, _ := runCLI(t, "completion", "tcsh"); code != exitUsage {
		t.Errorf("completion tcsh: exit %d, want 2", code)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	_, script, _ := runCLI(t, "completion", "bash")
	// The script must at least parse and register the function.
	out, err := exec.Command(bash, "-c", script+"\ncomplete -p e2atap").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "_e2atap") {
		t.Errorf("bash did not load the completion: %v\n%s", err, out)
	}
}
