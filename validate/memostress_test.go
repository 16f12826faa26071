package validate

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
)

// TestMemosUnderConcurrentShards: the process-wide lock-free memos the
// shards share (e2a's key kinds, redact's plain key runs, each a table of
// two-way sets of atomically swapped immutable entries) give every shard
// the verdicts one shard gives alone, while several runs of four shards
// judge at once records whose keys come from a pool ten times the memos'
// sets (every store evicts; hot keys collide with cold ones), credential
// keys and values among them, and stream keys spelt with and without
// escapes. Run under -race (make test does): a torn entry or an answer
// for other bytes would be a finding that differs, or a race report.
func TestMemosUnderConcurrentShards(t *testing.T) {
	records := 6000
	if raceEnabled {
		records = 2000
	}
	data := memoCorpus(records)
	p := writeTemp(t, "memo.jsonl", data)
	vc := DefaultConfig()
	vc.IdleTimeout = 0
	opts := ReadOptions{FromLog: true}
	want := renderRun(vc, opts, oneShard, p)
	if n := strings.Count(want, " e2a.secret "); n < records/10 {
		t.Fatalf("the corpus gave %d e2a.secret findings: too few to test the credential verdicts:\n%.2000s", n, want)
	}
	if strings.Contains(want, "e2a.missing_final") || strings.Contains(want, "e2a.seq_") {
		t.Fatalf("escaped and plain spellings of a stream key are not one stream:\n%.2000s", want)
	}
	// Each run reads the file its own way; the runs at once share the
	// memos.
	variants := []walkVariant{
		{shards: 4, inline: true},
		{shards: 4, noWalk: true},
		{shards: 3, ordered: true, inline: true},
		{shards: 4, plain: true},
	}
	got := make([]string, len(variants))
	var wg sync.WaitGroup
	for i, v := range variants {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = renderRun(vc, opts, v, p)
		}()
	}
	wg.Wait()

	for i, v := range variants {
		if got[i] != want {
			t.Errorf("%s differs from one shard: %s", v, firstDiff(want, got[i]))
		}
	}
}

// renderRun is runCaptures' rendering of findings and counters, for
// runs on several goroutines at once (no testing.T, no shared counters).
func renderRun(vc Config, opts ReadOptions, v walkVariant, path string) string {
	col := &collector{}
	s := NewSharded(v.shards, vc, col)
	s.noWalk = v.noWalk
	if !v.ordered {
		s.Unordered()
	}
	if v.inline {
		s.Inline()
	}
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var r io.Reader = f
	if v.plain {
		r = struct{ io.Reader }{f}
	}
	last, err := Read(r, "memo.jsonl", FormatAuto, opts, s)
	s.Finish(ReasonEOF, &Input{Pos: Position{Name: "cap"}})
	var out strings.Builder
	fmt.Fprintf(&out, "last %d, err %v\n", last, err)
	fs := append([]Finding(nil), col.findings...)
	sort.SliceStable(fs, func(i, j int) bool { return FindingBefore(&fs[i], &fs[j]) })
	for _, f := range fs {
		fmt.Fprintf(&out, "%d %s %s [%s] %s: %s\n", f.Index, f.Source, f.Rule, f.Stream, f.Severity, f.Message)
	}
	st := s.Stats()
	fmt.Fprintf(&out, "records %d findings %v outcomes %v\n", st.Records, st.Findings, st.Outcomes)
	return out.String()
}

// memoCorpus is records of streams of three records each, interleaved,
// each record with a dozen keys from a pool of 20000 (a tenth credential
// keys, some with a credential value) and a delta that lists some of
// them as "key: value" text.
func memoCorpus(records int) []byte {
	rng := rand.New(rand.NewPCG(18, 18))
	key := func() string {
		k := rng.IntN(20000)
		switch k % 10 {
		case 0:
			return fmt.Sprintf("svc%d_password", k)
		case 1:
			return fmt.Sprintf("x_api_key_%d", k)
		default:
			return fmt.Sprintf("field_%d_%s", k, strings.Repeat("n", k%23))
		}
	}
	value := func() string {
		switch rng.IntN(8) {
		case 0:
			return fmt.Sprintf("sk-proj-%016x%016x", rng.Uint64(), rng.Uint64())
		case 1:
			return fmt.Sprintf("Zq8%016xLp7", rng.Uint64())
		default:
			return fmt.Sprintf("value %d", rng.IntN(1000))
		}
	}
	var b strings.Builder
	streams := records / 3
	for seq := 0; seq < 3; seq++ {
		for s := 0; s < streams; s++ {
			id := fmt.Sprintf("st-%d", s)
			if (s+seq)%2 == 1 {
				id = fmt.Sprintf(`\u0073t-%d`, s) // the same key, escaped
			}
			var meta, delta []string
			for range 12 {
				k, v := key(), value()
				meta = append(meta, fmt.Sprintf("%q:%q", k, v))
				if rng.IntN(4) == 0 {
					delta = append(delta, k+": "+v)
				}
			}
			kind, status, final, body := "e2a.chunk", "in_progress", false, fmt.Sprintf(`{"delta_kind":"text","delta":%q}`, strings.Join(delta, "\n"))
			if seq == 2 {
				kind, status, final, body = "e2a.complete", "succeeded", true, `{"result":{}}`
			}
			fmt.Fprintf(&b, `{"protocol_version":"1.0","response_id":"r%d-%d","request_id":"%s","sequence":%d,"is_final":%t,"status":%q,"response_kind":%q,"timestamp":"2026-03-29T12:00:00Z","provenance":{},"metadata":{%s},"body":%s}`+"\n",
				s, seq, id, seq, final, status, kind, strings.Join(meta, ","), body)
		}
	}
	return []byte(b.String())
}
