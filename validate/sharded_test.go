package validate

import (
	"bytes"
	"sort"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/internal/gen"
)

// TestShardedMatchesEngine: a sharded run gives exactly the findings of a
// single engine on generated traffic with every fault, interrupts
// included (they must reach every shard).
func TestShardedMatchesEngine(t *testing.T) {
	cfg := gen.DefaultConfig()
	cfg.Seed, cfg.FaultRate, cfg.InterruptRate = 3, 0.2, 0.1
	g := gen.New(cfg)
	var buf bytes.Buffer
	for i := 0; i < 20000; i++ {
		buf.Write(g.Next().Data)
		buf.WriteByte('\n')
	}
	run := func(h Handler, finish func()) {
		if _, err := Read(bytes.NewReader(buf.Bytes()), "cap", FormatJSONL, ReadOptions{FromLog: true}, h); err != nil {
			t.Fatal(err)
		}
		finish()
	}
	vc := DefaultConfig()
	vc.IdleTimeout = 0
	one := &collector{}
	e := NewEngine(vc, one)
	run(e, func() { e.Finish(ReasonEOF, &Input{}) })
	for _, shards := range []int{2, 5} {
		many := &collector{}
		s := NewSharded(shards, vc, many)
		run(s, func() { s.Finish(ReasonEOF, &Input{}) })
		a, b := summarize(one.findings), summarize(many.findings)
		if a != b {
			t.Errorf("%d shards: findings differ\n one: %s\nmany: %s", shards, a, b)
		}
	}
	if len(one.findings) == 0 {
		t.Fatal("generated traffic with faults gave no finding")
	}
}

func summarize(fs []Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Rule+"@"+f.Stream+"@"+jsonNum(int(f.Index)))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
