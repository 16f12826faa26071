package frame

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// Attr is one attribute for the builders, and one entry of the reference's
// attribute map (CanonicalAttrs).
type Attr struct {
	Name, Value string
}

// nextAttr splits the first attribute off a raw attribute section that
// Decode has validated.
func nextAttr(b []byte) (name, value, rest []byte) {
	n := int(binary.BigEndian.Uint16(b))
	name = b[2 : 2+n]
	b = b[2+n:]
	v := int(binary.BigEndian.Uint32(b))
	return name, b[4 : 4+v], b[4+v:]
}

// canonical calls fn for each entry of the attribute map the reference
// decoder builds: a LinkedHashMap keyed by Java String, so a repeated name
// keeps the position of its first occurrence and the value of its last, and
// names that differ only in malformed bytes are the same key. name and
// value alias the frame and are not yet repaired (see appendJava).
// Quadratic in the attribute count, which Decode bounds to 64.
func (f *Frame) canonical(fn func(name, value []byte) bool) {
	b := f.attrs
	for i := 0; i < int(f.KeyCount); i++ {
		var name, value []byte
		name, value, b = nextAttr(b)
		if f.seenBefore(i, name) {
			continue
		}
		// A later duplicate overrides the value.
		r := b
		for j := i + 1; j < int(f.KeyCount); j++ {
			var n2, v2 []byte
			n2, v2, r = nextAttr(r)
			if javaEqual(name, n2) {
				value = v2
			}
		}
		if !fn(name, value) {
			return
		}
	}
}

// seenBefore reports whether one of the first i attributes has name.
func (f *Frame) seenBefore(i int, name []byte) bool {
	b := f.attrs
	for j := 0; j < i; j++ {
		var n2 []byte
		n2, _, b = nextAttr(b)
		if javaEqual(n2, name) {
			return true
		}
	}
	return false
}

// CanonicalAttrs returns the attributes as the reference exposes them
// (EventMeshFrame.attributes()): duplicates collapsed, last value at the
// first position, malformed UTF-8 replaced by U+FFFD. It allocates; the hot
// path uses Attrs and Attr.
func (f *Frame) CanonicalAttrs() []Attr {
	out := make([]Attr, 0, f.KeyCount)
	f.canonical(func(name, value []byte) bool {
		out = append(out, Attr{Name: javaString(name), Value: javaString(value)})
		return true
	})
	return out
}

// DupAttr returns the first attribute name that occurs again later in the
// frame (as the reference compares names: after UTF-8 repair). Such a
// frame is not canonical: the reference keeps only the last value.
func (f *Frame) DupAttr() (name []byte, dup bool) {
	b := f.attrs
	for i := 0; i < int(f.KeyCount); i++ {
		name, _, b = nextAttr(b)
		r := b
		for j := i + 1; j < int(f.KeyCount); j++ {
			var n2 []byte
			n2, _, r = nextAttr(r)
			if javaEqual(name, n2) {
				return name, true
			}
		}
	}
	return nil, false
}

// ValidUTF8 reports whether every attribute name and value is well-formed
// UTF-8. The reference silently replaces malformed bytes, so a frame that
// fails this does not survive a round trip through it. Data is not checked:
// it is opaque bytes.
func (f *Frame) ValidUTF8() bool {
	b := f.attrs
	for i := 0; i < int(f.KeyCount); i++ {
		var name, value []byte
		name, value, b = nextAttr(b)
		if !utf8.Valid(name) || !utf8.Valid(value) {
			return false
		}
	}
	return true
}

// OverLimits reports the first limit the reference enforces only when it
// encodes: an attribute name over 256 bytes, a value over 4096 bytes, or a
// frame over 16 MiB on the wire. A decoded frame may break them; the
// reference would then fail to re-publish it. what allocates only when
// over is true.
func (f *Frame) OverLimits() (what string, over bool) {
	b := f.attrs
	for i := 0; i < int(f.KeyCount); i++ {
		var name, value []byte
		name, value, b = nextAttr(b)
		if len(name) > MaxAttrNameBytes {
			return "attribute name length " + strconv.Itoa(len(name)) + " exceeds limit 256", true
		}
		if len(value) > MaxAttrValueBytes {
			return "attribute " + strconv.Quote(javaString(truncName(name))) + " value length " +
				strconv.Itoa(len(value)) + " exceeds limit 4096", true
		}
	}
	if f.Size > MaxFrameBytes {
		return "frame size " + strconv.Itoa(f.Size) + " exceeds limit 16777216", true
	}
	return "", false
}

// truncName keeps messages short when a name is itself huge.
func truncName(name []byte) []byte {
	if len(name) > 64 {
		return name[:64]
	}
	return name
}

// AttrNames is a set of attribute names for Find, prepared once: at most
// 64 distinct names of at most MaxAttrNameBytes bytes.
type AttrNames struct {
	names []string
	byLen [MaxAttrNameBytes + 1]uint64 // length → the names of that length
}

// NewAttrNames prepares names for Find; it panics on more than 64 names,
// a repeated one or one over MaxAttrNameBytes (a programming error).
func NewAttrNames(names ...string) *AttrNames {
	a := &AttrNames{names: names}
	if len(names) > 64 {
		panic("frame: more than 64 attribute names")
	}
	for i, n := range names {
		if len(n) > MaxAttrNameBytes {
			panic("frame: attribute name " + strconv.Quote(n) + " over the limit")
		}
		for _, m := range names[:i] {
			if m == n {
				panic("frame: attribute name " + strconv.Quote(n) + " repeated")
			}
		}
		a.byLen[len(n)] |= 1 << i
	}
	return a
}

// Find reads the frame's attributes in one pass, for a validator that
// needs several of them and the checks below on every frame. For each
// name i of names present, bit i of found is set and vals[i] is its value
// (the last occurrence, compared byte for byte, as Attr does); len(vals)
// must be at least the number of names. clean is true exactly when
// DupAttr, ValidUTF8 and OverLimits all pass (no repeated name, every name
// and value well-formed UTF-8, every limit kept): the caller asks them for
// their message only when it is false. Nothing is allocated.
func (f *Frame) Find(names *AttrNames, vals [][]byte) (found uint64, clean bool) {
	const few = 8 // names kept aside (where they start in a) for the repeat check
	var seen [few]int32
	long := f.Size > MaxFrameBytes
	a := f.attrs
	n := int(f.KeyCount)
	p := 0
	for i := 0; i < n; i++ {
		nl := int(binary.BigEndian.Uint16(a[p:]))
		if i < few {
			seen[i] = int32(p + 2)
		}
		name := a[p+2 : p+2+nl]
		p += 2 + nl
		vl := int(binary.BigEndian.Uint32(a[p:]))
		value := a[p+4 : p+4+vl]
		p += 4 + vl
		if vl > MaxAttrValueBytes {
			long = true
		}
		if nl > MaxAttrNameBytes {
			long = true
			continue
		}
		for m := names.byLen[nl]; m != 0; m &= m - 1 {
			if k := bits.TrailingZeros64(m); names.names[k] == string(name) {
				found |= 1 << k
				vals[k] = value
				break
			}
		}
	}
	if long {
		return found, false
	}
	// One OR over the whole section, length prefixes included: a prefix
	// byte with bit 7 set only sends the frame to the exact check.
	if orBytes(a)&0x8080808080808080 != 0 && !f.ValidUTF8() {
		return found, false
	}
	// Every name is well-formed UTF-8 now: names are the same Java String
	// exactly when their bytes are equal.
	if n > few {
		_, dup := f.DupAttr()
		return found, !dup
	}
	for i := 1; i < n; i++ {
		x := a[seen[i]:]
		x = x[:binary.BigEndian.Uint16(a[seen[i]-2:])]
		for j := 0; j < i; j++ {
			y := a[seen[j]:]
			if y = y[:binary.BigEndian.Uint16(a[seen[j]-2:])]; len(x) == len(y) && string(x) == string(y) {
				return found, false
			}
		}
	}
	return found, true
}

// orBytes ORs the bytes of b into a word, eight at a step; a byte's bit 7
// stays at bit 7 of some byte of the result.
func orBytes(b []byte) uint64 {
	var x uint64
	for len(b) >= 8 {
		x |= binary.LittleEndian.Uint64(b)
		b = b[8:]
	}
	for _, c := range b {
		x |= uint64(c)
	}
	return x
}
