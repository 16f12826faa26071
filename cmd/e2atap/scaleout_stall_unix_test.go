//go:build unix

package main

import (
	"bytes"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKafkaStalledSidecarReportsNothingTwice: an `e2atap run` stalled
// (SIGSTOP, as CPU throttling or a long pause stalls it) past its group
// session timeout loses its partitions: the group expired it, no commit
// is possible. Resumed, it joins again and is assigned them again, and
// reads again from the group's commit (none here: commit_interval 1h, so
// from the start). What it had emitted before the stall is judged for
// its streams' state only, not reported again: its findings equal a
// single uninterrupted instance's, none twice, none lost. Before, every
// finding of the first half was reported twice (seen in CI as "215
// reported twice" when a loaded machine stalled a replica).
func TestKafkaStalledSidecarReportsNothingTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	h := newKafkaHarness(t)
	recs, planted, streams := kafkaTraffic(t, h.topic, 400)
	single := h.start("single", "e2atap-single", false, 0)
	stalled := h.configure("stalled", "e2atap-stalled", false, 0, "1h")
	cmd, stderr := startProcessArgs(t, stalled.config)
	listen, findings := stalled.listen, stalled.findings
	waitReady(t, single.listen)
	waitReady(t, listen)

	half := len(recs) / 2
	h.produce(recs[:half])
	pollUntil(t, "the stalled-to-be instance to judge the first half", 60*time.Second, func() bool {
		return recordsJudged(scrapeQuiet(listen), "mesh") >= float64(half)
	})
	cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(4 * time.Second) // the stall: four session timeouts
	cmd.Process.Signal(syscall.SIGCONT)
	pollUntil(t, "the resumed instance to log its partitions lost", 60*time.Second, func() bool {
		return strings.Contains(stderr.String(), `"msg":"kafka partitions lost`)
	})
	h.produce(recs[half:])

	pollUntil(t, "the single instance to judge every record", 60*time.Second, func() bool {
		return recordsJudged(scrapeQuiet(single.listen), "mesh") == float64(len(recs))
	})
	stopProcess(t, single.cmd)
	want := findingSet(t, single.findings)
	pollUntil(t, "the resumed instance to find what the single one found", 60*time.Second, func() bool {
		got := findingSet(t, findings)
		for k := range want {
			if !got[k] {
				return false
			}
		}
		return true
	})
	time.Sleep(time.Second) // a finding reported twice would be written by now
	stopProcess(t, cmd)

	got := findingSet(t, findings)
	b, err := os.ReadFile(findings)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte{'\n'}); n != len(got) {
		t.Errorf("%d findings for %d distinct (rule, stream): %d reported twice after the stall", n, len(got), n-len(got))
	}
	for k := range got {
		if !want[k] {
			t.Errorf("false finding after the stall: %s", k)
		}
	}
	if len(want) < len(planted) {
		t.Errorf("the single instance found %d of %d planted violations", len(want), len(planted))
	}
	reread := rereadSkipped(stderr)
	if reread == 0 {
		t.Error("the resumed run recognised no record read again: the silent path was not taken")
	}
	if !t.Failed() {
		t.Logf("%d records, %d streams, %d planted; after the stall %.0f records were read again silently; all %d findings, none twice",
			len(recs), streams, len(planted), reread, len(want))
	}
}
