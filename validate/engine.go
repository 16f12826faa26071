package validate

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/e2atap/e2atap/e2a"
	"github.com/e2atap/e2atap/frame"
)

// Config of an Engine.
type Config struct {
	Profile Profile
	// MaxStreams bounds the streams held, over all shards: each partition
	// holds its share, and when it is full its stalest stream is evicted
	// (outcome evicted when it was still open; its next record starts it
	// again, gapped).
	MaxStreams int
	// IdleTimeout ends streams with no record for this long (Expire); 0
	// keeps them until the end of input.
	IdleTimeout time.Duration
	// MaxRecordBytes: a longer JSON message is an e2a.decode finding.
	MaxRecordBytes int
	// ResponseIDWindow is how many response_ids are remembered for
	// e2a.response_id_dup (only where that rule is on).
	ResponseIDWindow int
	// Tombstones is how many ended streams are remembered (for
	// e2a.after_final / frame.after_done) beyond the idle timeout: the
	// oldest is forgotten first. It keeps memory independent of how long
	// the input is.
	Tombstones int
	// OnPanic, when set, makes a panic while one message is judged by a
	// shard's goroutine or by Live (a defect of e2atap: a record that
	// crashed it) cost that message alone: it is recovered, the message
	// is skipped as a loss (the open streams of its scope, its tap and
	// connection, are not judged across it, as after Gap), counted
	// (Live.Panics, Sharded.Panics) and handed to OnPanic, with the
	// panic's value and stack, on the goroutine that judged it. The
	// recovery is set up once for a batch of messages, not for each.
	// (What the caller of an inline shard judges on its own goroutine,
	// Sharded.Inline, panics there: validate's reader.) nil: the panic
	// goes on (tests and fuzzers want to see it).
	OnPanic func(in *Input, v any, stack []byte)
}

// DefaultConfig is the jiuwenswarm profile with the limits of DESIGN.md.
func DefaultConfig() Config {
	return Config{
		Profile:          JiuwenswarmProfile(),
		MaxStreams:       1_000_000,
		IdleTimeout:      10 * time.Minute,
		MaxRecordBytes:   8 << 20,
		ResponseIDWindow: 1 << 20,
		Tombstones:       1 << 16,
	}
}

// Validate reports every problem of the configuration at once.
func (c *Config) Validate() error {
	var errs []error
	if c.Profile.Name == "" {
		errs = append(errs, errors.New("profile: not set"))
	}
	if c.MaxStreams < 1 || c.MaxStreams > MaxTableStreams {
		errs = append(errs, fmt.Errorf("max_streams: %d, want 1 to %d", c.MaxStreams, MaxTableStreams))
	}
	if c.IdleTimeout < 0 {
		errs = append(errs, fmt.Errorf("idle_timeout: %s is negative", c.IdleTimeout))
	}
	if c.MaxRecordBytes < 1 {
		errs = append(errs, fmt.Errorf("max_record_bytes: %d, want at least 1", c.MaxRecordBytes))
	}
	return errors.Join(errs...)
}

// Stats counts what an Engine did (read them after the engine stopped, or
// from the engine's goroutine).
type Stats struct {
	Records  uint64
	Findings [NumRules]uint64
	Joined   uint64 // streams that started mid-stream inside a join window
	Evicted  uint64 // open streams evicted from a full table
	Outcomes [NumOutcomes]uint64
	// SplitUnchecked: chunk boundaries of logged streams not checked for a
	// split secret, the tail table being full (splitsecret.go).
	SplitUnchecked uint64
	// Untracked: records of streams the tables had no memory for (a
	// mapping failed, or the tables reached their share of the memory
	// limit: offheap.go) after evicting to make room; judged as records,
	// not as part of a stream (a loss: the stream is gapped when it is
	// tracked again).
	Untracked uint64
	// LeftOpen: streams a replayed live run left open when it stopped
	// (its record log's mark of OpenMarker): dropped unreported, as that
	// run dropped them, with no outcome.
	LeftOpen uint64
}

// Engine checks one sequence of records. It is a pure state machine: no
// goroutines, no clock reads (time comes with each Input). Not safe for
// concurrent use: a sharded run gives each shard its own Engine.
type Engine struct {
	cfg  Config
	prof Profile
	sink Sink

	rec   e2a.Record
	frm   frame.Frame
	info  RecordInfo
	sinfo StreamInfo // reused: a pointer to it is handed to the sink
	ts    tsMemo     // the date and time of the last valid timestamp
	// cancelWalks counts the partitions cancelSession walked (tests).
	cancelWalks int
	// quiet: the sink ignores StreamStart and StreamEnd (StreamsIgnored):
	// no StreamInfo is built for it. lastTap is the tap name StreamInfo
	// had last, kept so that a stream of the same tap does not copy it.
	quiet   bool
	lastTap string
	ceBuf   []byte // legacy CE-JSON stream events rebuilt as frames
	key     []byte // scratch for composite keys
	stats   Stats

	// noRecords: the sink ignores Record (RecordsIgnored): no RecordInfo
	// is filled for it.
	noRecords bool

	// parts is the stream state by partition (partition.go); cur is the
	// partition in use and tab its table.
	parts  []part
	cur    *part
	tab    *table
	forget []byte // ended streams to take out of their tables: [partition u8][len u16][hash u64][key]...
	bulk   bool   // ending many streams at once: bury queues nothing, the caller removes them
	sweep  bool   // ended streams are still in the tables (after Finish): remove them before use

	// nextIdle is a lower bound of the capture time (unix ns) at which a
	// stream held now goes idle (math.MaxInt64: none): exact after Expire,
	// lowered as streams are created. idleDue publishes it, and expired
	// counts the Expire calls done, for a Live run's sweeps (another
	// goroutine reads them).
	nextIdle int64
	idleDue  atomic.Int64
	expired  atomic.Uint64

	// untracked is Stats.Untracked for other goroutines (Live.Untracked:
	// a metric read while the engine runs).
	untracked atomic.Uint64

	head     e2a.Head
	headBuf  []byte
	respIDs  *respIDSet
	shared   *respIDSet  // set by a Sharded run: one set for all shards
	split    *splitTails // e2a.secret across chunks (splitsecret.go); nil until a logged response
	echoSeed maphash.Seed
	idSeed   maphash.Seed
	opens    *openFrom // streams read from Kafka, by partition (openfrom.go)
	// heldConns: the connections whose tap is behind (Hold, PosConn).
	heldConns []heldConn
	// hint is the partition a Sharded run's reader found for the stream
	// key at in.Data[off:off+n] of the input being judged (n = 0: none), so
	// that composite does not hash that key again.
	hint partHint
	fc   *frameCache // where the latest frames' streams are (framecache.go)
	ec   *e2aCache   // where the latest request_ids' streams are (framecache.go)
}

// A partHint names a stream key by where it lies in Input.Data, and its
// partition.
type partHint struct {
	off  int32
	n    uint16
	part uint16
}

// sharedIDSeed hashes response_ids the same way in every shard.
var sharedIDSeed = maphash.MakeSeed()

// NewEngine returns an engine reporting to sink.
func NewEngine(cfg Config, sink Sink) *Engine {
	if cfg.MaxStreams < 1 {
		cfg.MaxStreams = DefaultConfig().MaxStreams
	}
	cfg.MaxStreams = min(cfg.MaxStreams, MaxTableStreams)
	if cfg.MaxRecordBytes < 1 {
		cfg.MaxRecordBytes = DefaultConfig().MaxRecordBytes
	}
	if cfg.Tombstones < 1 {
		cfg.Tombstones = DefaultConfig().Tombstones
	}
	e := &Engine{cfg: cfg, prof: cfg.Profile, sink: sink, echoSeed: maphash.MakeSeed(), idSeed: sharedIDSeed, nextIdle: math.MaxInt64}
	e.quiet, e.noRecords = streamsIgnored(sink), recordsIgnored(sink)
	e.idleDue.Store(math.MaxInt64)
	e.parts = make([]part, partitions(cfg.MaxStreams))
	for p := range e.parts {
		e.parts[p] = part{id: uint8(p), rnd: 0x9e3779b97f4a7c15 + uint64(p), max: partShare(cfg.MaxStreams, len(e.parts), p)}
	}
	e.use(0)
	if e.prof.Severity[RuleE2AResponseIDDup] != Off {
		w := cfg.ResponseIDWindow
		e.respIDs = newRespIDSet(w)
	}
	return e
}

// Stats returns the counters so far.
func (e *Engine) Stats() *Stats { return &e.stats }

// Open returns how many streams the tables hold (open and ended).
func (e *Engine) Open() int {
	n := 0
	for p := range e.parts {
		if t := e.parts[p].tab; t != nil {
			n += t.len()
		}
	}
	return n
}

// anyOpen says whether a stream is open (not ended).
func (e *Engine) anyOpen() bool {
	open := false
	e.eachPart(func(p int) {
		for i := int32(0); i < int32(e.tab.len()) && !open; i++ {
			open = e.tab.at(i).flags&fEnded == 0
		}
	})
	return open
}

// use makes partition p current, allocating its state on first use (a
// shard only ever uses the partitions it owns).
func (e *Engine) use(p int) {
	pt := &e.parts[p]
	if pt.tab == nil {
		pt.tab = newTable(min(pt.max, 1<<16/len(e.parts)))
		pt.tombs = newTombSet(max(1, partShare(e.cfg.Tombstones, len(e.parts), p)))
	}
	e.cur, e.tab = pt, pt.tab
}

// useAgain makes pt current, a partition used before (its state is
// allocated: use did it): use without its call, for a frame cache entry's
// partition at every chunk of interleaved streams.
func (e *Engine) useAgain(pt *part) { e.cur, e.tab = pt, pt.tab }

// eachPart calls fn with every allocated partition current.
func (e *Engine) eachPart(fn func(p int)) {
	for p := range e.parts {
		if e.parts[p].tab != nil {
			e.use(p)
			fn(p)
		}
	}
}

func (e *Engine) on(r Rule) bool { return e.prof.Severity[r] != Off }

// report emits a finding of rule r at severity sev (Off: the profile's).
func (e *Engine) report(r Rule, sev Severity, in *Input, stream []byte, proto, msg string) {
	if sev == Off {
		sev = e.prof.Severity[r]
	}
	if sev == Off {
		return
	}
	e.stats.Findings[r]++
	var b [64]byte
	src := in.AppendSource(b[:0])
	f := Finding{
		Rule: RuleIDs[r], Severity: sev, Stream: string(stream), Source: string(src), SourceNum: in.Pos.NumberLen(src),
		Message: msg, Tap: in.Tap, Time: in.Time, Index: in.Index, Protocol: proto,
	}
	e.sink.Finding(&f)
}

// Observe checks one message: JSON, or an EventMeshFrame when the first
// byte is 0xEF. A frame message holds exactly one frame (trailing bytes are
// ignored, as the reference decoder does).
func (e *Engine) Observe(in *Input) {
	if in.Silent {
		sink, quiet, noRecords := e.sink, e.quiet, e.noRecords
		e.sink, e.quiet, e.noRecords = silentSink{}, true, true
		defer func() { e.sink, e.quiet, e.noRecords = sink, quiet, noRecords }()
	}
	if !in.JSON && len(in.Data) > 0 && in.Data[0] == frame.Magic {
		if LineBOM(in) {
			j := *in
			j.Data = j.Data[len(utf8BOM):]
			e.ObserveJSON(&j)
			return
		}
		f, _, err := frame.Decode(in.Data)
		if err != nil {
			e.DecodeError(in, ProtoEventMesh, err.Error())
			return
		}
		e.ObserveFrame(in, &f)
		return
	}
	e.ObserveJSON(in)
}

// LineBOM reports whether in is a line of a JSON-lines file (a capture, a
// tailed log) that starts with a UTF-8 byte order mark. Such a line is JSON
// behind the mark, as the file's first line is (the readers skip a mark
// that opens the file): a producer that writes one per record (.NET and
// PowerShell loggers do) must not get a frame.decode for each. A message
// known to be JSON text (a WebSocket text message) keeps its mark: the
// reference's peers reject it, so it is e2a.decode there.
func LineBOM(in *Input) bool {
	return in.Pos.Kind == PosLine && !in.JSON && len(in.Data) >= len(utf8BOM) && string(in.Data[:len(utf8BOM)]) == utf8BOM
}

// DecodeError reports input that could not be decoded at all: e2a.decode
// for JSON (proto ProtoE2A), frame.decode for frames. in.Data is the
// message or its head (a tap that skips an oversize line hands over its
// first bytes, cut anywhere): when the head names a stream (a whole
// request_id), that stream lost a record and is gapped, so that its next
// record is judged neither against the lost one (no seq_gap, seq_start) nor
// is the stream missing_final. No other stream is touched. The finding
// itself belongs to no stream (RULES.md: the record has none that could be
// read).
func (e *Engine) DecodeError(in *Input, proto, msg string) {
	e.stats.Records++
	r := RuleE2ADecode
	if proto == ProtoEventMesh {
		r = RuleFrameDecode
	}
	e.info = RecordInfo{In: in, Protocol: proto, Kind: "invalid"}
	// The stream the record's head names is gapped below; the sinks get
	// it too (the record log keeps it, so that a replay gaps it as well).
	var stream []byte
	if proto == ProtoE2A && len(in.Data) > 0 {
		stream, e.headBuf = headKey(lineHead(in.Data), &e.head, e.headBuf)
		if len(stream) > 0 {
			e.info.Stream = stream
		}
	}
	e.sink.Record(&e.info)
	e.report(r, Off, in, nil, proto, msg)
	if len(stream) == 0 {
		return
	}
	i, _, was := e.lookup(e.composite(in, protoE2A, stream), true, false, in)
	if was != notEnded {
		return // ended or cancelled: nothing left to judge across
	}
	e.touch(i, in)
	e.tab.at(i).flags |= fGap | fResync
}

// composite builds the table key: tap NUL conn NUL proto stream, and makes
// the stream's partition current.
func (e *Engine) composite(in *Input, proto byte, stream []byte) []byte {
	if h := e.hint; h.n != 0 && len(stream) == int(h.n) && int(h.off)+int(h.n) <= len(in.Data) && &stream[0] == &in.Data[h.off] {
		e.use(int(h.part)) // the very bytes the reader routed by
	} else {
		e.use(partitionOf(stream, len(e.parts)))
	}
	e.tab.prefetchInsert() // while the key is built and hashed
	e.key = appendStreamKey(e.key[:0], in, proto, stream)
	return e.key
}

// streamOf splits a composite key into its parts; the stream is a copy
// where the key holds it encoded (streamkey.go).
func streamOf(k []byte) (tap, conn string, stream []byte) {
	a := indexByte(k, 0)
	b := a + 1 + indexByte(k[a+1:], 0)
	return string(k[:a]), string(k[a+1 : b]), streamText(k[b+1], k[b+2:])
}

// streamString is string(streamText(mode, b)) with one copy: a text that
// is a fresh copy already (a decoded id: streamText never writes it again)
// becomes the string as it is.
func streamString(mode byte, b []byte) string {
	t := streamText(mode, b)
	if len(t) == 0 || (len(b) > 0 && unsafe.SliceData(t) == unsafe.SliceData(b)) {
		return string(t) // b itself: the table's bytes
	}
	return unsafe.String(unsafe.SliceData(t), len(t))
}

// inScope says whether composite key k belongs to tap and conn (without
// copying them).
func inScope(k []byte, tap, conn string) bool {
	if len(tap) > maxScopeName || len(conn) > maxScopeName {
		tap, conn = string(appendScopeName(nil, tap)), string(appendScopeName(nil, conn))
	}
	return len(k) > len(tap)+len(conn)+1 && string(k[:len(tap)]) == tap && k[len(tap)] == 0 &&
		string(k[len(tap)+1:len(tap)+1+len(conn)]) == conn && k[len(tap)+1+len(conn)] == 0
}

// maxScopeName bounds a tap or connection name in a key (so that a key
// stays within what the arena's two-byte length says): a longer one keeps
// a prefix and a hash of the whole, as a long stream key does. Names come
// from the configuration and the taps, and from a replayed record log.
const maxScopeName = 1024

func appendScopeName(k []byte, name string) []byte {
	if len(name) <= maxScopeName {
		return append(k, name...)
	}
	k = append(k, name[:maxScopeName-17]...)
	k = append(k, '~')
	return strconv.AppendUint(k, fixedHash([]byte(name)), 16)
}

// tapOf is the tap of composite key k.
func tapOf(k []byte) []byte { return k[:indexByte(k, 0)] }

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return len(b)
}

// Lookup outcomes for a key not in the table.
const (
	notEnded  = iota
	ended     // the stream ended (a tombstone): a record now is after_final
	cancelled // the stream was cancelled: late records are silent
	evicted   // the stream was evicted from a full table: its next record starts it again, gapped
	// untracked is returned by lookup only: the stream could not be added
	// (no memory for it), so it is not judged as a stream this time.
	untracked
	// idled: the stream was ended by the idle timeout, with no final (a
	// tombstone, never a table state): a record now is after_final all the
	// same, but it comes after the stream's end, not after its final.
	idled
)

// lookup finds or (create) adds the stream for key. A key whose stream
// ended is not created again (the ended state says how it ended) unless
// reuse is set: a new request may reuse a finished request_id.
func (e *Engine) lookup(key []byte, create, reuse bool, in *Input) (int32, bool, int) {
	if len(e.forget) > 0 || e.sweep {
		e.forgetPending()
	}
	h := e.tab.hash(key)
	// The key's tombstone slot is read next when the key is not in the
	// table (a new stream): ask for it before the table's slot is.
	e.cur.tombs.prefetch(h)
	if i := e.tab.find(key, h); i >= 0 {
		return i, false, notEnded
	}
	resume := false
	if st := e.cur.tombs.state(h); st != notEnded {
		if !reuse && st != evicted {
			return -1, false, st
		}
		if !create {
			return -1, false, notEnded
		}
		// What the table forgot of an evicted stream is a gap: its next
		// record is not judged by the sequence rules, and it is not
		// missing_final (RULES.md: a loss is never a finding).
		resume = st == evicted && !reuse
		e.cur.tombs.drop(h)
	}
	if !create {
		return -1, false, notEnded
	}
	if e.tab.len() >= e.cur.max {
		e.evict(in)
	}
	i := e.tab.insert(key, h)
	if i < 0 {
		if i = e.insertTight(key, h, in); i < 0 {
			// A loss, as an eviction is: the stream's next record that
			// finds room starts it again, gapped.
			e.stats.Untracked++
			e.untracked.Add(1)
			e.cur.tombs.add(h, evicted)
			return -1, false, untracked
		}
	}
	e.opened(h, in)
	s := e.tab.at(i)
	if !in.Time.IsZero() {
		s.setStart(in.Time.UnixNano())
		if e.cfg.IdleTimeout > 0 {
			if due := in.Time.UnixNano() + int64(e.cfg.IdleTimeout); due < e.nextIdle {
				e.nextIdle = due
				e.idleDue.Store(due)
			}
		}
	}
	switch {
	case resume:
		s.flags |= fGap | fResync
	case !reuse && e.cur.tombs.forgotEvicted:
		// It may be an evicted stream whose tombstone was forgotten.
		s.flags |= fResync
	}
	return i, true, notEnded
}

// insertTight inserts key when the table could not get the memory for it
// (offheap.go): after a compaction of its keys, when enough are dead for
// it to make room, or else in the place of its stalest streams, as if it
// were full: a new stream is more likely to be alive than the stalest
// ones. While a compaction may still make room for keys, it evicts up to
// tightEvict streams to get there; past a compaction that failed, one.
// -1 when it still does not fit.
func (e *Engine) insertTight(key []byte, h uint64, in *Input) int32 {
	t := e.tab
	failed := false
	compact := func() bool {
		if failed || t.dead < tightDead || t.dead < t.deadRetry {
			return false
		}
		if !t.compact() {
			failed = true
			t.deadRetry = t.dead + tightDead // not again at every record
			return false
		}
		return true
	}
	if compact() {
		if i := t.insert(key, h); i >= 0 {
			return i
		}
	}
	for k := 0; k < tightEvict && t.len() > 0 && (k == 0 || (!failed && t.deadRetry == 0)); k++ {
		e.evict(in)
		if i := t.insert(key, h); i >= 0 {
			return i
		}
		if compact() {
			if i := t.insert(key, h); i >= 0 {
				return i
			}
		}
	}
	return -1
}

// tightDead is how many dead key bytes make a table without memory
// compact its keys (a few hundred keys' room, for the cost of copying the
// partition's keys once).
const tightDead = 8 << 10

// tightEvict bounds the streams evicted for one that needs room.
const tightEvict = 64

// evict removes the stalest of a few sampled streams, preferring ended ones.
func (e *Engine) evict(in *Input) {
	n := e.tab.len()
	best := int32(-1)
	for k := 0; k < 16; k++ {
		r := &e.cur.rnd
		*r ^= *r << 13
		*r ^= *r >> 7
		*r ^= *r << 17
		i := int32(*r % uint64(n))
		if best < 0 {
			best = i
			continue
		}
		a, b := e.tab.at(i), e.tab.at(best)
		ae, be := a.flags&fEnded != 0, b.flags&fEnded != 0
		if (ae && !be) || (ae == be && a.lastNs() < b.lastNs()) {
			best = i
		}
	}
	s := e.tab.at(best)
	if s.flags&fEnded == 0 && s.flags&fResponded != 0 {
		e.stats.Evicted++
		s.setEnded(evicted)
		e.end(best, OutcomeEvicted, ReasonEvicted, in, false)
	}
	e.closed(e.tab.key(best))
	e.tab.remove(best)
}

// touch records activity on stream i. Small enough to be inlined: a
// record without a capture time (every record read offline) costs a test,
// not a call.
func (e *Engine) touch(i int32, in *Input) {
	if !in.Time.IsZero() {
		e.touchAt(i, in)
	}
}

func (e *Engine) touchAt(i int32, in *Input) { e.tab.at(i).seen(in.Time.UnixNano()) }

func (e *Engine) startIfNeeded(i int32, in *Input, proto string) {
	s := e.tab.at(i)
	if s.flags&fStarted != 0 {
		return
	}
	s.flags |= fStarted
	if e.quiet {
		return
	}
	e.sinfo = e.streamInfo(i, proto)
	e.sink.StreamStart(&e.sinfo)
}

func (e *Engine) streamInfo(i int32, proto string) StreamInfo {
	s := e.tab.at(i)
	k := e.tab.key(i)
	a := indexByte(k, 0)
	if string(k[:a]) != e.lastTap {
		e.lastTap = string(k[:a])
	}
	b := a + 1 + indexByte(k[a+1:], 0)
	si := StreamInfo{
		Tap: e.lastTap, Protocol: proto, Key: streamString(k[b+1], k[b+2:]), Records: s.records,
		Heartbeats: uint32(s.heartbeats()), Gap: s.flags&fGap != 0, Errors: uint32(s.errors()),
		Request: s.flags&fRequest != 0,
	}
	if s.startNs() != 0 {
		si.Start = time.Unix(0, s.startNs())
		si.End = time.Unix(0, s.lastNs())
		if s.chunkUs != 0 {
			si.FirstChunk = si.Start.Add(time.Duration(s.chunkUs-1) * time.Microsecond)
		}
	}
	return si
}

// end closes stream i with an outcome; with missing, a missing_final /
// missing_done finding is reported (unless the stream had a gap the tap
// could not see across).
func (e *Engine) end(i int32, o Outcome, reason string, in *Input, missing bool) {
	s := e.tab.at(i)
	s.setEnded(ended)
	e.closed(e.tab.key(i))
	e.dropTail(e.tab.key(i))
	how := s.endState()
	if how == ended && reason == ReasonIdle {
		how = idled
	}
	e.bury(i, how)
	if s.flags&fResponded == 0 {
		return
	}
	proto := ProtoE2A
	rule := RuleE2AMissingFinal
	if s.flags&fFrame != 0 {
		proto, rule = ProtoEventMesh, RuleFrameMissingDone
	}
	e.stats.Outcomes[o]++
	if e.quiet {
		e.sinfo = StreamInfo{} // what the missing finding reads of it is set below
	} else {
		e.sinfo = e.streamInfo(i, proto)
	}
	info := &e.sinfo
	info.Outcome, info.Reason = o, reason
	if in != nil {
		info.Index = in.Index
		if !in.Time.IsZero() {
			info.End = in.Time
		}
	}
	if missing && s.flags&fGap == 0 {
		tap, _, key := streamOf(e.tab.key(i))
		what := "no final record"
		if proto == ProtoEventMesh {
			what = "no done chunk"
		}
		src := Input{Tap: tap, Index: info.Index}
		if in != nil {
			// The end's own position (offline: the files), unless the
			// stream was seen on a tap and the end is not that tap's (a
			// replayed record log ends at its end of input): then the tap,
			// as the live run printed it.
			if tap == "" || in.Tap == tap || (len(in.Tap) > maxScopeName && string(appendScopeName(nil, in.Tap)) == tap) {
				src.Pos = Position{Name: in.Pos.Name}
			}
			src.Time = in.Time
		}
		e.report(rule, Off, &src, key, proto, fmt.Sprintf("stream ended (%s) with %s after %d records", reason, what, s.records))
	}
	if !e.quiet {
		e.sink.StreamEnd(info)
	}
}

// bury remembers that stream i ended (a tombstone: its key hash and how:
// ended, idled, cancelled or evicted) and takes it out of the table at the next safe
// point: callers of end may still hold table indexes. In a bulk end
// (Finish, Expire, ConnClosed) the key is not queued: the caller sweeps
// the ended streams out itself, so that ending a million streams at once
// does not copy a million keys.
func (e *Engine) bury(i int32, how int) {
	key := e.tab.key(i)
	h := e.tab.hash(key)
	e.cur.tombs.add(h, how)
	if e.bulk {
		return
	}
	// The hash goes with the key: forgetPending finds the stream by it
	// without hashing the key again.
	e.forget = append(e.forget, e.cur.id, byte(len(key)>>8), byte(len(key)))
	e.forget = binary.LittleEndian.AppendUint64(e.forget, h)
	e.forget = append(e.forget, key...)
}

// forgetHead is the bytes of a forget entry before its key.
const forgetHead = 3 + 8

// forgetPending takes the ended streams out of their tables.
func (e *Engine) forgetPending() {
	if e.sweep {
		// Called from lookup with a partition current: keep it so.
		cur := int(e.cur.id)
		e.sweep = false
		e.eachPart(func(int) { e.sweepEnded() })
		e.use(cur)
	}
	for b := e.forget; len(b) >= forgetHead; {
		t := e.parts[b[0]].tab
		n := int(b[1])<<8 | int(b[2])
		h := binary.LittleEndian.Uint64(b[3:])
		key := b[forgetHead : forgetHead+n]
		b = b[forgetHead+n:]
		if p, j := t.findSlot(key, h); j >= 0 && t.at(j).flags&fEnded != 0 {
			t.removeAt(p, j)
		}
	}
	e.forget = e.forget[:0]
}

// sweepEnded removes the ended streams of the current partition (from the
// top: remove moves the last dense entry into the hole).
func (e *Engine) sweepEnded() {
	for i := int32(e.tab.len()) - 1; i >= 0; i-- {
		if i < int32(e.tab.len()) && e.tab.at(i).flags&fEnded != 0 {
			e.tab.remove(i)
		}
	}
}

// Finish ends every open stream: end of input offline (ReasonEOF), or
// shutdown live. at carries the source name and time for the findings.
// It goes partition by partition, each oldest first, then (offline, where
// captures carry no times) by key: an order that does not depend on the
// number of shards (shards end theirs at once anyway; the offline output
// is sorted by FindingBefore), and one that needs a sort of one partition
// at a time (24 bytes for each of its open streams, some 400 KiB with the
// default bound) instead of one of every open stream (at the process's
// peak). The ended streams leave the tables only if the engine is used
// again (offline, nothing is).
func (e *Engine) Finish(reason string, at *Input) {
	e.forgetPending()
	var open []finishKey
	e.bulk = true
	e.eachPart(func(int) {
		open = open[:0]
		t := e.tab
		var first []byte
		common := 0 // the bytes every open stream's key starts with
		for i := int32(0); i < int32(t.len()); i++ {
			s := t.at(i)
			if s.flags&fEnded == 0 && s.flags&fResponded != 0 {
				k := t.key(i)
				if len(open) == 0 {
					first, common = k, len(k)
				} else {
					common = commonPrefix(first[:common], k)
				}
				open = append(open, finishKey{start: s.startNs(), i: i})
			}
		}
		// The order is by start, then by key. The keys are compared by
		// their first 8 bytes past what they all share, in the sort's own
		// array, and read from the arena only when those are equal: a
		// sort of a million open streams that reads two keys at random
		// for every comparison spends most of its time waiting for them.
		for j := range open {
			open[j].pre = keyWord(t.key(open[j].i)[common:])
		}
		slices.SortFunc(open, func(a, b finishKey) int {
			if c := cmp.Compare(a.start, b.start); c != 0 {
				return c
			}
			if c := cmp.Compare(a.pre, b.pre); c != 0 {
				return c
			}
			return bytes.Compare(t.key(a.i), t.key(b.i))
		})
		// Ending a stream only marks it (bury): the indexes stay valid.
		for _, k := range open {
			e.end(k.i, OutcomeMissingFinal, reason, at, true)
		}
		e.sweep = e.sweep || len(open) > 0
	})
	e.bulk = false
}

// finishKey is what Finish sorts an open stream by: its start, the first
// bytes of its key (pre, past the bytes all keys share) and, for equal
// ones, the key of dense index i.
type finishKey struct {
	start int64
	pre   uint64
	i     int32
}

// keyWord is the first 8 bytes of k, big-endian, zero-padded: a < b for
// two keys' words only if the keys are so ordered (bytes.Compare).
func keyWord(k []byte) uint64 {
	if len(k) >= 8 {
		return binary.BigEndian.Uint64(k)
	}
	var b [8]byte
	copy(b[:], k)
	return binary.BigEndian.Uint64(b[:])
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// ConnClosed ends the open streams of one connection (reason disconnect).
// Cancelled streams were already ended and are not reported.
func (e *Engine) ConnClosed(in *Input) {
	if len(e.heldConns) > 0 {
		// Its streams end now, by the end-of-connection rule.
		e.holdConn(in.Tap, in.Conn, false, true, in.Time)
	}
	e.bulk = true
	e.forConn(in, func(i int32, s *stream) {
		if s.flags&fEnded == 0 && s.flags&fResponded != 0 {
			e.end(i, OutcomeMissingFinal, ReasonDisconnect, in, true)
		}
	})
	e.bulk = false
	// The connection's streams cannot come back: drop them (the ones ended
	// just now with them).
	e.eachPart(func(p int) {
		for i := int32(e.tab.len()) - 1; i >= 0; i-- {
			if inScope(e.tab.key(i), in.Tap, in.Conn) {
				e.tab.remove(i)
			}
		}
	})
}

// Gap marks the open streams of in's connection as having lost messages:
// their next sequence re-bases silently and a missing final is not
// reported as a finding (the final may be what was lost).
func (e *Engine) Gap(in *Input) {
	e.dropConnTails(in)
	e.forConn(in, func(_ int32, s *stream) {
		if s.flags&fEnded == 0 {
			s.flags |= fGap | fResync
		}
	})
}

// GapAll is Gap for every scope: the open streams of every tap and
// connection have lost messages (a replayed record log that lost lines to
// a failed write: they may have been anyone's).
func (e *Engine) GapAll() {
	if e.split != nil {
		for k := range e.split.m {
			e.split.drop([]byte(k))
		}
	}
	e.forgetPending()
	e.eachPart(func(p int) {
		for i := int32(0); i < int32(e.tab.len()); i++ {
			if s := e.tab.at(i); s.flags&fEnded == 0 {
				s.flags |= fGap | fResync
			}
		}
	})
}

// LeaveOpen drops every open stream with no verdict and no outcome, as a
// live run that stopped with them open did (streams.finish_on_shutdown
// false: Live.stop), and counts those that had a response as LeftOpen: a
// replay of its record log reads the mark it left there (OpenMarker). A
// later record of one (a later run appended to the same log) starts it
// afresh, as that run, which knew nothing of it, did.
func (e *Engine) LeaveOpen() {
	if e.split != nil {
		for k := range e.split.m {
			e.split.drop([]byte(k))
		}
	}
	e.forgetPending()
	e.eachPart(func(int) {
		for i := int32(e.tab.len()) - 1; i >= 0; i-- {
			if i >= int32(e.tab.len()) {
				continue
			}
			s := e.tab.at(i)
			if s.flags&fEnded != 0 {
				continue
			}
			if s.flags&fResponded != 0 {
				e.stats.LeftOpen++
			}
			e.closed(e.tab.key(i))
			e.tab.remove(i)
		}
	})
}

func (e *Engine) forConn(in *Input, fn func(int32, *stream)) {
	e.forgetPending()
	e.eachPart(func(p int) {
		for i := int32(0); i < int32(e.tab.len()); i++ {
			if inScope(e.tab.key(i), in.Tap, in.Conn) {
				fn(i, e.tab.at(i))
			}
		}
	})
}

// Expire ends streams idle for longer than the idle timeout at now, and
// forgets ended streams idle for that long. It also finds when the next
// stream goes idle (IdleDue).
func (e *Engine) Expire(now time.Time) {
	defer e.expired.Add(1)
	if e.cfg.IdleTimeout <= 0 {
		return
	}
	limit := now.Add(-e.cfg.IdleTimeout).UnixNano()
	e.forgetPending()
	e.bulk = true
	defer func() { e.bulk = false }()
	next := int64(math.MaxInt64)
	e.eachPart(func(p int) {
		for i := int32(e.tab.len()) - 1; i >= 0; i-- {
			if i >= int32(e.tab.len()) {
				continue
			}
			s := e.tab.at(i)
			if s.startNs() == 0 {
				continue
			}
			if last := s.lastNs(); last > limit {
				next = min(next, last+int64(e.cfg.IdleTimeout))
				continue
			}
			if e.opens.held(e.cur.id, e.tab.hash(e.tab.key(i))) {
				// Its tap is late, not the stream (Hold): looked at
				// again at the release, or an idle timeout from now.
				next = min(next, now.UnixNano()+int64(e.cfg.IdleTimeout))
				continue
			}
			if len(e.heldConns) > 0 {
				if until, held := e.connHeld(e.tab.key(i), now.UnixNano()); held {
					next = min(next, until, now.UnixNano()+int64(e.cfg.IdleTimeout))
					continue
				}
			}
			if s.flags&fEnded == 0 && s.flags&fResponded != 0 {
				tap, conn, _ := streamOf(e.tab.key(i))
				at := Input{Tap: tap, Conn: conn, Time: now}
				e.end(i, OutcomeMissingFinal, ReasonIdle, &at, true)
			}
			e.closed(e.tab.key(i))
			e.tab.remove(i)
		}
	})
	e.nextIdle = next
	e.idleDue.Store(next)
	if len(e.heldConns) > 0 {
		e.releaseConns(now.UnixNano())
	}
}

// IdleDue is a lower bound of the capture time at which a stream this
// engine holds goes idle (an early answer only costs an Expire that finds
// nothing), and the number of Expire calls done. Safe to call from any
// goroutine.
func (e *Engine) IdleDue() (due time.Time, none bool, expired uint64) {
	n := e.idleDue.Load()
	return time.Unix(0, n), n == math.MaxInt64, e.expired.Load()
}

// echoHash is a value's echo hash (0: no value): its bytes hashed in one
// call, its type and boolean folded in after (a hash of the type, the bytes
// and the boolean written into a maphash.Hash took three calls a value,
// three values a record).
func (e *Engine) echoHash(v *e2a.Value) uint32 {
	if !v.Present() {
		return 0
	}
	t := uint64(v.Type) << 1
	if v.Type == e2a.Bool && v.Bool {
		t |= 1
	}
	// An odd multiply is a bijection: values of one text and two types
	// or booleans differ before the fold (as likely after it as any two).
	x := uint32((maphash.Bytes(e.echoSeed, v.Str) ^ t*0x9e3779b97f4a7c15) * 0xbf58476d1ce4e5b9 >> 32)
	if x == 0 {
		x = 1
	}
	return x
}

// list formats names for messages: "a, b and c".
func list(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
