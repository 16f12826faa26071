package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/internal/model"
)

// -model.seeds=N: seeds for TestModelBinary (a soak); 0 is the short
// default.
var modelSeeds = flag.Int("model.seeds", 0, "seeds for TestModelBinary (0: the short default)")

// TestModelBinary: the real process, `e2atap validate --output json` on
// generated captures (.jsonl under both profiles, .frames; one file, a
// rotated log in two, gzip-compressed, JSON lines and frames in one run),
// with 1, 2 and 4 shards, prints exactly the findings (rule, stream,
// source) of the independent model (internal/model), and exits 1 exactly
// when one is an error.
func TestModelBinary(t *testing.T) {
	seeds := 4
	if *modelSeeds > 0 {
		seeds = *modelSeeds
	}
	dir := t.TempDir()
	shardCounts := []int{1, 2, 4}
	for seed := 1; seed <= seeds; seed++ {
		shards := shardCounts[(seed-1)%len(shardCounts)]
		convs := 60 + seed%60
		if raceEnabled {
			convs = 40
		}
		for ki, kind := range []string{model.Jiuwenswarm, model.Spec, "frames"} {
			gc := model.Config{Seed: uint64(seed), Convs: convs, FaultRate: 0.1 + float64(seed%5)/10, Sessions: 1 + seed%4}
			if seed%2 == 1 {
				gc.Oversize = 0.02
			}
			profile := kind
			if kind == "frames" {
				profile = model.Jiuwenswarm
			}
			gc.Profile = profile
			base := filepath.Join(dir, fmt.Sprintf("cap-%d-%s", seed, kind))
			judge := model.NewJudge(profile)
			judge.MaxLine = model.OversizeLimit
			var files []string
			layout := (seed + ki) % 4
			var lines [][]byte
			var data []byte
			if kind == "frames" {
				if seed == 1 && !raceEnabled {
					gc.Convs = 5000 // over a MiB: several shards split the file
				}
				data = model.Frames(gc)
			} else {
				lines, data = model.Capture(gc)
			}
			switch {
			case layout == 1 && kind != "frames":
				// A rotated log: path.1, then path; streams go on
				// across the two.
				k := 1 + int(gc.Seed*7919)%(len(lines)-1)
				files = []string{base + ".jsonl.1", base + ".jsonl"}
				writeModelFile(t, files[0], append(bytes.Join(lines[:k], []byte("\n")), '\n'))
				writeModelFile(t, files[1], append(bytes.Join(lines[k:], []byte("\n")), '\n'))
				judge.Lines(files[0], lines[:k])
				judge.Lines(files[1], lines[k:])
			case layout == 2:
				// gzip-compressed: lines and offsets are those of the
				// decompressed bytes.
				var zb bytes.Buffer
				zw := gzip.NewWriter(&zb)
				zw.Write(data)
				zw.Close()
				files = []string{base + ".gz"}
				writeModelFile(t, files[0], zb.Bytes())
				if kind == "frames" {
					judge.Frames(files[0], data)
				} else {
					judge.Lines(files[0], lines)
				}
			case layout == 3 && kind == "frames":
				// JSON lines and a frame file in one run.
				jl, jd := model.Capture(model.Config{Seed: gc.Seed + 1000, Profile: profile, Convs: convs / 2, FaultRate: gc.FaultRate})
				files = []string{base + ".jsonl", base + ".frames"}
				writeModelFile(t, files[0], jd)
				writeModelFile(t, files[1], data)
				judge.Lines(files[0], jl)
				judge.Frames(files[1], data)
			default:
				files = []string{base + ".jsonl"}
				if kind == "frames" {
					files = []string{base + ".frames"}
					judge.Frames(files[0], data)
				} else {
					judge.Lines(files[0], lines)
				}
				writeModelFile(t, files[0], data)
			}
			want := judge.End(strings.Join(files, ","))
			if len(want.Ambiguous) > 0 {
				t.Fatalf("%s seed %d: the generator made a shape the contract leaves open: %q", kind, seed, want.Ambiguous)
			}
			args := []string{"validate", "--output", "json", "--profile", profile, "--shards", strconv.Itoa(shards), "--max-line-bytes", strconv.Itoa(model.OversizeLimit)}
			if seed%2 == 0 {
				// With a record log the shards keep input order at
				// interrupts (no split): the same findings.
				args = append(args, "--log", filepath.Join(dir, "records.log"))
			}
			cmd := exec.Command(plainE2atap(t), append(args, files...)...) // computes: main_test.go
			cmd.Env = append(os.Environ(), "E2ATAP_BE_MAIN=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			var got []model.Finding
			anyError := false
			sc := bufio.NewScanner(&stdout)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var f struct{ Rule, Severity, Stream, Source string }
				if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
					t.Fatalf("%s seed %d: a line of --output json that is not JSON: %q", kind, seed, sc.Text())
				}
				got = append(got, model.Finding{Rule: f.Rule, Stream: f.Stream, Source: f.Source})
				anyError = anyError || f.Severity == "error"
			}
			if d := model.Diff(got, want.Findings, "e2atap", nil); d != "" {
				t.Errorf("%s seed %d, --shards %d, %s: e2atap validate and the model disagree:\n%s", kind, seed, shards, strings.Join(files, " "), d)
			}
			if wantCode := map[bool]int{true: exitFindings, false: exitOK}[anyError]; code != wantCode {
				t.Errorf("%s seed %d: exit %d, want %d\n%s", kind, seed, code, wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), "records") {
				t.Errorf("%s seed %d: no summary on stderr: %s", kind, seed, stderr.String())
			}
		}
	}
}

func writeModelFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
