package e2a

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/e2atap/e2atap/redact"
)

// MaxDepth is the deepest nesting of arrays and objects Scan accepts: the
// same limit as encoding/json (10000 nested containers are valid, 10001 are
// not), so that Scan and json.Valid agree on every input.
const MaxDepth = 10000

// SyntaxError is the error Scan returns for input that is not valid JSON.
type SyntaxError struct {
	// Offset is the index of the offending byte in the input, or the length
	// of the input when it ended too early.
	Offset int64
	Msg    string
}

func (e *SyntaxError) Error() string {
	return "e2a: invalid JSON at byte " + strconv.FormatInt(e.Offset, 10) + ": " + e.Msg
}

// Scan fills r from one JSON message without reflection and, in the steady
// state (r reused, its scratch buffer grown), without allocating. It is the
// fast path of the pipeline; ScanStd is its specification and the two are
// fuzzed against each other (FuzzScan).
//
// Scan reads the whole input once. It returns a *SyntaxError (with the byte
// offset) when the input is not valid JSON, ErrNotObject when it is valid
// JSON but not an object, and nil otherwise. On any error r is left reset.
//
// Decisions, all identical to ScanStd (encoding/json without the jsonv2
// experiment):
//   - Validity is json.Valid's: RFC 8259 grammar, whitespace is only space,
//     tab, CR and LF (a byte order mark is an error), control characters in
//     strings are errors, invalid UTF-8 inside strings is accepted, lone or
//     reversed \u surrogates are accepted.
//   - Nesting is bounded by MaxDepth (10000, encoding/json's limit).
//   - Duplicate keys: the last occurrence wins, at every level. A repeated
//     container key (body, params, metadata, error, acp_meta,
//     channel_context, params._meta, params.files, params.attachments)
//     forgets everything the earlier occurrence contributed.
//   - Keys are compared exactly (case-sensitive) after unescaping:
//     "sequ\u0065nce" is sequence, "Sequence" is not.
//   - Strings are unescaped; invalid UTF-8 and unpaired surrogates become
//     U+FFFD the way encoding/json replaces them. Str aliases the input when
//     the string needed no change (numbers always do), else r's scratch
//     buffer: a Value is valid until data is modified or r is scanned into
//     again (ScanStd copies; Scan does not).
//   - Numbers are kept as the raw literal (no range check: 1e400 and -0 are
//     kept as written); Record.Sequence interprets them.
//   - traceparent is taken from params._meta, acp_meta, then
//     channel_context: the first of those that is an object holding the
//     key wins, whatever the value's type (a null traceparent wins too).
func Scan(data []byte, r *Record) error { return scan(data, r, vectorScan) }

// scan is Scan with the vector pass (vec) or without.
func scan(data []byte, r *Record, vec bool) error {
	stale, staleSubs := r.startScan()
	if r.memo == nil {
		r.memo = new(keyMemos)
	}
	s := scanner{data: data, r: r}
	if vec && haveKernel && len(data) >= minVectorLen && len(data) <= maxVectorLen {
		r.blocks = classify(data, r.blocks)
		s.m = r.blocks
	}
	i := s.skipWS(0)
	if i >= len(data) {
		r.Reset()
		return s.syntaxError(len(data), "unexpected end of JSON input")
	}
	isObj := data[i] == '{'
	if isObj {
		i = s.object(i, 0, kTop)
	} else {
		i = s.skipValue(i, 0)
	}
	if i >= 0 {
		i = s.skipWS(i)
		if i < len(data) {
			i = s.fail(i, "after top-level value")
		}
	}
	if i < 0 {
		r.Reset()
		return s.syntaxError(s.errOff, s.errMsg)
	}
	for k := range s.tp {
		if s.tp[k].Type != Absent {
			r.Subs[STraceparent] = s.tp[k]
			r.subsSet |= 1 << STraceparent
			break
		}
	}
	r.clearStale(stale, staleSubs)
	if !isObj {
		return ErrNotObject
	}
	r.FileWithoutURI = s.noURI[0] || s.noURI[1]
	r.secretFree = !s.secretMaybe
	return nil
}

// scanner is the state of one Scan call. Functions return the index just
// past what they consumed, or -1 after recording the first error.
type scanner struct {
	data []byte
	// m: the bitmaps of data (masks.go), nil for the scalar path.
	m      []block
	r      *Record
	errOff int
	errMsg string
	// Traceparent candidates from params._meta, acp_meta and
	// channel_context, resolved in that order when the input is done.
	tp [3]Value
	// noURI: params.files / params.attachments has an entry without a
	// string uri; uriIsString: the entry being read has one so far.
	noURI       [2]bool
	uriIsString bool
	// secretMaybe: ScanSecrets may find something (Record.MayHoldSecret);
	// once set, no more secret checks are made.
	secretMaybe bool
	// inDelta: the string skipString reads is body.delta's (its
	// unescaped text is kept: Record.DeltaText); deltaEsc: it holds an
	// escape (Record.RawDelta's esc), set by skipString then.
	inDelta, deltaEsc bool
	// keyBefore: the knownKeys slot of the key object read last (or
	// afterUnknown), where skipContainer starts its keyMemo chain.
	keyBefore uint16
	// forgot: the objKinds forget was called for (bit k).
	forgot uint16
}

func (s *scanner) fail(i int, msg string) int {
	if s.errMsg == "" {
		s.errOff = i
		if i < len(s.data) {
			msg = "invalid character " + quoteByte(s.data[i]) + " " + msg
		}
		s.errMsg = msg
	}
	return -1
}

func (s *scanner) eof() int {
	if s.errMsg == "" {
		s.errOff = len(s.data)
		s.errMsg = "unexpected end of JSON input"
	}
	return -1
}

func (s *scanner) syntaxError(off int, msg string) error {
	return &SyntaxError{Offset: int64(off), Msg: msg}
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return "0x" + strconv.FormatUint(uint64(c), 16)
}

// skipWS returns the index of the first byte at or after i that is not
// whitespace, or len(s.data).
func (s *scanner) skipWS(i int) int {
	if i < len(s.data) && s.data[i] > ' ' {
		return i
	}
	return s.skipWSRun(i)
}

// skipWSIn is skipWS with s.data in a register (data).
func (s *scanner) skipWSIn(data []byte, i int) int {
	if i < len(data) && data[i] > ' ' {
		return i
	}
	return s.skipWSRun(i)
}

// skipWSRun is skipWS past the byte at i.
func (s *scanner) skipWSRun(i int) int {
	if s.m != nil {
		return s.nextNonWS(i)
	}
	return skipWS(s.data, i)
}

func skipWS(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// presenceOnly marks the Subs whose rules look only at their presence and
// JSON type (body.delta, body.result, body.message, body.payload): a string
// there is validated but not decoded, and its Str is nil (ScanStd does the
// same). They are the large values of a record (a model's output, often
// \u-escaped end to end), so decoding them would be most of a scan.
func presenceOnly(s Sub) bool {
	switch s {
	case SBodyDelta, SBodyResult, SBodyMessage, SBodyPayload:
		return true
	}
	return false
}

// Objects whose members Scan reads.
type objKind uint8

const (
	kTop objKind = iota
	kBody
	kMetadata
	kParams
	kError
	kMeta           // params._meta
	kAcpMeta        // acp_meta
	kChannelContext // channel_context
	kEntry          // an element of params.files / params.attachments
	kSkipped        // an object of skipContainer (keyMemo only: none is read)
)

// What to do with a member's value.
type actKind uint8

const (
	aSkip  actKind = iota
	aField         // arg: Field
	aSub           // arg: Sub
	aTrace         // arg: traceparent candidate
	aMeta          // params._meta
	aFiles         // arg: 0 files, 1 attachments
	aURI
)

type action struct {
	kind actKind
	arg  uint8
}

var (
	topKeys    = newKeyTable(FieldKeys[:], nil)
	bodyKeys   = newKeyTable(SubPaths[SBodyDeltaKind:SBodyEventType+1], func(p string) string { return p[len("body."):] })
	paramsKeys = newKeyTable([]string{"intent", "_meta", "files", "attachments"}, nil)
)

// lookup says what to do with the value of key inside an object of kind k.
func lookup(k objKind, key []byte) action {
	switch k {
	case kTop:
		if v, ok := topKeys.lookup(key); ok {
			return action{aField, v}
		}
	case kBody:
		if v, ok := bodyKeys.lookup(key); ok {
			return action{aSub, uint8(SBodyDeltaKind) + v}
		}
	case kMetadata:
		if string(key) == "_jiuwenswarm_server_push" {
			return action{aSub, uint8(SMetaServerPush)}
		}
	case kParams:
		if v, ok := paramsKeys.lookup(key); ok {
			switch v {
			case 0:
				return action{aSub, uint8(SParamsIntent)}
			case 1:
				return action{aMeta, 0}
			default:
				return action{aFiles, v - 2}
			}
		}
	case kError:
		switch string(key) {
		case "code":
			return action{aSub, uint8(SErrorCode)}
		case "message":
			return action{aSub, uint8(SErrorMessage)}
		}
	case kMeta, kAcpMeta, kChannelContext:
		if string(key) == "traceparent" {
			return action{aTrace, uint8(k - kMeta)}
		}
	case kEntry:
		if string(key) == "uri" {
			return action{aURI, 0}
		}
	}
	return action{}
}

// nestedKind is the kind of the top-level objects Scan looks into, and
// kTop for the others.
func nestedKind(f Field) objKind {
	switch f {
	case FBody:
		return kBody
	case FMetadata:
		return kMetadata
	case FParams:
		return kParams
	case FError:
		return kError
	case FAcpMeta:
		return kAcpMeta
	case FChannelContext:
		return kChannelContext
	}
	return kTop
}

// forget drops what an earlier occurrence of a duplicated container key
// contributed: the last occurrence wins, also for what is inside it.
func (s *scanner) forget(k objKind) {
	if s.forgot&(1<<k) == 0 {
		// The first occurrence: nothing to drop (what it would clear is
		// set only inside a container of kind k, and clear when a scan
		// starts: a new scanner, and Subs of an earlier Scan are not
		// marked by this one, clearStale).
		s.forgot |= 1 << k
		return
	}
	r := s.r
	switch k {
	case kBody:
		clear(r.Subs[SBodyDeltaKind : SBodyEventType+1])
		r.deltaRaw, r.deltaEsc, r.deltaSeen, r.deltaText = nil, false, false, nil
	case kMetadata:
		r.Subs[SMetaServerPush] = Value{}
	case kParams:
		r.Subs[SParamsIntent] = Value{}
		s.tp[0] = Value{}
		s.noURI = [2]bool{}
	case kError:
		r.Subs[SErrorCode] = Value{}
		r.Subs[SErrorMessage] = Value{}
	case kAcpMeta:
		s.tp[1] = Value{}
	case kChannelContext:
		s.tp[2] = Value{}
	}
}

// object reads the object at data[i] ('{'), at nesting depth+1, handing
// each member to member.
func (s *scanner) object(i, depth int, k objKind) int {
	data := s.data
	n := len(data)
	depth++
	i = s.skipWSIn(data, i+1)
	if i >= n {
		return s.eof()
	}
	if data[i] == '}' {
		return i + 1
	}
	memo := s.r.memo
	prev := uint16(knownKeySlots) + uint16(k) // the key before: none yet
	// run: the members in a row that matched whole (keyMemo.whole) from
	// runStart, the first after the key runPrev; a run of two or more is
	// remembered as a span (putSpan) when it ends, which the first of
	// them then looks for (memo.span).
	run, runStart, runPrev := 0, 0, uint16(0)
	var pad [keyMemoLen]byte
	for {
		if data[i] != '"' {
			return s.fail(i, "looking for beginning of object key string")
		}
		var act action
		secretKey := false
		// The key that followed the previous one last time, written the
		// same way (keyMemo): its bytes through the colon compared at
		// once say what the look-ups below would.
		var e *keyMemo
		ks := i // the key's start, where e's bytes are
		ways := &memo.e[prev]
		// d: the bytes a memo compares (memoAt: also the last member's,
		// the record's closing brace within keyMemoLen bytes of its key).
		d := memoAt(data, i, &pad)
		{
			if e = &ways[0]; e.whole == 0 || e.k != k || !e.matchN(d, &memoMasks[e.whole]) {
				if e = &ways[1]; e.whole == 0 || e.k != k || !e.matchN(d, &memoMasks[e.whole]) {
					e = nil
				}
			}
			if e != nil {
				if run == 0 && e.span != 0 {
					if sp := memo.span(e, prev, k, data, i); sp != nil {
						s.applySpan(sp, i)
						prev = sp.h
						s.keyBefore = prev
						i += int(sp.n)
						if sp.last {
							return i
						}
						if i = s.skipWSIn(data, i); i >= n {
							return s.eof()
						}
						continue
					}
				}
				if run == 0 {
					runStart, runPrev = i, prev
				}
				run++
				// The whole member as it was last time (keyMemo.whole):
				// its value is what member would read, and what follows
				// it what the loop below would skip.
				prev = uint16(e.h)
				s.keyBefore = prev
				e.vmiss = 0
				if e.set == setField && !e.nest {
					// memoSet's common case, inline.
					f := e.act.arg
					s.r.fieldsSet |= 1 << f
					v := &s.r.Fields[f]
					*v = Value{Type: e.vt, Bool: e.vb}
					if e.str {
						a := i + int(e.m) + int(e.so)
						v.Str = data[a : a+int(e.sl) : a+int(e.sl)]
					}
				} else if e.set != setNone {
					s.memoSet(e, i+int(e.m))
				}
				i += int(e.whole)
				if e.last {
					if run > 1 {
						memo.putSpan(data, k, runPrev, runStart, i)
					}
					return i
				}
				if i = s.skipWSIn(data, i); i >= n {
					return s.eof()
				}
				continue
			}
			if e = &ways[0]; e.m == 0 || e.k != k || !e.match(d) {
				if e = &ways[1]; e.m == 0 || e.k != k || !e.match(d) {
					e = nil
				}
			}
		}
		if run != 0 {
			if run > 1 {
				memo.putSpan(data, k, runPrev, runStart, i)
			}
			run = 0
		}
		if e != nil {
			act = e.act
			secretKey = e.secret && !s.secretMaybe
			prev = uint16(e.h)
			i += int(e.m)
		} else {
			i, act, secretKey = s.key(i, k, &prev, ways)
			if i < 0 {
				return i
			}
		}
		s.keyBefore = prev
		i = s.skipWSIn(data, i)
		if i >= n {
			return s.eof()
		}
		if secretKey {
			s.secretValue(i)
		}
		// fill: e may remember the value and what follows it (fillValue),
		// which the pre-check has passed.
		fill := e != nil && !e.noValue && !s.secretMaybe && e.bumpMiss()
		vs := i
		// The common members without a call to member: a null, a
		// boolean or a string, kept in a top-level field or skipped
		// (member does the same with them).
		switch c := data[i]; {
		case c == 'n' && i+4 <= n && string(data[i:i+4]) == "null" && (act.kind == aSkip || act.kind == aField && nestedKind(Field(act.arg)) == kTop):
			if act.kind == aField {
				s.r.fieldsSet |= 1 << act.arg
				s.r.Fields[act.arg] = Value{Type: Null}
			}
			i += 4
		case c == 't' && i+4 <= n && string(data[i:i+4]) == "true" && act.kind == aField && nestedKind(Field(act.arg)) == kTop:
			s.r.fieldsSet |= 1 << act.arg
			s.r.Fields[act.arg] = Value{Type: Bool, Bool: true}
			i += 4
		case c == 'f' && i+5 <= n && string(data[i:i+5]) == "false" && act.kind == aField && nestedKind(Field(act.arg)) == kTop:
			s.r.fieldsSet |= 1 << act.arg
			s.r.Fields[act.arg] = Value{Type: Bool}
			i += 5
		case c == '"' && act.kind == aField && nestedKind(Field(act.arg)) == kTop:
			s.r.fieldsSet |= 1 << act.arg
			if e != nil && e.v != 0 && e.matchValue(d) {
				// The clean string that followed the key last time
				// (keyMemo.v): what readString would say.
				e.vmiss = 0
				j := i + int(e.v)
				s.r.Fields[act.arg] = Value{Type: String, Str: data[i+1 : j-1 : j-1]}
				i = j
				fill = false
				break
			}
			if e != nil && e.lv != 0 && e.longAt(memo, data, i) && i == ks+int(e.m) {
				// The long clean string of last time (keyMemo.lv).
				e.vmiss = 0
				j := i + int(e.lv)
				s.r.Fields[act.arg] = Value{Type: String, Str: data[i+1 : j-1 : j-1]}
				i = j
				fill = false
				break
			}
			i = s.readString(i, &s.r.Fields[act.arg])
		case c == '"' && act.kind == aSkip:
			if e != nil && e.v != 0 && e.matchValue(d) {
				e.vmiss = 0
				i += int(e.v)
				fill = false
				break
			}
			if e != nil && e.lv != 0 && e.longAt(memo, data, i) && i == ks+int(e.m) {
				e.vmiss = 0
				i += int(e.lv)
				fill = false
				break
			}
			i = s.skipString(i)
		default:
			i = s.member(i, depth, act)
		}
		if i < 0 {
			return i
		}
		ve := i
		i = s.skipWSIn(data, i)
		if i >= n {
			return s.eof()
		}
		switch data[i] {
		case ',':
			i++
			if i < n && data[i] == ' ' {
				i++ // json.dumps' ", " and ": "
			}
			i = s.skipWSIn(data, i)
			if i >= n {
				return s.eof()
			}
			if fill && !s.secretMaybe {
				e.fillAfter(memo, data, ks, vs, ve, i)
			}
		case '}':
			if fill && !s.secretMaybe {
				e.fillAfter(memo, data, ks, vs, ve, i+1)
			}
			return i + 1
		default:
			return s.fail(i, "after object key:value pair")
		}
	}
}

// key reads the key at data[i] ('"') of an object of kind k through the
// colon and the one space json.dumps writes after it, and says what to do
// with the value. prev is the knownKeys slot of the key before (see
// keyMemo); key remembers this key after it, and sets prev to this one.
func (s *scanner) key(i int, k objKind, prev *uint16, ways *[2]keyMemo) (next int, act action, secretKey bool) {
	data := s.data
	n := len(data)
	start := i
	// Most keys are plain: the first stop byte is the closing quote.
	end, esc := 0, false
	if s.m != nil {
		end = s.nextStop(i + 1)
	}
	if s.m == nil || end >= n || data[end] != '"' {
		end, esc = s.keyEnd(i)
	}
	if end < 0 {
		return end, act, false
	}
	key := data[i+1 : end]
	mark := len(s.r.scratch)
	if esc {
		s.r.scratch = AppendUnquoted(s.r.scratch, key)
		key = s.r.scratch[mark:]
	}
	// Most keys are known (knownKeys): one look-up gives a top-level
	// key's field and any key's secret class (lookup and
	// secretKeyClass, fused).
	var h uint
	var known bool
	if esc {
		h, known = knownKeys.find(key)
	} else {
		// knownKeyAt, written out: the hot loop makes no call for a
		// key found in its first slot.
		var a, b uint64
		if kn := len(key); i+9 <= n {
			a = binary.LittleEndian.Uint64(data[i+1:])
			if kn < 8 {
				a &= 1<<(8*kn) - 1
			} else {
				b = binary.LittleEndian.Uint64(data[end-8:])
			}
		} else {
			a, b = keyWords(key)
		}
		h = knownKeyHash(a, b, len(key))
		if e := &knownKeys.slot[h]; e.n != 0 && int(e.n) == len(key) && e.a == a && e.b == b && (len(key) <= 16 || e.key == string(key)) {
			known = true
		} else if at, ok := knownKeys.findWords(a, b, key); ok {
			h, known = at, true
		}
		// (Not found: h stays the key's home slot, for unknownKeyMemo.)
	}
	if k == kTop && known {
		if f := knownKeys.slot[h].top; f != 0 {
			act = action{aField, f - 1}
		}
	} else {
		act = lookup(k, key)
	}
	unknown := -1 // an unknown key's unknownKeyMemo, when keyKinds knew it
	if !s.secretMaybe {
		if known {
			secretKey = knownKeys.slot[h].kind != ""
		} else if secretKey = s.secretKeyClass(key); !s.secretMaybe && !esc {
			unknown = int(unknownKeyMemo(h))
		}
	}
	s.r.scratch = s.r.scratch[:mark]
	i = s.skipWSIn(data, end+1)
	if i >= n {
		return s.eof(), act, false
	}
	if data[i] != ':' {
		return s.fail(i, "after object key"), act, false
	}
	i++
	if i < n && data[i] == ' ' {
		i++ // json.dumps' ", " and ": "
	}
	switch {
	case known && !esc:
		if i-start <= keyMemoLen {
			put(ways, data, start, i, k, h, act, knownKeys.slot[h].kind != "")
		}
		*prev = uint16(h)
	case unknown >= 0:
		if i-start <= keyMemoLen {
			put(ways, data, start, i, k, uint(unknown), act, secretKey)
		}
		*prev = uint16(unknown)
	case known:
		*prev = uint16(h)
	default:
		*prev = afterUnknown
	}
	return i, act, secretKey
}

// keyMemo remembers, for the key before (in knownKeys' slots), a key
// that followed it, as written from its opening quote through the colon
// (and the space json.dumps puts after it): records of one producer write
// their keys in the same order and the same way. The bytes are compared
// at once (keyMemoLen, masked) instead of finding the key's end, hashing
// it, and finding the colon; a key that does not match is read as any
// other. A record keeps its own (Record.memo), so that shards share
// nothing.
type keyMemo struct {
	w [keyMemoLen / 8]uint64 // the bytes, zero past m+v
	m uint8                  // the number of bytes; 0: none
	// v: the bytes of the value that followed the key right after its m
	// bytes last time, kept in w past them, or 0 (fillValue): a clean
	// string (quotes included), a literal, a number or an empty
	// container. object's loop takes a string of a top-level field or a
	// skipped member from them. vmiss counts the members whose value
	// did not match since one did (bumpMiss).
	v, vmiss uint8
	// sep: the bytes after the value that the loop skipped last time (a
	// comma and the white space before the next key, or white space and
	// the closing brace: last), kept in w past the value's, or 0. A
	// member that matches all whole = m+v+sep bytes is done at once: its
	// value set as set, vt and vb say (memoSet), the loop goes on at the
	// next key.
	sep   uint8
	whole uint8
	last  bool
	set   memoSetKind
	vt    JSONType
	vb    bool
	// str: the value's Str is data[vs+so:vs+so+sl] (a string's body, a
	// number); nest: the field is a container that memoSet forgets.
	str, nest bool
	so, sl    uint8
	// noValue: the memo remembers no value (a secret key's, or one
	// memoSettable says no to).
	noValue bool
	// lv: the bytes of a clean string value that followed the key right
	// after its m bytes last time but did not fit in w with them (a
	// converter's name, a long kind), kept in its long value buffer, or 0
	// (fillLong): it is taken as v's are, compared at once (runtime
	// memequal) instead of read and pre-checked again. lb: 1 + the index
	// of the memo's own buffer in keyMemos.longs, or 0 (none yet), kept
	// when the memo is filled again (put swaps it with the older way's);
	// an index, not a pointer, so that a keyMemo is 64 bytes, a cache
	// line (the fields are in the order that makes it so).
	lb uint16
	// h: the key's knownKeys slot, or an unknown key's unknownKeyMemo.
	h      uint16
	k      objKind
	act    action
	secret bool // knownKeys.slot[h].kind != ""
	// span: 1 + the index of the span (putSpan) made of a run that e's
	// whole member started last, or 0; only then does object look for
	// one.
	span uint8
	lv   uint8
	// sig: what the whole member sets and how it is written, but not its
	// value's bytes (the key, the lengths, the value's type and where its
	// Str is): a span that starts with a member of the same sig does
	// what e does at the bytes e matched.
	sig uint64
}

// What a keyMemo's whole member sets (memoSet).
type memoSetKind uint8

const (
	setNone  memoSetKind = iota // a skipped member
	setField                    // Fields[act.arg]
	setSub                      // Subs[act.arg]
)

// keyMemoLen: the bytes a keyMemo compares, so keys of up to 28 bytes.
const keyMemoLen = 32

// longValueLen: the longest value a keyMemo keeps apart from its key
// (keyMemo.lv), quotes included.
const longValueLen = 128

// keyMemos are a record's key memos (Record.memo), 62 KiB (and its spans
// and long values).
type keyMemos struct {
	// e[p]: after the key in slot p; p is knownKeySlots+kind for an
	// object's first key, an unknownKeyMemo after an unknown key that
	// keyKinds knows, and afterUnknown after any other. Two for
	// each, the newer first: a producer's requests and responses follow
	// a key with different keys.
	e [afterUnknown + 1 + unknownKeyMemos][2]keyMemo
	// s[p]: the same in the objects skipContainer reads, where p is also
	// the key whose value the container is for an object's first key,
	// and an unknown key has a slot of its own (unknownKeyMemo).
	s [afterUnknown + 1 + unknownKeyMemos]keyMemo
	// spans: runs of members that matched whole (spanmemo.go), made on
	// the first run.
	spans *spanMemos
	// longs: the memos' long value buffers (keyMemo.lb), one a memo at
	// most, made when the memo first keeps a long value.
	longs [][longValueLen]byte
}

const afterUnknown = knownKeySlots + uint16(kEntry) + 1

// unknownKeyMemos: a key outside knownKeys whose class keyKinds knows (a
// producer's extension fields, a tool's arguments, nested metadata) is
// memo slot unknownKeyMemo(h) of its knownKeys home slot h, in object's
// memos (e) and skipContainer's (s), so that the key after it is
// remembered as after a known key. Keys sharing a slot only miss
// (a memo compares the bytes). Before, every key after an unknown key
// shared afterUnknown and missed: records with nested tool arguments
// cost 2.6 times the instructions per byte of a reference record.
const unknownKeyMemos = 64

func unknownKeyMemo(h uint) uint16 { return afterUnknown + 1 + uint16(h%unknownKeyMemos) }

// memoMasks[m] keeps the first m bytes of keyMemoLen.
var memoMasks = func() (t [keyMemoLen + 1][keyMemoLen / 8]uint64) {
	for m := range t {
		for c := 0; c < m; c++ {
			t[m][c/8] |= 0xff << (8 * (c % 8))
		}
	}
	return t
}()

// putSkipped is put for the objects of skipContainer; h is a knownKeys
// slot or an unknownKeyMemo, secret the key's class.
func (t *keyMemos) putSkipped(prev uint16, data []byte, start, end int, h uint, secret bool) {
	t.s[prev].fill(data, start, end, kSkipped, h, action{}, secret)
}

// put remembers data[start:end] (at most keyMemoLen bytes), the key of
// slot h in an object of kind k, whose value is act's, after prev.
func put(ways *[2]keyMemo, data []byte, start, end int, k objKind, h uint, act action, secret bool) {
	// The newer memo is way 0; each keeps a long value buffer of its own.
	lb := ways[1].lb
	ways[1] = ways[0]
	ways[0].lb = lb
	ways[0].fill(data, start, end, k, h, act, secret)
}

func (e *keyMemo) fill(data []byte, start, end int, k objKind, h uint, act action, secret bool) {
	m := end - start
	e.load(data, start, end)
	e.m, e.h, e.k, e.act, e.v, e.vmiss, e.sep, e.whole, e.last, e.set = uint8(m), uint16(h), k, act, 0, 0, 0, 0, false, setNone
	e.span, e.lv = 0, 0
	e.secret = secret
	e.noValue = e.secret || !memoSettable(k, act)
}

// load sets e's bytes to data[start:end] (at most keyMemoLen bytes),
// zero past them.
func (e *keyMemo) load(data []byte, start, end int) {
	if start+keyMemoLen <= len(data) {
		mask := &memoMasks[end-start]
		for j := range e.w {
			e.w[j] = binary.LittleEndian.Uint64(data[start+8*j:]) & mask[j]
		}
		return
	}
	var pad [keyMemoLen]byte
	copy(pad[:], data[start:end])
	for j := range e.w {
		e.w[j] = binary.LittleEndian.Uint64(pad[8*j:])
	}
}

// memoAt is the keyMemoLen bytes a memo compares at data[i]: data's own,
// or, within keyMemoLen bytes of its end, a copy in pad that is zero past
// it. A memo holds the bytes of valid JSON text, none of them zero, and
// zero past them: the bytes past data's end match none of them, and a
// match says that the bytes it compared are data's.
func memoAt(data []byte, i int, pad *[keyMemoLen]byte) *[keyMemoLen]byte {
	if i+keyMemoLen <= len(data) {
		return (*[keyMemoLen]byte)(data[i:])
	}
	*pad = [keyMemoLen]byte{}
	copy(pad[:], data[i:])
	return pad
}

// match reports whether d starts with e's m bytes (the key).
func (e *keyMemo) match(d *[keyMemoLen]byte) bool { return e.matchN(d, &memoMasks[e.m]) }

// matchValue reports whether d starts with e's m+v bytes (the key and the
// value after it).
func (e *keyMemo) matchValue(d *[keyMemoLen]byte) bool { return e.matchN(d, &memoMasks[e.m+e.v]) }

func (e *keyMemo) matchN(d *[keyMemoLen]byte, mask *[keyMemoLen / 8]uint64) bool {
	return (binary.LittleEndian.Uint64(d[:8])^e.w[0])&mask[0]|
		(binary.LittleEndian.Uint64(d[8:16])^e.w[1])&mask[1]|
		(binary.LittleEndian.Uint64(d[16:24])^e.w[2])&mask[2]|
		(binary.LittleEndian.Uint64(d[24:])^e.w[3])&mask[3] == 0
}

// fillValue remembers with e (matched at ks) the value data[vs:ve] that
// its caller read after it and whose credential pre-check passed
// (MayHoldCredentialText false, or no anchor byte), and what its caller
// skipped after the value, data[ve:end]: the separator through the
// white space before the next key, or through the object's closing
// brace. The value is kept when it directly follows the key's m bytes and
// fits in keyMemoLen with them: a string that is printable ASCII with no
// escape (which readString keeps as written), a literal, a number, or an
// empty object or array. The separator is kept too (keyMemo.sep) when it
// fits as well (keyMemo.whole). A member memoSettable says no to keeps
// nothing.
func (e *keyMemo) fillValue(data []byte, ks, vs, ve, end int) {
	e.v, e.sep, e.whole, e.last, e.set, e.lv = 0, 0, 0, false, setNone, 0
	if ve <= vs {
		return
	}
	v := Value{Type: Number}
	switch data[vs] {
	case '"':
		if ve-vs < 2 {
			return
		}
		for _, c := range data[vs+1 : ve-1] {
			if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
				return
			}
		}
		v.Type = String
	case '{', '[':
		if ve-vs != 2 || e.k == kSkipped {
			// (skipContainer checks the depth of a container.)
			return
		}
		v.Type = Object
		if data[vs] == '[' {
			v.Type = Array
		}
	case 'n':
		v.Type = Null
	case 't':
		v = Value{Type: Bool, Bool: true}
	case 'f':
		v.Type = Bool
	}
	m := ve
	if end-ks <= keyMemoLen {
		m = end
	}
	e.load(data, ks, m)
	e.v = uint8(ve - vs)
	if m == end {
		e.sep, e.whole, e.last = uint8(end-ve), uint8(end-ks), data[end-1] == '}'
		e.vt, e.vb = v.Type, v.Bool
		e.str, e.so, e.sl = false, 0, 0
		switch v.Type {
		case String:
			e.str, e.so, e.sl = true, 1, uint8(ve-vs-2)
		case Number:
			e.str, e.sl = true, uint8(ve-vs)
		}
		switch e.act.kind {
		case aField:
			e.set = setField
			e.nest = nestedKind(Field(e.act.arg)) != kTop
		case aSub:
			e.set = setSub
		}
		e.sig = uint64(e.h) | uint64(e.whole)<<16 | uint64(e.m)<<24 | uint64(e.vt)<<32 | uint64(e.so)<<40 | uint64(e.sl)<<48
		if e.vb {
			e.sig |= 1 << 56
		}
		if e.last {
			e.sig |= 1 << 57
		}
		if e.str {
			e.sig |= 1 << 58
		}
	}
}

// fillAfter is fillValue, or fillLong for a value that does not fit
// in keyMemoLen with the key, where its caller read the value data[vs:ve]
// right after e's m bytes at ks (and white space and a separator up to
// end) and its credential pre-check passed.
// t holds e.
func (e *keyMemo) fillAfter(t *keyMemos, data []byte, ks, vs, ve, end int) {
	if vs != ks+int(e.m) {
		return
	}
	if ve-ks <= keyMemoLen {
		e.fillValue(data, ks, vs, ve, end)
	} else if ve-vs <= longValueLen && data[vs] == '"' {
		e.fillLong(t, data[vs:ve])
	}
}

// fillLong remembers the string v (quotes included) that followed e's
// key and does not fit in w with it, when it is printable ASCII with no
// escape (which readString keeps as written, and skipString reads as
// such); else e remembers no value.
// t holds e.
func (e *keyMemo) fillLong(t *keyMemos, v []byte) {
	e.v, e.sep, e.whole, e.last, e.set, e.lv = 0, 0, 0, false, setNone, 0
	if looksDateTime(v[1 : len(v)-1]) {
		return // (new each record: a compare that fails)
	}
	for _, c := range v[1 : len(v)-1] {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return
		}
	}
	if e.lb == 0 {
		t.longs = append(t.longs, [longValueLen]byte{})
		e.lb = uint16(len(t.longs))
	}
	e.lv = uint8(copy(t.longs[e.lb-1][:], v))
}

// longAt reports whether data[i:] starts with e's long value (lv != 0):
// a whole clean string, so the string at data[i] is it. t holds e.
func (e *keyMemo) longAt(t *keyMemos, data []byte, i int) bool {
	n := int(e.lv)
	return n != 0 && n <= len(data)-i && string(data[i:i+n]) == string(t.longs[e.lb-1][:n])
}

// bumpMiss counts a member whose key e matched but not its value
// (vmiss), and reports whether e is to remember the new value: when it
// has none, or the one it has was missed 2, 4, 8, ... times in a row (a
// value that changes each record, an id or a timestamp, is copied ever
// less often; one of two values that alternate stays).
func (e *keyMemo) bumpMiss() bool {
	if e.vmiss < 255 {
		e.vmiss++
	} else {
		e.vmiss = 128
	}
	return e.v == 0 && e.lv == 0 || e.vmiss >= 2 && e.vmiss&(e.vmiss-1) == 0
}

// memoSettable: memoSet can do what member does with the value of a
// member act says to do in an object of kind k: skip it, or set a
// top-level field (forgetting what a repeated container key held) or a
// Sub that is decoded (not presenceOnly ones, which keep the raw delta).
// The others (traceparent, _meta, files, uri) set scanner state.
func memoSettable(k objKind, act action) bool {
	switch act.kind {
	case aSkip:
		return true
	case aField:
		return k == kTop
	case aSub:
		return !presenceOnly(Sub(act.arg))
	}
	return false
}

// memoSet does what member does with the value at data[vs] that e
// remembered (fillValue) for a field or a Sub.
func (s *scanner) memoSet(e *keyMemo, vs int) {
	v := Value{Type: e.vt, Bool: e.vb}
	if e.str {
		a := vs + int(e.so)
		v.Str = s.data[a : a+int(e.sl) : a+int(e.sl)]
	}
	if e.set == setSub {
		s.r.subsSet |= 1 << e.act.arg
		s.r.Subs[e.act.arg] = v
		return
	}
	f := Field(e.act.arg)
	s.r.fieldsSet |= 1 << f
	if e.nest {
		s.forget(nestedKind(f))
	}
	s.r.Fields[f] = v
}

// member reads a member's value at data[i] (not past the end).
func (s *scanner) member(i, depth int, act action) int {
	c := s.data[i]
	switch act.kind {
	case aField:
		f := Field(act.arg)
		v := &s.r.Fields[f]
		s.r.fieldsSet |= 1 << f
		if k := nestedKind(f); k != kTop {
			s.forget(k)
			if c == '{' {
				*v = Value{Type: Object}
				return s.object(i, depth, k)
			}
		}
		return s.value(i, depth, v)
	case aSub:
		v := &s.r.Subs[act.arg]
		s.r.subsSet |= 1 << act.arg
		if c == '"' && presenceOnly(Sub(act.arg)) {
			if Sub(act.arg) == SBodyDelta {
				s.r.deltaText = nil // (a second "delta" key: the last one's)
				s.inDelta = true
			}
			j := s.skipString(i)
			s.inDelta = false
			if j >= 0 {
				*v = Value{Type: String}
				if Sub(act.arg) == SBodyDelta {
					r := s.r
					r.deltaRaw = s.data[i+1 : j-1]
					r.deltaEsc = s.deltaEsc
					r.deltaSeen = true
				}
			}
			return j
		}
		return s.value(i, depth, v)
	case aTrace:
		return s.value(i, depth, &s.tp[act.arg])
	case aMeta:
		s.tp[0] = Value{}
		if c == '{' {
			return s.object(i, depth, kMeta)
		}
	case aFiles:
		s.noURI[act.arg] = false
		if c == '[' {
			return s.entries(i, depth, act.arg)
		}
	case aURI:
		s.uriIsString = c == '"'
	}
	return s.skipValue(i, depth)
}

// entries reads the array params.files or params.attachments.
func (s *scanner) entries(i, depth int, which uint8) int {
	data := s.data
	n := len(data)
	depth++
	i = s.skipWSIn(data, i+1)
	if i >= n {
		return s.eof()
	}
	if data[i] == ']' {
		return i + 1
	}
	for {
		if data[i] == '{' {
			s.uriIsString = false
			i = s.object(i, depth, kEntry)
			if i < 0 {
				return i
			}
			if !s.uriIsString {
				s.noURI[which] = true
			}
		} else {
			s.noURI[which] = true
			i = s.skipValue(i, depth)
			if i < 0 {
				return i
			}
		}
		i = s.skipWSIn(data, i)
		if i >= n {
			return s.eof()
		}
		switch data[i] {
		case ',':
			i++
			if i < n && data[i] == ' ' {
				i++ // json.dumps' ", " and ": "
			}
			i = s.skipWSIn(data, i)
			if i >= n {
				return s.eof()
			}
		case ']':
			return i + 1
		default:
			return s.fail(i, "after array element")
		}
	}
}

// value reads the value at data[i] (not past the end) into v.
func (s *scanner) value(i, depth int, v *Value) int {
	data := s.data
	switch c := data[i]; c {
	case '"':
		return s.readString(i, v)
	case '{':
		*v = Value{Type: Object}
		return s.skipContainer(i, depth)
	case '[':
		*v = Value{Type: Array}
		return s.skipContainer(i, depth)
	case 't':
		*v = Value{Type: Bool, Bool: true}
		return s.literal(i, "true")
	case 'f':
		*v = Value{Type: Bool}
		return s.literal(i, "false")
	case 'n':
		*v = Value{Type: Null}
		return s.literal(i, "null")
	default:
		j := s.number(i)
		if j >= 0 {
			*v = Value{Type: Number, Str: data[i:j:j]}
		}
		return j
	}
}

// skipValue validates the value at data[i] without keeping it.
func (s *scanner) skipValue(i, depth int) int {
	data := s.data
	if i >= len(data) {
		return s.eof()
	}
	switch data[i] {
	case '"':
		return s.skipString(i)
	case '{', '[':
		return s.skipContainer(i, depth)
	}
	return s.scalar(i)
}

// scalar validates a literal or number at data[i].
func (s *scanner) scalar(i int) int {
	switch s.data[i] {
	case 't':
		return s.literal(i, "true")
	case 'f':
		return s.literal(i, "false")
	case 'n':
		return s.literal(i, "null")
	}
	return s.number(i)
}

func (s *scanner) literal(i int, lit string) int {
	data := s.data
	if len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit {
		return i + len(lit)
	}
	for k := 1; k < len(lit); k++ {
		if i+k >= len(data) {
			return s.eof()
		}
		if data[i+k] != lit[k] {
			return s.fail(i+k, "in literal "+lit)
		}
	}
	return s.eof()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number validates the number at data[i]: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number(i int) int {
	data := s.data
	n := len(data)
	neg := data[i] == '-'
	if neg {
		i++
		if i >= n {
			return s.eof()
		}
	}
	switch c := data[i]; {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		i++
		for i < n && isDigit(data[i]) {
			i++
		}
	default:
		if neg {
			return s.fail(i, "in numeric literal")
		}
		return s.fail(i, "looking for beginning of value")
	}
	if i < n && data[i] == '.' {
		i++
		if i >= n {
			return s.eof()
		}
		if !isDigit(data[i]) {
			return s.fail(i, "after decimal point in numeric literal")
		}
		for i < n && isDigit(data[i]) {
			i++
		}
	}
	if i < n && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < n && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= n {
			return s.eof()
		}
		if !isDigit(data[i]) {
			return s.fail(i, "in exponent of numeric literal")
		}
		for i < n && isDigit(data[i]) {
			i++
		}
	}
	return i
}

// skipContainer validates the array or object at data[i] whose parent is
// at nesting depth. Levels are tracked in a 64-bit stack (bit set: object);
// past 64 levels it recurses, so deep input costs no allocation.
func (s *scanner) skipContainer(i, depth int) int {
	data := s.data
	n := len(data)
	memo := s.r.memo
	var stack uint64
	lvl := 0
	var c byte
	var keyStart, keyEnd, keySlot int
	var keyEsc, secretKey bool
	prev := s.keyBefore // the key before (keyMemos.s)
	// fe: the memo of the member being read, which may remember its
	// value (fillValue), a string or a scalar from vs, after its key at
	// ks; ve: the value's end.
	var fe *keyMemo
	var ks, vs, ve int
	var pad [keyMemoLen]byte
open:
	if depth+lvl >= MaxDepth {
		return s.fail(i, "exceeding the maximum nesting depth")
	}
	if data[i] == '{' {
		stack |= 1 << lvl
	} else {
		stack &^= 1 << lvl
	}
	lvl++
	i = s.skipWSIn(data, i+1)
	if i >= n {
		return s.eof()
	}
	if stack>>(lvl-1)&1 != 0 {
		if data[i] == '}' {
			i++
			goto closed
		}
		goto key
	}
	if data[i] == ']' {
		i++
		goto closed
	}
	goto value
key:
	if data[i] != '"' {
		return s.fail(i, "looking for beginning of object key string")
	}
	// The key that followed the key before last time (keyMemo), as in
	// object; skipped objects have their own memos.
	fe = nil
	if e := &memo.s[prev]; e.m != 0 {
		d := memoAt(data, i, &pad)
		if e.whole != 0 && e.matchN(d, &memoMasks[e.whole]) {
			// The whole member as it was last time (keyMemo.whole): a
			// string or a scalar, and what follows it.
			prev = uint16(e.h)
			e.vmiss = 0
			i += int(e.whole)
			if e.last {
				goto closed
			}
			if i = s.skipWSIn(data, i); i >= n {
				return s.eof()
			}
			goto key
		}
		if e.match(d) {
			if e.lv != 0 && e.longAt(memo, data, i+int(e.m)) {
				// The long clean string of last time (keyMemo.lv):
				// not a secret key's (noValue).
				prev = uint16(e.h)
				e.vmiss = 0
				i += int(e.m) + int(e.lv)
				goto next
			}
			secretKey = e.secret && !s.secretMaybe
			prev = uint16(e.h)
			if !e.noValue && !s.secretMaybe && e.bumpMiss() {
				fe, ks = e, i
			}
			i = s.skipWSIn(data, i+int(e.m))
			if i >= n {
				return s.eof()
			}
			goto keyed
		}
	}
	// keyEnd, not skipString: a key needs no credential pre-check (one
	// secretKeyClass knows holds none).
	keyStart = i
	keyEnd, keyEsc = 0, false
	if s.m != nil {
		keyEnd = s.nextStop(i + 1)
	}
	if s.m == nil || keyEnd >= n || data[keyEnd] != '"' {
		keyEnd, keyEsc = s.keyEnd(i)
	}
	if keyEnd < 0 {
		return keyEnd
	}
	secretKey = false
	keySlot = -1
	if !s.secretMaybe {
		if keyEsc {
			s.secretMaybe = true // left to ScanSecrets
		} else {
			if h, ok := knownKeyAt(data, i+1, keyEnd); ok {
				secretKey = knownKeys.slot[h].kind != ""
				keySlot = int(h)
			} else if secretKey = s.secretKeyClass(data[i+1 : keyEnd]); !s.secretMaybe {
				keySlot = int(unknownKeyMemo(h)) // keyKinds knew it
			}
		}
	}
	i = s.skipWSIn(data, keyEnd+1)
	if i >= n {
		return s.eof()
	}
	if data[i] != ':' {
		return s.fail(i, "after object key")
	}
	i++
	if i < n && data[i] == ' ' {
		i++ // json.dumps' ", " and ": "
	}
	if keySlot >= 0 && i-keyStart <= keyMemoLen {
		memo.putSkipped(prev, data, keyStart, i, uint(keySlot), secretKey)
	}
	prev = afterUnknown
	if keySlot >= 0 {
		prev = uint16(keySlot)
	}
	i = s.skipWSIn(data, i)
	if i >= n {
		return s.eof()
	}
keyed:
	if secretKey {
		s.secretValue(i)
	}
value:
	vs = i
	switch c = data[i]; c {
	case '{', '[':
		fe = nil
		if lvl < 64 {
			goto open
		}
		i = s.skipContainer(i, depth+lvl)
	case '"':
		i = s.skipString(i)
	case 'n':
		if i+4 <= n && string(data[i:i+4]) == "null" {
			i += 4
			goto next
		}
		i = s.scalar(i)
	default:
		i = s.scalar(i)
	}
	if i < 0 {
		return i
	}
next:
	ve = i
	i = s.skipWSIn(data, i)
	if i >= n {
		return s.eof()
	}
	c = data[i]
	if c == ',' {
		i++
		if i < n && data[i] == ' ' {
			i++ // json.dumps' ", " and ": "
		}
		i = s.skipWSIn(data, i)
		if i >= n {
			return s.eof()
		}
		if fe != nil {
			if !s.secretMaybe {
				fe.fillAfter(memo, data, ks, vs, ve, i)
			}
			fe = nil
		}
		if stack>>(lvl-1)&1 != 0 {
			goto key
		}
		goto value
	}
	if stack>>(lvl-1)&1 != 0 {
		if c != '}' {
			return s.fail(i, "after object key:value pair")
		}
		if fe != nil {
			if !s.secretMaybe {
				fe.fillAfter(memo, data, ks, vs, ve, i+1)
			}
			fe = nil
		}
	} else if c != ']' {
		return s.fail(i, "after array element")
	}
	i++
closed:
	lvl--
	if lvl == 0 {
		return i
	}
	goto next
}

// The secret pre-check of Record.MayHoldSecret: what ScanSecrets would
// look at, looked at while the record is read anyway, so that rule
// e2a.secret walks only the records where it may find something. Every
// string goes through secretString (readString or skipString); every key
// through knownKeys, then secretKeyClass when it is not there (key and
// skipContainer).

// secretKeyClass classifies an object key (unescaped) that knownKeys does
// not hold (its callers, key and skipContainer, look every key up there
// first: most are, and the slot gives the class) as ScanSecrets does, and
// reports whether it is a secret key; a key it cannot classify without
// the detector (one seen for the first time) sets secretMaybe. A key it
// knows holds no credential itself. (It looked the key up in knownKeys
// again: a tool's nested arguments or a producer's extension fields, all
// keys outside knownKeys, cost 10-14 % more instructions for it.)
func (s *scanner) secretKeyClass(key []byte) bool {
	if k, ok := keyKinds.get(key); ok {
		return k != ""
	}
	s.secretMaybe = true
	return false
}

// secretValue looks at the value at data[i] of a secret key: a non-empty
// string is a hit of ScanSecrets (unless masked, which it decides).
func (s *scanner) secretValue(i int) {
	if s.data[i] == '"' && i+1 < len(s.data) && s.data[i+1] != '"' {
		s.secretMaybe = true
	}
}

// secretString runs ScanSecrets' pre-checks on a string body: raw as
// written, esc if it has escapes.
func (s *scanner) secretString(raw []byte, esc bool) {
	if !esc {
		s.secretMaybe = s.mayHoldCredential(raw)
		return
	}
	if !anchorAfterUnescape(raw) {
		return
	}
	s.secretUnescaped(raw)
}

// secretUnescaped is secretString for an escaped body that holds an
// anchor once unescaped (anchorAfterUnescape, worked out by skipString).
func (s *scanner) secretUnescaped(raw []byte) {
	r := s.r
	if s.inDelta {
		// body.delta: kept unescaped for the split check (DeltaText).
		if cap(r.deltaBuf) > 1<<20 {
			r.deltaBuf = nil // one huge delta does not stay held
		}
		r.deltaBuf = AppendUnquoted(r.deltaBuf[:0], raw)
		r.deltaText = r.deltaBuf
		s.secretMaybe = s.secretText(r.deltaText)
		return
	}
	m := len(r.scratch)
	r.scratch = AppendUnquoted(r.scratch, raw)
	s.secretMaybe = s.secretText(r.scratch[m:])
	r.scratch = r.scratch[:m]
}

// secretText is the pre-check of secretUnescaped on the unescaped text.
func (s *scanner) secretText(text []byte) bool {
	return s.mayHoldCredential(text) ||
		// JSON text held in the string, spelling a shape with \u00XX
		// escapes (findCredential searches it unescaped; URL-encoded ones,
		// "%5Cu0041": mayHoldText, in mayHoldCredential).
		bytes.IndexByte(text, '\\') >= 0 && mayHoldDecoded(text)
}

// mayHoldText is redact.MayHoldCredentialText(text), or the same of text
// with its URL-encoded escapes decoded when it holds one: a string without
// JSON escapes may spell a shape with URL-encoded ones ("ghp%5Cu005f…",
// "%2522password%2522%253A…"), which ScanSecrets decodes (its pct) and
// the test of the bytes as they are does not see. (A string with JSON
// escapes: secretText's second test.)
func mayHoldText(text []byte) bool {
	return redact.MayHoldCredentialText(text) || bytes.IndexByte(text, '%') >= 0 && mayHoldDecoded(text)
}

// mayHoldDecoded is the pre-check of text with its \u00XX escapes and
// "%25"s decoded (redact.UnescapeASCII), when it holds any.
func mayHoldDecoded(text []byte) bool {
	return redact.HasASCIIEscape(text) && redact.MayHoldCredentialText(redact.UnescapeASCII(nil, text))
}

// mayHoldCredential is mayHoldText(text), remembering
// texts that passed it (Record.clean): records repeat them (a converter's
// name, the timestamp that converted_at repeats, a model's, an agent's, a
// status, a request id that response_id repeats), and comparing one costs
// less than checking it.
func (s *scanner) mayHoldCredential(text []byte) bool {
	if len(text) < cleanMin || len(text) > cleanMax {
		return mayHoldText(text)
	}
	c := s.r.clean
	if c == nil {
		c = new(cleanTexts)
		s.r.clean = c
	}
	if looksDateTime(text) {
		// A date-time is new each record, and MayHoldCredentialText
		// passes it at once: in the table it would only evict a text
		// that repeats. The last one that passed is kept apart: a
		// record repeats its timestamp (converted_at).
		if int(c.dtn) == len(text) && string(c.dt[:len(text)]) == string(text) {
			return false
		}
		if mayHoldText(text) {
			return true
		}
		c.dtn = uint8(copy(c.dt[:], text))
		return false
	}
	a, b := wordsCap(text)
	h := cleanHash(a, b, len(text))
	if c.hasAt(h, a, b, text) || c.hasAt(h^1, a, b, text) {
		return false
	}
	if mayHoldText(text) {
		return true
	}
	// Two ways a set: the text replaces the one of its pair not used
	// last, so that one text seen once (a timestamp) evicts nothing the
	// next record needs.
	if c.last[h>>1]&(1<<(h&1)) != 0 {
		h ^= 1
	}
	c.n[h] = uint8(copy(c.b[h][:], text))
	c.w[h] = [2]uint64{a, b}
	c.last[h>>1] = 1 << (h & 1)
	return false
}

// looksDateTime: text may be an RFC 3339 date-time ("2026-03-29T12:…").
func looksDateTime(text []byte) bool {
	return len(text) >= 20 && len(text) <= maxDateTimeLen && text[4] == '-' && text[10] == 'T' && text[13] == ':'
}

// maxDateTimeLen: the longest text looksDateTime takes.
const maxDateTimeLen = 35

// cleanTexts holds copies of texts that passed no credential pre-check:
// a two-way set-associative table, a text's set chosen by cleanHash.
type cleanTexts struct {
	n    [cleanSlots]uint8
	last [cleanSlots / 2]uint8 // per set, the bit of the slot hit or filled last
	// w: a slot's keyWords, which are its whole text up to 16 bytes (most
	// texts: ids, statuses, kinds), compared without a call.
	w [cleanSlots][2]uint64
	b [cleanSlots][cleanMax]byte
	// dt: the date-time that passed last (looksDateTime), dtn bytes.
	dt  [maxDateTimeLen]byte
	dtn uint8
}

const (
	cleanBits  = 6
	cleanSlots = 1 << cleanBits
	cleanMin   = 3 // a shorter text is checked as fast as compared
	cleanMax   = 96
)

// cleanHash is a slot of text's set (the other is cleanHash^1), for
// cleanMin <= len(text) <= cleanMax: its length and first and last
// eight bytes.
// (a and b are its keyWords).
func cleanHash(a, b uint64, n int) uint {
	return uint(((a*0x9E3779B97F4A7C15^b^uint64(n))*0xff51afd7ed558ccd)>>(64-cleanBits)) % cleanSlots
}

// hasAt reports whether slot h holds text, whose keyWords are a and b.
func (c *cleanTexts) hasAt(h uint, a, b uint64, text []byte) bool {
	if int(c.n[h]) == len(text) && c.w[h] == [2]uint64{a, b} && (len(text) <= 16 || string(c.b[h][:len(text)]) == string(text)) {
		c.last[h>>1] = 1 << (h & 1)
		return true
	}
	return false
}

func (c *cleanTexts) has(text []byte) bool {
	if len(text) < cleanMin || len(text) > cleanMax {
		return false
	}
	a, b := wordsCap(text)
	h := cleanHash(a, b, len(text))
	return c.hasAt(h, a, b, text) || c.hasAt(h^1, a, b, text)
}

// Bytes of a JSON string body that need a look: ", \ and control
// characters; plus, for strings that are kept, non-ASCII bytes.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special8 has the high bit set in each byte of x that is '"', '\\' or
// below 0x20 (and maybe in bytes above such a byte: callers use only the
// lowest one).
func special8(x uint64) uint64 {
	q := x ^ (ones * '"')
	b := x ^ (ones * '\\')
	return ((q - ones) &^ q) | ((b - ones) &^ b) | ((x - ones*0x20) &^ x)
}

// knownKeyAt is knownKeys.find(data[i:j]) in one call: the key's words
// loaded at once (wordsAt) and its first slot tried inline. For a key
// knownKeys does not hold, it returns the key's home slot (a hash of it).
func knownKeyAt(data []byte, i, j int) (uint, bool) {
	var a, b uint64
	if i+8 <= len(data) {
		a = binary.LittleEndian.Uint64(data[i:])
		if j-i < 8 {
			a &= 1<<(8*(j-i)) - 1
		} else {
			b = binary.LittleEndian.Uint64(data[j-8:])
		}
	} else {
		a, b = keyWords(data[i:j])
	}
	key := data[i:j]
	h := knownKeyHash(a, b, len(key))
	if e := &knownKeys.slot[h]; e.n != 0 && int(e.n) == len(key) && e.a == a && e.b == b && (len(key) <= 16 || e.key == string(key)) {
		return h, true
	}
	if at, ok := knownKeys.findWords(a, b, key); ok {
		return at, true
	}
	return h, false
}

// wordsCap is keyWords(k), a short k's bytes loaded at once when its
// capacity allows (the bytes past its length are masked off). Scan's
// callers cap a slice of the input at the input's end, so that the load
// never reads past what Scan was given.
func wordsCap(k []byte) (a, b uint64) {
	n := len(k)
	if n >= 8 {
		return binary.LittleEndian.Uint64(k), binary.LittleEndian.Uint64(k[n-8:])
	}
	if cap(k) >= 8 {
		return binary.LittleEndian.Uint64(k[:8]) & (1<<(8*n) - 1), 0
	}
	return keyWords(k)
}

// plainEnd is the index of the first '"', '\\' or control byte at or
// after i, or len(data): the scalar nextStop.
func plainEnd(data []byte, i int) int {
	n := len(data)
	for i+8 <= n {
		m := special8(binary.LittleEndian.Uint64(data[i:])) & highs
		if m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < n && strPlain[data[i]] {
		i++
	}
	return i
}

// plainASCIIEnd is plainEnd that stops at bytes >= 0x80 too.
func plainASCIIEnd(data []byte, i int) int {
	n := len(data)
	for i+8 <= n {
		x := binary.LittleEndian.Uint64(data[i:])
		m := (special8(x) | x) & highs
		if m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < n && strPlain[data[i]] && data[i] < utf8.RuneSelf {
		i++
	}
	return i
}

// skipString validates the string at data[i] ('"') and returns the index
// past its closing quote.
func (s *scanner) skipString(i int) int {
	data := s.data
	n := len(data)
	i++
	start, esc := i, false
	// With the bitmaps, an escaped string's pre-check gate
	// (anchorAfterUnescape) is worked out on the way instead of in a
	// second pass: anch, a credential anchor in a plain run (from p to
	// the next stop) or a \u escape of an ASCII character or of a CJK
	// label's separator.
	p, anch := start, false
	track := s.m != nil && !s.secretMaybe
	for {
		if s.m != nil {
			i = s.nextStop(i)
		} else {
			i = plainEnd(data, i)
		}
		if i >= n {
			return s.eof()
		}
		switch c := data[i]; {
		case c == '"':
			if s.inDelta {
				s.deltaEsc = esc
			}
			if !s.secretMaybe {
				if esc && s.m != nil {
					if anch || s.anyAnchor(p, i) {
						s.secretUnescaped(data[start:i])
					}
				} else if esc || s.m == nil || s.anyAnchor(start, i) {
					s.secretString(data[start:i:len(data)], esc)
				}
			}
			return i + 1
		case c == '\\':
			esc = true
			if track && !anch {
				anch = s.anyAnchor(p, i)
			}
			// Runs of \uXXXX: ensure_ascii output writes every non-ASCII
			// character so (a Chinese model output is nothing else).
			for i+6 <= n && data[i+1] == 'u' && isHex[data[i+2]]&isHex[data[i+3]]&isHex[data[i+4]]&isHex[data[i+5]] != 0 {
				// (\u0000-\u007f: hex digits at or above '8' are 8-f;
				// and a CJK label's separator, "\uff1a".)
				anch = anch || track && (data[i+2] == '0' && data[i+3] == '0' && data[i+4] < '8' || cjkSepEscape(data, i))
				i += 6
				if i >= n || data[i] != '\\' {
					break
				}
			}
			if i < n && data[i] == '\\' {
				i = s.escape(i)
				if i < 0 {
					return i
				}
			}
			p = i
		case c < 0x20:
			return s.fail(i, "in string literal")
		default: // non-ASCII
			i++
		}
	}
}

// keyEnd validates the string at data[i] and returns the index of its
// closing quote and whether it holds escapes.
func (s *scanner) keyEnd(i int) (int, bool) {
	data := s.data
	n := len(data)
	esc := false
	i++
	for {
		if s.m != nil {
			i = s.nextStop(i)
		} else {
			i = plainEnd(data, i)
		}
		if i >= n {
			return s.eof(), false
		}
		switch c := data[i]; {
		case c == '"':
			return i, esc
		case c == '\\':
			esc = true
			i = s.escape(i)
			if i < 0 {
				return i, false
			}
		case c < 0x20:
			return s.fail(i, "in string literal"), false
		default:
			i++
		}
	}
}

// readString reads the string at data[i] into v.
func (s *scanner) readString(i int, v *Value) int {
	data := s.data
	n := len(data)
	start := i + 1
	i = start
	esc, high := false, false
	for {
		if s.m != nil {
			i = s.nextStopHigh(i)
		} else {
			i = plainASCIIEnd(data, i)
		}
		if i >= n {
			return s.eof()
		}
		c := data[i]
		if c == '"' {
			break
		}
		switch {
		case c == '\\':
			esc = true
			i = s.escape(i)
			if i < 0 {
				return i
			}
		case c < 0x20:
			return s.fail(i, "in string literal")
		default:
			high = true
			i++
		}
	}
	seg := data[start:i:i]
	if !esc && (!high || utf8.Valid(seg)) {
		*v = Value{Type: String, Str: seg}
	} else {
		r := s.r
		m := len(r.scratch)
		r.scratch = AppendUnquoted(r.scratch, seg)
		*v = Value{Type: String, Str: r.scratch[m:len(r.scratch):len(r.scratch)]}
	}
	if !s.secretMaybe {
		if esc {
			// ScanSecrets reads it unescaped, as v holds it.
			s.secretMaybe = s.mayHoldCredential(v.Str)
		} else if s.m == nil || s.anyAnchor(start, i) {
			// (No anchor byte: MayHoldCredentialText is false.)
			s.secretMaybe = s.mayHoldCredential(data[start:i:len(data)]) // seg, with room for wordsCap (within data)
		}
	}
	return i + 1
}

// escape validates the escape sequence at data[i] ('\\') and returns the
// index past it.
func (s *scanner) escape(i int) int {
	data := s.data
	if i+1 >= len(data) {
		return s.eof()
	}
	switch data[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 2
	case 'u':
		if i+6 <= len(data) && isHex[data[i+2]]&isHex[data[i+3]]&isHex[data[i+4]]&isHex[data[i+5]] != 0 {
			return i + 6
		}
		for k := i + 2; k < i+6; k++ {
			if k >= len(data) {
				return s.eof()
			}
			if hexVal(data[k]) < 0 {
				return s.fail(k, "in \\u hexadecimal character escape")
			}
		}
		return i + 6
	}
	return s.fail(i+1, "in string escape code")
}

// isHex is 1 for the hexadecimal digits.
var isHex = func() (t [256]uint8) {
	for c := range t {
		if hexVal(byte(c)) >= 0 {
			t[c] = 1
		}
	}
	return t
}()

// hexDigit is the value of a hexadecimal digit (0 for others: callers
// have validated).
var hexDigit = func() (t [256]uint8) {
	for c := range t {
		if v := hexVal(byte(c)); v >= 0 {
			t[c] = uint8(v)
		}
	}
	return t
}()

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

func hex4(b []byte) rune {
	_ = b[3]
	return rune(hexDigit[b[0]])<<12 | rune(hexDigit[b[1]])<<8 | rune(hexDigit[b[2]])<<4 | rune(hexDigit[b[3]])
}

// plainRunEnd is the index of the first '\\' or byte >= 0x80 at or after
// i in b, or len(b): eight bytes at a time, then one at a time.
func plainRunEnd(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if m := plainStop8(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(b) && b[i] != '\\' && b[i] < utf8.RuneSelf {
		i++
	}
	return i
}

// plainStop8 has the high bit set in the byte of w that is the first
// '\\' or byte >= 0x80 (and maybe in bytes above it: callers use only the
// lowest): XOR with '\\' makes a backslash a zero byte, and the borrow of
// t-ones marks only bytes above a zero one.
func plainStop8(w uint64) uint64 {
	t := w ^ (ones * '\\')
	return ((t-ones)&^t | w) & highs
}

// unquoteSlack is what AppendUnquoted keeps free past the bytes it has
// written, so that it can store a short plain run as two whole words
// (sixteen bytes read from the body) and count only the run's bytes.
const unquoteSlack = 16

// AppendUnquoted appends the unescaped form of a validated JSON string
// body (the bytes between the quotes), replacing invalid UTF-8 and unpaired
// surrogates with U+FFFD the way encoding/json does. The redactor uses it
// too, so that it reads strings exactly as the rules do.
//
// Text with escapes every few bytes (code and JSON held in a string:
// \n, \", \\) is the common case, so the plain runs between them are
// copied a word at a time into room made once, not appended run by run:
// the unescaped body is never longer than the body, except where an
// invalid byte becomes the three of U+FFFD (room is made again there).
// Unlike append, it may write into dst's spare capacity past the bytes
// it returns (up to unquoteSlack of them).
func AppendUnquoted(dst, b []byte) []byte {
	n := len(dst)
	d := dst
	if cap(d)-n < len(b)+unquoteSlack {
		d = slices.Grow(d, len(b)+unquoteSlack)
	}
	d = d[:cap(d)]
	for i := 0; i < len(b); {
		// Invariant: n+(len(b)-i)+unquoteSlack <= len(d).
		c := b[i]
		if c == '\\' {
			e := b[i+1]
			if v := unescapeT[e]; v != 0 {
				d[n] = v
				i, n = i+2, n+1
				continue
			}
			// \uXXXX: six bytes become at most three (utf8.AppendRune's
			// cases, inline: a \u escape is most of ASCII-escaped text).
			r := hex4(b[i+2:])
			i += 6
			switch {
			case r < 0x80:
				d[n] = byte(r)
				n++
				continue
			case r < 0x800:
				d[n], d[n+1] = 0xc0|byte(r>>6), 0x80|byte(r)&0x3f
				n += 2
				continue
			case !utf16.IsSurrogate(r):
				d[n], d[n+1], d[n+2] = 0xe0|byte(r>>12), 0x80|byte(r>>6)&0x3f, 0x80|byte(r)&0x3f
				n += 3
				continue
			}
			// A surrogate: the first of a pair (twelve bytes become
			// four), or U+FFFD.
			if i+6 <= len(b) && b[i] == '\\' && b[i+1] == 'u' {
				if r := utf16.DecodeRune(r, hex4(b[i+2:])); r != utf8.RuneError {
					n += utf8.EncodeRune(d[n:], r)
					i += 6
					continue
				}
			}
			n += copy(d[n:], "\uFFFD")
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				// One byte becomes three: make room for the rest again.
				if n+3+(len(b)-i-1)+unquoteSlack > len(d) {
					d = slices.Grow(d[:n], 3+len(b)-i-1+unquoteSlack)
					d = d[:cap(d)]
				}
				n += copy(d[n:], "\uFFFD")
			} else {
				n += copy(d[n:], b[i:i+size])
			}
			i += size
			continue
		}
		// A plain run. A short one (most, in code or JSON held in a
		// string) is stored as one or two whole words, into the room
		// kept past n, and counted up to its end; a longer one is
		// copied past them.
		if i+16 > len(b) {
			for ; i < len(b) && b[i] < utf8.RuneSelf && b[i] != '\\'; i, n = i+1, n+1 {
				d[n] = b[i]
			}
			continue
		}
		w := binary.LittleEndian.Uint64(b[i:])
		binary.LittleEndian.PutUint64(d[n:], w)
		if m := plainStop8(w); m != 0 {
			k := bits.TrailingZeros64(m) / 8
			i, n = i+k, n+k
			continue
		}
		w = binary.LittleEndian.Uint64(b[i+8:])
		binary.LittleEndian.PutUint64(d[n+8:], w)
		if m := plainStop8(w); m != 0 {
			k := 8 + bits.TrailingZeros64(m)/8
			i, n = i+k, n+k
			continue
		}
		j := plainRunEnd(b, i+16)
		copy(d[n+16:], b[i+16:j])
		i, n = j, n+j-i
	}
	return d[:n]
}

// unescapeT is the byte each one-letter JSON escape stands for (0: none;
// 'u' starts a \uXXXX).
var unescapeT = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// strPlain marks the bytes that need no attention inside a JSON string.
var strPlain = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\'
	}
	return t
}()

// keyTable finds a key among a fixed set with one hash and one compare.
type keyTable struct {
	mul  uint32
	keys [256]string
	vals [256]uint8
}

func keyHash(k []byte, mul uint32) uint8 {
	h := uint32(len(k)) | uint32(k[0])<<8 | uint32(k[len(k)-1])<<16 | uint32(k[len(k)/2])<<24
	return uint8((h * mul) >> 24)
}

func newKeyTable(keys []string, name func(string) string) *keyTable {
	t := &keyTable{}
search:
	for mul := uint32(0x9E3779B1); ; mul += 2 {
		*t = keyTable{mul: mul}
		for v, k := range keys {
			if name != nil {
				k = name(k)
			}
			h := keyHash([]byte(k), mul)
			if t.keys[h] != "" {
				continue search
			}
			t.keys[h], t.vals[h] = k, uint8(v)
		}
		return t
	}
}

func (t *keyTable) lookup(k []byte) (uint8, bool) {
	if len(k) == 0 {
		return 0, false
	}
	h := keyHash(k, t.mul)
	if e := t.keys[h]; len(e) == len(k) && e == string(k) {
		return t.vals[h], true
	}
	return 0, false
}
