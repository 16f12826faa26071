package e2a

import "math/bits"

// JSONType is the JSON type of a value as the scanner saw it. Absent means
// the key was not present at all; Null means it was present with JSON null.
type JSONType uint8

const (
	Absent JSONType = iota
	Null
	String
	Number
	Bool
	Object
	Array
)

var jsonTypeNames = [...]string{"absent", "null", "string", "number", "boolean", "object", "array"}

func (t JSONType) String() string {
	if int(t) < len(jsonTypeNames) {
		return jsonTypeNames[t]
	}
	return "invalid"
}

// Value is one scanned value. For strings, Str is the unescaped content
// (invalid UTF-8 replaced by U+FFFD, exactly as encoding/json does); for
// numbers it is the literal as written; for booleans Bool holds the value.
// For objects and arrays Str is empty: only the type is recorded.
//
// Str aliases either the input or the Record's scratch buffer: it is valid
// until the Record is reset or reused.
type Value struct {
	Type JSONType
	Bool bool
	Str  []byte
}

// Present reports whether the key was there with a non-null value.
func (v *Value) Present() bool { return v.Type != Absent && v.Type != Null }

// Is reports whether v is the string s.
func (v *Value) Is(s string) bool { return v.Type == String && string(v.Str) == s }

// Field names a top-level key the rules read. The order is the index into
// Record.Fields; FieldKeys gives the wire key of each.
type Field uint8

const (
	FProtocolVersion Field = iota
	FResponseID
	FRequestID
	FSequence
	FIsFinal
	FStatus
	FResponseKind
	FTimestamp
	FProvenance
	FBody
	FIsStream
	FMetadata
	FProjections
	FChannelContext
	FJSONRPCID
	FSessionID
	FMethod
	FParams
	FExtMethod
	FIdentityOrigin
	FType
	FEvent
	FJSONRPC
	FID
	FResult
	FError
	FSpecVersion
	FSource
	FChannelID
	FReqMethod
	FBinding
	FPayload
	FAcpMeta
	FChannel
	FOk
	FIsComplete
	numFields
)

// NumFields is the number of top-level fields a Record tracks.
const NumFields = int(numFields)

// FieldKeys are the wire keys of the top-level fields, indexed by Field.
var FieldKeys = [NumFields]string{
	FProtocolVersion: "protocol_version",
	FResponseID:      "response_id",
	FRequestID:       "request_id",
	FSequence:        "sequence",
	FIsFinal:         "is_final",
	FStatus:          "status",
	FResponseKind:    "response_kind",
	FTimestamp:       "timestamp",
	FProvenance:      "provenance",
	FBody:            "body",
	FIsStream:        "is_stream",
	FMetadata:        "metadata",
	FProjections:     "projections",
	FChannelContext:  "channel_context",
	FJSONRPCID:       "jsonrpc_id",
	FSessionID:       "session_id",
	FMethod:          "method",
	FParams:          "params",
	FExtMethod:       "ext_method",
	FIdentityOrigin:  "identity_origin",
	FType:            "type",
	FEvent:           "event",
	FJSONRPC:         "jsonrpc",
	FID:              "id",
	FResult:          "result",
	FError:           "error",
	FSpecVersion:     "specversion",
	FSource:          "source",
	FChannelID:       "channel_id",
	FReqMethod:       "req_method",
	FBinding:         "binding",
	FPayload:         "payload",
	FAcpMeta:         "acp_meta",
	FChannel:         "channel",
	FOk:              "ok",
	FIsComplete:      "is_complete",
}

// Sub names a nested value the rules read (inside body, metadata, params,
// provenance, error, _meta). Indexed into Record.Subs.
type Sub uint8

const (
	// body.*
	SBodyDeltaKind Sub = iota
	SBodyDelta
	SBodyResult
	SBodyCode
	SBodyMessage
	SBodyBranch
	SBodyPayload
	SBodySessionUpdate
	SBodyExtMethod
	SBodyEventType
	// metadata._jiuwenswarm_server_push
	SMetaServerPush
	// params.*
	SParamsIntent
	// error.code, error.message (JSON-RPC error objects)
	SErrorCode
	SErrorMessage
	// W3C trace parent, looked up in params._meta.traceparent,
	// acp_meta.traceparent and channel_context.traceparent (first found wins,
	// in that order).
	STraceparent
	numSubs
)

// NumSubs is the number of nested values a Record tracks.
const NumSubs = int(numSubs)

// SubPaths gives the dotted path of each Sub, for messages and tests.
var SubPaths = [NumSubs]string{
	SBodyDeltaKind:     "body.delta_kind",
	SBodyDelta:         "body.delta",
	SBodyResult:        "body.result",
	SBodyCode:          "body.code",
	SBodyMessage:       "body.message",
	SBodyBranch:        "body.branch",
	SBodyPayload:       "body.payload",
	SBodySessionUpdate: "body.sessionUpdate",
	SBodyExtMethod:     "body.ext_method",
	SBodyEventType:     "body.event_type",
	SMetaServerPush:    "metadata._jiuwenswarm_server_push",
	SParamsIntent:      "params.intent",
	SErrorCode:         "error.code",
	SErrorMessage:      "error.message",
	STraceparent:       "traceparent",
}

// Record is what the fast path reads from one JSON message: the type and
// value of each top-level key the rules need and a few nested ones, and
// nothing else. A Record is reused across messages: Scan resets it.
//
// Duplicate keys: the last occurrence wins (as in encoding/json and Python's
// json module). Keys are matched exactly (case-sensitive), unlike
// encoding/json's struct decoding.
type Record struct {
	Fields [NumFields]Value
	Subs   [NumSubs]Value

	// FileWithoutURI is set when params.files or params.attachments is an
	// array with an entry that is not an object carrying a string "uri".
	FileWithoutURI bool

	// scratch holds unescaped strings; reused across Scan calls.
	scratch []byte

	// secretFree: the Scan that filled the record found that ScanSecrets
	// would find nothing in its input (see MayHoldSecret).
	secretFree bool

	// body.delta as written (see RawDelta).
	deltaRaw            []byte
	deltaEsc, deltaSeen bool
	// deltaText: body.delta unescaped, when the Scan unescaped it for its
	// credential pre-check (see DeltaText), in deltaBuf (reused across
	// Scan calls like scratch).
	deltaText, deltaBuf []byte

	// clean: texts that passed no credential pre-check, kept across Scan
	// calls like scratch (see scanner.mayHoldCredential).
	clean *cleanTexts

	// blocks: the vector pass's bitmaps of the input (masks.go), reused
	// like scratch.
	blocks []block

	// memo: the keys seen so far, in order (keyMemo), kept like clean.
	memo *keyMemos

	// fieldsSet, subsSet mark the Fields and Subs that Scan may have
	// written since the record was last cleared whole: the next Scan
	// clears only those of them that it does not write again
	// (clearStale), not the whole record (1.7 kB a record, 6 % of Scan
	// on gen). ScanStd marks all.
	fieldsSet uint64
	subsSet   uint16
}

// RawDelta returns the body of the string body.delta as written in the
// input (still escaped when esc), aliasing the input: body.delta is
// presence-only (its Sub has no Str), and rule e2a.secret's split check
// reads its end. ok is false when the record was not filled by Scan
// (ScanStd) or body.delta is not a string.
func (r *Record) RawDelta() (raw []byte, esc, ok bool) {
	return r.deltaRaw, r.deltaEsc, r.deltaSeen
}

// DeltaText returns body.delta unescaped when the Scan that filled the
// record unescaped it already, for its credential pre-check (an escaped
// delta with an anchor byte), so that rule e2a.secret's split check does
// not unescape it again; ok is false otherwise (RawDelta is then to be
// unescaped). text is the record's: valid until its next Scan or Reset.
func (r *Record) DeltaText() (text []byte, ok bool) {
	return r.deltaText, r.deltaText != nil
}

// MayHoldSecret reports whether ScanSecrets may find a credential in the
// input the record was filled from: false only after a successful Scan
// that, while reading the record, saw every key be one whose class is
// known (knownKeys or the key cache) and no secret key with a string
// value, and every string pass no credential pre-check
// (redact.MayHoldCredentialText). Rule e2a.secret then skips its own walk
// of the record; true (a key seen for the first time, a candidate, a
// record filled by ScanStd) says nothing.
func (r *Record) MayHoldSecret() bool { return !r.secretFree }

// Get returns the top-level value f.
func (r *Record) Get(f Field) *Value { return &r.Fields[f] }

// Sub returns the nested value s.
func (r *Record) Sub(s Sub) *Value { return &r.Subs[s] }

// Reset clears the record for reuse, keeping its scratch buffer. Scan and
// ScanStd clear what a Scan or ScanStd left: a Record whose Fields or Subs
// were written by hand must be Reset before it is scanned into.
func (r *Record) Reset() {
	scratch := r.scratch[:0]
	*r = Record{scratch: scratch, deltaBuf: r.deltaBuf[:0], clean: r.clean, blocks: r.blocks, memo: r.memo}
}

// startScan clears what the last Scan (or ScanStd) left outside Fields
// and Subs, as Reset does, and returns the marks of the Fields and Subs
// it may have written: the Scan that starts overwrites most of them (a
// producer's records set the same 15-25 fields), so only those it does
// not write again are cleared, when it is done (clearStale).
func (r *Record) startScan() (fields uint64, subs uint16) {
	fields, subs = r.fieldsSet, r.subsSet
	r.fieldsSet, r.subsSet = 0, 0
	r.FileWithoutURI, r.secretFree = false, false
	r.deltaRaw, r.deltaEsc, r.deltaSeen, r.deltaText = nil, false, false, nil
	r.scratch = r.scratch[:0]
	return fields, subs
}

// clearStale clears the Fields and Subs marked in fields and subs (what
// an earlier Scan may have written) that this Scan did not mark: every
// write of a Scan writes a whole Value and marks it, so that a Field or
// Sub it marked holds what it wrote, and the others are as Reset leaves
// them.
func (r *Record) clearStale(fields uint64, subs uint16) {
	for m := fields &^ r.fieldsSet; m != 0; m &= m - 1 {
		r.Fields[bits.TrailingZeros64(m)] = Value{}
	}
	for m := subs &^ r.subsSet; m != 0; m &= m - 1 {
		r.Subs[bits.TrailingZeros16(m)] = Value{}
	}
}

// The marks hold every field and sub (a compile error past 64 and 16).
const (
	allFields = uint64(1<<NumFields - 1)
	allSubs   = uint16(1<<NumSubs - 1)
)

// Sequence returns the sequence as an integer and whether it is an integer
// literal that fits in int64 (negative values included: -1 is a keepalive).
// A fraction or exponent ("1.0", "1e2") is not an integer.
func (r *Record) Sequence() (int64, bool) {
	v := &r.Fields[FSequence]
	if v.Type != Number {
		return 0, false
	}
	return ParseInt(v.Str)
}

// ParseInt parses a JSON integer literal (no fraction, no exponent) that
// fits in int64.
func ParseInt(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	neg := false
	if b[0] == '-' {
		neg = true
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		if n > (1<<63)/10 {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if neg {
		if n > 1<<63 {
			return 0, false
		}
		return -int64(n), true
	}
	if n > 1<<63-1 {
		return 0, false
	}
	return int64(n), true
}
