package validate

import (
	"encoding/binary"
	"strings"
	"testing"
)

// parseRFC3339Ref is parseRFC3339 as it was first written, a byte at a
// time (the reference the fuzzer holds the word-at-a-time one to).
func parseRFC3339Ref(b []byte) (valid, utc bool) {
	if len(b) < 20 {
		return false, false
	}
	num := func(i, n int) (int, bool) {
		v := 0
		for _, c := range b[i : i+n] {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 2)
	day, ok3 := num(8, 2)
	hour, ok4 := num(11, 2)
	minute, ok5 := num(14, 2)
	sec, ok6 := num(17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != 't') || b[13] != ':' || b[16] != ':' {
		return false, false
	}
	if month < 1 || month > 12 || day < 1 || day > daysInRef(year, month) || hour > 23 || minute > 59 || sec > 60 {
		return false, false
	}
	rest := b[19:]
	if rest[0] == '.' {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 1 {
			return false, false
		}
		rest = rest[n:]
	}
	switch {
	case len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z'):
		return true, true
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, okh := numOfRef(rest[1:3])
		om, okm := numOfRef(rest[4:6])
		if !okh || !okm || oh > 23 || om > 59 {
			return false, false
		}
		return true, oh == 0 && om == 0
	}
	return false, false
}

func numOfRef(b []byte) (int, bool) {
	v := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

func daysInRef(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// FuzzParseRFC3339: the word-at-a-time check says what the byte-at-a-time
// one says, of any bytes.
func FuzzParseRFC3339(f *testing.F) {
	for _, s := range rfc3339Seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, u := parseRFC3339(b)
		rv, ru := parseRFC3339Ref(b)
		if v != rv || u != ru {
			t.Fatalf("parseRFC3339(%q) = %t, %t; the byte-at-a-time check says %t, %t", b, v, u, rv, ru)
		}
		// A memo, empty or holding a seed's date and time (the one
		// that shares the most of b's first bytes), says the same.
		var empty, primed tsMemo
		best := 0
		for k, s := range rfc3339Seeds {
			if n := commonPrefix([]byte(s), b); n > commonPrefix([]byte(rfc3339Seeds[best]), b) {
				best = k
			}
		}
		primed.parse([]byte(rfc3339Seeds[best]))
		for _, m := range []*tsMemo{&empty, &primed} {
			if mv, mu := m.parse(b); mv != rv || mu != ru {
				t.Fatalf("tsMemo%+v.parse(%q) = %t, %t; want %t, %t", *m, b, mv, mu, rv, ru)
			}
		}
	})
}

// TestTSMemo: a memo carried through a sequence of timestamps (every seed,
// every one-byte change of valid ones, runs that repeat a date and time
// with other fractions and offsets, and one of NUL bytes, which an empty
// memo's zero words would match) says what the byte-at-a-time check says
// of each.
func TestTSMemo(t *testing.T) {
	seq := [][]byte{[]byte(strings.Repeat("\x00", 19) + "Z"), []byte(strings.Repeat("\x00", 20))}
	for _, s := range rfc3339Seeds {
		seq = append(seq, []byte(s))
	}
	for _, s := range []string{"2024-02-29T23:59:59.123+00:00", "2026-12-31t00:00:60Z", "2026-03-29T12:00:00-05:30"} {
		for i := range len(s) {
			for _, c := range []byte{0, '0', '9', ':', '-', '.', 'T', 't', 'Z', 'z', '+', 0xff} {
				b := []byte(s)
				b[i] = c
				seq = append(seq, b, []byte(s), b)
			}
		}
		for _, tail := range []string{"Z", "z", ".5Z", ".123456+01:00", "+00:00", "-00:00", ".", "+24:00", "", "x"} {
			seq = append(seq, []byte(s[:19]+tail))
		}
	}
	var m tsMemo
	hits := 0
	for _, b := range seq {
		if len(b) >= 20 && m.x != 0 && string(b[:19]) == memoText(m) {
			hits++
		}
		v, u := m.parse(b)
		if rv, ru := parseRFC3339Ref(b); v != rv || u != ru {
			t.Fatalf("memo parse(%q) = %t, %t; want %t, %t", b, v, u, rv, ru)
		}
	}
	if hits < 50 {
		t.Fatalf("only %d timestamps found their date and time in the memo", hits)
	}
}

// memoText is the 19 bytes m holds.
func memoText(m tsMemo) string {
	var b [24]byte
	binary.LittleEndian.PutUint64(b[0:], m.x)
	binary.LittleEndian.PutUint64(b[8:], m.y)
	binary.LittleEndian.PutUint64(b[16:], m.z)
	return string(b[:19])
}

var rfc3339Seeds = []string{
	"2026-03-29T12:00:00Z", "2026-03-29t12:00:00z", "2026-03-29T12:00:00.001000+00:00", "2026-03-29T12:00:00-00:00",
	"2026-03-29T12:00:00+05:30", "2024-02-29T23:59:60Z", "2023-02-29T00:00:00Z", "2026-13-01T00:00:00Z",
	"2026-00-10T00:00:00Z", "2026-04-31T00:00:00Z", "2026-03-29 12:00:00Z", "2026-03-29T24:00:00Z",
	"2026-03-29T12:60:00Z", "2026-03-29T12:00:61Z", "2026-03-29T12:00:00.Z", "2026-03-29T12:00:00+24:00",
	"2026-03-29T12:00:00+00:60", "2026-03-29T12:00:00+0000", "2026/03/29T12:00:00Z", "2026-03-29T12;00:00Z",
	"2026-03-29T12:00:00", "1900-02-29T00:00:00Z", "2000-02-29T00:00:00Z", "2O26-03-29T12:00:00Z",
	"2026-03-29T12:00:0:Z", "2026-03-29T12:00:00.123456789Z", "2026-03-29\x5412:00:00Z", "2026-03-29\x7412:00:00Z",
	"2026-03-29\x1412:00:00Z", "2026-03-29T12:00:00+0a:00", "\xb0\xb0\xb0\xb0-03-29T12:00:00Z", "2026-03-29T12:00:00.5\xff",
}

// TestParseRFC3339Seeds: every seed (each a case the masks must tell
// apart) agrees, and the valid ones are seen as valid.
func TestParseRFC3339Seeds(t *testing.T) {
	valid := 0
	for _, s := range rfc3339Seeds {
		v, u := parseRFC3339([]byte(s))
		rv, ru := parseRFC3339Ref([]byte(s))
		if v != rv || u != ru {
			t.Errorf("parseRFC3339(%q) = %t, %t; want %t, %t", s, v, u, rv, ru)
		}
		if v {
			valid++
		}
	}
	if valid < 8 {
		t.Fatalf("only %d seeds valid", valid)
	}
}

// TestParseRFC3339OneByte: every one-byte change of valid timestamps (256
// values at every place) gets the same answer from both checks.
func TestParseRFC3339OneByte(t *testing.T) {
	for _, s := range []string{"2024-02-29T23:59:59.123+00:00", "2026-12-31t00:00:60Z", "2026-03-29T12:00:00-05:30"} {
		for i := range len(s) {
			b := []byte(s)
			for c := 0; c < 256; c++ {
				b[i] = byte(c)
				v, u := parseRFC3339(b)
				if rv, ru := parseRFC3339Ref(b); v != rv || u != ru {
					t.Fatalf("parseRFC3339(%q) = %t, %t; want %t, %t", b, v, u, rv, ru)
				}
			}
		}
	}
}

var rfc3339Sink bool

// BenchmarkParseRFC3339 is the check of every response's timestamp (the
// reference's own layout); BenchmarkParseRFC3339Ref the byte-at-a-time one.
func BenchmarkParseRFC3339(b *testing.B)    { benchRFC3339(b, parseRFC3339) }
func BenchmarkParseRFC3339Ref(b *testing.B) { benchRFC3339(b, parseRFC3339Ref) }

// BenchmarkParseRFC3339Memo: the same timestamp again, its date and time
// in the memo (an engine's records mostly share them).
func BenchmarkParseRFC3339Memo(b *testing.B) {
	var m tsMemo
	benchRFC3339(b, m.parse)
}

func benchRFC3339(b *testing.B, parse func([]byte) (bool, bool)) {
	ts := []byte("2026-03-29T12:00:00.001000+00:00")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		v, u := parse(ts)
		rfc3339Sink = rfc3339Sink != (v && u)
	}
}
