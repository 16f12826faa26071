package validate

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/frame"
)

// quietCollector is a collector whose sink says it ignores the streams
// (StreamsIgnorer): it must then hear of none.
type quietCollector struct {
	collector
	t *testing.T
}

func (q *quietCollector) StreamStart(*StreamInfo) {
	q.t.Error("StreamStart on a sink that ignores the streams")
}
func (q *quietCollector) StreamEnd(*StreamInfo) {
	q.t.Error("StreamEnd on a sink that ignores the streams")
}
func (q *quietCollector) StreamsIgnored() bool { return true }

// TestStreamsIgnoredSameVerdicts: an engine whose sink ignores the
// streams (no StreamInfo built) reports the same findings, records and
// counters as one whose sink keeps them, on JSON lines (evictions,
// missing finals, decode errors, silent inputs) and frames; a MultiSink
// ignores the streams only when all of its sinks do.
func TestStreamsIgnoredSameVerdicts(t *testing.T) {
	vc := smallPartitions(t, 512)
	corpora := map[string][]byte{
		"json":   walkJSONCorpus(61, 6000, 700, 4096, allOdds),
		"frames": walkFrameCorpus(62, 12000, 700, true),
	}
	for name, data := range corpora {
		run := func(sink Sink, silentEvery int) *Stats {
			e := NewEngine(vc, sink)
			var n int
			h := handlerFunc{e: e, each: func(in *Input) {
				n++
				in.Silent = silentEvery > 0 && n%silentEvery == 0
			}}
			if _, err := Read(bytes.NewReader(data), name, FormatAuto, ReadOptions{MaxLineBytes: 4096, FromLog: true}, h); err != nil {
				t.Fatal(err)
			}
			e.Finish(ReasonEOF, &Input{Pos: Position{Name: name}})
			return e.Stats()
		}
		for _, silent := range []int{0, 7} {
			keep := &collector{}
			ks := run(keep, silent)
			quiet := &quietCollector{t: t}
			qs := run(quiet, silent)
			if len(keep.ends) == 0 || len(keep.findings) == 0 {
				t.Fatalf("%s: the corpus ends no stream (%d) or finds nothing (%d)", name, len(keep.ends), len(keep.findings))
			}
			if name == "json" && !strings.Contains(renderFindings(keep), "e2a.missing_final") {
				t.Fatalf("%s: no missing_final", name)
			}
			if got, want := renderFindings(&quiet.collector), renderFindings(keep); got != want {
				t.Errorf("%s, silent %d: findings differ when the streams are ignored: %s", name, silent, firstDiff(want, got))
			}
			if strings.Join(quiet.records, ",") != strings.Join(keep.records, ",") {
				t.Errorf("%s, silent %d: records differ", name, silent)
			}
			if fmt.Sprint(qs) != fmt.Sprint(ks) {
				t.Errorf("%s, silent %d: stats differ:\n%v\n%v", name, silent, qs, ks)
			}
		}
	}
	q := &quietCollector{t: t}
	if !(MultiSink{q, q}).StreamsIgnored() || (MultiSink{q, &collector{}}).StreamsIgnored() {
		t.Error("MultiSink.StreamsIgnored is not the and of its sinks'")
	}
}

// handlerFunc passes every input to e after each has looked at it.
type handlerFunc struct {
	e    *Engine
	each func(*Input)
}

func (h handlerFunc) Observe(in *Input) {
	h.each(in)
	h.e.Observe(in)
}

func (h handlerFunc) ObserveFrame(in *Input, f *frame.Frame) {
	h.each(in)
	h.e.ObserveFrame(in, f)
}

func (h handlerFunc) DecodeError(in *Input, proto, msg string) { h.e.DecodeError(in, proto, msg) }

// TestStreamInfoKeys: a StreamInfo names its stream by the id as it was
// sent, whatever encoding the table keeps it in (a packed UUID, hex,
// base64url, kept as it is), and its tap.
func TestStreamInfoKeys(t *testing.T) {
	ids := []string{
		"0f8fad5b-d9cb-469f-a165-70867728950e", "0F8FAD5B-D9CB-469F-A165-70867728950E",
		"agent:0f8fad5b-d9cb-469f-a165-70867728950e", "deadbeefdeadbeefdeadbeefdeadbeef0",
		"DEADBEEF00", "AbC_-9xyzAbC_-9xyzAbC_-9xyzAbC_-9xy", "plain id with spaces", "r",
	}
	for _, tap := range []string{"", "ws-in"} {
		col := &collector{}
		e := NewEngine(DefaultConfig(), col)
		for _, id := range ids {
			line := fmt.Sprintf(`{"request_id":%q,"sequence":0,"is_final":true,"status":"succeeded","response_kind":"e2a.complete"}`, id)
			e.Observe(&Input{Tap: tap, Data: []byte(line)})
		}
		e.Finish(ReasonEOF, &Input{})
		var got []string
		for _, s := range col.ends {
			if s.Tap != tap {
				t.Errorf("tap %q: a stream end names tap %q", tap, s.Tap)
			}
			got = append(got, s.Key)
		}
		if strings.Join(got, "\n") != strings.Join(ids, "\n") {
			t.Errorf("tap %q: stream keys\n%s\nwant\n%s", tap, strings.Join(got, "\n"), strings.Join(ids, "\n"))
		}
	}
}

// blindCollector is a collector whose sink says it ignores the records
// (RecordsIgnorer): it counts those it is handed all the same, by kind.
type blindCollector struct {
	collector
	handed map[string]int
}

func (b *blindCollector) Record(r *RecordInfo) { b.handed[r.Kind]++ }
func (b *blindCollector) RecordsIgnored() bool { return true }

// TestRecordsIgnoredSameVerdicts: an engine whose sink ignores the
// records reports the same findings, streams and counters as one whose
// sink keeps them, on frames (every frame rule, cached sections and not)
// and JSON lines, silent inputs among them; it hands it no frame's record
// (only the decode errors', which the JSON path shares, as it shares the
// rest of its records yet); a MultiSink ignores the records only when all
// of its sinks do.
func TestRecordsIgnoredSameVerdicts(t *testing.T) {
	vc := smallPartitions(t, 512)
	corpora := map[string][]byte{
		"json":   walkJSONCorpus(63, 6000, 700, 4096, allOdds),
		"frames": walkFrameCorpus(64, 12000, 700, true),
	}
	for name, data := range corpora {
		run := func(sink Sink, silentEvery int) *Stats {
			e := NewEngine(vc, sink)
			var n int
			h := handlerFunc{e: e, each: func(in *Input) {
				n++
				in.Silent = silentEvery > 0 && n%silentEvery == 0
			}}
			if _, err := Read(bytes.NewReader(data), name, FormatAuto, ReadOptions{MaxLineBytes: 4096, FromLog: true}, h); err != nil {
				t.Fatal(err)
			}
			e.Finish(ReasonEOF, &Input{Pos: Position{Name: name}})
			return e.Stats()
		}
		for _, silent := range []int{0, 7} {
			keep := &collector{}
			ks := run(keep, silent)
			blind := &blindCollector{handed: map[string]int{}}
			bs := run(blind, silent)
			if name == "frames" {
				invalid := 0
				for _, r := range keep.records {
					if strings.HasPrefix(r, "invalid/") {
						invalid++
					}
				}
				if len(blind.handed) > 1 || blind.handed["invalid"] != invalid {
					t.Errorf("frames, silent %d: records handed to a sink that ignores them: %v (decode errors: %d)", silent, blind.handed, invalid)
				}
			}
			if len(keep.records) == 0 || len(keep.findings) == 0 {
				t.Fatalf("%s: the corpus has no record (%d) or finds nothing (%d)", name, len(keep.records), len(keep.findings))
			}
			if got, want := renderFindings(&blind.collector), renderFindings(keep); got != want {
				t.Errorf("%s, silent %d: findings differ when the records are ignored: %s", name, silent, firstDiff(want, got))
			}
			if fmt.Sprint(blind.ends) != fmt.Sprint(keep.ends) {
				t.Errorf("%s, silent %d: stream ends differ", name, silent)
			}
			if fmt.Sprint(bs) != fmt.Sprint(ks) {
				t.Errorf("%s, silent %d: stats differ:\n%v\n%v", name, silent, bs, ks)
			}
		}
	}
	b := &blindCollector{}
	if !(MultiSink{b, b}).RecordsIgnored() || (MultiSink{b, &collector{}}).RecordsIgnored() {
		t.Error("MultiSink.RecordsIgnored is not the and of its sinks'")
	}
}
