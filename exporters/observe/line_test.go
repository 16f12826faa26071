package observe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/e2atap/e2atap/validate"
)

// TestLineIsMarshal: the hand-written line is json.Marshal's, byte for
// byte, over strings with every kind of escape (controls, quotes, HTML,
// invalid UTF-8, U+2028), times and durations of every form.
func TestLineIsMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "request-42", `"`, `\`, "<", ">", "&", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f",
		"é", "中文", "\u2028", "\u2029", "\xff", "\xe2\x80", "😀", " ", "/", "******(fp:0123456789abcdef)"}
	str := func() string {
		var b strings.Builder
		for n := rng.IntN(6); n > 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	durations := []float64{0, 1, 2.5, 1e-7, 1.5e-9, 3e21, 123456.789, 1e20, 0.000001, -2}
	for i := 0; i < 20000; i++ {
		ev := Event{Type: []string{TypeFinding, TypeStream, TypeRecord, TypeLost}[i%4],
			Time: time.Unix(rng.Int64N(4e9), rng.Int64N(1e9)*int64(rng.IntN(2))).UTC(),
			Tap:  str(), Rule: str(), Severity: str(), Stream: str(), Source: str(), Message: str(), Outcome: str(),
			Protocol: str(), Reason: str(), Records: uint32(rng.IntN(3)), Duration: durations[rng.IntN(len(durations))],
			Gap: rng.IntN(2) == 0, Kind: str(), Status: str(), Lost: uint64(rng.IntN(3))}
		if i%7 == 0 {
			ev.Record = json.RawMessage(`{"request_id":"r","n":[1,2.5,null,true],"o":{}}`)
		}
		want, err := json.Marshal(&ev)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, '\n')
		if got := appendLine(nil, &ev); !bytes.Equal(got, want) {
			t.Fatalf("event %d:\n got %s\nwant %s", i, got, want)
		}
		if n := lineSize(&ev); n != len(want) {
			t.Fatalf("event %d: lineSize %d, line %d bytes: %s", i, n, len(want), want)
		}
	}
}

// FuzzLineSize: lineSize is the length of the line appendLine writes, and
// a finding or a stream outcome kept in the ring (compact) is rendered
// as the line it was published as, for any strings, time and numbers.
func FuzzLineSize(f *testing.F) {
	f.Add("t", "s", "m", int64(1774785600), int64(5000000), uint32(3), 1.5, true, uint64(0), int8(0))
	f.Add("a\u2028<&>", "\xff\x00\\\"", "é😀", int64(-62167219201), int64(1), uint32(0), 3e21, false, uint64(7), int8(2))
	f.Add("", "", "", int64(253402300800), int64(999999999), uint32(1<<31), 1e-7, false, uint64(1<<63), int8(-5))
	f.Fuzz(func(t *testing.T, a, b, c string, sec, nsec int64, records uint32, dur float64, gap bool, lost uint64, zone int8) {
		tm := time.Unix(sec, nsec).UTC()
		if zone != 0 {
			tm = tm.In(time.FixedZone("z", int(zone)*1800))
		}
		for _, typ := range []string{TypeFinding, TypeStream, TypeLost} {
			ev := Event{Type: typ, Time: tm, Tap: a, Stream: b, Message: c, Source: a + c, Lost: lost}
			if typ == TypeFinding {
				ev.Rule, ev.Severity = c, validate.Warning.String()
			} else {
				ev.Outcome, ev.Protocol, ev.Reason, ev.Records, ev.Duration, ev.Gap = validate.OutcomeFailed.String(), b, a, records, dur, gap
			}
			line := appendLine(nil, &ev)
			if n := lineSize(&ev); n != len(line) {
				t.Fatalf("lineSize %d, line %d bytes: %q", n, len(line), line)
			}
			if typ == TypeLost || zone != 0 || ev.Lost != 0 {
				continue // not kept; the hub keeps UTC times
			}
			ev.Source, ev.Message = "", ""
			if typ == TypeFinding {
				ev.Source, ev.Message = a+c, c
			}
			en := compact(&ev, validate.Warning, validate.OutcomeFailed, len(line))
			back := en.event()
			if got, want := appendLine(nil, &back), appendLine(nil, &ev); !bytes.Equal(got, want) {
				t.Fatalf("kept and rendered:\n got %s\nwant %s", got, want)
			}
		}
	})
}

// passThrough masks nothing (the common case: a stream key with no
// credential in it).
type passThrough struct{}

func (passThrough) MaskText(dst, s []byte) []byte { return append(dst, s...) }
func (passThrough) Redact(dst, rec []byte) ([]byte, []string, error) {
	return append(dst, rec...), nil, nil
}

// TestPublishingForNobodyAllocatesNothing: with no watcher, a stream
// outcome and a finding are kept without one allocation once the ring has
// grown (the cost the engine's shards pay for every stream).
func TestPublishingForNobodyAllocatesNothing(t *testing.T) {
	h := NewHub(passThrough{}, Options{RingEvents: 128})
	s := &validate.StreamInfo{Tap: "t", Key: "6f1c2a4e-1000-4b1e-9c3d-2f5a6b7c8d9e", Outcome: validate.OutcomeSucceeded,
		Protocol: validate.ProtoE2A, Start: t0, End: t0.Add(1500 * time.Millisecond), Records: 9}
	f := finding("e2a.seq_gap", validate.Error, "s", 0)
	for i := 0; i < 256; i++ {
		h.StreamEnd(s)
	}
	if raceEnabled {
		return // the race detector's sync.Pool drops buffers at random
	}
	if n := testing.AllocsPerRun(1000, func() { h.StreamEnd(s); h.Finding(f) }); n != 0 {
		t.Errorf("%.1f allocations per stream outcome and finding with nobody watching, want 0", n)
	}
}

// TestNothingUnredactedIsKept: what the ring holds has passed the
// Redactor, field by field, whether or not anyone watches.
func TestNothingUnredactedIsKept(t *testing.T) {
	h := NewHub(maskAll{}, DefaultOptions())
	h.Finding(&validate.Finding{Rule: "e2a.seq_gap", Severity: validate.Error, Stream: "q-SECRET", Source: "t:SECRET:1", Message: "token SECRET", Tap: "t", Time: t0})
	h.StreamEnd(&validate.StreamInfo{Tap: "t", Key: "SECRET-key", Outcome: validate.OutcomeSucceeded, Start: t0, End: t0.Add(time.Second)})
	h.StreamEnd(&validate.StreamInfo{Tap: "t", Key: "plain", Outcome: validate.OutcomeSucceeded})
	if h.n != 3 {
		t.Fatalf("kept %d events, want 3", h.n)
	}
	for i := 0; i < h.n; i++ {
		e := &h.ring[(h.head+i)%len(h.ring)]
		ev := e.event()
		if b, _ := json.Marshal(ev); strings.Contains(string(b), "SECRET") || strings.Contains(fmt.Sprintf("%+v", *e), "SECRET") {
			t.Errorf("kept unredacted: %s", b)
		}
		if e.size != len(appendLine(nil, &ev)) {
			t.Errorf("entry %d: size %d, line %d bytes", i, e.size, len(appendLine(nil, &ev)))
		}
	}
}

// TestRingGrowsAndKeepsOrder: the ring starts small and grows to
// RingEvents; eviction by bytes before it is full, then growth, keep the
// newest events oldest first and both bounds.
func TestRingGrowsAndKeepsOrder(t *testing.T) {
	h := NewHub(passThrough{}, Options{RingEvents: 300, RingBytes: 64 << 10, Now: func() time.Time { return t0 }})
	big := strings.Repeat("x", 20000)
	evictedSmall := false
	for i := 0; i < 1000; i++ {
		msg := "m"
		if i < 100 && i%9 == 0 {
			msg = big // pushes the oldest out by bytes while the ring is small
		}
		evictedSmall = evictedSmall || (h.head != 0 && len(h.ring) < 300)
		if i == 149 { // grown since the evictions, not yet full
			checkNewest(t, h, h.n)
		}
		h.Finding(&validate.Finding{Rule: "e2a.seq_gap", Severity: validate.Error, Stream: "s" + string(rune('0'+i%10)), Message: msg + "#" + strconv.Itoa(i), Tap: "t", Time: t0})
		if h.n > 300 || h.bytes > 64<<10 {
			t.Fatalf("after %d: %d events, %d bytes", i, h.n, h.bytes)
		}
	}
	if !evictedSmall {
		t.Fatal("the test did not evict by bytes before the ring grew")
	}
	checkNewest(t, h, 300)
}

// checkNewest: the backlog is the n newest events, oldest first (their
// messages end in #index, the last one's index is the hub's count - 1).
func checkNewest(t *testing.T, h *Hub, n int) {
	t.Helper()
	w, back := h.subscribe(Filter{}, 100000)
	h.unsubscribe(w)
	if len(back) != n {
		t.Fatalf("backlog of %d, want %d", len(back), n)
	}
	total, _, _ := h.Stats()
	for k, line := range back {
		var e Event
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatal(err)
		}
		if want := "#" + strconv.Itoa(int(total)-n+k); !strings.HasSuffix(e.Message, want) {
			t.Fatalf("backlog[%d] = %q, want the event %s (oldest first)", k, e.Message, want)
		}
	}
}
