package validate

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/frame"
)

// keyOf is the table key of id (tap t, connection c).
func keyOf(proto byte, id []byte) []byte {
	return appendStreamKey(nil, &Input{Tap: "t", Conn: "c"}, proto, id)
}

// checkKey: the key of id splits back into t, c and id (a cut id into its
// cut text), whatever bytes id holds.
func checkKey(t *testing.T, proto byte, id []byte) []byte {
	t.Helper()
	k := keyOf(proto, id)
	tap, conn, back := streamOf(k)
	want := id
	if len(id) > maxKeyLen {
		want = k[len("t\x00c\x00")+1:]
		if !bytes.HasPrefix(id, want[:maxKeyLen-1-cutHashLen]) || want[maxKeyLen-1-cutHashLen] != '~' {
			t.Fatalf("%d-byte id cut to %q", len(id), want)
		}
	}
	if tap != "t" || conn != "c" || !bytes.Equal(back, want) {
		t.Fatalf("%q (%c): key %x splits into %q %q %q", id, proto, k, tap, conn, back)
	}
	return k
}

// TestStreamKeyEncodings: every shape of id is kept in as few bytes as its
// alphabet allows and reads back as it was sent.
func TestStreamKeyEncodings(t *testing.T) {
	const uuid = "3f2b8c1e-9a4d-4e6f-8b7a-0c1d2e3f4a5b"
	for _, c := range []struct {
		id   string
		kept int // bytes of the encoded id, after the mode byte
	}{
		{uuid, 16},
		{"agent-7:" + uuid, 8 + 16},
		{strings.ToUpper(uuid), 16},
		{"agent-7:" + strings.ToUpper(uuid), 8 + 16},
		{uuid[:35] + "A", 27}, // mixed case: base64url's alphabet
		{strings.Repeat("0123456789abcdef", 2) + "0f1e", 18},
		{strings.Repeat("0123456789abcdef", 2) + "0f1", 18},
		{strings.Repeat("0123456789ABCDEF", 2) + "0F1E", 18},
		{"123456789012345678", 9}, // digits: lowercase hex's
		{"req_" + strings.Repeat("9a", 16), 1 + 3 + 16},
		{"req-" + strings.Repeat("9a", 16) + "f", 1 + 3 + 17},
		{"chatcmpl-" + strings.Repeat("9a", 13) + "5", 1 + 7 + 14},
		{"msg_01XFDUDYJgAACzvnptvVoYEL-abcdefGH", 28}, // 37: 9 groups and 1
		{"msg_01XFDUDYJgAACzvnptvVoYEL-abcdefG", 27},  // 36
		{"msg_01XFDUDYJgAACzvnptvVoYEL-abcdef", 27},   // 35: 8 groups and 3
		{"msg_01XFDUDYJgAACzvnptvVoYEL-abcde", 26},    // 34
		{"base64+std/with=padding=and:colons!!", 30},  // printable: 6 in 5
		{"base64+std/with=padding=and:colons!", 30},   // 5 groups and 5
		{"a b c d e f g h i j k l m n o p q r ", 30},
		{"tab\tand\x7fdel:ASCII 8 in 7 bytes!", 32},
		{"E0000-agent-1:00000042", 15 + 4}, // 18 in 15, 4 as they are
		{"", 0}, {"a", 1}, {"ab", 1}, {"abc", 2}, {"xy", 2}, {"xyz", 3}, {"ñandú-ñandú-ñandú-ñandú-ñandú-1234", 44},
		{strings.Repeat("ab01", 16), 32},
		{strings.Repeat("Zz-_", 32), 96},
		{strings.Repeat("ab01", 128), 256},
		{strings.Repeat("x", maxKeyLen+1), maxKeyLen}, // cut: a prefix, '~', 32 hex digits
	} {
		for _, proto := range []byte{protoE2A, protoFrame} {
			k := checkKey(t, proto, []byte(c.id))
			if got := len(k) - len("t\x00c\x00") - 1; got > c.kept {
				t.Errorf("%q (%c) kept in %d bytes, want at most %d (key %x)", c.id, proto, got, c.kept, k)
			}
		}
		if bytes.Equal(keyOf(protoE2A, []byte(c.id)), keyOf(protoFrame, []byte(c.id))) {
			t.Errorf("%q: the same key for E2A and EventMesh", c.id)
		}
	}
}

// TestStreamKeyDistinct: ids of every alphabet and length, some crafted to
// look like another id's encoding, get keys that read back as sent and
// are equal only for equal ids (a map of key → id over all of them).
func TestStreamKeyDistinct(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	alphabets := []string{
		"0123456789abcdef", "0123456789ABCDEF", "0123456789",
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=",
		" !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~",
		"ab-_", "a0", "\x00\x01\x7f\x80\xff", "\x01\x1f a~\x7f",
	}
	seen := map[string]string{}
	add := func(id []byte) {
		for _, proto := range []byte{protoE2A, protoFrame} {
			k := string(checkKey(t, proto, id))
			want := string(proto) + string(id)
			if prev, ok := seen[k]; ok && prev != want {
				t.Fatalf("ids %q and %q share the key %x", prev, want, k)
			}
			seen[k] = want
		}
	}
	for range 20000 {
		a := alphabets[rnd.IntN(len(alphabets))]
		n := rnd.IntN(80)
		if rnd.IntN(20) == 0 {
			n = rnd.IntN(2 * maxKeyLen)
		}
		id := make([]byte, n)
		for j := range id {
			id[j] = a[rnd.IntN(len(a))]
		}
		if n > 8 && rnd.IntN(4) == 0 { // a base64url prefix, a hex tail
			copy(id, "req_")
			for j := 4 + rnd.IntN(n-4); j < n; j++ {
				id[j] = "0123456789abcdef"[rnd.IntN(16)]
			}
		}
		add(id)
		// The encoded id, and the whole key, taken as ids themselves.
		k := keyOf(protoE2A, id)
		add(k[len("t\x00c\x00"):])
		add(k)
	}
	// Every byte value at every place of a shape of each kind.
	for _, base := range []string{
		"3f2b8c1e-9a4d-4e6f-8b7a-0c1d2e3f4a5b", "3F2B8C1E-9A4D-4E6F-8B7A-0C1D2E3F4A5B",
		"0123456789abcdef01", "0123456789ABCDEF0", "req_0123456789abcdef", "msg_01XFDUDYJgAACz", "a b c d e f g h i",
	} {
		for at := range len(base) {
			for v := range 256 {
				id := []byte(base)
				id[at] = byte(v)
				add(id)
			}
		}
	}
	// A short id of every one or two bytes.
	for v := range 1 << 16 {
		add([]byte{byte(v)})
		add([]byte{byte(v), byte(v >> 8)})
	}
	if len(seen) < 100000 {
		t.Fatalf("only %d keys", len(seen))
	}
}

// TestStreamKeysInTheEngine: ids of each encoding are separate streams,
// judged and reported as they were sent (a sequence gap names the id, a
// missing final each of them).
func TestStreamKeysInTheEngine(t *testing.T) {
	ids := []string{
		"3f2b8c1e-9a4d-4e6f-8b7a-0c1d2e3f4a5b", "3F2B8C1E-9A4D-4E6F-8B7A-0C1D2E3F4A5B",
		"0123456789abcdef0123456789abcdef0123", "0123456789ABCDEF0123456789ABCDEF0123",
		"req_0123456789abcdef0123456789abcdef", "msg_01XFDUDYJgAACzvnptvVoYEL-abcdefG",
		"a b c d e f g h i j k l m n o p q r ", "ñandú", "x",
	}
	var lines, want []string
	for _, id := range ids {
		lines = append(lines, resp(0, "request_id", id), resp(1, "request_id", id), resp(3, "request_id", id))
		want = append(want, "e2a.missing_final "+id, "e2a.seq_gap "+id)
	}
	col := runCapture(t, ProfileSpec, []byte(strings.Join(lines, "\n")+"\n"), FormatJSONL)
	got := map[string]int{}
	for _, f := range col.findings {
		got[f.Rule+" "+f.Stream]++
	}
	for _, w := range want {
		if got[w] != 1 {
			t.Errorf("%q reported %d times, want once (findings %v)", w, got[w], got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("findings %v, want %q", got, want)
	}
}

// FuzzStreamKey: any two ids get equal keys only if they are equal, and
// every key reads back as its id.
func FuzzStreamKey(f *testing.F) {
	f.Add([]byte("3f2b8c1e-9a4d-4e6f-8b7a-0c1d2e3f4a5b"), []byte("req_0123456789abcdef"), false)
	f.Add([]byte("msg_01XFDUDYJgAACz"), []byte("\x80\x00"), true)
	f.Add([]byte("a b c d e f g h i"), []byte("0123456789ABCDEF0"), false)
	f.Fuzz(func(t *testing.T, a, b []byte, frame bool) {
		proto := byte(protoE2A)
		if frame {
			proto = protoFrame
		}
		ka, kb := checkKey(t, proto, a), checkKey(t, proto, b)
		if len(a) <= maxKeyLen && len(b) <= maxKeyLen && bytes.Equal(ka, kb) != bytes.Equal(a, b) {
			t.Fatalf("ids %q and %q: keys %x and %x", a, b, ka, kb)
		}
		// An id that is another's key (or encoded id) is another stream.
		for _, c := range [][]byte{ka, ka[len("t\x00c\x00"):]} {
			if !bytes.Equal(c, a) && len(c) <= maxKeyLen && bytes.Equal(checkKey(t, proto, c), ka) {
				t.Fatalf("id %q shares the key of %q", c, a)
			}
		}
	})
}

// TestHexSuffix: the word-at-a-time scan agrees with a byte-at-a-time one
// on every byte value at every place.
func TestHexSuffix(t *testing.T) {
	slow := func(s []byte) int {
		m := len(s)
		for m > 0 && (s[m-1] >= '0' && s[m-1] <= '9' || s[m-1] >= 'a' && s[m-1] <= 'f') {
			m--
		}
		return m
	}
	base := []byte("req_0123456789abcdef0123456789abcdef")
	for n := range len(base) + 1 {
		for at := range n {
			for v := range 256 {
				s := append([]byte(nil), base[:n]...)
				s[at] = byte(v)
				if got, want := hexSuffix(s), slow(s); got != want {
					t.Fatalf("%q: hex tail from %d, want %d", s, got, want)
				}
			}
		}
	}
}

// TestIsUpHex: the word-at-a-time check agrees with a byte-at-a-time one.
func TestIsUpHex(t *testing.T) {
	base := []byte("0123456789ABCDEF0123456789ABCDEF01")
	for n := range len(base) + 1 {
		for at := range n {
			for v := range 256 {
				s := append([]byte(nil), base[:n]...)
				s[at] = byte(v)
				want := true
				for _, c := range s {
					want = want && (c >= '0' && c <= '9' || c >= 'A' && c <= 'F')
				}
				if isUpHex(s) != want {
					t.Fatalf("%q: isUpHex %v", s, !want)
				}
			}
		}
	}
}

// TestPackUUIDWords: the word-at-a-time UUID packer agrees with a digit
// table on every byte value at every place of a UUID, either case.
func TestPackUUIDWords(t *testing.T) {
	for _, base := range []string{"3f2b8c1e-9a4d-4e6f-8b7a-0c1d2e3f4a5b", "3F2B8C1E-9A4D-4E6F-8B7A-0C1D2E3F4A5B"} {
		for at := range len(base) {
			for v := range 256 {
				id := []byte(base)
				id[at] = byte(v)
				got, ok := packUUID([]byte("p"), id)
				want, wok := packUUIDTable([]byte("p"), id, &hexVal)
				if ok != wok || !bytes.Equal(got, want) {
					t.Fatalf("%q: packed %x (%v), want %x (%v)", id, got, ok, want, wok)
				}
			}
		}
	}
}

// TestCutKeyIsTheSameEverywhere: an id over maxKeyLen is named by the same
// cut key in every engine (every run, every shard), and two long ids that
// share the kept prefix are two streams.
func TestCutKeyIsTheSameEverywhere(t *testing.T) {
	long := []byte(strings.Repeat("sid-", maxKeyLen/4) + "tail-a")
	other := []byte(strings.Repeat("sid-", maxKeyLen/4) + "tail-b")
	a := checkKey(t, protoFrame, long)
	if len(a) != len("t\x00c\x00")+1+maxKeyLen {
		t.Fatalf("cut key is %d bytes, want the scope, a mode byte and %d", len(a), maxKeyLen)
	}
	if b := checkKey(t, protoFrame, other); bytes.Equal(a, b) {
		t.Fatalf("two long ids with one prefix share the key %q", a)
	}
	// What two engines print for a frame stream with that sid that never
	// ends: the finding names it by its key.
	var names []string
	for range 2 {
		v := &verdicts{}
		e := NewEngine(DefaultConfig(), v)
		for _, seq := range []int32{0} {
			b, err := frame.AppendFrame(nil, frame.TypeStreamChunk, 0, seq, []frame.Attr{{Name: "sid", Value: string(long)}, {Name: "etype", Value: "text"}}, []byte("x"))
			if err != nil {
				t.Fatal(err)
			}
			fr, _, err := frame.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			e.ObserveFrame(&Input{Tap: "t", Conn: "c"}, &fr)
		}
		e.Finish("end of input", nil) // the stream never ends: missing final, named by its key
		if len(v.findings) == 0 {
			t.Fatal("the stream's missing done chunk was not found")
		}
		names = append(names, v.findings[0].Stream)
	}
	if names[0] != names[1] || !strings.Contains(names[0], "~") {
		t.Fatalf("two engines name one long stream %q and %q", names[0], names[1])
	}
}
