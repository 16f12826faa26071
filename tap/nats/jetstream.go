package natstap

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// inactiveThreshold is how long the server keeps a consumer the tap stopped
// pulling from (a crashed sidecar, a long backpressure): a recreated
// consumer resumes where the last one stopped, so losing one costs nothing.
const inactiveThreshold = 2 * time.Minute

// streamCursor is where the tap is in one stream, across consumers.
type streamCursor struct {
	next    uint64 // next stream sequence to read; 0: not known yet (deliver new)
	consSeq uint64 // last consumer sequence of the current consumer
	gap     bool   // the next message emitted carries Gap
	// unfiltered: the consumer reads every subject of the stream, so its
	// stream sequences have no holes but deleted messages.
	unfiltered bool
	lag        int64 // this stream's share of Stats.Lag
	// emitted is where the cursors file would resume (nil: no file):
	// the sequence after the last message handled.
	emitted *atomic.Uint64
	// judged is the cursors file's judged mark: the messages below it
	// were judged by an earlier run (tap.Message.Reread).
	judged uint64
	// partition is the Position.Partition of the stream's messages.
	partition int32
	// behind: the engine was told the consumer had messages pending
	// (tap.Message.Progress).
	behind bool
	// ack is how the reply subjects of the current consumer's messages
	// start (ackPrefix), set by pullLoop.
	ack string
}

// watchStream reads one stream until ctx is done, recreating its consumer
// after every failure with capped exponential backoff.
func (r *run) watchStream(ctx context.Context, index int, sc StreamConfig) {
	js, err := jetstream.New(r.nc)
	if err != nil { // only on bad options: none are given
		r.log.Error("jetstream", "stream", sc.Stream, "err", err)
		return
	}
	cur := &streamCursor{next: sc.StartSeq, unfiltered: len(sc.FilterSubjects) == 0, emitted: r.emitted[sc.Stream], partition: streamPartition(index)}
	if next := r.cursors.next[sc.Stream]; next > 0 {
		// Where the last run's judged and written out messages end, or
		// the first message of a stream still open then.
		cur.next = next
		cur.judged = r.cursors.judged[sc.Stream]
		if cur.judged > next {
			r.log.Info("jetstream stream read on from its saved cursor", "stream", sc.Stream, "next_seq", next, "judged_seq", cur.judged-1)
		} else {
			r.log.Info("jetstream stream read on from its saved cursor", "stream", sc.Stream, "next_seq", next)
		}
	}
	defer func() { r.stats.Lag.Add(-cur.lag) }()
	for attempt := 0; ; {
		progressed, err := r.consume(ctx, js, sc, cur)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errReconnected) {
			r.log.Info("jetstream consumer resumes after a reconnect", "stream", sc.Stream, "next_seq", cur.next)
			attempt = 0
			continue
		}
		if progressed {
			attempt = 0
		}
		wait := backoff(attempt, r.cfg.ReconnectWait, r.cfg.ReconnectMaxWait)
		attempt++
		level := slog.LevelWarn
		if !r.stats.UpstreamUp.Load() {
			level = slog.LevelDebug // the outage itself is logged once, by the connection
		}
		r.log.Log(ctx, level, "jetstream consumer failed, recreating", "stream", sc.Stream, "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// errReconnected ends a consumer's reading at a reconnect.
var errReconnected = errors.New("nats reconnected")

// consumerName names a consumer of tap: e2atap-<tap>-<16 letters>, the
// tap's name kept to the characters a consumer name may hold (at most 32
// of them), and 64 random bits, four to a letter a-p, so that replicas
// and restarts never share one. Letters, not rand.Text's base32 (a
// 26-character random word reads as a token) nor hex digits (all digits
// now and then, and a Luhn-valid run of 16 reads as a card number): the
// logs masked the name, where an operator needs it to find the consumer
// (nats consumer ls).
func consumerName(tap string) string {
	var b strings.Builder
	b.WriteString("e2atap-")
	for i := 0; i < len(tap) && b.Len() < len("e2atap-")+32; i++ {
		if c := tap[i]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteByte(c)
		}
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	b.WriteByte('-')
	for _, c := range id {
		b.WriteByte('a' + c>>4)
		b.WriteByte('a' + c&15)
	}
	return b.String()
}

// consume creates one consumer and emits from it until it fails. progressed
// says whether any message was emitted.
func (r *run) consume(ctx context.Context, js jetstream.JetStream, sc StreamConfig, cur *streamCursor) (progressed bool, err error) {
	reconn := r.reconnected() // from here on, a reconnect starts over
	stream, err := js.Stream(ctx, sc.Stream)
	if err != nil {
		return false, fmt.Errorf("stream info: %w", err)
	}
	// The tap names its consumer (still ephemeral: no Durable, and an
	// inactivity threshold), so that it can delete it even when the create
	// call itself was cut short by a cancel or a disconnect.
	ccfg := jetstream.ConsumerConfig{
		Name:              consumerName(r.cfg.Name),
		Description:       "e2atap tap " + r.cfg.Name + " (read-only, no acks)",
		AckPolicy:         jetstream.AckNonePolicy,
		DeliverPolicy:     jetstream.DeliverNewPolicy,
		FilterSubjects:    sc.FilterSubjects,
		InactiveThreshold: inactiveThreshold,
		MemoryStorage:     true,
		Replicas:          1,
	}
	if st := stream.CachedInfo().State; cur.next > st.LastSeq+1 {
		// The stream went backwards: deleted and created again, or purged
		// with a new first sequence below the tap's cursor. Its sequences
		// start over, and whatever the old one still held after the cursor
		// is gone: a loss. Read the new one from its start.
		r.stats.Drops[tap.DropUpstreamGap].Add(1)
		cur.gap = true
		cur.next = max(st.FirstSeq, 1)
	}
	if cur.next > 0 {
		ccfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		ccfg.OptStartSeq = cur.next
		// Messages between the resume point and the stream's first one were
		// removed (limits, deletes) before the tap read them.
		if first := stream.CachedInfo().State.FirstSeq; first > cur.next {
			lost := uint64(1) // filtered: the server cannot say how many matched
			if len(sc.FilterSubjects) == 0 {
				lost = first - cur.next
			}
			r.stats.Drops[tap.DropUpstreamGap].Add(lost)
			cur.gap = true
			cur.next = first
			ccfg.OptStartSeq = first
		}
	}
	defer func() {
		// Leave nothing behind on a clean stop; after a failure the server
		// may already have dropped it, and inactiveThreshold covers the rest.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = stream.DeleteConsumer(dctx, ccfg.Name)
	}()
	cons, err := stream.CreateConsumer(ctx, ccfg)
	if err != nil {
		return false, fmt.Errorf("create consumer: %w", err)
	}
	info := cons.CachedInfo()
	if cur.next == 0 {
		// Deliver-new starts after the stream's last message at creation:
		// a later consumer resumes from there, not from "new" again.
		cur.next = info.Delivered.Stream + 1
	}
	cur.consSeq = 0

	r.log.Debug("jetstream consumer created", "stream", sc.Stream, "consumer", info.Name, "start_seq", cur.next)

	// The tap pulls by itself, into one inbox subscription whose messages
	// its goroutine reads straight from the channel the client fills: no
	// goroutine in between, no timer per message (the library's Fetch has
	// both, and it cost a third of JetStream's catch-up rate). All pull
	// requests reply to the one inbox, so the server's round-robin over a
	// consumer's waiting requests cannot reorder anything: two requests of
	// FetchBatch are kept open, the next sent as soon as the first is done,
	// and the server always has one to deliver into.
	return r.pullLoop(ctx, info.Name, sc, cur, reconn)
}

// Pull requests: how long one stays open on the server (its heartbeats
// say it is alive meanwhile), and how many are open at once.
const (
	pullExpires   = 30 * time.Second
	pullsInFlight = 2
)

// errNoHeartbeat: neither a message nor a heartbeat for two heartbeat
// intervals; the consumer (or the server's view of the pull) is gone.
var errNoHeartbeat = errors.New("no heartbeat: the pull consumer is gone")

// pullLoop pulls from one consumer and emits what arrives until it fails.
func (r *run) pullLoop(ctx context.Context, name string, sc StreamConfig, cur *streamCursor, reconn <-chan struct{}) (progressed bool, err error) {
	batch := r.cfg.FetchBatch
	// The client hands the inbox's messages over without waiting: a full
	// channel would drop them. It holds every message of the open requests
	// (never more than pullsInFlight*batch) and their status messages.
	ch := make(chan *nats.Msg, pullsInFlight*batch+64)
	inbox := r.nc.NewInbox()
	sub, err := r.nc.ChanSubscribe(inbox, ch)
	if err != nil {
		return false, fmt.Errorf("pull inbox: %w", err)
	}
	defer sub.Unsubscribe()
	subject := "$JS.API.CONSUMER.MSG.NEXT." + sc.Stream + "." + name
	cur.ack = ackPrefix(sc.Stream, name)
	req, err := json.Marshal(struct {
		Batch     int           `json:"batch"`
		Expires   time.Duration `json:"expires"`
		MaxBytes  int           `json:"max_bytes"`
		Heartbeat time.Duration `json:"idle_heartbeat"`
	}{batch, pullExpires, r.fetchMaxBytes(), r.cfg.Heartbeat})
	if err != nil {
		return false, err
	}
	// outstanding: messages asked for and not yet received nor cancelled by
	// the server (a request that expires or hits max_bytes says how many
	// of its messages it will not send).
	outstanding := 0
	pull := func() error {
		for outstanding <= (pullsInFlight-1)*batch {
			if err := r.nc.PublishRequest(subject, inbox, req); err != nil {
				return fmt.Errorf("pull request: %w", err)
			}
			outstanding += batch
		}
		return nil
	}
	if err := pull(); err != nil {
		return false, err
	}
	hb := time.NewTicker(r.cfg.Heartbeat)
	defer hb.Stop()
	// idle counts heartbeat ticks with nothing read in between (a message
	// or a heartbeat); counting, not reading the clock, keeps time.Now off
	// the per-message path but for the message's own time.
	idle := 0
	// now is the capture time of what is read: taken on every full select
	// (the channel was empty, or drainLook messages were taken), not per
	// message (the clock cost 2 % of a catch-up's CPU); a message's time
	// is at most drainLook emits old.
	now := time.Now()
	for n := 0; ; {
		var msg *nats.Msg
		// While messages are waiting, take them with a plain receive: a
		// select over every case locks all their channels, on every
		// message. Every drainLook messages (and whenever ch is empty)
		// the full select looks at ctx, a reconnect and the heartbeat.
		if n++; n%drainLook != 0 {
			select {
			case msg = <-ch:
			default:
			}
		}
		if msg == nil {
			msg = r.waitPull(ctx, ch, reconn, hb.C, &idle)
			now = time.Now()
		}
		if msg == nil {
			if err := ctx.Err(); err != nil {
				return progressed, err
			}
			if idle > 2 {
				return progressed, errNoHeartbeat
			}
			return progressed, errReconnected
		}
		idle = 0
		if len(msg.Data) == 0 && msg.Reply == "" && msg.Header.Get("Status") != "" {
			done, err := pullStatus(msg)
			if err != nil {
				return progressed, err
			}
			outstanding = max(outstanding-done, 0)
			if err := pull(); err != nil {
				return progressed, err
			}
			continue
		}
		outstanding--
		if err := pull(); err != nil {
			return progressed, err
		}
		emitted, err := r.jsMessage(ctx, msg, now, cur)
		progressed = progressed || emitted
		if err != nil {
			return progressed, err
		}
	}
}

// drainLook: how many messages pullLoop takes from its channel without
// looking at ctx, a reconnect and the heartbeat ticker in between.
const drainLook = 64

// waitPull waits for the next message of a pull; nil when ctx is done, on
// a reconnect, or when two whole heartbeat intervals passed with nothing
// read and nothing waiting (then *idle > 2).
func (r *run) waitPull(ctx context.Context, ch <-chan *nats.Msg, reconn <-chan struct{}, tick <-chan time.Time, idle *int) *nats.Msg {
	for {
		select {
		case msg := <-ch:
			return msg
		case <-reconn:
			return nil
		case <-ctx.Done():
			return nil
		case <-tick:
			// An emit that blocks (backpressure) is no missed heartbeat:
			// what came meanwhile waits in ch, and a ticker keeps one
			// tick, not the ones it missed.
			if len(ch) > 0 {
				*idle = 0
				continue
			}
			if *idle++; *idle > 2 {
				return nil
			}
		}
	}
}

// pullStatus reads a status message of a pull request: done is how many
// messages asked for will not come (the request ended); an error ends the
// consumer (deleted, leadership change, a request the server refused, or
// an ending that does not say how much of it is left).
func pullStatus(msg *nats.Msg) (done int, err error) {
	code := msg.Header.Get("Status")
	desc := msg.Header.Get("Description")
	switch code {
	case "100": // idle heartbeat
		return 0, nil
	case "404", "408", "409":
		if p := msg.Header.Get("Nats-Pending-Messages"); p != "" {
			n, err := strconv.Atoi(p)
			if err == nil && n >= 0 {
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("pull request: status %s %s", code, desc)
}

// jsMessage checks one JetStream message's place in its consumer and
// stream and queues it; emitted says it was queued.
func (r *run) jsMessage(ctx context.Context, msg *nats.Msg, now time.Time, cur *streamCursor) (emitted bool, err error) {
	md, err := ackMetadataOf(msg.Reply, cur.ack)
	if err != nil {
		return false, fmt.Errorf("message metadata: %w", err)
	}
	consumerJumped := false
	if want := cur.consSeq + 1; md.consumer != want {
		consumerJumped = true
		if md.consumer < want {
			// A redelivery cannot happen with AckNone; if the server
			// says otherwise, a fresh consumer is the safe way on.
			return false, errors.New("consumer sequence went backwards")
		}
		r.stats.Drops[tap.DropUpstreamGap].Add(md.consumer - want)
		cur.gap = true
	}
	if cur.unfiltered && !consumerJumped && cur.next > 0 && md.stream > cur.next {
		// An unfiltered consumer delivers every stored message: a jump in
		// the stream sequence is messages deleted before the tap read them.
		r.stats.Drops[tap.DropUpstreamGap].Add(md.stream - cur.next)
		cur.gap = true
	}
	cur.consSeq = md.consumer
	cur.next = md.stream + 1
	if lag := int64(md.pending); lag != cur.lag {
		r.stats.Lag.Add(lag - cur.lag)
		cur.lag = lag
	}

	data := msg.Data
	r.stats.Count(tap.DirNone, len(data))
	if len(data) > r.cfg.MaxMessageBytes {
		r.stats.Drop(tap.DropOversize)
		cur.gap = true
		return false, r.skipped(ctx, cur, md.pending, now)
	}
	if noRecord(msg.Header, data) {
		// Counted as a message, not judged; a gap it carried goes to the
		// next record.
		return false, r.skipped(ctx, cur, md.pending, now)
	}
	m := tap.Message{
		Tap: r.cfg.Name,
		Pos: tap.Position{
			Kind:      tap.PosSubject,
			Name:      msg.Subject,
			Partition: cur.partition,
			Offset:    int64(md.stream),
			Line:      int64(md.consumer),
		},
		Time:   now,
		Gap:    cur.gap,
		Reread: md.stream < cur.judged,
	}
	m.Data, m.Format = payload(msg.Header, data)
	// JetStream keeps what the tap has not read: wait for the budget (read
	// slower), never drop.
	if err := r.cfg.Budget.Acquire(ctx, len(m.Data)); err != nil {
		return false, err
	}
	m.Charged = len(m.Data)
	// A catch-up (messages pending after this one) is told before the
	// message, the end of it after: while the stream is behind, the
	// streams opened on it do not go idle (tap.Message.Progress).
	if md.pending > 0 && !cur.behind {
		if !r.emit(r.progress(cur, true, now)) {
			r.cfg.Budget.Release(m.Charged)
			return false, emitErr(ctx)
		}
		cur.behind = true
	}
	// Emitted from this goroutine (serialized with the others): a slow
	// engine slows the pull, and no hand-off costs a goroutine switch per
	// message.
	if !r.emit(m) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		return false, errors.New("emit failed")
	}
	cur.gap = false
	if cur.emitted != nil {
		cur.emitted.Store(cur.next)
	}
	if md.pending == 0 && cur.behind {
		if !r.emit(r.progress(cur, false, now)) {
			return true, emitErr(ctx)
		}
		cur.behind = false
	}
	return true, nil
}

// skipped moves the cursor past a message the tap read and does not emit,
// and says the stream caught up when that message was the last pending.
func (r *run) skipped(ctx context.Context, cur *streamCursor, pending uint64, now time.Time) error {
	if cur.emitted != nil {
		cur.emitted.Store(cur.next)
	}
	if pending == 0 && cur.behind {
		if !r.emit(r.progress(cur, false, now)) {
			return emitErr(ctx)
		}
		cur.behind = false
	}
	return nil
}

// progress is the control message that says whether the JetStream stream
// of cur is behind (Pos as a handover's: Kind PosSubject, Name "", the
// stream's Partition).
func (r *run) progress(cur *streamCursor, behind bool, now time.Time) tap.Message {
	return tap.Message{Tap: r.cfg.Name, Time: now, Progress: true, Behind: behind,
		Pos: tap.Position{Kind: tap.PosSubject, Partition: cur.partition}}
}

func emitErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.New("emit failed")
}

// fetchMaxBytes bounds what one fetch may hold in the client: a batch of
// FetchBatch small messages, or fewer large ones (never less than one
// message of MaxMessageBytes, which the server would otherwise never send).
func (r *run) fetchMaxBytes() int {
	return max(32<<20, r.cfg.MaxMessageBytes+1<<20)
}

// ackMeta is what a JetStream message's reply subject says of it.
type ackMeta struct {
	stream, consumer, pending uint64
}

// ackMetadata reads a JetStream message's reply subject:
// $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<ns>.<pending>,
// or the newer form with <domain>.<account hash> after ACK and a random
// token at the end.
func ackMetadata(reply string) (ackMeta, error) {
	// One pass for where the tokens end (the first 16), no substrings: it
	// runs for every message read.
	var dots [16]int
	nd := 0
	for from := 0; nd < len(dots); nd++ {
		i := strings.IndexByte(reply[from:], '.')
		if i < 0 {
			break
		}
		dots[nd] = from + i
		from += i + 1
	}
	n := min(nd+1, len(dots)) // tokens, as far as they are looked at
	if n < 9 || !strings.HasPrefix(reply, "$JS.ACK.") {
		return ackMeta{}, fmt.Errorf("not a JetStream reply subject: %q", reply)
	}
	base := 2 // the old form: the stream's name comes right after ACK
	if n >= 11 {
		base = 4 // <domain>.<account hash> first
	}
	if base+7 > n {
		return ackMeta{}, fmt.Errorf("JetStream reply subject %q: too few tokens", reply)
	}
	// Token k (k < nd: every token used here ends at a dot, or at the end).
	tok := func(k int) string {
		end := len(reply)
		if k < nd {
			end = dots[k]
		}
		return reply[dots[k-1]+1 : end]
	}
	var m ackMeta
	var ok [3]bool
	m.stream, ok[0] = parseSeq(tok(base + 3))
	m.consumer, ok[1] = parseSeq(tok(base + 4))
	m.pending, ok[2] = parseSeq(tok(base + 6))
	if !ok[0] || !ok[1] || !ok[2] {
		return ackMeta{}, fmt.Errorf("JetStream reply subject %q: a sequence or count is not a number", reply)
	}
	return m, nil
}

// ackPrefix is how the reply subjects of consumer's messages start in
// the form without a domain, "$JS.ACK.<stream>.<consumer>.", or "" when a
// name holds a dot (the server allows none): ackMetadataOf then reads
// every subject as ackMetadata does.
func ackPrefix(stream, consumer string) string {
	if stream == "" || consumer == "" || strings.Contains(stream, ".") || strings.Contains(consumer, ".") {
		return ""
	}
	return "$JS.ACK." + stream + "." + consumer + "."
}

// ackMetadataOf is ackMetadata(reply) for a message of the consumer whose
// subjects start with prefix (ackPrefix): one pass over the five numbers
// after it, where ackMetadata looks for every dot first and then parses
// each token (some 1000 instructions a message, 4 % of what a JetStream
// catch-up costs the process). A subject of any other shape, the form
// with a domain included, goes to ackMetadata: the result is the same.
func ackMetadataOf(reply, prefix string) (ackMeta, error) {
	if prefix != "" && len(reply) > len(prefix) && reply[:len(prefix)] == prefix {
		if m, ok := ackNumbers(reply[len(prefix):]); ok {
			return m, nil
		}
	}
	return ackMetadata(reply)
}

// ackNumbers reads "<delivered>.<stream seq>.<consumer seq>.<ns>.<pending>":
// exactly five tokens, of which it reads the three that ackMetadata reads
// (with the prefix before them, nine tokens: ackMetadata's form without a
// domain). ok is false where ackMetadata may say otherwise: a token that
// is not a decimal number of at most 19 digits (what parseSeq reads with
// no overflow possible), or another count of tokens.
func ackNumbers(s string) (m ackMeta, ok bool) {
	i := strings.IndexByte(s, '.') // the delivery count: not read
	if i < 0 {
		return m, false
	}
	s = s[i+1:]
	if m.stream, s, ok = seqToken(s); !ok {
		return m, false
	}
	if m.consumer, s, ok = seqToken(s); !ok {
		return m, false
	}
	if i = strings.IndexByte(s, '.'); i < 0 { // the time: not read
		return m, false
	}
	s = s[i+1:]
	if len(s) == 0 || len(s) > 19 {
		return m, false
	}
	for i := 0; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			return m, false // a dot (a tenth token) or no digit
		}
		m.pending = m.pending*10 + uint64(d)
	}
	return m, true
}

// seqToken reads the decimal number of at most 19 digits that s starts
// with up to its first dot, and returns what follows the dot.
func seqToken(s string) (v uint64, rest string, ok bool) {
	for i := 0; i < len(s) && i <= 19; i++ {
		d := s[i] - '0'
		if d <= 9 {
			v = v*10 + uint64(d)
			continue
		}
		if s[i] != '.' || i == 0 {
			return 0, s, false
		}
		return v, s[i+1:], true
	}
	return 0, s, false // no dot, or over 19 digits
}

// parseSeq reads a decimal uint64, as strconv.ParseUint(s, 10, 64) does
// (no sign, no underscores, no overflow), without its error value.
func parseSeq(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		d := uint64(s[i] - '0')
		if d > 9 || v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}
