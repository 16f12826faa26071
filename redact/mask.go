package redact

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"hash"
	"os"
	"slices"
	"sync"
)

// Mask is what every masked value starts with.
const Mask = "******"

// FingerprintHex is the length of a fingerprint: 16 hex digits, 64 bits.
const FingerprintHex = 16

// EnvKey is the environment variable of the fingerprint key.
const EnvKey = "E2ATAP_FINGERPRINT_KEY"

// DefaultKey is the fingerprint key of the process: E2ATAP_FINGERPRINT_KEY
// if set, else 32 random bytes made once. Outputs that are not handed the
// configured key use it, so that they join with the record log's masks.
var DefaultKey = sync.OnceValue(func() []byte {
	if v := os.Getenv(EnvKey); v != "" {
		return []byte(v)
	}
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		panic("redact: no randomness for the fingerprint key: " + err.Error())
	}
	return k
})

var defaultMasker = sync.OnceValue(func() *Masker { return New(nil) })

// Default is the Masker of DefaultKey.
func Default() *Masker { return defaultMasker() }

// MaskText is Default().Text(s).
func MaskText(s string) string { return Default().Text(s) }

// MaskID is Default().ID(s).
func MaskID(s string) string { return Default().ID(s) }

// Masker masks text with fingerprints under one key. It is immutable and
// safe for concurrent use.
type Masker struct {
	key  []byte
	macs sync.Pool
}

// New makes a Masker keyed by key (empty: DefaultKey).
func New(key []byte) *Masker {
	if len(key) == 0 {
		key = DefaultKey()
	}
	m := &Masker{key: slices.Clone(key)}
	m.macs.New = func() any { return &mac{h: hmac.New(sha256.New, m.key)} }
	return m
}

type mac struct {
	h   hash.Hash
	sum [sha256.Size]byte
}

// Fingerprint is the 16 hex digits of HMAC-SHA256(key, v), truncated to
// 64 bits.
func Fingerprint(key []byte, v string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(v))
	return string(appendHex(nil, h.Sum(nil)[:FingerprintHex/2]))
}

// Fingerprint is Fingerprint(key, v) under the Masker's key.
func (m *Masker) Fingerprint(v string) string {
	return string(AppendFingerprint(m, nil, v))
}

// AppendFingerprint appends the fingerprint of v (16 hex digits).
func AppendFingerprint[T Text](m *Masker, dst []byte, v T) []byte {
	x := m.macs.Get().(*mac)
	x.h.Reset()
	x.h.Write(view(v)) // hash.Hash.Write neither keeps nor changes it
	dst = appendHex(dst, x.h.Sum(x.sum[:0])[:FingerprintHex/2])
	m.macs.Put(x)
	return dst
}

func appendHex(dst, b []byte) []byte {
	const hexd = "0123456789abcdef"
	for _, c := range b {
		dst = append(dst, hexd[c>>4], hexd[c&15])
	}
	return dst
}

// AppendMask appends "******(fp:<fingerprint of v>)".
func AppendMask[T Text](m *Masker, dst []byte, v T) []byte {
	dst = append(dst, Mask+"(fp:"...)
	dst = AppendFingerprint(m, dst, v)
	return append(dst, ')')
}

// Text returns s with every credential and item of personal data Find sees
// masked as "******(fp:…)" (equal values, equal masks). Text that holds
// nothing to mask is returned as it is, without allocating. Text that
// spells a shape with JSON \u00XX escapes ("\u0073k-…") is masked in its
// unescaped form.
func (m *Masker) Text(s string) string {
	if hasASCIIEscape(view(s)) {
		// Masked in the unescaped form, all of it: a shape spelled with
		// escapes next to one spelled plainly is masked too, and masking
		// the result again changes nothing.
		u := unescapeASCII(nil, view(s))
		if _, ok := Find(u, 0); !ok {
			return s
		}
		out, _ := AppendText(m, nil, u)
		return string(out)
	}
	if _, ok := Find(s, 0); !ok {
		return s
	}
	out, _ := AppendText(m, nil, s)
	return string(out)
}

// AppendText appends s with every match of Find masked and reports
// whether anything was.
func AppendText[T Text](m *Masker, dst []byte, text T) ([]byte, bool) {
	s := view(text)
	cur, changed := 0, false
	for cur < len(s) {
		x, ok := Find(s, cur)
		if !ok || x.End <= x.Start || x.Start < cur {
			break
		}
		dst = append(dst, s[cur:x.Start]...)
		dst = AppendMask(m, dst, s[x.Start:x.End])
		cur, changed = x.End, true
	}
	return append(dst, s[cur:]...), changed
}

// ID is for a stream id or any other identifier printed as it is: an id
// that holds a credential or personal data anywhere becomes
// "******(fp:<fingerprint of the whole id>)", so the same id always gets
// the same mark and different ids different ones; other ids are returned
// as they are.
func (m *Masker) ID(s string) string {
	if _, ok := Find(s, 0); !ok {
		if !hasASCIIEscape(view(s)) {
			return s
		}
		if _, ok := Find(unescapeASCII(nil, view(s)), 0); !ok {
			return s
		}
	}
	return string(AppendMask(m, nil, s))
}

// Contains reports whether Find sees anything in s.
func Contains[T Text](s T) bool {
	_, ok := find(view(s), 0)
	return ok
}

// HasASCIIEscape reports a JSON escape of a printable ASCII byte (\u0020
// to \u007f) in s, or a URL-encoded '%' before two hex digits ("%2540": a
// URL-encoded text encoded again): text that may spell a shape
// differently.
func HasASCIIEscape(s []byte) bool { return hasASCIIEscape(s) }

// UnescapeASCII appends s with its \u00XX escapes of ASCII bytes (also
// URL-encoded, "%5Cu0041"), its "\/" and its "%25" before two hex digits
// decoded, everything else as it
// is: the form in which Masker.Text masks text for which HasASCIIEscape is
// true.
func UnescapeASCII(dst, s []byte) []byte { return unescapeASCII(dst, s) }

// hasASCIIEscape reports a JSON escape of a printable ASCII byte (\u0020 to
// \u007f): the only way JSON text can spell a letter or digit differently;
// or an encoded '%' before two hex digits: a URL-encoded text encoded once
// more (a redirect's URL in a query parameter), in which every encoded
// form ("%3A%2F%2F", "%40") is spelled "%253A%252F%252F", "%2540".
//
// The two bytes are found with bytes.IndexByte (vector code), not a switch
// a byte: text unescaped once (code with a "C:\tmp" in it, a tool's
// result) holds few of them, and it is read whole when it holds none.
func hasASCIIEscape(s []byte) bool {
	for i := 0; i+5 < len(s); i++ {
		k := bytes.IndexByte(s[i:len(s)-5], '\\')
		if k < 0 {
			break
		}
		i += k
		if s[i+1] == 'u' && s[i+2] == '0' && s[i+3] == '0' && s[i+4] >= '2' && s[i+4] <= '7' {
			return true
		}
	}
	for i := 0; i+4 < len(s); i++ {
		k := bytes.IndexByte(s[i:len(s)-4], '%')
		if k < 0 {
			break
		}
		i += k
		if encodedPercent(s, i) || encodedUEscape(s, i) >= 0 {
			return true
		}
	}
	return false
}

// encodedUEscape returns the ASCII byte a URL-encoded JSON escape at s[i]
// spells ("%5Cu0041": JSON text with its own escapes, then URL-encoded, as
// a query parameter holding a tool's output is), or -1.
func encodedUEscape(s []byte, i int) int {
	c, _ := encodedUEscapeN(s, i)
	return c
}

// encodedUEscapeN is encodedUEscape and the length of the escape: also
// URL-encoded twice ("%255Cu0041", as the query parameter of a redirect's
// URL spells it).
func encodedUEscapeN(s []byte, i int) (int, int) {
	if i+9 < len(s) && s[i] == '%' && s[i+1] == '2' && s[i+2] == '5' {
		// "%255Cu0041": the '%' of "%5Cu0041" encoded once more.
		if s[i+3] != '5' || s[i+4]|0x20 != 'c' || s[i+5] != 'u' || s[i+6] != '0' || s[i+7] != '0' {
			return -1, 0
		}
		h, l := hexVal(s[i+8]), hexVal(s[i+9])
		if h < 2 || h > 7 || l < 0 {
			return -1, 0
		}
		return h<<4 | l, 10
	}
	if i+7 >= len(s) || s[i] != '%' || s[i+1] != '5' || s[i+2]|0x20 != 'c' || s[i+3] != 'u' || s[i+4] != '0' || s[i+5] != '0' {
		return -1, 0
	}
	h, l := hexVal(s[i+6]), hexVal(s[i+7])
	if h < 2 || h > 7 || l < 0 {
		return -1, 0
	}
	return h<<4 | l, 8
}

// MayHoldEncodedEscape reports "%25" or "%5Cu00" in data (a record): the
// strings of a record without either are searched as they are, or
// unescaped only when they held a '\\' (HasASCIIEscape, UnescapeASCII).
func MayHoldEncodedEscape(data []byte) bool {
	for i := 0; i < len(data); {
		k := bytes.IndexByte(data[i:], '%')
		if k < 0 {
			return false
		}
		i += k + 1
		if i+1 < len(data) && (data[i] == '2' && data[i+1] == '5' || data[i] == '5' && data[i+1]|0x20 == 'c' && i+4 < len(data) && data[i+2] == 'u' && data[i+3] == '0' && data[i+4] == '0') {
			return true
		}
	}
	return false
}

// encodedPercent reports "%25" and two hex digits at s[i].
func encodedPercent(s []byte, i int) bool {
	return i+4 < len(s) && s[i] == '%' && s[i+1] == '2' && s[i+2] == '5' && hexVal(s[i+3]) >= 0 && hexVal(s[i+4]) >= 0
}

// unescapeASCII appends s with its \u00XX escapes of ASCII bytes, its
// "\/" and its "%25" before two hex digits decoded, everything else as it
// is. The escape may be written with
// more backslashes, as JSON text held in JSON text held in a string spells
// it ("\\u0061", "\\\/").
func unescapeASCII(dst []byte, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			if c, n := encodedUEscapeN(s, i); c >= 0 {
				dst = append(dst, byte(c))
				i += n - 1
				continue
			}
			if encodedPercent(s, i) {
				dst = append(dst, '%')
				i += 2
				continue
			}
		}
		if s[i] == '\\' && i+1 < len(s) {
			j := i + 1
			for j < len(s) && j-i < 8 && s[j] == '\\' {
				j++
			}
			if j < len(s) && s[j] == '/' {
				dst = append(dst, '/')
				i = j
				continue
			}
			if j+4 < len(s) && s[j] == 'u' && s[j+1] == '0' && s[j+2] == '0' {
				h, l := hexVal(s[j+3]), hexVal(s[j+4])
				if h >= 0 && l >= 0 && h < 8 {
					dst = append(dst, byte(h<<4|l))
					i = j + 4
					continue
				}
			}
		}
		dst = append(dst, s[i])
	}
	return dst
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
