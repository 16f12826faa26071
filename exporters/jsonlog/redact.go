package jsonlog

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/e2atap/e2atap/e2a"
	"github.com/e2atap/e2atap/redact"
)

// ErrInvalidJSON is wrapped by every *SyntaxError.
var ErrInvalidJSON = errors.New("invalid JSON")

// SyntaxError says where the input stopped being JSON.
type SyntaxError struct {
	Offset int
	Reason string
}

func (e *SyntaxError) Error() string {
	return "jsonlog: invalid JSON at offset " + strconv.Itoa(e.Offset) + ": " + e.Reason
}

func (e *SyntaxError) Unwrap() error { return ErrInvalidJSON }

// maxDepth is encoding/json's nesting limit: input it rejects, Redact
// rejects too, so "valid JSON" means the same thing on both sides.
const maxDepth = 10000

// maxPaths bounds the redacted-path list of one record; the rest are counted.
const maxPaths = 64

// minSpan is the smallest value worth masking to make a record fit.
const minSpan = 48

const mask = "******"

// Content is the policy for model output and user text.
type Content uint8

const (
	// ContentMask replaces the value by "******(len:N)" (objects and arrays
	// keep their type: {"_masked":"******(len:N)"}, ["******(len:N)"]).
	ContentMask Content = iota
	// ContentKeep keeps it, still masking credentials and personal data.
	ContentKeep
	// ContentDrop replaces it by an empty value of the same type.
	ContentDrop
)

var contentNames = [...]string{"mask", "keep", "drop"}

func (c Content) String() string {
	if int(c) < len(contentNames) {
		return contentNames[c]
	}
	return "invalid"
}

// ParseContent reads "mask", "keep" or "drop".
func ParseContent(s string) (Content, bool) {
	for i, n := range contentNames {
		if n == s {
			return Content(i), true
		}
	}
	return ContentMask, false
}

// Redactor rewrites JSON records with the redaction policy. It holds no
// per-call state and is safe for concurrent use.
type Redactor struct {
	masker   *redact.Masker
	content  Content
	maxBytes int
	pool     sync.Pool
}

// NewRedactor makes a Redactor from the content policy, the record size cap
// (0: none) and the fingerprint key (empty: redact.DefaultKey, the
// process's, so that every output of the process fingerprints alike).
func NewRedactor(content Content, maxRecordBytes int, key []byte) *Redactor {
	r := &Redactor{masker: redact.New(key), content: content, maxBytes: maxRecordBytes}
	r.pool.New = func() any { return &state{r: r} }
	return r
}

// Masker is the text masker of the Redactor's key: give it to the other
// outputs (findings, spans, logs) so that their masks join the log's.
func (r *Redactor) Masker() *redact.Masker { return r.masker }

// Content is the Redactor's content policy.
func (r *Redactor) Content() Content { return r.content }

// Fingerprint appends the first 16 hex digits (64 bits) of
// HMAC-SHA256(key, v): what a masked credential shows as
// "******(fp:xxxxxxxxxxxxxxxx)".
func (r *Redactor) Fingerprint(dst, v []byte) []byte {
	return redact.AppendFingerprint(r.masker, dst, v)
}

// Redact appends the redacted form of the JSON object record to dst: the
// same keys in the same order, number literals and untouched strings byte
// for byte, whitespace removed, masked values in place. paths lists where
// something was masked (dotted, "[]" for array elements, at most 64). A
// record over the size cap has its largest values masked until it fits.
// Input that is not valid JSON is a *SyntaxError; valid JSON that is not an
// object is e2a.ErrNotObject. On error dst is returned unchanged.
func (r *Redactor) Redact(dst, record []byte) (out []byte, paths []string, err error) {
	st := r.get()
	defer r.put(st)
	base := len(dst)
	st.out = dst
	if err := st.record(record, false); err != nil {
		return dst[:base], nil, err
	}
	st.out = append(st.out, '}')
	return st.out, st.pathList(), nil
}

// RedactText appends s with credentials, e-mail addresses and phone numbers
// masked, all with fingerprints, for free text such as finding messages.
func (r *Redactor) RedactText(dst, s []byte) []byte {
	st := r.get()
	defer r.put(st)
	st.out = dst
	if (bytes.IndexByte(s, '\\') >= 0 || bytes.IndexByte(s, '%') >= 0) && redact.HasASCIIEscape(s) {
		// Text that spells a value with escapes of its own (a stream id
		// "p\u0061ssword: …") is masked in its unescaped form, as
		// MaskText and redact.Masker.Text mask it.
		st.udec = redact.UnescapeASCII(st.udec[:0], s)
		if st.redactText(st.udec, true) {
			return st.out
		}
		st.out = dst
	}
	st.redactText(s, true)
	return st.out
}

func (r *Redactor) get() *state {
	st := r.pool.Get().(*state)
	st.reset()
	return st
}

func (r *Redactor) put(st *state) {
	st.out, st.in, st.ascii = nil, nil, nil
	if cap(st.dec) > 1<<20 || cap(st.udec) > 1<<20 || cap(st.enc) > 1<<20 || cap(st.alt) > 1<<20 || cap(st.line) > 1<<20 || cap(st.delta) > 1<<20 {
		return // do not pin huge buffers
	}
	r.pool.Put(st)
}

// state is the scratch of one Redact call.
type state struct {
	r        *Redactor
	in       []byte
	out      []byte
	dec      []byte // unescaped string
	udec     []byte // the unescaped string's own \u00XX escapes decoded
	kdec     []byte // unescaped key
	enc      []byte // redacted string before encoding
	alt      []byte // truncation rebuild
	line     []byte // the Writer's line buffer
	path     []byte
	paths    []byte
	pathEnds []int
	more     int
	counts   [NumRules]uint32
	spans    []tspan
	spanPath []byte
	record2  bool // record truncation spans
	depth    int
	topSeen  uint8
	ce       bool // the record is a CloudEvent: its data is content
	trunc    bool
	pct      bool // the record holds "%25" or "%5Cu00" (unescapedShape)
	// body.delta (content keep): its string in out, quotes included, and
	// its unescaped text; deltaEnd == 0 when the record has none.
	deltaAt, deltaEnd int
	delta             []byte
	// clean: strings mayMask found nothing in; modes: decide's answer for
	// a context and key (dkey: the context's byte and the key). memo.go;
	// made at first use, kept with the state.
	clean, modes *memo
	dkey         []byte
	// sources: the sources with no number in them (a core NATS subject,
	// a tap's name) that redactText left as they were; src is scratch.
	sources *memo
	src     []byte
	// ascii: the body of the last string str read, when it was all
	// ASCII (nil otherwise); in st.in.
	ascii []byte
}

// tspan is a value that may be masked to make the record fit.
type tspan struct {
	start, end int // in out
	pathEnd    int // in spanPath; starts at the previous span's pathEnd
	kind       byte
}

func (st *state) reset() {
	st.paths, st.pathEnds, st.more = st.paths[:0], st.pathEnds[:0], 0
	st.counts = [NumRules]uint32{}
	st.spans, st.spanPath = st.spans[:0], st.spanPath[:0]
	st.path = st.path[:0]
	st.depth, st.topSeen, st.trunc, st.ce, st.pct = 0, 0, false, false, false
	st.deltaAt, st.deltaEnd, st.delta = 0, 0, st.delta[:0]
}

// Minimum keys of a response (spec §12.7), in the order they are added.
var minimumKeys = [...]string{"request_id", "response_id", "sequence", "is_final", "response_kind", "timestamp"}

// record redacts one JSON object into st.out, leaving it open (no closing
// brace) so that the caller can append keys. With response set, the §12.7
// minimum keys the record lacks are appended as null.
func (st *state) record(in []byte, response bool) error {
	st.in, st.ascii = in, nil
	st.pct = redact.MayHoldEncodedEscape(in)
	base := len(st.out)
	max := st.r.maxBytes
	st.record2 = max > 0 && 2*len(in)+256 > max
	i := st.ws(0)
	if i >= len(in) {
		return &SyntaxError{i, "empty input"}
	}
	if in[i] != '{' {
		// Tell "valid but not an object" from garbage.
		if j, err := st.skip(i); err != nil {
			return err
		} else if j = st.ws(j); j != len(in) {
			return &SyntaxError{j, "data after the top-level value"}
		}
		st.out = st.out[:base]
		return e2a.ErrNotObject
	}
	j, err := st.object(i, ctxTop, 0, false)
	if err != nil {
		return err
	}
	if j = st.ws(j); j != len(in) {
		return &SyntaxError{j, "data after the top-level value"}
	}
	if max > 0 && len(st.out)-base+1 > max {
		st.truncate(base, max)
	}
	if response {
		for k, name := range minimumKeys {
			if st.topSeen&(1<<k) != 0 {
				continue
			}
			if st.out[len(st.out)-1] != '{' {
				st.out = append(st.out, ',')
			}
			st.out = append(st.out, '"')
			st.out = append(st.out, name...)
			st.out = append(st.out, `":null`...)
		}
	}
	return nil
}

func (st *state) ws(i int) int {
	for i < len(st.in) {
		switch st.in[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// ctx is the container a value sits in, as far as the policy cares.
type ctx uint8

const (
	ctxPlain ctx = iota
	ctxTop
	ctxBody
	ctxParams
	ctxMeta
	ctxError
	ctxTraceHolder // acp_meta, channel_context, params._meta
	ctxFiles       // params.files, params.attachments
	ctxFileEntry
	ctxAuth
	ctxCred  // every scalar is a credential
	ctxNamed // under an unknown tool's key (keyNamed): every string judged as its value (actNamedKey)
)

type action uint8

const (
	actPlain      action = iota // scan strings; walk containers
	actCred                     // mask strings and numbers, with fingerprint
	actCredStr                  // mask strings, keep numbers
	actRef                      // mask strings; walk containers as plain
	actPII                      // mask strings and numbers, no fingerprint
	actContent                  // content policy
	actContentStr               // content policy for strings; containers walked as plain
	actDrop                     // leave the member out
	actNamedKey                 // mask a string that reads as a key (redact.KeyLikeValue), else scan it
)

// mode is what to do with one value.
type mode struct {
	act   action
	rule  Rule
	child ctx
	// keep: a value the rules read: never masked to make the record fit.
	keep bool
	// ident: a string the rules read or compare: any mask in it carries a
	// fingerprint, so that equal values stay equal and distinct ones distinct.
	ident bool
	// delta: body.delta, whose text continues in the stream's next chunk
	// (the Writer's carry checks the boundary).
	delta bool
	// pwd: the key is "PWD" (any case): a path under it is the working
	// directory (redact.PWDPath), scanned as text.
	pwd bool
}

// pwdName is the key redact.PWDPath is asked about for a member whose key
// decide found to be "PWD" (mode.pwd).
var pwdName = []byte("pwd")

var contentKeys = [...]string{"delta", "text", "content", "prompt", "query", "content_blocks", "parts", "rawInput", "rawOutput", "thought", "reasoning"}

var fieldKeySet = func() map[string]bool {
	m := make(map[string]bool, len(e2a.FieldKeys))
	for _, k := range e2a.FieldKeys {
		m[k] = true
	}
	return m
}()

func isFieldKey(k []byte) bool { return fieldKeySet[string(k)] }

// decideMemo is decide, remembered by context and key (st.modes) where
// its answer depends on nothing else: not under a credential, an auth
// object or an unknown tool's key (their modes carry the parent's rule),
// nor for a CloudEvent's data (st.ce). A top-level key of the §12.7
// minimum is still marked seen (decide's one side effect).
func (st *state) decideMemo(c ctx, rule Rule, key []byte) mode {
	switch c {
	case ctxCred, ctxAuth, ctxNamed:
		return st.decide(c, rule, key)
	}
	if len(key)+1 > memoMaxLen || c == ctxTop && (string(key) == "data" || string(key) == "data_base64") {
		return st.decide(c, rule, key)
	}
	st.dkey = append(append(st.dkey[:0], byte(c)), key...)
	if st.modes == nil {
		st.modes = newMemo()
	} else if v, ok := st.modes.get(st.dkey); ok {
		st.topSeen |= uint8(v >> 56)
		return unpackMode(v)
	}
	seen := st.topSeen
	st.topSeen = 0
	m := st.decide(c, rule, key)
	v := packMode(m) | uint64(st.topSeen)<<56 // what decide marked seen
	st.topSeen |= seen
	st.modes.put(st.dkey, v)
	return m
}

// packMode and unpackMode keep a mode in the low bytes of a memo value.
func packMode(m mode) uint64 {
	v := uint64(m.act) | uint64(m.rule)<<8 | uint64(m.child)<<16
	for k, b := range [...]bool{m.keep, m.ident, m.delta, m.pwd} {
		if b {
			v |= 1 << (24 + k)
		}
	}
	return v
}

func unpackMode(v uint64) mode {
	return mode{act: action(v), rule: Rule(v >> 8), child: ctx(v >> 16),
		keep: v&(1<<24) != 0, ident: v&(1<<25) != 0, delta: v&(1<<26) != 0, pwd: v&(1<<27) != 0}
}

// decide is the redaction policy for the member key of a container c.
func (st *state) decide(c ctx, rule Rule, key []byte) mode {
	switch c {
	case ctxCred:
		return mode{act: actCred, rule: rule, child: ctxCred}
	case ctxAuth:
		if string(key) == "method_id" {
			return mode{}
		}
		if classifyKey(key) == keyRef {
			return mode{act: actRef, rule: RuleRef}
		}
		return mode{act: actCred, rule: RuleAuth, child: ctxCred}
	}
	if c == ctxTop && string(key) == "_e2atap" {
		return mode{act: actDrop}
	}
	if hasPrefixFold(key, "_e2a_wire_legacy_") {
		return mode{act: actContent, rule: RuleLegacyBlob}
	}
	if string(key) == "auth" {
		return mode{act: actCred, rule: RuleAuth, child: ctxAuth}
	}
	switch classifyKey(key) {
	case keyCredential:
		return mode{act: actCred, rule: RuleCredentialKey, child: ctxCred, pwd: len(key) == 3 && eqFold(key, "pwd")}
	case keyToken:
		return mode{act: actCredStr, rule: RuleCredentialKey, child: ctxCred}
	case keyRef:
		return mode{act: actRef, rule: RuleRef}
	case keyEmail:
		return mode{act: actPII, rule: RuleEmail}
	case keyPhone:
		return mode{act: actPII, rule: RulePhone}
	case keyNamed:
		return mode{act: actNamedKey, rule: RuleHighEntropy, child: ctxNamed}
	}
	if c == ctxNamed {
		// A member of an object under an unknown tool's key
		// ({"acmeKey": {"live": "<hex>"}}): judged as the key's value.
		return mode{act: actNamedKey, rule: rule, child: ctxNamed}
	}
	switch c {
	case ctxTop:
		switch string(key) {
		case "body":
			return mode{child: ctxBody, keep: true}
		case "params":
			return mode{child: ctxParams, keep: true}
		case "metadata":
			return mode{child: ctxMeta, keep: true}
		case "error":
			return mode{child: ctxError, keep: true}
		case "acp_meta", "channel_context":
			return mode{child: ctxTraceHolder, keep: true}
		case "result", "projections":
			// The JSON-RPC result and the L3 projections carry the same
			// model output as body.result and body.delta.
			return mode{act: actContent, rule: RuleContent}
		case "data", "data_base64":
			if st.ce {
				// A CloudEvent's payload: text (a legacy stream chunk's
				// model output) is content; a JSON payload is walked, its
				// content keys masked.
				return mode{act: actContentStr, rule: RuleContent}
			}
		}
		for n, name := range minimumKeys {
			if string(key) == name {
				st.topSeen |= 1 << n
			}
		}
		if isFieldKey(key) {
			// Top-level scalars the rules read; as containers (provenance,
			// payload...) they may be masked to fit, keeping their type.
			return mode{keep: true, ident: true}
		}
	case ctxBody:
		switch string(key) {
		case "delta":
			return mode{act: actContent, rule: RuleContent, delta: true}
		case "result":
			return mode{act: actContent, rule: RuleContent}
		case "delta_kind", "branch", "sessionUpdate", "ext_method", "event_type", "code":
			return mode{keep: true, ident: true}
		}
	case ctxParams:
		switch string(key) {
		case "intent":
			return mode{keep: true, ident: true}
		case "files", "attachments":
			return mode{child: ctxFiles, keep: true}
		case "_meta":
			return mode{child: ctxTraceHolder, keep: true}
		}
	case ctxFileEntry:
		if string(key) == "uri" {
			return mode{keep: true}
		}
	case ctxTraceHolder:
		if string(key) == "traceparent" {
			return mode{keep: true, ident: true}
		}
	case ctxMeta:
		if string(key) == "_jiuwenswarm_server_push" {
			return mode{keep: true}
		}
	case ctxError:
		if string(key) == "code" || string(key) == "message" {
			return mode{keep: true, ident: true}
		}
	}
	for _, ck := range contentKeys {
		if string(key) == ck {
			return mode{act: actContent, rule: RuleContent}
		}
	}
	return mode{}
}

// elem is the mode of the elements of an array whose own mode is m.
func elem(m mode) mode {
	switch m.act {
	case actCred, actCredStr:
		return mode{act: actCred, rule: m.rule, child: ctxCred}
	case actPII, actRef:
		return mode{act: m.act, rule: m.rule}
	case actNamedKey:
		// {"acmeKey": ["<hex>"]}: each element as the key's value.
		return mode{act: actNamedKey, rule: m.rule, child: ctxNamed}
	}
	switch m.child {
	case ctxCred:
		return mode{act: actCred, rule: m.rule, child: ctxCred}
	case ctxFiles:
		return mode{child: ctxFileEntry, keep: true}
	}
	return mode{}
}

func (st *state) object(i int, c ctx, rule Rule, closeIt bool) (int, error) {
	in := st.in
	st.depth++
	if st.depth > maxDepth {
		return 0, &SyntaxError{i, "exceeded max depth"}
	}
	st.out = append(st.out, '{')
	i = st.ws(i + 1)
	if i < len(in) && in[i] == '}' {
		if closeIt {
			st.out = append(st.out, '}')
		}
		st.depth--
		return i + 1, nil
	}
	first := true
	var named []byte // a credential name in a "name"/"key" field: the key of the object's "value"
	for {
		if i >= len(in) || in[i] != '"' {
			return 0, &SyntaxError{i, "expected a key"}
		}
		ke, esc, err := st.str(i)
		if err != nil {
			return 0, err
		}
		rawKey := in[i+1 : ke-1]
		key := rawKey
		if esc {
			st.kdec = e2a.AppendUnquoted(st.kdec[:0], rawKey)
			key = st.kdec
		}
		i = st.ws(ke)
		if i >= len(in) || in[i] != ':' {
			return 0, &SyntaxError{i, "expected ':'"}
		}
		i = st.ws(i + 1)
		var m mode
		switch {
		case named != nil && len(key) == 5 && string(key) == "value":
			// {"name": "DB_PASSWORD", "value": "…"} (Kubernetes env
			// lists, HAR headers): the value is judged under its name.
			m = st.decide(c, rule, named)
		case i < len(in) && in[i] == '"' && (string(key) == "name" || string(key) == "key"):
			named = credentialName(in, i)
			m = st.decide(c, rule, key)
		default:
			m = st.decideMemo(c, rule, key)
		}
		if m.act == actDrop {
			if i, err = st.skip(i); err != nil {
				return 0, err
			}
		} else {
			if !first {
				st.out = append(st.out, ',')
			}
			first = false
			pl := len(st.path)
			if pl > 0 {
				st.path = append(st.path, '.')
			}
			ks := len(st.out)
			st.writeKey(rawKey, key, esc)
			st.path = append(st.path, st.out[ks+1:len(st.out)-1]...)
			st.out = append(st.out, ':')
			i, err = st.value(i, m)
			st.path = st.path[:pl]
			if err != nil {
				return 0, err
			}
		}
		i = st.ws(i)
		if i >= len(in) {
			return 0, &SyntaxError{i, "unterminated object"}
		}
		switch in[i] {
		case ',':
			i = st.ws(i + 1)
		case '}':
			if closeIt {
				st.out = append(st.out, '}')
			}
			st.depth--
			return i + 1, nil
		default:
			return 0, &SyntaxError{i, "expected ',' or '}'"}
		}
	}
}

func (st *state) array(i int, m mode) (int, error) {
	in := st.in
	st.depth++
	if st.depth > maxDepth {
		return 0, &SyntaxError{i, "exceeded max depth"}
	}
	st.out = append(st.out, '[')
	i = st.ws(i + 1)
	if i < len(in) && in[i] == ']' {
		st.out = append(st.out, ']')
		st.depth--
		return i + 1, nil
	}
	em := elem(m)
	pl := len(st.path)
	st.path = append(st.path, "[]"...)
	defer func() { st.path = st.path[:pl] }()
	for {
		var err error
		if i, err = st.value(i, em); err != nil {
			return 0, err
		}
		i = st.ws(i)
		if i >= len(in) {
			return 0, &SyntaxError{i, "unterminated array"}
		}
		switch in[i] {
		case ',':
			st.out = append(st.out, ',')
			i = st.ws(i + 1)
		case ']':
			st.out = append(st.out, ']')
			st.depth--
			return i + 1, nil
		default:
			return 0, &SyntaxError{i, "expected ',' or ']'"}
		}
	}
}

func (st *state) value(i int, m mode) (int, error) {
	in := st.in
	if i >= len(in) {
		return 0, &SyntaxError{i, "unexpected end of input"}
	}
	start := len(st.out)
	var err error
	c := in[i]
	switch {
	case c == '"':
		var e int
		var esc bool
		if e, esc, err = st.str(i); err != nil {
			return 0, err
		}
		st.stringValue(in[i+1:e-1], esc, m)
		i = e
	case c == '{' || c == '[':
		switch {
		case m.act == actContent && st.r.content != ContentKeep:
			e, err := st.skip(i)
			if err != nil {
				return 0, err
			}
			if emptyContainer(in[i:e]) {
				// Nothing to hide: {} and [] stay as they are.
				st.out = append(st.out, c, in[e-1])
				i = e
				break
			}
			st.maskContainer(c, e-i)
			st.hit(m.rule)
			i = e
		case c == '{':
			child := m.child
			if m.act == actRef || m.act == actPII || m.act == actContent || m.act == actContentStr {
				child = ctxPlain
			}
			i, err = st.object(i, child, m.rule, true)
		default:
			i, err = st.array(i, m)
		}
		if err != nil {
			return 0, err
		}
	case c == 't' || c == 'f' || c == 'n':
		lit := "null"
		if c == 't' {
			lit = "true"
		} else if c == 'f' {
			lit = "false"
		}
		if len(in)-i < len(lit) || string(in[i:i+len(lit)]) != lit {
			return 0, &SyntaxError{i, "invalid literal"}
		}
		st.out = append(st.out, lit...)
		return i + len(lit), nil
	default:
		e, err := st.number(i)
		if err != nil {
			return 0, err
		}
		switch m.act {
		case actCred:
			st.out = append(st.out, '"')
			st.out = append(st.out, mask+"(fp:"...)
			st.out = st.appendFP(st.out, in[i:e])
			st.out = append(st.out, ')', '"')
			st.hit(m.rule)
		case actPII:
			st.out = append(st.out, `"`+mask+`"`...)
			st.hit(m.rule)
		default:
			if r, ok := piiNumber(in[i:e]); ok {
				// A phone or card number typed as a number: masked as the
				// same digits in a string would be.
				st.out = append(st.out, `"`+mask+`"`...)
				st.hit(r)
				break
			}
			st.out = append(st.out, in[i:e]...)
		}
		return e, nil
	}
	if st.record2 && !m.keep && len(st.out)-start >= minSpan {
		st.spanPath = append(st.spanPath, st.path...)
		st.spans = append(st.spans, tspan{start: start, end: len(st.out), pathEnd: len(st.spanPath), kind: c})
	}
	return i, nil
}

// emptyContainer reports an object or array with nothing but white space
// between its brackets.
func emptyContainer(b []byte) bool {
	for _, c := range b[1 : len(b)-1] {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// maskContainer writes the content mask of an object or array whose JSON
// text was n bytes long.
func (st *state) maskContainer(c byte, n int) {
	if st.r.content == ContentDrop {
		if c == '{' {
			st.out = append(st.out, "{}"...)
		} else {
			st.out = append(st.out, "[]"...)
		}
		return
	}
	if c == '{' {
		st.out = append(st.out, `{"_masked":`...)
	} else {
		st.out = append(st.out, '[')
	}
	st.out = appendLenMask(st.out, n)
	if c == '{' {
		st.out = append(st.out, '}')
	} else {
		st.out = append(st.out, ']')
	}
}

func appendLenMask(dst []byte, n int) []byte {
	dst = append(dst, `"`+mask+`(len:`...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, ')', '"')
}

// stringValue writes the string whose raw (still escaped) content is raw.
func (st *state) stringValue(raw []byte, esc bool, m mode) {
	s := raw
	if esc {
		st.dec = e2a.AppendUnquoted(st.dec[:0], raw)
		s = st.dec
	}
	if esc && bytes.IndexByte(s, '\\') >= 0 || st.pct {
		if u, ok := st.unescapedShape(s); ok {
			s, raw = u, nil // (and so the delta the carry keeps)
		}
	}
	if m.delta && st.r.content == ContentKeep && st.depth == 2 {
		// Where body.delta's text is in the line, and the text itself.
		st.deltaAt = len(st.out)
		st.delta = append(st.delta[:0], s...)
		st.strValue(raw, s, m)
		st.deltaEnd = len(st.out)
		return
	}
	st.strValue(raw, s, m)
}

// strValue writes the string s; raw is its escaped form, or nil when s does
// not come from JSON (frame attributes) and must be encoded.
func (st *state) strValue(raw, s []byte, m mode) {
	if len(s) == 0 {
		st.out = append(st.out, `""`...)
		return
	}
	if isMaskToken(s) {
		st.copyString(raw, s)
		return
	}
	if m.pwd && m.act == actCred && redact.PWDPath(pwdName, s) {
		st.scanString(raw, s, m.ident) // {"PWD": "/srv/app"}
		return
	}
	switch m.act {
	case actCred, actCredStr, actRef:
		st.out = append(st.out, '"')
		if n := bearerPrefix(s); n > 0 {
			st.out = append(st.out, s[:n]...)
			s = s[n:]
		}
		st.out = append(st.out, mask+"(fp:"...)
		st.out = st.appendFP(st.out, s)
		st.out = append(st.out, ')', '"')
		st.hit(m.rule)
	case actPII:
		st.out = append(st.out, `"`+mask+`"`...)
		st.hit(m.rule)
	case actNamedKey:
		if !redact.KeyLikeValue(s) {
			st.scanString(raw, s, m.ident)
			break
		}
		st.out = append(st.out, '"')
		st.out = append(st.out, mask+"(fp:"...)
		st.out = st.appendFP(st.out, s)
		st.out = append(st.out, ')', '"')
		st.hit(m.rule)
	case actContent, actContentStr:
		switch st.r.content {
		case ContentMask:
			st.out = appendLenMask(st.out, len(s))
			st.hit(m.rule)
		case ContentDrop:
			st.out = append(st.out, `""`...)
			st.hit(m.rule)
		default:
			st.scanString(raw, s, m.ident)
		}
	default:
		st.scanString(raw, s, m.ident)
	}
}

// bearerPrefix is the length of a leading "Bearer " (any case, any number of
// spaces) with something after it, or 0.
func bearerPrefix(s []byte) int {
	if !hasPrefixFold(s, "bearer ") {
		return 0
	}
	n := 7
	for n < len(s) && s[n] == ' ' {
		n++
	}
	if n == len(s) {
		return 0
	}
	return n
}

// copyString writes a string unchanged: its escaped form raw, or s encoded
// when raw is nil.
func (st *state) copyString(raw, s []byte) {
	st.out = append(st.out, '"')
	switch {
	case raw == nil:
		st.out = appendEscaped(st.out, s)
	case len(raw) == len(st.ascii) && len(raw) > 0 && &raw[0] == &st.ascii[0], utf8.Valid(raw):
		// (the string str read last, all ASCII, needs no look)
		st.out = append(st.out, raw...)
	default:
		// Strict readers reject invalid UTF-8: write U+FFFD for each bad
		// byte, as encoding/json does (the engine judged the original).
		st.out = appendValidUTF8(st.out, raw)
	}
	st.out = append(st.out, '"')
}

// appendValidUTF8 appends raw JSON string content with every byte that is
// not part of valid UTF-8 written as \ufffd; escapes are ASCII and kept.
func appendValidUTF8(dst, raw []byte) []byte {
	start := 0
	for i := 0; i < len(raw); {
		if raw[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, raw[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	return append(dst, raw[start:]...)
}

// writeKey writes a member's key: as it was, or masked when the key itself
// holds a credential or personal data (then always with a fingerprint, so
// that distinct keys stay distinct).
func (st *state) writeKey(raw, key []byte, esc bool) {
	if len(key) < 6 {
		st.copyString(raw, key)
		return
	}
	if len(raw) != len(key) || st.pct { // (it had escapes: it is shorter)
		st.writeKeyRespelled(raw, key)
		return
	}
	st.scanString(raw, key, true)
}

// writeKeyRespelled is writeKey for a key that had escapes, or in a record
// with "%25": one that spells a shape with them (unescapedShape) is
// masked in its unescaped form.
func (st *state) writeKeyRespelled(raw, key []byte) {
	if !st.mayMask(key) && (bytes.IndexByte(key, '\\') >= 0 || st.pct) {
		if u, ok := st.unescapedShape(key); ok {
			raw, key = nil, u
		}
	}
	st.scanString(raw, key, true)
}

// unescapedShape is s (an unescaped JSON string) with its own \u00XX
// escapes and "%25"s decoded (redact.UnescapeASCII), when s holds some
// and something to mask shows only then: JSON text held in the string
// spells a shape with escapes ("\u0041KIA…", "p\u0061ssword: …"), or a
// URL-encoded text is encoded again ("%253A%252F%252Fu%253Apw%2540h").
// The string is then written in that form, masked, as redact.Masker.Text
// masks text. It is st.udec. Its callers call it only for a string that
// holds a '\\' (it had escapes) or in a record that holds "%25" (st.pct):
// a look-up in every string cost 4 % of the record log's instructions.
func (st *state) unescapedShape(s []byte) ([]byte, bool) {
	if !redact.HasASCIIEscape(s) {
		return nil, false
	}
	st.udec = redact.UnescapeASCII(st.udec[:0], s)
	return st.udec, st.mayMask(st.udec)
}

// scanString writes the string s (raw: its escaped form) with every
// credential, e-mail address, phone number and (policy allowing) data: URL
// in it masked. Unchanged strings are copied as they were.
func (st *state) scanString(raw, s []byte, ident bool) {
	if !st.mayMask(s) {
		st.copyString(raw, s) // the common case: one pass, no rewrite
		return
	}
	base := len(st.out)
	st.out = append(st.out, '"')
	if st.redactText(s, ident) {
		st.out = append(st.out, '"')
		st.addPath()
		return
	}
	st.out = st.out[:base]
	st.copyString(raw, s)
}

// mayMask reports whether maskSpans would change s. A short string it
// found nothing in is remembered (st.clean): records repeat most of their
// strings (a converter's name, kinds, statuses, a stream's ids), and
// comparing one costs less than the detectors' look at it.
func (st *state) mayMask(s []byte) bool {
	// A timestamp (redact.IsDateTime) holds nothing to mask: its digit
	// runs are too short for a phone, card or ID number, and it has no
	// letters but T and Z (TestDateTimeNothingToMask holds Find to that);
	// new in each record, it is neither searched nor remembered.
	if len(s) < 6 || redact.IsDateTime(s) {
		return false
	}
	if len(s) <= memoMaxLen {
		if st.clean == nil {
			st.clean = newMemo()
		} else if _, ok := st.clean.get(s); ok {
			return false
		}
	}
	if _, ok := st.find(s, 0); ok {
		return true
	}
	if st.r.content != ContentKeep {
		if _, ok := findDataURL(s, 0); ok {
			return true
		}
	}
	st.clean.put(s, 1)
	return false
}

// redactText appends s to st.out as JSON string content, masks applied,
// and reports whether anything was masked. When nothing was, what it
// appended is not meaningful (the caller copies the original).
func (st *state) redactText(s []byte, ident bool) bool {
	var changed bool
	st.out, changed = st.maskSpans(st.out, s, ident, true)
	return changed
}

// maskSpans appends s with every credential, e-mail address, phone number
// and (policy allowing) data: URL masked; escape writes JSON string content,
// otherwise the bytes are appended as they are.
func (st *state) maskSpans(dst, s []byte, ident, escape bool) ([]byte, bool) {
	add := func(dst, b []byte) []byte {
		if escape {
			return appendEscaped(dst, b)
		}
		return append(dst, b...)
	}
	if len(s) < 6 {
		return add(dst, s), false
	}
	cur, changed := 0, false
	// Two finders: redact's (credentials and personal data, one pass) and,
	// under the mask and drop policies, data: URLs.
	var data match
	haveData, dataDone := false, st.r.content == ContentKeep
	for cur < len(s) {
		m, ok := st.find(s, cur)
		if !dataDone && (!haveData || data.start < cur) {
			data, haveData = findDataURL(s, cur)
			dataDone = !haveData
		}
		if haveData && data.start >= cur && (!ok || data.start < m.start) {
			m, ok = data, true
			haveData = false
		}
		if !ok || m.start < cur || m.end <= m.start {
			break // a finder must not reach back; never loop on it
		}
		dst = add(dst, s[cur:m.start+m.keep])
		v := s[m.start+m.keep : m.end]
		switch {
		case m.rule == RuleDataURL:
			dst = append(dst, mask+"(len:"...)
			dst = strconv.AppendInt(dst, int64(len(v)), 10)
			dst = append(dst, ')')
		case m.rule.isPII() && !ident:
			dst = append(dst, mask...)
		default:
			dst = append(dst, mask+"(fp:"...)
			dst = st.appendFP(dst, v)
			dst = append(dst, ')')
		}
		st.hit(m.rule)
		cur, changed = m.end, true
	}
	return add(dst, s[cur:]), changed
}

// find is redact.Find as a match, skipping what already is a mask.
func (st *state) find(s []byte, from int) (match, bool) {
	for from < len(s) {
		m, ok := redact.Find(s, from)
		if !ok || m.End <= m.Start || m.Start < from {
			return match{}, false
		}
		if !isMaskToken(s[m.Start:m.End]) {
			return match{start: m.Start, end: m.End, rule: kindRule[m.Kind]}, true
		}
		from = m.End
	}
	return match{}, false
}

func (st *state) appendFP(dst, v []byte) []byte {
	return redact.AppendFingerprint(st.r.masker, dst, v)
}

func (st *state) hit(r Rule) {
	st.counts[r]++
	if r != RuleTruncated {
		st.addPath()
	}
}

// addPath notes the current path, once.
func (st *state) addPath() {
	p := st.path
	if len(p) == 0 {
		p = []byte("$")
	}
	from := 0
	for _, end := range st.pathEnds {
		if string(st.paths[from:end]) == string(p) {
			return
		}
		from = end
	}
	if len(st.pathEnds) >= maxPaths {
		st.more++
		return
	}
	st.paths = append(st.paths, p...)
	st.pathEnds = append(st.pathEnds, len(st.paths))
}

func (st *state) pathList() []string {
	if len(st.pathEnds) == 0 {
		return nil
	}
	out := make([]string, 0, len(st.pathEnds))
	from := 0
	for _, end := range st.pathEnds {
		p := st.paths[from:end]
		out = append(out, string(e2a.AppendUnquoted(nil, p)))
		from = end
	}
	return out
}

// appendPaths writes the path list as JSON array elements (the paths are
// already JSON string content: keys are kept in their escaped form).
func (st *state) appendPaths(dst []byte) []byte {
	dst = append(dst, '[')
	from := 0
	for n, end := range st.pathEnds {
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, st.paths[from:end]...)
		dst = append(dst, '"')
		from = end
	}
	return append(dst, ']')
}

// truncate masks the largest maskable values of the record written at
// st.out[base:] until it fits in max bytes (closing brace included).
// Values the rules read are never masked, so a record may still be over.
func (st *state) truncate(base, max int) {
	st.trunc = true
	excess := len(st.out) - base + 1 - max
	order := make([]int, len(st.spans))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return (st.spans[b].end - st.spans[b].start) - (st.spans[a].end - st.spans[a].start)
	})
	var chosen []int
	for _, k := range order {
		if excess <= 0 {
			break
		}
		sp := st.spans[k]
		inside := false
		for _, c := range chosen {
			if sp.start >= st.spans[c].start && sp.end <= st.spans[c].end {
				inside = true
				break
			}
		}
		if inside {
			continue
		}
		saved := (sp.end - sp.start) - len(truncMask(nil, sp, st.out[sp.start:sp.end]))
		if saved <= 0 {
			continue
		}
		chosen = append(chosen, k)
		excess -= saved
	}
	slices.SortFunc(chosen, func(a, b int) int { return st.spans[a].start - st.spans[b].start })
	st.alt = append(st.alt[:0], st.out[base:]...)
	st.out = st.out[:base]
	prev := 0
	for _, k := range chosen {
		sp := st.spans[k]
		st.out = append(st.out, st.alt[prev:sp.start-base]...)
		st.out = truncMask(st.out, sp, st.alt[sp.start-base:sp.end-base])
		prev = sp.end - base
		st.counts[RuleTruncated]++
		from := 0
		if k > 0 {
			from = st.spans[k-1].pathEnd
		}
		save := st.path
		st.path = st.spanPath[from:sp.pathEnd]
		st.addPath()
		st.path = save
	}
	st.out = append(st.out, st.alt[prev:]...)
}

// truncMask is the mask of a span: same JSON type, length in bytes of the
// string content (strings) or of the JSON text (objects, arrays).
func truncMask(dst []byte, sp tspan, text []byte) []byte {
	n := sp.end - sp.start
	switch sp.kind {
	case '"':
		n = len(unescapedLenBuf(text[1 : len(text)-1]))
		return appendLenMask(dst, n)
	case '{':
		dst = append(dst, `{"_masked":`...)
		dst = appendLenMask(dst, n)
		return append(dst, '}')
	default:
		dst = append(dst, '[')
		dst = appendLenMask(dst, n)
		return append(dst, ']')
	}
}

// unescapedLenBuf returns a buffer as long as the unescaped string.
func unescapedLenBuf(raw []byte) []byte {
	if slices.Index(raw, '\\') < 0 {
		return raw
	}
	return e2a.AppendUnquoted(nil, raw)
}

// piiNumber reports an integer literal of 11 to 19 digits (a phone number
// with or without its country code, a card number) that Find takes whole
// for personal data, and its rule. Shorter numbers (counts, ids) and
// millisecond timestamps are no shape Find knows.
func piiNumber(lit []byte) (Rule, bool) {
	if len(lit) < 11 || len(lit) > 19 {
		return 0, false
	}
	for _, c := range lit {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	m, ok := redact.Find(lit, 0)
	if !ok || m.Start != 0 || m.End != len(lit) || m.Kind.Credential() || m.Kind == redact.KindHighEntropy {
		return 0, false
	}
	return kindRule[m.Kind], true
}

// credentialName returns the decoded string at in[i] (a JSON string) when
// it names a credential or an Authorization/Cookie header, else nil.
func credentialName(in []byte, i int) []byte {
	e := i + 1
	for e < len(in) && in[e] != '"' {
		if in[e] == '\\' {
			e++
		}
		e++
	}
	if e >= len(in) || e-i > 130 {
		return nil
	}
	v := in[i+1 : e]
	if bytes.IndexByte(v, '\\') >= 0 {
		v = e2a.AppendUnquoted(nil, v)
	}
	if !redact.ClassifyKey(v).Credential() {
		return nil
	}
	return v
}
