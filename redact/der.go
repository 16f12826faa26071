package redact

import "bytes"

// A private key written as base64 with no PEM armor: the DER of a PKCS#8
// PrivateKeyInfo ("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC…", what `openssl pkcs8
// -topk8 -outform DER | base64` prints and Java and Node configs hold), an
// encrypted PKCS#8 EncryptedPrivateKeyInfo, a PKCS#1 RSAPrivateKey or DSA
// key ("MIIEowIBAAKCAQEA…"), a SEC1 ECPrivateKey ("MHcCAQEEI…"), or the
// body of an OpenSSH private key ("b3BlbnNzaC1rZXktdjEA…", the base64 of
// "openssh-key-v1\0"), or a PKCS#12 key store ("MIIJ…AgEDMII…": version 3
// and a pkcs7-data or signedData ContentInfo, pfxParse). Nothing in such a run is a token prefix, so the
// base64 check (base64.go) has nothing to decode for, and the run was
// masked as KindHighEntropy, no credential.
//
// Such a key is told by its structure, not by literal prefixes: the run's
// first bytes, decoded at alignment 0 (a key's encoding starts the run),
// are read as DER (derParse: a SEQUENCE whose elements are INTEGER 0 or 1
// and then an AlgorithmIdentifier and an OCTET STRING, INTEGERs, or an
// OCTET STRING and the EC key's context-tagged fields; or an
// AlgorithmIdentifier of a password-based cipher and an OCTET STRING) or
// as OpenSSH's record (its magic, then length-prefixed strings), and
// every length must fit the one around it and the run's length: the run
// ends, apart from its padding, where the structure does. A public key
// (SubjectPublicKeyInfo: its first element is a SEQUENCE and its key a
// BIT STRING), a certificate (a SEQUENCE first) and random base64 are
// none. A run cut by the text's end (a delta, a truncated field) is a key
// when the first derMinRead bytes of it are a key's start.
//
// The check runs at a run's first byte only, and only when that byte is
// 'M' (a SEQUENCE's tag, 0x30) or 'b' (the 'o' of "openssh"): random base64
// fails it within a few bytes. It reads through the ways the run's '+',
// '/' and '=' are written in URL-encoded and JSON text ("%2B", "\/",
// "\u002b") and through line breaks (a body wrapped at 64 or 70
// characters, also as "\n" in JSON text).

const (
	derMinRead = 16      // bytes of a key cut by the text's end that must read as one
	derMinKey  = 40      // the shortest whole key (Ed25519's PKCS#8 is 48 bytes)
	derMaxKey  = 1 << 16 // longer structures are not keys
	derBack    = 512     // how far back across escapes a run's start is looked for
)

// derVerdict is what derParse made of a run.
type derVerdict uint8

const (
	derNo    derVerdict = iota // not a key
	derWhole                   // a whole key, its last byte read
	derCut                     // a key's start, cut by the end of the text
)

// derReader decodes a base64 run a byte at a time.
type derReader struct {
	s     []byte
	i     int // the next byte of s
	acc   uint32
	bits  int
	chars int  // base64 characters read
	n     int  // bytes decoded
	cut   bool // the run stopped at the end of s (or, lead, anywhere)
	lead  bool // any end of the run counts as the text's
	min   int  // bytes a cut run must have read (derMinRead)
}

// sextet reads the run's next character: its 6-bit value, or false where
// the run stops (r.cut tells whether at the text's end).
func (r *derReader) sextet() (byte, bool) {
	s := r.s
	for {
		if r.i >= len(s) {
			r.cut = true
			return 0, false
		}
		c := s[r.i]
		if v := b64val[c]; v != 0xff {
			r.i++
			r.chars++
			return v, true
		}
		v, n, brk := derEscape(s, r.i)
		switch {
		case n > 0 && !brk:
			r.i += n
			r.chars++
			return v, true
		case n > 0 && r.i+n < len(s) && (b64val[s[r.i+n]] != 0xff || s[r.i+n] == '%' || s[r.i+n] == '\\'):
			r.i += n // a line break inside the run
			continue
		case n > 0 && r.i+n == len(s), n < 0:
			r.cut = true // the text ends in a line break, or in an escape cut in two
			return 0, false
		}
		r.cut = r.lead
		return 0, false
	}
}

// derEscape reads an escaped run character at s[i]: "%2B", "%2F", "\/",
// "\u002b", "\u002f" (any case) are '+' and '/' (n its length); a line
// break ("\n", "\r\n", their JSON escapes "\n" and "\r\n", "%0A",
// "%0D%0A") has brk set. n is 0 where there is none, -1 where s ends
// inside one.
func derEscape(s []byte, i int) (v byte, n int, brk bool) {
	rest := len(s) - i
	if rest <= 0 {
		return 0, 0, false
	}
	switch s[i] {
	case '%':
		if rest < 3 {
			return 0, -1, false
		}
		if s[i+1] == '2' {
			switch s[i+2] | 0x20 {
			case 'b':
				return 62, 3, false
			case 'f':
				return 63, 3, false
			}
		}
		if s[i+1] == '0' && s[i+2]|0x20 == 'a' {
			return 0, 3, true
		}
		if s[i+1] == '0' && s[i+2]|0x20 == 'd' && atFold(s, i+3, "%0a") {
			return 0, 6, true
		}
	case '\\':
		if rest < 2 {
			return 0, -1, false
		}
		switch s[i+1] {
		case '/':
			return 63, 2, false
		case 'n':
			return 0, 2, true
		case 'r':
			if at(s, i+2, "\\n") {
				return 0, 4, true
			}
		case 'u':
			if rest < 6 {
				return 0, -1, false
			}
			if at(s, i+2, "002") {
				switch s[i+5] | 0x20 {
				case 'b':
					return 62, 6, false
				case 'f':
					return 63, 6, false
				}
			}
		}
	case '\n':
		return 0, 1, true
	case '\r':
		if rest >= 2 && s[i+1] == '\n' {
			return 0, 2, true
		}
	}
	return 0, 0, false
}

// byte reads the next decoded byte.
func (r *derReader) byte() (byte, bool) {
	for r.bits < 8 {
		v, ok := r.sextet()
		if !ok {
			return 0, false
		}
		r.acc = r.acc<<6 | uint32(v)
		r.bits += 6
	}
	r.bits -= 8
	r.n++
	return byte(r.acc >> r.bits), true
}

// skip reads n bytes.
func (r *derReader) skip(n int) bool {
	for ; n > 0; n-- {
		if _, ok := r.byte(); !ok {
			return false
		}
	}
	return true
}

// tl reads a DER tag and a definite length (short form, or long form of
// one to three bytes).
func (r *derReader) tl() (tag byte, l int, ok bool) {
	if tag, ok = r.byte(); !ok {
		return 0, 0, false
	}
	b, ok := r.byte()
	if !ok {
		return 0, 0, false
	}
	if b < 0x80 {
		return tag, int(b), true
	}
	k := int(b & 0x7f)
	if k == 0 || k > 3 {
		return 0, -1, false // indefinite, or too long for a key
	}
	for ; k > 0; k-- {
		if b, ok = r.byte(); !ok {
			return 0, 0, false
		}
		l = l<<8 | int(b)
	}
	return tag, l, true
}

// stop is the verdict where a read failed: a key's start when the text
// ended after enough of it, else none.
func (r *derReader) stop() derVerdict {
	if r.cut && r.n >= r.min {
		return derCut
	}
	return derNo
}

// derParse reads the run as a private key's DER.
func derParse(r *derReader) derVerdict {
	tag, l, ok := r.tl()
	if !ok || tag != 0x30 {
		if !ok && l == 0 {
			return r.stop()
		}
		return derNo
	}
	if l < derMinKey-4 || l > derMaxKey {
		return derNo
	}
	end := r.n + l
	// next reads an element's tag and length, which must end by end.
	next := func() (byte, int, derVerdict) {
		t, l, ok := r.tl()
		if !ok {
			if l < 0 {
				return 0, 0, derNo
			}
			return 0, 0, r.stop()
		}
		if r.n+l > end {
			return 0, 0, derNo
		}
		return t, l, derWhole
	}
	// rest reads the elements to end: their tags must be in tags.
	rest := func(tags string, min int) derVerdict {
		for k := 0; r.n < end; k++ {
			t, l, v := next()
			if v != derWhole {
				return v
			}
			if !inTags(tags, t) {
				return derNo
			}
			if !r.skip(l) {
				return r.stop()
			}
			min--
		}
		if min > 0 {
			return derNo
		}
		return derWhole
	}
	t, l, v := next()
	if v != derWhole {
		return v
	}
	switch t {
	case 0x02: // a version: PrivateKeyInfo, RSAPrivateKey, ECPrivateKey
		if l != 1 {
			return derNo
		}
		ver, ok := r.byte()
		if !ok {
			return r.stop()
		}
		if ver == 3 {
			return pfxParse(r, next, rest)
		}
		if ver > 1 {
			return derNo
		}
		t, l, v := next()
		if v != derWhole {
			return v
		}
		switch {
		case t == 0x30: // PKCS#8: AlgorithmIdentifier, OCTET STRING, [0] attributes, [1] public key
			o, ok := r.byte()
			if !ok {
				return r.stop()
			}
			if o != 0x06 || l < 2 {
				return derNo
			}
			if !r.skip(l - 1) {
				return r.stop()
			}
			t, l, v := next()
			if v != derWhole {
				return v
			}
			if t != 0x04 || l == 0 {
				return derNo
			}
			if !r.skip(l) {
				return r.stop()
			}
			return rest("\xa0\xa1\x81", 0)
		case t == 0x02 && ver == 0: // PKCS#1 RSA (or DSA): INTEGERs, the modulus (p) first
			if l < 64 {
				return derNo
			}
			if !r.skip(l) {
				return r.stop()
			}
			return rest("\x02", 4)
		case t == 0x04 && ver == 1: // SEC1: the private key, [0] parameters, [1] public key
			if l < 16 || l > 72 {
				return derNo
			}
			if !r.skip(l) {
				return r.stop()
			}
			return rest("\xa0\xa1", 0)
		}
		return derNo
	case 0x30: // EncryptedPrivateKeyInfo: a password-based cipher's AlgorithmIdentifier
		// OID 1.2.840.113549.1.5.x (PKCS#5: PBES2, PBES1) or
		// 1.2.840.113549.1.12.1.x (PKCS#12's PBE).
		const oid = "\x06\x00\x2a\x86\x48\x86\xf7\x0d\x01"
		for k := 0; k < len(oid); k++ {
			b, ok := r.byte()
			if !ok {
				return r.stop()
			}
			if k != 1 && b != oid[k] || k == 1 && (b < 9 || b > 10) {
				return derNo
			}
		}
		arc, ok := r.byte()
		if !ok {
			return r.stop()
		}
		if arc != 5 && arc != 12 || l < len(oid)+1 {
			return derNo
		}
		if !r.skip(l - len(oid) - 1) {
			return r.stop()
		}
		t, l, v := next()
		if v != derWhole {
			return v
		}
		if t != 0x04 || r.n+l != end || l < 16 {
			return derNo
		}
		if !r.skip(l) {
			return r.stop()
		}
		return derWhole
	}
	return derNo
}

// inTags reports whether t is one of tags' bytes.
func inTags(tags string, t byte) bool {
	for k := 0; k < len(tags); k++ {
		if tags[k] == t {
			return true
		}
	}
	return false
}

// sshParse reads the run as an OpenSSH private key's body: the magic,
// the cipher's and the KDF's names, the KDF's options, the number of
// keys, their public keys and the (maybe encrypted) private section.
func sshParse(r *derReader) derVerdict {
	const magic = "openssh-key-v1\x00"
	for k := 0; k < len(magic); k++ {
		b, ok := r.byte()
		if !ok {
			return r.stop()
		}
		if b != magic[k] {
			return derNo
		}
	}
	u32 := func() (int, bool) {
		v := 0
		for k := 0; k < 4; k++ {
			b, ok := r.byte()
			if !ok {
				return 0, false
			}
			v = v<<8 | int(b)
		}
		return v, true
	}
	// str reads a string of at most max bytes; names are printable.
	str := func(max int, name bool) derVerdict {
		l, ok := u32()
		if !ok {
			return r.stop()
		}
		if l > max || name && l == 0 {
			return derNo
		}
		for ; l > 0; l-- {
			b, ok := r.byte()
			if !ok {
				return r.stop()
			}
			if name && (b <= 0x20 || b >= 0x7f) {
				return derNo
			}
		}
		return derWhole
	}
	for _, f := range [...]struct {
		max  int
		name bool
	}{{64, true}, {64, true}, {1024, false}} {
		if v := str(f.max, f.name); v != derWhole {
			return v
		}
	}
	n, ok := u32()
	if !ok {
		return r.stop()
	}
	if n < 1 || n > 16 {
		return derNo
	}
	for ; n > 0; n-- {
		if v := str(1<<14, false); v != derWhole {
			return v
		}
	}
	return str(derMaxKey, false)
}

// derKey reports the private key whose base64 starts the run at s[x]:
// end is past it and its padding (the text's end for a key cut by it).
// With lead, a run that stops anywhere after min bytes that read as a
// key's start is one (the pre-checks on raw JSON and on a tail).
func derKey(s []byte, x int, lead bool, min int) (end int, ok bool) {
	if x >= len(s) || !derLeads(s, x) {
		return 0, false
	}
	r := derReader{s: s, i: x, lead: lead, min: min}
	var v derVerdict
	if s[x] == 'M' {
		v = derParse(&r)
	} else {
		v = sshParse(&r)
	}
	switch v {
	case derCut:
		return len(s), true
	case derNo:
		return 0, false
	}
	if lead {
		return r.i, true
	}
	if r.n < derMinKey {
		return 0, false
	}
	// The run ends here: its padding, then no more of it.
	e := r.i
	for pad := (4 - r.chars%4) % 4; pad > 0 && e < len(s); pad-- {
		switch {
		case s[e] == '=':
			e++
		case atFold(s, e, "%3d"):
			e += 3
		case atFold(s, e, "\\u003d"):
			e += 6
		default:
			pad = 0
		}
	}
	if e < len(s) && (b64val[s[e]] != 0xff || s[e] == '=') {
		return 0, false // the run goes on past the key
	}
	if _, n, brk := derEscape(s, e); e < len(s) && n > 0 && !brk {
		return 0, false
	}
	return e, true
}

// derRunStart is the start of the run whose segment (of b64alpha bytes)
// starts at s[x]: back across escaped '+' and '/' ("%2B", "\/",
// "\u002b") and the segments before them, to from and at most derBack
// bytes. ok is false where it is not found, or where checked, the end of
// the segment the caller judged last, is where the escape before a
// segment starts (that segment's own look went back as far). The escape
// of a delimiter before the run ("\u0022", "%22", "\n") is not part of it.
func derRunStart(s []byte, from, x, checked int) (int, bool) {
	x0 := x
	for x > from {
		p := -1
		switch {
		case s[x-1] == '%' && x+1 < len(s) && s[x] == '2' && (s[x+1]|0x20 == 'b' || s[x+1]|0x20 == 'f'):
			p = x - 1
		case s[x-1] == '\\' && s[x] == '/':
			p = x - 1
		case s[x-1] == '\\' && x+4 < len(s) && atFold(s, x, "u002") && (s[x+4]|0x20 == 'b' || s[x+4]|0x20 == 'f'):
			p = x - 1
		}
		if p < 0 {
			break
		}
		if p == checked {
			return 0, false
		}
		for x = p; x > from && x0-x <= derBack && is(s[x-1], b64alpha); x-- {
		}
		if x0-x > derBack || x == p {
			return 0, false
		}
	}
	// A delimiter's escape before the run: its letters are in the alphabet.
	switch {
	case x > from && x+5 < len(s) && s[x-1] == '\\' && s[x] == 'u' && hexVal(s[x+1]) >= 0 && hexVal(s[x+2]) >= 0 && hexVal(s[x+3]) >= 0 && hexVal(s[x+4]) >= 0:
		x += 5
	case x > from && escLetter(s, x):
		x++
	case x > from && s[x-1] == '%' && x+2 < len(s) && hexVal(s[x]) >= 0 && hexVal(s[x+1]) >= 0:
		x += 2
	}
	return x, true
}

// derAt is the private key in the run whose segment starts at s[x] (see
// derRunStart and derKey): Find's check, and the pre-check's.
func derAt(s []byte, from, x, checked int) (Match, bool) {
	// (The test that turns most runs away, inlined: a call a run was
	// most of the cost on base64 images.)
	if x < len(s) && (s[x] == 'M' || s[x] == 'b' || x > from && (s[x-1] == '%' || s[x-1] == '\\')) {
		return derAtRun(s, from, x, checked)
	}
	return Match{}, false
}

// derAtRun is derAt past its first test.
func derAtRun(s []byte, from, x, checked int) (Match, bool) {
	st := x
	if x > from && (s[x-1] == '%' || s[x-1] == '\\') {
		// After an escape: an escaped '+' or '/' inside the run, or a
		// delimiter's ("\u0022", "%22", "\n") before it.
		var ok bool
		if st, ok = derRunStart(s, from, x, checked); !ok {
			return Match{}, false
		}
	}
	if !derLeads(s, st) || st == from && from > 0 && (is(s[from-1], b64alpha) || s[from-1] == '%' || s[from-1] == '\\') {
		// Not a key's first characters; or the run may start before
		// from (a search from inside it): its start is not seen, and the
		// pre-check, which looks at runs from their starts, says nothing
		// of it.
		return Match{}, false
	}
	e, ok := derKey(s, st, false, derMinRead)
	if !ok {
		return Match{}, false
	}
	return Match{st, e, KindPrivateKey}, true
}

// derLeads is derKey's first test, on the run's first three characters
// (no escape among them: they encode a SEQUENCE's tag and length, and the
// tag of its first element or its length's first byte): 'M' (0x30), 'C'
// to 'H' (a short length of 36 or more) and a multiple of 4 (the next tag,
// 0x02 or 0x30, has its top bits clear), or 'I' (a long length of one to
// three bytes) and 'E' to 'P'; or OpenSSH's "b3Bl".
func derLeads(s []byte, x int) bool {
	if x+4 > len(s) {
		return x+1 < len(s) && (s[x] == 'M' || s[x] == 'b') // (a cut run: derKey judges)
	}
	switch s[x] {
	case 'M':
		v1, v2 := b64val[s[x+1]], b64val[s[x+2]]
		if s[x+1] == 'I' {
			return v2 >= 4 && v2 <= 15 && s[x+2] != '-' && s[x+2] != '_'
		}
		return v1 >= 2 && v1 <= 7 && v2 != 0xff && v2%4 == 0
	case 'b':
		return s[x+1] == '3' && s[x+2] == 'B' && s[x+3] == 'l'
	}
	return false
}

// derTail reports a tail that ends in the first bytes of a key's base64
// (MayStartCredential): the run at its end, from a start within derBack
// bytes, reads as a key's start, however few bytes of it there are.
func derTail(s []byte) bool {
	x := len(s)
	for x > 0 && len(s)-x <= derBack && is(s[x-1], b64alpha) {
		x--
	}
	if len(s)-x > derBack || x == len(s) {
		return false
	}
	if s[x] != 'M' && s[x] != 'b' && (x == 0 || s[x-1] != '%' && s[x-1] != '\\') {
		return false
	}
	st, ok := derRunStart(s, 0, x, -1)
	if ok && len(s)-st < 4 {
		// Fewer characters than derLeads reads: what there are must
		// start one of its leads.
		return derTailLead(s[st:])
	}
	if !ok {
		return false
	}
	_, ok = derKey(s, st, false, 1)
	return ok
}

// derLead reports a run in s (raw JSON, a data: URL's payload) whose
// first bytes read as a key's start: MayHoldCredential's test, true
// wherever a decoded string of s holds a key derAt finds. It looks at
// each 'M' and at each "b3Bl" that starts a run.
func derLead(s []byte) bool {
	for i := 0; i < len(s); i++ {
		k := indexMB(s[i:])
		if k < 0 {
			return false
		}
		i += k
		if i > 0 && is(s[i-1], b64alpha) && !escLetter(s, i-1) && !(i >= 6 && s[i-6] == '\\' && s[i-5] == 'u') && !(i >= 3 && s[i-3] == '%') {
			continue
		}
		if _, ok := derKey(s, i, true, derMinRead); ok {
			return true
		}
	}
	return false
}

// indexMB is the index of the first 'M' or "b3Bl" in s, or -1.
func indexMB(s []byte) int {
	m := bytes.IndexByte(s, 'M')
	if b := bytes.Index(s, []byte("b3Bl")); b >= 0 && (m < 0 || b < m) {
		return b
	}
	return m
}

// derTailLead reports t, two or three characters, as the start of a
// lead derLeads passes.
func derTailLead(t []byte) bool {
	if len(t) < 2 {
		return false
	}
	switch {
	case t[0] == 'M' && t[1] == 'I':
		return len(t) == 2 || b64val[t[2]] >= 4 && b64val[t[2]] <= 15
	case t[0] == 'M' && b64val[t[1]] >= 2 && b64val[t[1]] <= 7:
		return len(t) == 2 || b64val[t[2]]%4 == 0
	case t[0] == 'b' && t[1] == '3':
		return len(t) == 2 || t[2] == 'B'
	}
	return false
}

// pfxParse reads the rest of a PKCS#12 file (a .p12 or .pfx: a key store,
// its private keys encrypted with a password that is often weak or empty)
// after its version 3: the authenticated safe, a ContentInfo of
// pkcs7-data or signedData (OID 1.2.840.113549.1.7.1 or .2), then its
// MacData. next and rest are derParse's.
func pfxParse(r *derReader, next func() (byte, int, derVerdict), rest func(string, int) derVerdict) derVerdict {
	t, l, v := next()
	if v != derWhole {
		return v
	}
	const oid = "\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x07"
	if t != 0x30 || l < len(oid)+1+4 {
		return derNo
	}
	for k := 0; k < len(oid); k++ {
		b, ok := r.byte()
		if !ok {
			return r.stop()
		}
		if b != oid[k] {
			return derNo
		}
	}
	arc, ok := r.byte()
	if !ok {
		return r.stop()
	}
	if arc != 1 && arc != 2 {
		return derNo
	}
	if !r.skip(l - len(oid) - 1) {
		return r.stop()
	}
	return rest("\x30", 0)
}
