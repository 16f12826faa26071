package redact

import "math/bits"

// The vector kernel only finds the bytes of a set faster than a loop
// would; each stage judges the bytes it finds exactly as before, and its
// plain loop stays (the fallback, and the tests' reference). The sets are
// built at start from the tables the stages read (class, cmdRunT), so a
// byte added to one of them is seen by the kernel too. A new stage that
// walks a long run calls runLong (not run), and one that looks for a
// byte in a whole text may take a set of its own (newByteSet, and a case
// in TestByteSets and TestVecPaths). Where a set grows past eight groups
// of high nibbles, newByteSet says so, vecRuns turns the kernel off
// (the plain loops: slower, never wrong) and TestByteSets fails.

// A byteSet is a set of bytes as the vector kernels test it (setMask64):
// c is in the set where lo[c&15]&hi[c>>4] != 0. The high nibbles whose
// sets of low nibbles are equal share one of eight bits, so that a set
// of at most eight such groups fits (every class the scans walk does:
// the base64 alphabets, a word's bytes, the credential anchors). Each
// table is written twice, once for each 16-byte lane of a 32-byte
// register.
type byteSet struct {
	lo, hi [32]uint8
}

// newByteSet returns the byteSet of the bytes in reports true for, or
// ok false where it needs more than eight groups of high nibbles.
func newByteSet(in func(c byte) bool) (t byteSet, ok bool) {
	var sets []uint16
	for h := range 16 {
		var set uint16
		for l := range 16 {
			if in(byte(h<<4 | l)) {
				set |= 1 << l
			}
		}
		if set == 0 {
			continue
		}
		k := -1
		for j, s := range sets {
			if s == set {
				k = j
			}
		}
		if k < 0 {
			if len(sets) == 8 {
				return byteSet{}, false
			}
			k = len(sets)
			sets = append(sets, set)
		}
		t.hi[h] |= 1 << k
		for l := range 16 {
			if set&(1<<l) != 0 {
				t.lo[l] |= 1 << k
			}
		}
	}
	copy(t.lo[16:], t.lo[:16])
	copy(t.hi[16:], t.hi[:16])
	return t, true
}

// has reports whether c is in the set, as the kernel tests it.
func (t *byteSet) has(c byte) bool { return t.lo[c&15]&t.hi[c>>4] != 0 }

// classSets[cl] is the byteSet of the bytes of class cl (class[c]&cl != 0)
// for the classes runLong walks with the kernel (classSetOK).
var classSets, classSetOK = func() (t [256]byteSet, ok [256]bool) {
	for _, cl := range []uint8{word, b64alpha, b64std} {
		t[cl], ok[cl] = newByteSet(func(c byte) bool { return class[c]&cl != 0 })
	}
	return t, ok
}()

// credAnchorSet and anchorSet are credAnchor's and anchor's bytes for
// anchorCursor, nil where they do not fit the kernel's tables.
var credAnchorSet, anchorSet = setOf(&credAnchor), setOf(&anchor)

// credAnchorMask is credAnchorSet's value (mayRunRest, which runs the
// kernel only with vecRuns, itself only where every set fits: TestByteSets).
var credAnchorMask = func() byteSet {
	if credAnchorSet == nil {
		return byteSet{}
	}
	return *credAnchorSet
}()

func setOf(t *[256]uint8) *byteSet {
	b, ok := newByteSet(func(c byte) bool { return t[c] != 0 })
	if !ok {
		return nil
	}
	return &b
}

// cmdEndSet and cmdEncSet are cmdRunT's bytes that end a run (1) and
// those it or's into enc (2, 4, 8): cmdArgAt's walk of a run.
var (
	cmdEndSet, cmdEndSetOK = newByteSet(func(c byte) bool { return cmdRunT[c] == 1 })
	cmdEncSet, cmdEncSetOK = newByteSet(func(c byte) bool { return cmdRunT[c] > 1 })
)

// sSet is 's' and 'S' (passOrCopula).
var sSet, sSetOK = newByteSet(func(c byte) bool { return c|0x20 == 's' })

// vecRuns turns the kernel on in runLong, passOrCopula, cmdArgAt and
// anchorCursor where the CPU has
// it (haveVec) and the sets fit; TestVecRuns and FuzzVecRuns compare
// both paths, which a test may switch with it.
var vecRuns = haveVec && classSetOK[word] && classSetOK[b64alpha] && sSetOK && cmdEndSetOK && cmdEncSetOK && credAnchorSet != nil

// runVec is runLong(s, i, cl) by the kernel over the 64-byte blocks from
// i on, t being cl's set: the end of the run and ok, or where fewer than
// 64 bytes are left (the caller goes on from there without it).
func runVec(s []byte, i int, t *byteSet) (int, bool) {
	for ; i+64 <= len(s); i += 64 {
		if m := ^setMask64(&s[i], t); m != 0 {
			return i + bits.TrailingZeros64(m), true
		}
	}
	return i, false
}
