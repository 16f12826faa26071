package e2a

import "testing"

// TestShareCaches: records that share one Record's caches keep their own
// values: a later Scan into another of them (unescaped strings included,
// which live in a Record's scratch) leaves an earlier one as it was, and
// each reads what a Record of its own would.
func TestShareCaches(t *testing.T) {
	inputs := []string{
		`{"request_id":"r\u0031","status":"in_progress","response_kind":"e2a.delta","sequence":0,"body":{"delta":"a\nb"}}`,
		`{"request_id":"r\u0032","status":"succeeded","response_kind":"e2a.complete","sequence":1,"is_final":true,"x_k":"v\t"}`,
		`{"request_id":"r3","method":"chat.interrupt","session_id":"s\u00e9","params":{"intent":"cancel"}}`,
	}
	var src Record
	recs := make([]Record, len(inputs))
	for i, in := range inputs {
		recs[i].ShareCaches(&src)
		if err := Scan([]byte(in), &recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if recs[0].memo == nil || recs[0].memo != recs[2].memo || recs[0].clean != src.clean {
		t.Fatal("the caches are not shared")
	}
	for i, in := range inputs {
		var own Record
		if err := Scan([]byte(in), &own); err != nil {
			t.Fatal(err)
		}
		for f := range own.Fields {
			a, b := &own.Fields[f], &recs[i].Fields[f]
			if a.Type != b.Type || a.Bool != b.Bool || string(a.Str) != string(b.Str) {
				t.Errorf("input %d, %s: shared %v %q, own %v %q", i, FieldKeys[f], b.Type, b.Str, a.Type, a.Str)
			}
		}
		for s := range own.Subs {
			if a, b := &own.Subs[s], &recs[i].Subs[s]; a.Type != b.Type || string(a.Str) != string(b.Str) {
				t.Errorf("input %d, sub %d: shared %v %q, own %v %q", i, s, b.Type, b.Str, a.Type, a.Str)
			}
		}
	}
}
