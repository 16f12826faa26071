package validate

import (
	"bytes"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/e2a"
)

func fuzzSeeds(f *testing.F) {
	for _, file := range []string{"e2a_streams.jsonl"} {
		for _, c := range loadCasesF(f, file) {
			for _, l := range c.Lines {
				f.Add([]byte(l))
			}
		}
	}
	f.Add([]byte(`{"request_id":"a\"b","method":"chat.interrupt"}`))
	f.Add([]byte(`{"req\u0075est_id":"x"}`))
	f.Add([]byte(`{"body":{"request_id":"inner"},"request_id":"outer"}`))
	f.Add([]byte(`{"request_id":"x","request_id":"y"}`))
	f.Add([]byte(`{"request_id":1}`))
	f.Add([]byte(`{"a":"say \"request_id","request_id":"x"}`))
	f.Add([]byte(`{"x\"request_id":"y","b":1}`))
	f.Add([]byte(`{"request\u005fid":"x","request_id":"y"}`))
	f.Add([]byte(`{"request_id":"x","meth\u006fd":"chat\u002einterrupt"}`))
	f.Add([]byte(`{"request_id":"x","method":"chat.interrupt"}`))
	f.Add([]byte(`{"request_id":"x\\u0041","d":"\u4e2d\u00e9"}`))
	f.Add([]byte(`{"p":{"q":[1,"request_id"]},"request_id":"r\u00e9","sequence":3}`))
	f.Add([]byte(`{"request_id":"cut`))
	f.Add([]byte(`{"a":1,"request_id":"x",`))
}

func loadCasesF(f *testing.F, file string) []streamCase {
	f.Helper()
	cases, err := readVectors(file)
	if err != nil {
		f.Fatal(err)
	}
	return cases
}

// FuzzRoute: for every valid JSON object the router's stream key is the
// scanner's request_id (or none when that is not a string), and a
// chat.interrupt is always seen, so that sharding never splits a stream.
func FuzzRoute(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkQuickRoute(t, data)
		var r e2a.Record
		var rt router
		if e2a.ScanStd(data, &r) != nil {
			rt.routeJSON(data) // must not panic
			return
		}
		key, interrupt := rt.routeJSON(data)
		want := []byte(nil)
		if v := r.Get(e2a.FRequestID); v.Type == e2a.String {
			want = v.Str
		}
		if !bytes.Equal(key, want) && !(len(key) == 0 && len(want) == 0) {
			t.Fatalf("route key %q, scanner request_id %q", key, want)
		}
		if wantInt := r.Get(e2a.FMethod).Is("chat.interrupt"); interrupt != wantInt {
			t.Fatalf("route interrupt %v, scanner %v", interrupt, wantInt)
		}
	})
}

// checkQuickRoute: on any input, valid or not, whenever quickRoute takes
// the short way it gives ScanHead's stream key and interrupt.
func checkQuickRoute(t *testing.T, data []byte) {
	t.Helper()
	var h e2a.Head
	e2a.ScanHead(data, nil, &h)
	want, wantInt := bytes.Clone(h.RequestID), h.Interrupt
	stop, ok := quickRoute(data)
	if s, o := quickRouteScalar(data); s != stop || o != ok {
		t.Fatalf("quickRoute = %d, %t; by byte searches %d, %t", stop, ok, s, o)
	}
	if !ok {
		return
	}
	var got []byte
	if stop >= 0 {
		e2a.ScanHeadTo(data, nil, &h, stop)
		got = h.RequestID
		checkHeadTo(t, data, stop, got)
	}
	if !bytes.Equal(got, want) || (got == nil) != (want == nil) || wantInt {
		t.Fatalf("quick route: key %q; ScanHead: key %q, interrupt %t", got, want, wantInt)
	}
}

// checkHeadTo: where headTo tells, it tells what ScanHeadTo found (want),
// aliasing the record where ScanHeadTo does.
func checkHeadTo(t *testing.T, data []byte, stop int, want []byte) {
	t.Helper()
	if !haveRouteMarks {
		return
	}
	got, ok := headTo(data, stop)
	if !ok {
		return
	}
	if !bytes.Equal(got, want) || (got == nil) != (want == nil) || offsetIn(got, data) != offsetIn(want, data) {
		t.Fatalf("headTo %q (at %d), ScanHeadTo %q (at %d), stop %d, in %q", got, offsetIn(got, data), want, offsetIn(want, data), stop, data)
	}
}

// FuzzEngine: any sequence of lines, in either profile, never panics and
// every finding names a known rule.
func FuzzEngine(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, prof := range []Profile{SpecProfile(), JiuwenswarmProfile()} {
			cfg := DefaultConfig()
			cfg.Profile = prof
			cfg.MaxStreams = 4 // exercise eviction
			col := &collector{}
			e := NewEngine(cfg, col)
			for i, line := range bytes.Split(data, []byte("\n")) {
				in := Input{Data: line, Index: uint64(i + 1), FromLog: true}
				e.Observe(&in)
			}
			e.Finish(ReasonEOF, &Input{})
			for _, fd := range col.findings {
				if _, ok := ParseRule(fd.Rule); !ok || strings.TrimSpace(fd.Message) == "" {
					t.Fatalf("bad finding %+v", fd)
				}
			}
		}
	})
}

// FuzzReplay: any line in a record log (a file whose first line carries an
// "_e2atap" object) is judged or reported, never a crash, with one engine
// and with shards.
func FuzzReplay(f *testing.F) {
	first := []byte(`{"request_id":"q","sequence":0,"_e2atap":{"tap":"t","conn":"c1","source":"t:c1#0","from_log":true}}`)
	f.Add([]byte(`{"msgType":2,"flags":1,"seq":0,"attrs":{"sid":"s","sid":"s2","meta":"{}"},"data":"x","_e2atap":{"tap":"mesh","format":"frame","gap":true}}`))
	f.Add([]byte(`{"_e2atap":{"tap":"t","invalid":true,"length":9,"reason":"invalid_json","proto":"eventmesh"}}`))
	f.Add([]byte(`{"request_id":"q","_e2atap":{"tap":"t","from_log":true,"secret":{"kind":"jwt","path":"body.delta"},"joined":true}}`))
	f.Add([]byte(`{"msgType":1,"attrs":{"sid":1},"data":"eA==","data_encoding":"base64","_e2atap":{"format":"frame"}}`))
	f.Add([]byte(`{"_e2atap":{"time":"not a time"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		data := append(append(append([]byte{}, first...), '\n'), line...)
		for _, shards := range []int{1, 2} {
			s := NewSharded(shards, DefaultConfig(), &collector{})
			if _, err := Read(bytes.NewReader(data), "log", FormatAuto, ReadOptions{FromLog: true}, s); err != nil {
				t.Fatal(err)
			}
			s.Finish(ReasonEOF, &Input{})
		}
	})
}
