package validate

import (
	"fmt"
	"strings"
	"testing"
)

// TestLineLimitCRLF: a line's length against MaxLineBytes is its content,
// without the CR LF that ends it, on every way a file is read (read(2) or
// stdin, pread, a mapping, a split walk; lines longer than the 256 KiB
// at which readers collect a line in pieces): a CRLF line of exactly the
// limit is judged as its LF twin is, and one byte more is an e2a.decode
// naming the content's length. The CR counted as content on the long
// lines' ways: an e2a.decode for a record within the limit, only because
// its producer ended lines with CR LF.
func TestLineLimitCRLF(t *testing.T) {
	const limit = 300 << 10 // past bufferedLine
	var b strings.Builder
	for i, n := range []int{limit - 1, limit, limit + 1} {
		for j, eol := range []string{"\n", "\r\n"} {
			head := fmt.Sprintf(`{"request_id":"k%d%d","sequence":0,"pad":"`, i, j)
			fmt.Fprintf(&b, "%s%s\"}%s", head, strings.Repeat("p", n-len(head)-2), eol)
		}
	}
	p := writeTemp(t, "crlf.jsonl", []byte(b.String()))
	vc := DefaultConfig()
	vc.IdleTimeout = 0
	opts := ReadOptions{MaxLineBytes: limit}
	want := runCaptures(t, vc, FormatAuto, opts, oneShard, p)
	over := fmt.Sprintf("line of %d bytes is over the %d-byte limit", limit+1, limit)
	if got := strings.Count(want, " e2a.decode "); got != 2 || strings.Count(want, over) != 2 {
		t.Fatalf("read(2): %d e2a.decode, want 2 (%q, the two lines past the limit):\n%s", got, over, want)
	}
	for _, v := range append(jsonVariants(), walkVariant{shards: 1, inline: true, anyWalk: true}) {
		v.anyWalk = true // which way a variant takes here is not the point
		if got := runCaptures(t, vc, FormatAuto, opts, v, p); got != want {
			t.Errorf("%s differs from read(2): %s", v, firstDiff(want, got))
		}
	}
}
