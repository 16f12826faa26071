package e2a

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/redact"
)

// TestClassifyKernel holds the kernel to its specification, classifyGo,
// on every byte value at every position of a block and on random input
// of every length around the block size.
func TestClassifyKernel(t *testing.T) {
	if !haveKernel {
		t.Skip("no vector kernel on this CPU")
	}
	check := func(data []byte) {
		t.Helper()
		got := classify(data, nil)
		want := make([]block, len(got))
		classifyGo(data, want)
		for b := range want {
			if got[b] != want[b] {
				t.Fatalf("len %d block %d: kernel %+v, want %+v", len(data), b, got[b], want[b])
			}
		}
	}
	all := make([]byte, 256)
	for c := range all {
		all[c] = byte(c)
	}
	for shift := range 64 {
		check(append(bytes.Repeat([]byte{'x'}, shift), all...))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 300 {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		check(data)
		// JSON-like bytes make runs of each class.
		for i := range data {
			data[i] = jsonish[rng.IntN(len(jsonish))]
		}
		check(data)
	}
}

const jsonish = `"\ :,{}[]0aAbBJ_-+=` + "\t\n\r\x00\xe4"

// TestAnchorNibbles: the kernel's nibble tables say exactly which bytes
// are credential anchors (else the kernel must not be used at all).
func TestAnchorNibbles(t *testing.T) {
	if !anchorNibbles {
		t.Fatal("redact's credential anchors no longer fit the kernel's nibble tables: the vector pass is off")
	}
	for c := range 256 {
		lo, hi := tables.anchorLo[c&15], tables.anchorHi[c>>4]
		if got, want := lo&hi != 0, redact.IsCredentialAnchor(byte(c)); got != want {
			t.Errorf("byte %#x: nibble tables say anchor %v, redact %v", c, got, want)
		}
	}
}

// checkPaths scans data by both paths and fails unless they agree on
// everything: the error (message and offset), every Field and Sub, the
// flags, the raw delta and the secret pre-check's verdict.
func checkPaths(t testing.TB, data []byte, vr, sr *Record) {
	t.Helper()
	ve, se := scan(data, vr, true), scan(data, sr, false)
	if (ve == nil) != (se == nil) || ve != nil && ve.Error() != se.Error() {
		t.Fatalf("%q: vector path error %v, scalar %v", data, ve, se)
	}
	var vs, ss *SyntaxError
	if errors.As(ve, &vs) != errors.As(se, &ss) || vs != nil && *vs != *ss {
		t.Fatalf("%q: vector path error %#v, scalar %#v", data, ve, se)
	}
	if d := diffRecords(vr, sr); len(d) > 0 {
		t.Fatalf("%q: vector path differs from scalar (vector vs scalar):\n%s", data, strings.Join(d, "\n"))
	}
	if vr.MayHoldSecret() != sr.MayHoldSecret() {
		t.Fatalf("%q: MayHoldSecret %v by the vector path, %v by the scalar", data, vr.MayHoldSecret(), sr.MayHoldSecret())
	}
	vd, vesc, vok := vr.RawDelta()
	sd, sesc, sok := sr.RawDelta()
	if !bytes.Equal(vd, sd) || vesc != sesc || vok != sok {
		t.Fatalf("%q: RawDelta %q %v %v by the vector path, %q %v %v by the scalar", data, vd, vesc, vok, sd, sesc, sok)
	}
	checkDeltaText(t, data, vr)
	checkDeltaText(t, data, sr)
}

// vectorInputs are the inputs of the table tests shifted across block
// boundaries (leading whitespace) and cut at every length near one.
func vectorInputs(t testing.TB) [][]byte {
	var in [][]byte
	for _, c := range append(scanCases, deepCases...) {
		in = append(in, []byte(c))
	}
	for _, r := range benchRecords() {
		in = append(in, r.data)
	}
	for _, r := range genRecords {
		in = append(in, r.data)
	}
	in = append(in, vectorLines(t)...)
	var out [][]byte
	for _, c := range in {
		out = append(out, c)
		if len(c) > 4096 {
			continue
		}
		for _, pad := range []int{1, 31, 32, 63, 64, 65} {
			out = append(out, append([]byte(strings.Repeat(" ", pad)), c...))
		}
		for _, n := range []int{63, 64, 65, 127, 128, 129} {
			if n < len(c) {
				out = append(out, c[:n])
			}
		}
	}
	return out
}

func TestScanVectorPath(t *testing.T) {
	if !haveKernel {
		t.Skip("no vector kernel on this CPU")
	}
	vr, sr := new(Record), new(Record)
	for _, c := range vectorInputs(t) {
		checkPaths(t, c, vr, sr)
		checkPaths(t, c, new(Record), new(Record))
	}
}

// TestScanBothPaths runs the table and vector cases against ScanStd by
// the scalar path too (the default path is the vector one here).
func TestScanBothPaths(t *testing.T) {
	defer func(v bool) { vectorScan = v }(vectorScan)
	for _, v := range []bool{false, haveKernel} {
		vectorScan = v
		reused := new(Record)
		for _, c := range vectorInputs(t) {
			checkScan(t, c, reused)
		}
	}
}

func FuzzScanVector(f *testing.F) {
	for _, c := range scanCases {
		f.Add([]byte(c))
	}
	for _, rec := range benchRecords() {
		f.Add(rec.data)
	}
	for _, rec := range genRecords {
		f.Add(rec.data)
	}
	vr, sr := new(Record), new(Record)
	f.Fuzz(func(t *testing.T, data []byte) {
		if !haveKernel {
			t.Skip("no vector kernel on this CPU")
		}
		checkPaths(t, data, vr, sr)
		checkPaths(t, data, new(Record), new(Record))
	})
}

// TestWordsCap: the loads past a short key or text (wordsCap,
// knownKeyAt) give keyWords, so that a key or text finds the same slot
// wherever it sits.
func TestWordsCap(t *testing.T) {
	buf := []byte(`abcdefghijklmnopqrstuvwxyz"`)
	for i := range buf {
		for j := i; j < len(buf); j++ {
			k := buf[i:j]
			x, y := keyWords(k)
			if a, b := wordsCap(k); a != x || b != y {
				t.Fatalf("wordsCap(%q) = %x %x, keyWords %x %x", k, a, b, x, y)
			}
			if n := len(k); n >= cleanMin && n <= cleanMax {
				// (cleanHash and cleanTexts' compare take these words.)
				if a, b := wordsCap(bytes.Clone(k)[:n:n]); a != x || b != y {
					t.Fatalf("wordsCap(%q) depends on what follows it", k)
				}
			}
		}
	}
	keys := append([]string{"", "x", "nope", "not_a_known_key_at_all"}, knownKeyNames...)
	for _, k := range keys {
		for pad := range 9 {
			for _, tail := range []string{"", `": 1}`} {
				data := []byte(strings.Repeat(" ", pad) + k + tail)
				h, ok := knownKeyAt(data, pad, pad+len(k))
				wh, wok := knownKeys.find([]byte(k))
				if ok != wok || ok && h != wh {
					t.Fatalf("knownKeyAt(%q) = %d %v, find %d %v", data, h, ok, wh, wok)
				}
			}
		}
	}
}

// TestScanVectorLimits: a line longer than maxVectorLen is read by the
// scalar loops (the same Record), and a Record's bitmaps stay bounded.
func TestScanVectorLimits(t *testing.T) {
	var vr, sr Record
	for _, n := range []int{maxVectorLen - 64, maxVectorLen, maxVectorLen + 1, 4 * maxVectorLen} {
		head := `{"request_id": "q1", "body": {"delta": "`
		pad := n - len(head) - len(`"}}`)
		data := []byte(head + strings.Repeat("token 7 ", pad/8+1)[:pad] + `"}}`)
		if len(data) != n {
			t.Fatalf("built %d bytes, want %d", len(data), n)
		}
		checkPaths(t, data, &vr, &sr)
		if got, most := cap(vr.blocks), (maxVectorLen+63)/64*5/4; got > most {
			t.Fatalf("after a %d-byte line the record holds %d blocks (at most %d)", n, got, most)
		}
	}
}

// TestScanEscapedAnchors: a credential whose every byte is written as a
// \u escape (its anchors only after unescaping), alone or after plain
// text and non-ASCII escapes, in a presence-only body.delta, a kept field
// and a skipped member: MayHoldSecret is true by the vector path (whose
// skipString works out anchorAfterUnescape on the way) and by the scalar
// one, and ScanSecrets finds it.
func TestScanEscapedAnchors(t *testing.T) {
	esc := func(s string) string {
		var b strings.Builder
		for _, c := range []byte(s) {
			fmt.Fprintf(&b, `\u%04x`, c)
		}
		return b.String()
	}
	tok := "ghp_CRPSabcdefghijklmnopqrstuvwxyz0123456789"
	for _, body := range []string{esc(tok), `\u4f60\u597d ` + esc(tok), `\u00e9\u00e9\u4f60 ` + esc(tok) + `\u4f60`, `\u4f60\n` + esc(tok)} {
		for _, f := range []string{`{"body": {"delta": "%s"}}`, `{"request_id": "%s"}`, `{"x_note": "%s", "status": "ok"}`} {
			data := []byte(fmt.Sprintf(f, body))
			vr, sr := new(Record), new(Record)
			checkPaths(t, data, vr, sr)
			if !vr.MayHoldSecret() {
				t.Errorf("%s: MayHoldSecret false", data)
			}
		}
	}
}
