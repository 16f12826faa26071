package observe

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/e2atap/e2atap/validate"
)

// maskAll is a Redactor that replaces every "SECRET" by a mark, so that
// tests can check every field passes it.
type maskAll struct{}

func (maskAll) MaskText(dst, s []byte) []byte {
	return append(dst, strings.ReplaceAll(string(s), "SECRET", "******")...)
}
func (maskAll) Redact(dst, rec []byte) ([]byte, []string, error) {
	return append(dst, strings.ReplaceAll(string(rec), "SECRET", "******")...), nil, nil
}

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func finding(rule string, sev validate.Severity, stream string, at time.Duration) *validate.Finding {
	return &validate.Finding{Rule: rule, Severity: sev, Stream: stream, Source: "t:f:1", Message: "msg " + stream, Tap: "t", Time: t0.Add(at)}
}

func TestRingIsBounded(t *testing.T) {
	h := NewHub(maskAll{}, Options{RingEvents: 3, RingBytes: 1 << 20, Now: func() time.Time { return t0 }})
	for i := 0; i < 10; i++ {
		h.Finding(finding("e2a.seq_gap", validate.Error, string(rune('a'+i)), time.Duration(i)*time.Second))
	}
	_, back := h.subscribe(Filter{}, 100)
	if len(back) != 3 {
		t.Fatalf("kept %d events, want 3", len(back))
	}
	if !strings.Contains(string(back[0]), `"stream":"h"`) || !strings.Contains(string(back[2]), `"stream":"j"`) {
		t.Errorf("the ring did not keep the newest, oldest first: %s", back)
	}
	hb := NewHub(maskAll{}, Options{RingEvents: 100, RingBytes: 600})
	for i := 0; i < 50; i++ {
		hb.Finding(finding("e2a.seq_gap", validate.Error, "s", 0))
	}
	if hb.bytes > 600 || hb.n == 0 {
		t.Errorf("ring holds %d bytes in %d events, bound 600", hb.bytes, hb.n)
	}
}

func TestFiltersAndRedaction(t *testing.T) {
	h := NewHub(maskAll{}, DefaultOptions())
	h.Finding(finding("e2a.seq_gap", validate.Error, "q-SECRET", 0))
	h.Finding(finding("e2a.legacy", validate.Info, "q2", time.Second))
	h.StreamEnd(&validate.StreamInfo{Tap: "t", Key: "q3", Outcome: validate.OutcomeSucceeded, Start: t0, End: t0.Add(2 * time.Second), Records: 4})
	get := func(q string) []Event {
		f, last, _, err := ParseQuery(func(k string) string {
			for _, kv := range strings.Split(q, "&") {
				if a, b, ok := strings.Cut(kv, "="); ok && a == k {
					return b
				}
			}
			return ""
		}, t0.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		w, back := h.subscribe(f, last)
		h.unsubscribe(w)
		var out []Event
		for _, l := range back {
			var e Event
			if err := json.Unmarshal(l, &e); err != nil {
				t.Fatal(err)
			}
			out = append(out, e)
		}
		return out
	}
	if ev := get("last=10"); len(ev) != 3 {
		t.Errorf("no filter: %d events, want 3", len(ev))
	}
	ev := get("last=10&severity=warning")
	if len(ev) != 1 || ev[0].Rule != "e2a.seq_gap" {
		t.Errorf("severity=warning: %+v", ev)
	}
	if strings.Contains(ev[0].Stream+ev[0].Message, "SECRET") {
		t.Errorf("an event was not redacted: %+v", ev[0])
	}
	if ev := get("last=10&rule=e2a.legacy"); len(ev) != 1 || ev[0].Rule != "e2a.legacy" {
		t.Errorf("rule filter: %+v", ev)
	}
	if ev := get("last=10&types=stream"); len(ev) != 1 || ev[0].Outcome != "succeeded" || ev[0].Duration != 2 {
		t.Errorf("types=stream: %+v", ev)
	}
	if ev := get("last=10&tap=other"); len(ev) != 0 {
		t.Errorf("tap=other: %+v", ev)
	}
	if ev := get("last=10&stream=q2"); len(ev) != 1 || ev[0].Stream != "q2" {
		t.Errorf("stream=q2: %+v", ev)
	}
	// since: 1h before t0+1h is t0: all three are at or after it.
	if ev := get("since=59m59s"); len(ev) != 2 {
		t.Errorf("since=59m59s: %d events, want the two after t0", len(ev))
	}
	if _, _, _, err := ParseQuery(func(k string) string {
		if k == "severity" {
			return "loud"
		}
		return ""
	}, t0); err == nil || !strings.Contains(err.Error(), "loud") {
		t.Errorf("a bad severity was accepted: %v", err)
	}
}

// TestSlowWatcherLosesAndIsTold: a watcher that does not read never
// blocks the publisher; when it reads again it is told how many it lost.
func TestSlowWatcherLosesAndIsTold(t *testing.T) {
	h := NewHub(maskAll{}, Options{QueueEvents: 8})
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"?follow=1", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// Publish far more than the queue and the socket buffers hold, with no
	// reader: every call must return at once.
	done := make(chan struct{})
	go func() {
		long := strings.Repeat("x", 4000)
		for i := 0; i < 20000; i++ {
			h.Finding(&validate.Finding{Rule: "e2a.seq_gap", Severity: validate.Error, Stream: "s", Message: long})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("publishing blocked on a watcher that does not read")
	}
	_, lost, watchers := h.Stats()
	if lost == 0 || watchers != 1 {
		t.Fatalf("lost %d with %d watchers; the slow watcher should have lost events", lost, watchers)
	}
	// Reading again: the lost count arrives with the next event.
	h.Finding(finding("e2a.after_final", validate.Error, "last", 0))
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	var told uint64
	deadline := time.After(30 * time.Second)
	for told == 0 {
		select {
		case <-deadline:
			t.Fatal("the watcher was never told what it lost")
		default:
		}
		if !sc.Scan() {
			t.Fatalf("stream ended: %v", sc.Err())
		}
		var e Event
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == TypeLost {
			told = e.Lost
		}
	}
	if told == 0 || told > lost {
		t.Errorf("told %d lost, hub counted %d", told, lost)
	}
}

func TestRecordsOnlyWhileAsked(t *testing.T) {
	h := NewHub(maskAll{}, DefaultOptions())
	in := &validate.Input{Tap: "t", Time: t0, Data: []byte(`{"request_id":"SECRET","sequence":0}`)}
	h.Record(&validate.RecordInfo{In: in, Kind: "e2a.chunk", Status: "in_progress", Stream: []byte("SECRET")})
	if ev, _, _ := h.Stats(); ev != 0 {
		t.Fatalf("a record was encoded with nobody asking (%d events)", ev)
	}
	w, _ := h.subscribe(Filter{Types: map[string]bool{TypeRecord: true}}, 0)
	defer h.unsubscribe(w)
	h.Record(&validate.RecordInfo{In: in, Kind: "e2a.chunk", Status: "in_progress", Stream: []byte("SECRET")})
	select {
	case line := <-w.ch:
		if strings.Contains(string(line), "SECRET") || !strings.Contains(string(line), `"record":{`) {
			t.Errorf("record event: %s", line)
		}
	default:
		t.Fatal("no record event for a watcher that asked")
	}
}

// TestFindingSourceNum: the number at a finding's source's end is kept as
// it is; the text before it goes through the redactor.
func TestFindingSourceNum(t *testing.T) {
	h := NewHub(phoneMask{}, DefaultOptions())
	f := finding("e2a.seq_gap", validate.Error, "q1", 0)
	f.Source, f.SourceNum = "t:SECRET/3/12345678901", 11
	h.Finding(f)
	w, back := h.subscribe(Filter{}, 10)
	h.unsubscribe(w)
	if len(back) != 1 {
		t.Fatalf("%d events", len(back))
	}
	var e Event
	if err := json.Unmarshal(back[0], &e); err != nil {
		t.Fatal(err)
	}
	if e.Source != "t:******/3/12345678901" {
		t.Errorf("source %q", e.Source)
	}
}

// phoneMask masks "SECRET" and eleven-digit numbers, as a phone number.
type phoneMask struct{}

func (phoneMask) MaskText(dst, s []byte) []byte {
	return append(dst, strings.ReplaceAll(strings.ReplaceAll(string(s), "SECRET", "******"), "12345678901", "******")...)
}
func (phoneMask) Redact(dst, rec []byte) ([]byte, []string, error) {
	return append(dst, rec...), nil, nil
}
