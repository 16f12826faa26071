package validate

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/e2a"
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

// TestQuickRouteMarks: the vector marks give what the byte searches give,
// on inputs of every length around the kernel's blocks and chunks, with
// the bytes it marks (a request_id key, an interrupt, escapes, escaped
// backslashes) planted across their edges.
func TestQuickRouteMarks(t *testing.T) {
	if !haveRouteMarks {
		t.Skip("no vector kernel on this CPU")
	}
	r := rand.New(rand.NewPCG(5, 9))
	pieces := []string{`"request_id"`, `request_id`, "chat.interrupt", `\u005f`, `\u0041`, `\\u0041`, `\\`, `\`, `q`, `.`, `"`, `\u00e9`, "chat.interrupted"}
	inputs := 20000
	if raceEnabled {
		inputs = 7000 // every length up to 3000, then 4000 random ones (not 17000)
	}
	for n := 0; n < inputs; n++ {
		size := r.IntN(5000)
		if n < 3000 {
			size = n
		}
		b := make([]byte, size)
		for i := range b {
			b[i] = "abcq.\\ \"x"[r.IntN(9)]
			if r.IntN(3) != 0 {
				b[i] = 'a' + byte(r.IntN(26))
			}
		}
		for k := r.IntN(4); k > 0 && size > 20; k-- {
			at := r.IntN(size)
			if edge := (r.IntN(size/64+1))*64 - r.IntN(12); r.IntN(2) == 0 && edge >= 0 && edge < size {
				at = edge // across a block's edge
			}
			copy(b[at:], pieces[r.IntN(len(pieces))])
		}
		gs, gok := quickRouteMarks(b)
		ws, wok := quickRouteScalar(b)
		if gs != ws || gok != wok {
			t.Fatalf("len %d: marks %d, %t; byte searches %d, %t\n%q", size, gs, gok, ws, wok, b)
		}
	}
}

// TestHeadTo: the walk to the key by marks finds what ScanHeadTo finds, on
// records built of random pieces (nested values, strings holding
// brackets, scalars, whitespace, broken syntax, escapes, non-ASCII) before
// and after a request_id, across the blocks of the marks, and takes the
// short way on most well-formed ones.
func TestHeadTo(t *testing.T) {
	if !haveRouteMarks {
		t.Skip("no vector kernel on this CPU")
	}
	r := rand.New(rand.NewPCG(8, 3))
	pieces := []string{`{`, `}`, `[`, `]`, `"`, `:`, `,`, ` `, "\t", "\n", `\`, `"a"`, `"k": 1, `, `"k":null,`, `"s": "x}]{[" , `,
		`"n": {"x": [1, {"y": "}"}], "z": {}}, `, `"d": -1.5e3 , `, `"e": "é", `, `"q": "\u00e9", `, `"b": tru, `, `"m": "chat.send", `,
		`"method": "chat.interrupt", `, `"request_id"`, `x`, `é`, `"sequence": 3, `, strings.Repeat(`"p": "padding", `, 9),
		`"k": 1 2, `, `"k": tr ue, `, `"k": 7}`, `"k" 1, `, `"k": , `, `,,`}
	values := []string{`"req-1"`, `"req-é"`, `"a\"b"`, `"\u0041"`, `12`, `null`, `{"a": 1}`, `"`, `"unterminated`, ``, `"x"}`, `"y",`}
	short, good := 0, 0
	for n := 0; n < 30000; n++ {
		var b strings.Builder
		wellFormed := r.IntN(2) == 0
		b.WriteString(`{`)
		for k := r.IntN(12); k > 0; k-- {
			if wellFormed {
				b.WriteString([]string{`"k": 1, `, `"n": {"x": [1, {"y": "}"}], "z": {}}, `, `"s": "x}]{[" , `, `"e": "é", `, "\"w\"\t:\n[ ]\r, ", strings.Repeat(`"p": "padding", `, 9)}[r.IntN(6)])
			} else {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
		}
		nested := r.IntN(4) == 0 // the only request_id is not a top-level key
		if nested {
			b.WriteString([]string{`"n": {"request_id": `, `"n": [{"x": 1, "request_id": `, `"n": [["request_id", `}[r.IntN(3)])
		} else {
			b.WriteString(`"request_id": `)
		}
		b.WriteString(values[r.IntN(len(values))])
		if nested {
			b.WriteString([]string{`}, `, `}], `, `]], "k": 2, `, ``}[r.IntN(4)])
		}
		if !wellFormed || r.IntN(2) == 0 {
			for k := r.IntN(6); k > 0; k-- {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
		}
		b.WriteString(`}`)
		data := []byte(b.String())
		stop, ok := quickRoute(data)
		if !ok || stop < 0 {
			continue
		}
		var h e2a.Head
		e2a.ScanHeadTo(data, nil, &h, stop)
		checkHeadTo(t, data, stop, h.RequestID)
		if wellFormed {
			good++
			if _, ok := headTo(data, stop); ok {
				short++
			}
		}
	}
	if short < good/2 {
		t.Errorf("%d of %d well-formed records took the short way, want most", short, good)
	}
}
