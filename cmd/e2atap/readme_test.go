package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeCommands returns the e2atap commands of the README's sh blocks.
func readmeCommands(t *testing.T) (cmds [][]string, yamlBlock string) {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	inSh, inYAML := false, false
	var y strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "```sh":
			inSh = true
		case line == "```yaml" && yamlBlock == "" && y.Len() == 0:
			inYAML = true
		case line == "```":
			if inYAML {
				yamlBlock = y.String()
			}
			inSh, inYAML = false, false
		case inYAML:
			y.WriteString(line + "\n")
		case inSh && strings.HasPrefix(line, "e2atap "):
			if i := strings.Index(line, " #"); i >= 0 {
				line = line[:i]
			}
			cmds = append(cmds, strings.Fields(line)[1:])
		}
	}
	return cmds, yamlBlock
}

// TestReadmeCommands runs every e2atap command the README shows, from the
// repository root, so that the README cannot go stale. `demo` runs for a
// bounded time by the whole-system test instead.
func TestReadmeCommands(t *testing.T) {
	cmds, _ := readmeCommands(t)
	if len(cmds) < 8 {
		t.Fatalf("found %d commands in the README; the parser is broken", len(cmds))
	}
	wd, _ := os.Getwd()
	root, _ := filepath.Abs("../..")
	if err := os.Chdir(root); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	tmp := t.TempDir()
	for _, args := range cmds {
		if args[0] == "demo" || args[0] == "observe" {
			continue // need a running sidecar: TestObserveARunningSidecar, the demo test
		}
		for i, a := range args {
			args[i] = strings.ReplaceAll(a, "/tmp/", tmp+"/")
		}
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
			if code == exitUsage {
				t.Fatalf("exit %d (usage or I/O error)\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
			}
			if out.Len()+errb.Len() == 0 {
				t.Fatal("printed nothing")
			}
		})
	}
}

// TestReadmeConfig: the README's configuration is the example file, and it
// is valid.
func TestReadmeConfig(t *testing.T) {
	_, y := readmeCommands(t)
	file, err := os.ReadFile("../../docs/e2atap.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if y != string(file) {
		t.Fatal("the README's yaml block differs from docs/e2atap.example.yaml: keep them the same")
	}
	cfg, err := ParseConfig(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Taps) != 4 {
		t.Fatalf("%d taps, want the 4 kinds", len(cfg.Taps))
	}
}

var timing = regexp.MustCompile(`in [0-9.]+[µmn]?s \([0-9]+ records/s\)`)

// TestDocsMatchContract: docs/rules.md and docs/design.md are the team's
// contract documents, shipped with the code; they stay identical to the
// shared copies when those are beside the repository.
func TestDocsMatchContract(t *testing.T) {
	for doc, shared := range map[string]string{"../../docs/rules.md": "../../../shared/RULES.md", "../../docs/design.md": "../../../shared/DESIGN.md"} {
		mine, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := os.ReadFile(shared)
		if err != nil {
			t.Logf("%s not beside the repository: nothing to compare", shared)
			continue
		}
		if !bytes.Equal(mine, theirs) {
			t.Errorf("%s differs from %s: copy it again", doc, shared)
		}
	}
}
