package positions

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func entries(n int, tag int64) []Entry {
	es := make([]Entry, n)
	for i := range es {
		es[i] = Entry{Path: fmt.Sprintf("/var/log/agent/%d.jsonl", i), Dev: 1, Inode: uint64(i), FingerprintLen: 1024,
			Fingerprint: Sum([]byte{byte(i)}), Offset: tag, Line: tag, Seen: time.Unix(1700000000, 0).UTC()}
	}
	return es
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "positions.json")
	if es, exists, err := Load(path); err != nil || exists || es != nil {
		t.Fatalf("missing file: %v %v %v", es, exists, err)
	}
	want := entries(3, 42)
	if err := Save(path, want); err != nil {
		t.Fatal(err)
	}
	got, exists, err := Load(path)
	if err != nil || !exists {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCorrupt(t *testing.T) {
	for name, content := range map[string]string{
		"truncated": `{"version":1,"files":[{"pa`,
		"version":   `{"version":9,"files":[]}`,
		"unknown":   `{"version":1,"files":[],"extra":1}`,
		"trailing":  `{"version":1,"files":[]} {}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "positions.json")
			os.WriteFile(path, []byte(content), 0o644)
			if _, _, err := Load(path); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Load = %v, want ErrCorrupt", err)
			}
		})
	}
}

// (7) A reader racing the writer never sees a partial or mixed file: each
// read is a whole old or a whole new version. And no temporary file stays.
func TestSaveIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "positions.json")
	if err := Save(path, entries(1, 0)); err != nil {
		t.Fatal(err)
	}
	const saves = 60
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for i := 1; i <= saves; i++ {
			n := 1
			if i%2 == 0 {
				n = 400 // sizes alternate, so a partial write would show
			}
			if err := Save(path, entries(n, int64(i))); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	reads, last := 0, int64(-1)
	for {
		select {
		case <-done:
			wg.Wait()
			if reads < 10 {
				t.Errorf("only %d reads raced the writer", reads)
			}
			left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
			if len(left) != 0 {
				t.Errorf("temporary files left: %v", left)
			}
			t.Logf("%d reads, all whole", reads)
			return
		default:
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("read %d: %v", reads, err)
		}
		es, err := Decode(b)
		if err != nil {
			t.Fatalf("read %d saw a partial file: %v", reads, err)
		}
		tag := es[0].Offset
		wantN := 1
		if tag%2 == 0 && tag != 0 {
			wantN = 400
		}
		if len(es) != wantN || tag < last {
			t.Fatalf("read %d: %d entries with tag %d after tag %d", reads, len(es), tag, last)
		}
		for _, e := range es {
			if e.Offset != tag {
				t.Fatalf("read %d mixes versions %d and %d", reads, tag, e.Offset)
			}
		}
		last = tag
		reads++
	}
}

func TestSaveFailsCleanly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing-dir", "positions.json")
	if err := Save(path, entries(1, 1)); err == nil {
		t.Fatal("Save into a missing directory succeeded")
	}
}

// A corrupt file moved aside keeps its content; only the newest keep are
// kept, and the names sort by time.
func TestMoveAside(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "positions.json")
	var names []string
	for i := range 5 {
		os.WriteFile(path, []byte(fmt.Sprint("corrupt ", i)), 0o644)
		aside, err := MoveAside(path, time.Unix(1700000000, 0), 3) // the same second every time
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(aside); string(b) != fmt.Sprint("corrupt ", i) {
			t.Fatalf("%s holds %q", aside, b)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("the corrupt file is still in place")
		}
		names = append(names, aside)
	}
	left, _ := filepath.Glob(path + ".corrupt-*")
	if diff := cmp.Diff(names[2:], left); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
}
