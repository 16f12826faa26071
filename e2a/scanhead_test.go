package e2a

import (
	"bytes"
	"testing"
)

var headCases = []struct {
	in       string
	id       string // "<nil>" for none
	seq      int64
	hasSeq   bool
	intr     bool
	complete bool
}{
	{`{"request_id":"q1","sequence":3}`, "q1", 3, true, false, true},
	{`{"body":{"request_id":"inner","x":[1,{"y":"}"}]},"request_id":"outer"}`, "outer", 0, false, false, true},
	{`{"request_id":"x","request_id":"y"}`, "y", 0, false, false, true},
	{`{"request_id":1}`, "<nil>", 0, false, false, true},
	{`{"req\u0075est_id":"a\"b\u00e9","method":"chat.interrupt"}`, "a\"b\u00e9", 0, false, true, true},
	{`{"method":"chat.interrupt","method":"chat.send"}`, "<nil>", 0, false, false, true},
	{`{"method":"chat.\u0069nterrupt"}`, "<nil>", 0, false, true, true},
	{"{\"request_id\":\"\xff\"}", "\uFFFD", 0, false, false, true},
	{`{"sequence":-1,"sequence":2.5}`, "<nil>", 0, false, false, true},
	// Heads of oversize lines: cut anywhere.
	{`{"protocol_version":"1.0","request_id":"q7","sequence":12,"body":{"delta":"abc`, "q7", 12, true, false, false},
	{`{"request_id":"q7","sequence":12`, "q7", 0, false, false, false},
	{`{"request_id":"q7","request_id":"q`, "<nil>", 0, false, false, false},
	{`{"request_id":"q\u00`, "<nil>", 0, false, false, false},
	{`{"request_id"`, "<nil>", 0, false, false, false},
	{``, "<nil>", 0, false, false, false},
	{`[{"request_id":"a"}]`, "<nil>", 0, false, false, false},
}

func TestScanHead(t *testing.T) {
	var h Head
	for _, c := range headCases {
		ScanHead([]byte(c.in), nil, &h)
		id := "<nil>"
		if h.RequestID != nil {
			id = string(h.RequestID)
		}
		if id != c.id || h.HasSequence != c.hasSeq || h.Sequence != c.seq || h.Interrupt != c.intr || h.Complete != c.complete {
			t.Errorf("%s: got %q %d/%t %t %t, want %q %d/%t %t %t", c.in, id, h.Sequence, h.HasSequence, h.Interrupt, h.Complete,
				c.id, c.seq, c.hasSeq, c.intr, c.complete)
		}
	}
}

// FuzzScanHead: on every valid JSON object ScanHead reads the request_id,
// sequence and method as Scan does (so that routing never splits a
// stream); on any input, and any prefix of it, it does not panic.
func FuzzScanHead(f *testing.F) {
	for _, c := range headCases {
		f.Add([]byte(c.in))
	}
	for _, c := range scanCases {
		f.Add([]byte(c))
	}
	for _, rec := range benchRecords() {
		f.Add(rec.data)
	}
	var r Record
	var h Head
	f.Fuzz(func(t *testing.T, data []byte) {
		for k := 0; k < len(data); k += 1 + len(data)/8 {
			ScanHead(data[:k], nil, &h)
		}
		ScanHead(data, nil, &h)
		if Scan(data, &r) != nil {
			return
		}
		var want []byte
		if v := r.Get(FRequestID); v.Type == String {
			want = v.Str
		}
		if !bytes.Equal(h.RequestID, want) || (h.RequestID == nil) != (want == nil) {
			t.Fatalf("request_id %q, Scan %q", h.RequestID, want)
		}
		seq, ok := r.Sequence()
		if ok != h.HasSequence || seq != h.Sequence {
			t.Fatalf("sequence %d/%t, Scan %d/%t", h.Sequence, h.HasSequence, seq, ok)
		}
		if wi := r.Get(FMethod).Is("chat.interrupt"); wi != h.Interrupt {
			t.Fatalf("interrupt %t, Scan %t", h.Interrupt, wi)
		}
		if !h.Complete {
			t.Fatal("a valid object read as incomplete")
		}
	})
}

func BenchmarkScanHead(b *testing.B) {
	recs := benchRecords()
	var h Head
	var buf []byte
	n := 0
	for _, r := range recs {
		n += len(r.data)
	}
	b.SetBytes(int64(n / len(recs)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = ScanHead(recs[i%len(recs)].data, buf[:0], &h)
	}
}
