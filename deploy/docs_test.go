//go:build unix

package deploy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// opsDocs are the operator documents whose commands TestDocCommands runs.
var opsDocs = []string{"../docs/runbook.md", "../docs/deploy.md"}

// docCommand is one command of a document: a line of a ```sh block
// (continuations joined) or an inline `e2atap …` / `kubectl …` span of the
// prose.
type docCommand struct {
	where string // file:line
	text  string
}

var (
	fence      = regexp.MustCompile("(?m)^\\s*```")
	inlineCode = regexp.MustCompile("`([^`]+)`")
	spaces     = regexp.MustCompile(`\s+`)
	// placeholder: what the reader fills in (NS, POD, HOST:PORT, OLD),
	// left after docPlaceholders.
	placeholder = regexp.MustCompile(`\b(NS|POD|NAME|HOST|PORT|OLD|TAP|RULE|ID|FILE)\b`)
)

// docCommands extracts the commands of a Markdown file.
func docCommands(t *testing.T, path string) []docCommand {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []docCommand
	var prose strings.Builder
	inSh, inOther := false, false
	var cont string
	contLine := 0
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trim := strings.TrimSpace(line)
		switch {
		case !inSh && !inOther && fence.MatchString(line):
			inSh, inOther = trim == "```sh", trim != "```sh"
			prose.WriteString("\n")
			continue
		case (inSh || inOther) && trim == "```":
			inSh, inOther = false, false
			prose.WriteString("\n")
			continue
		case inOther:
			prose.WriteString("\n")
			continue
		case !inSh:
			prose.WriteString(line + "\n")
			continue
		}
		prose.WriteString("\n")
		if trim == "" || strings.HasPrefix(trim, "#") {
			continue
		}
		if cont == "" {
			contLine = n
		}
		if strings.HasSuffix(trim, "\\") {
			cont += strings.TrimSuffix(trim, "\\") + " "
			continue
		}
		cmds = append(cmds, docCommand{where: fmt.Sprintf("%s:%d", filepath.Base(path), contLine), text: cont + trim})
		cont = ""
	}
	// Inline spans in the prose that are whole commands.
	for _, m := range inlineCode.FindAllStringSubmatchIndex(prose.String(), -1) {
		text := spaces.ReplaceAllString(prose.String()[m[2]:m[3]], " ")
		line := 1 + strings.Count(prose.String()[:m[0]], "\n")
		isE2atap := strings.HasPrefix(text, "e2atap ") && len(strings.Fields(text)) >= 3
		isKubectl := strings.HasPrefix(text, "kubectl ") && len(strings.Fields(text)) >= 3
		if (isE2atap || isKubectl) && !strings.Contains(text, "…") {
			cmds = append(cmds, docCommand{where: fmt.Sprintf("%s:%d", filepath.Base(path), line), text: text})
		}
	}
	return cmds
}

// docPlaceholders are the documents' placeholders and pod paths, and what
// they are here.
func docPlaceholders(work, addr string) *strings.Replacer {
	return strings.NewReplacer(
		"/var/lib/e2atap/", work+"/",
		"/etc/e2atap/e2atap.yaml", work+"/e2atap.yaml",
		"127.0.0.1:9464", addr,
		"localhost:9464", addr,
		"REQUEST_ID", "request_id",
		"--rule RULE", "--rule e2a.seq_gap",
		"--tap TAP", "--tap "+tapLogs,
		"--stream ID", "--stream none",
		"--config FILE", "--config e2atap.yaml",
		"decode FILE", "decode records.jsonl",
	)
}

// TestDocCommands runs every command of the runbook and deploy.md that
// can run without a cluster, against a running `e2atap run` (built from
// cmd/e2atap) fed with faulty traffic: the e2atap commands (observe through
// the sidecar's listener, validate and decode on its real record log, run
// --check on its configuration), what `kubectl exec … -- /e2atap …` would
// run inside the distroless image, curl on /healthz, promtool, and
// `kubectl kustomize`. Commands that need a cluster, a registry or an
// editor are skipped, each with its reason; a command of a kind the test
// does not know fails it, so a new command gets a rule.
func TestDocCommands(t *testing.T) {
	var cmds []docCommand
	for _, d := range opsDocs {
		cmds = append(cmds, docCommands(t, d)...)
	}
	if len(cmds) < 20 {
		t.Fatalf("found %d commands in %v: the parser is broken", len(cmds), opsDocs)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}

	dir := t.TempDir()
	bin := buildSidecar(t, dir)
	if err := os.Mkdir(filepath.Join(dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "not-a-dir"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	blocks := readBlocks(t, faultySpec, heartbeats)
	feed := &logFeeder{path: filepath.Join(dir, "logs", "agent.jsonl"), blocks: blocks}
	for r := 0; r < 3; r++ {
		feed.round(context.Background(), r)
	}
	if err := feed.err.Load(); err != nil {
		t.Fatal(err)
	}
	// Traffic on the ws tap too: a Gateway's conversations with a stand-in
	// AgentServer that answers with the faulty streams.
	byID := map[string][]string{}
	for _, b := range blocks {
		byID[b.id] = b.lines
	}
	upCtx, upCancel := context.WithCancel(context.Background())
	upstream := httptest.NewServer(&agentServer{blocks: byID, ctx: upCtx})
	t.Cleanup(func() { upCancel(); upstream.Close() })
	sc := startSidecar(t, bin, dir, "ws"+strings.TrimPrefix(upstream.URL, "http"))
	gw := &gateway{url: "ws://" + sc.wsAddr + "/agent", blocks: blocks}
	for r := 0; r < 2; r++ {
		gw.round(context.Background(), r)
	}
	if gw.rounds.Load() == 0 {
		t.Fatalf("no conversation through the ws tap: %v", gw.lastErr.Load())
	}
	// Wait until the record log holds what the tap read.
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := os.Stat(filepath.Join(dir, "findings.jsonl"))
		if err == nil && st.Size() > 0 {
			if st, err := os.Stat(filepath.Join(dir, "records.jsonl")); err == nil && st.Size() > 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no findings and records after 30s; output:\n%s", sc.out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	// The working directory: what the documents name, relative to the
	// repository root or to where an operator runs them.
	work := t.TempDir()
	if err := os.MkdirAll(filepath.Join(work, "deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"kubernetes", "prometheus"} {
		if out, err := exec.Command("cp", "-r", sub, filepath.Join(work, "deploy", sub)).CombinedOutput(); err != nil {
			t.Fatalf("cp %s: %v\n%s", sub, err, out)
		}
	}
	copyFile(t, filepath.Join(dir, "records.jsonl"), filepath.Join(work, "records.jsonl"))
	copyFile(t, filepath.Join(dir, "e2atap.yaml"), filepath.Join(work, "e2atap.yaml"))
	copyFile(t, "../testdata/faulty.jsonl", filepath.Join(work, "capture.jsonl"))
	copyFile(t, "../testdata/stream.frames", filepath.Join(work, "capture.bin"))

	env := append(sidecarEnv(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	repl := docPlaceholders(work, sc.addr)
	ran := 0
	for _, c := range cmds {
		text := repl.Replace(c.text)
		fields := strings.Fields(text)
		var skip string
		run, follows := text, false
		okCodes := []int{0}
		switch {
		case fields[0] == "kubectl" && len(fields) > 1 && fields[1] == "kustomize":
			if _, err := exec.LookPath("kubectl"); err != nil {
				skip = "kubectl not on PATH"
			}
		case fields[0] == "kubectl" && distrolessBreaks(text):
			t.Errorf("%s: %q cannot work on the distroless image (no shell, no tar): run /e2atap itself, port-forward, or an ephemeral container", c.where, c.text)
			continue
		case fields[0] == "kubectl" && strings.Contains(text, " -- /e2atap "):
			// What the distroless image runs: the binary, no shell.
			_, after, _ := strings.Cut(text, " -- /e2atap ")
			run = "e2atap " + after
		case fields[0] == "kubectl":
			skip = "needs a cluster"
		case fields[0] == "docker" || (fields[0] == "make" && fields[1] == "image"):
			skip = "needs docker and a registry"
		case fields[0] == "$EDITOR":
			skip = "an editor"
		case fields[0] == "cp" || fields[0] == "curl" || fields[0] == "promtool" || fields[0] == "jq":
		case fields[0] == "e2atap" && fields[1] == "run" && !strings.Contains(text, "--check"):
			skip = "starts a sidecar: the test runs one with this configuration"
		case fields[0] == "e2atap":
		default:
			t.Errorf("%s: no rule for %q: teach TestDocCommands to run or skip it", c.where, c.text)
			continue
		}
		if skip == "" && placeholder.MatchString(run) {
			skip = "a placeholder of the reader's own (" + placeholder.FindString(run) + ")"
		}
		if skip != "" {
			t.Logf("skip %s (%s): %s", c.where, skip, c.text)
			continue
		}
		rf := strings.Fields(run)
		mustName := ""
		if rf[0] == "e2atap" && len(rf) > 1 {
			switch rf[1] {
			case "run":
				// --check of the test's configuration: its tap "stuck" has
				// a positions file under a regular file on purpose (for the
				// /healthz commands), which --check rightly reports.
				okCodes, mustName = []int{0, 2}, "(stuck): positions"
			case "validate":
				okCodes = []int{0, 1} // 1: findings at or above --fail-on
			case "observe":
				// The operator's port-forward puts the sidecar on the
				// default address; here it is elsewhere. Following never
				// ends: print what the sidecar kept and exit instead (the
				// cmd tests follow live), so that a pipe's reader (jq)
				// flushes.
				extra := ""
				if !strings.Contains(run, "--addr") {
					extra += " --addr " + sc.addr
				}
				if !strings.Contains(run, "--follow=false") {
					extra += " --follow=false"
				}
				run = strings.Replace(run, "e2atap observe", "e2atap observe"+extra, 1)
				follows = true
			}
		}
		ran++
		t.Run(c.where, func(t *testing.T) {
			out, code, timedOut := runShell(t, bash, work, env, run)
			if follows && len(strings.TrimSpace(out)) == 0 {
				t.Errorf("%s\n  ran: %s\n  printed nothing: the sidecar kept events that match", c.text, run)
			}
			if timedOut || !containsInt(okCodes, code) {
				t.Errorf("%s\n  ran: %s\n  exit %d (timed out: %v), want %v:\n%s", c.text, run, code, timedOut, okCodes, out)
			}
			if code == 2 && mustName != "" && (!strings.Contains(out, mustName) || strings.Count(out, "\n  ") != strings.Count(out, "warning:")+1) {
				t.Errorf("%s\n  ran: %s\n  exit 2 should list the deliberate %q problem and nothing else but warnings:\n%s", c.text, run, mustName, out)
			}
		})
	}
	if ran < 15 {
		t.Errorf("ran only %d commands", ran)
	}
	t.Logf("ran %d of %d commands from %v", ran, len(cmds), opsDocs)
}

// runShell runs cmd with bash in dir; one that does not end in a minute is
// stopped (its whole process group).
func runShell(t *testing.T, bash, dir string, env []string, cmd string) (out string, code int, timedOut bool) {
	t.Helper()
	const limit = 60 * time.Second
	c := exec.Command(bash, "-o", "pipefail", "-c", cmd)
	c.Dir, c.Env = dir, env
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var buf syncBuffer
	c.Stdout, c.Stderr = &buf, &buf
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(limit):
		timedOut = true
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGTERM)
		select {
		case err = <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			err = <-done
		}
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatal(err)
	}
	return buf.String(), code, timedOut
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// distrolessBreaks reports a kubectl command that needs a shell or tar in
// the e2atap container, which its distroless image does not have: kubectl
// cp from it, or kubectl exec into it of anything but /e2atap.
func distrolessBreaks(cmd string) bool {
	f := strings.Fields(cmd)
	inSidecar := false
	for i := 0; i+1 < len(f); i++ {
		if (f[i] == "-c" || f[i] == "--container") && f[i+1] == "e2atap" {
			inSidecar = true
		}
	}
	if !inSidecar || len(f) < 2 {
		return false
	}
	switch f[1] {
	case "cp":
		return true
	case "exec":
		_, after, ok := strings.Cut(cmd, " -- ")
		return !ok || !strings.HasPrefix(strings.TrimSpace(after), "/e2atap ")
	}
	return false
}

func TestDistrolessBreaks(t *testing.T) {
	for cmd, want := range map[string]bool{
		"kubectl cp NS/POD:/var/lib/e2atap/records.jsonl records.jsonl -c e2atap":                 true,
		"kubectl exec -n NS POD -c e2atap -- sh -c 'cat /var/lib/e2atap/records.jsonl'":           true,
		"kubectl exec -n NS POD -c e2atap -- /e2atap validate /var/lib/e2atap/records.jsonl":      false,
		"kubectl exec -n NS POD -c agent -- ls -l /var/log/agent":                                 false,
		"kubectl exec -n NS POD -c e2atap-debug -- cat /proc/1/root/var/lib/e2atap/records.jsonl": false,
		"kubectl logs -n NS POD -c e2atap":                                                        false,
	} {
		if got := distrolessBreaks(cmd); got != want {
			t.Errorf("distrolessBreaks(%q) = %v, want %v", cmd, got, want)
		}
	}
}
