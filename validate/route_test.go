package validate

import (
	"strings"
	"testing"

	"github.com/e2atap/e2atap/internal/gen"
)

// TestQuickRouteOnGeneratedTraffic: generated records, faults and
// interrupts included, and the shapes a Python producer writes (non-ASCII
// escaped by ensure_ascii, an escaped request_id) route as ScanHead routes
// them, and all but the few that need it take the short way.
func TestQuickRouteOnGeneratedTraffic(t *testing.T) {
	cfg := gen.DefaultConfig()
	cfg.Seed, cfg.FaultRate, cfg.InterruptRate = 11, 0.2, 0.05
	g := gen.New(cfg)
	quick, n := 0, 0
	for i := 0; i < 5000; i++ {
		line := g.Next().Data
		for _, d := range [][]byte{
			line,
			[]byte(strings.Replace(string(line), `"delta": "`, `"delta": "\u4f60\u597d\u00e9 `, 1)),
			[]byte(strings.Replace(string(line), `"request_id": "req-`, `"request_id": "\"\u00e9\"req-`, 1)),
		} {
			n++
			checkQuickRoute(t, d)
			if _, ok := quickRoute(d); ok {
				quick++
			}
		}
	}
	if quick < n*9/10 {
		t.Errorf("%d of %d records took the short way, want most", quick, n)
	}
}
