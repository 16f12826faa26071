package main

import (
	"path/filepath"
	"testing"

	"github.com/e2atap/e2atap/internal/secretaudit"
)

// The independent corpus (testdata/independent: credential shapes the
// audit corpus's gen.py did not have, written from the providers'
// documented formats) through the same outputs of the real binary as the
// audit corpus: validate (JSON findings, its record log with content
// kept, values split across two chunks included), decode --show-content,
// and run with a logdir tap (record log, findings log, debug log lines).
// A shape this corpus found printed as is was fixed in redact; what is
// still not detected is listed in its gen.py and left out.

func loadIndependent(t *testing.T) []secretaudit.Family {
	t.Helper()
	fams, err := secretaudit.Load(filepath.Join("testdata", "independent", "families.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fams) < 50 {
		t.Fatalf("only %d families in the independent corpus", len(fams))
	}
	return fams
}

// TestIndependentOffline: no core of the independent corpus shows in
// validate's findings, its record log, or decode --show-content.
func TestIndependentOffline(t *testing.T) {
	fams := loadIndependent(t)
	_, whole, _ := auditValidate(t, fams)
	stdout, stderr, _ := corpusProcess(t, nil, nil, "decode", "--show-content", whole)
	auditCheck(t, fams, "decode --show-content stdout", stdout)
	auditCheck(t, fams, "decode --show-content stderr", append(stderr, ' '))
}

// TestIndependentRun: the logdir tap of e2atap run reads the independent
// corpus; its record log, findings log and debug log lines show no core.
func TestIndependentRun(t *testing.T) { auditRun(t, loadIndependent(t)) }
