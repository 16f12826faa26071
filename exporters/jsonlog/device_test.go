package jsonlog

import (
	"testing"

	"github.com/e2atap/e2atap/validate"
)

// TestDeviceOutputsAreNotSynced: a findings log named by a device path
// (/dev/null here; /dev/stdout, a FIFO) takes its lines, and Sync and
// Close report no error: fsync of a device fails (EINVAL), and that was
// reported as the outputs' failure (e2atap run exited 1 at SIGTERM with
// "sync /dev/full: invalid argument") though no line was lost. A device
// that does not take a write (/dev/full) still fails and counts its lines.
func TestDeviceOutputsAreNotSynced(t *testing.T) {
	f := &validate.Finding{Rule: "e2a.seq_gap", Severity: validate.Error, Stream: "s", Message: "sequence 5 after 3: 4 missing"}
	fw, err := NewFindingWriter("/dev/null", NewRedactor(ContentMask, 65536, nil))
	if err != nil {
		t.Fatal(err)
	}
	fw.Finding(f)
	if err := fw.Sync(); err != nil {
		t.Errorf("Sync of /dev/null: %v", err)
	}
	if err := fw.Close(); err != nil || fw.Failed() != 0 {
		t.Errorf("Close of /dev/null: %v, %d lines failed", err, fw.Failed())
	}

	full, err := NewFindingWriter("/dev/full", NewRedactor(ContentMask, 65536, nil))
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	full.Finding(f)
	if err := full.Close(); err == nil || full.Failed() != 1 {
		t.Errorf("Close of /dev/full: %v, %d lines failed, want ENOSPC and 1", err, full.Failed())
	}
}
