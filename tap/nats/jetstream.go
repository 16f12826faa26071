package natstap

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/e2atap/e2atap/tap"
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
}

// watchStream reads one stream until ctx is done, recreating its consumer
// after every failure with capped exponential backoff.
func (r *run) watchStream(ctx context.Context, sc StreamConfig) {
	js, err := jetstream.New(r.nc)
	if err != nil { // only on bad options: none are given
		r.log.Error("jetstream", "stream", sc.Stream, "err", err)
		return
	}
	cur := &streamCursor{next: sc.StartSeq, unfiltered: len(sc.FilterSubjects) == 0}
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
		Name:              "e2atap-" + rand.Text(),
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

	// Pulls are explicit fetches. The server spreads messages round-robin
	// over a consumer's waiting requests, so a second request may only be
	// in flight once the first has all its messages: then it is sent at
	// once, before the first batch is read, and the server always has a
	// request to deliver into. (The library's Messages iterator can miss
	// its own refill when its pull goroutine is descheduled at the wrong
	// moment, and then stalls until two heartbeats are missed; explicit
	// fetches keep no such state.)
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fetch := func() (jetstream.MessageBatch, error) {
		b, err := cons.Fetch(r.cfg.FetchBatch, jetstream.FetchContext(fctx), jetstream.FetchHeartbeat(r.cfg.Heartbeat),
			jetstream.FetchMaxBytes(r.fetchMaxBytes()))
		if err != nil {
			return nil, fmt.Errorf("fetch: %w", err)
		}
		return b, nil
	}
	r.log.Debug("jetstream consumer created", "stream", sc.Stream, "consumer", info.Name, "start_seq", cur.next)

	var next jetstream.MessageBatch
	for {
		batch := next
		next = nil
		if batch == nil {
			if batch, err = fetch(); err != nil {
				return progressed, err
			}
		}
		msgs := batch.Messages()
		for read := 1; ; read++ {
			var msg jetstream.Msg
			select {
			case msg = <-msgs:
			case <-reconn:
				return progressed, errReconnected
			}
			if msg == nil { // the batch is complete, expired or failed
				break
			}
			if next == nil && read+len(msgs) == r.cfg.FetchBatch {
				if next, err = fetch(); err != nil {
					return progressed, err
				}
			}
			emitted, err := r.jsMessage(ctx, msg, cur)
			progressed = progressed || emitted
			if err != nil {
				return progressed, err
			}
		}
		if err := batch.Error(); err != nil {
			return progressed, err
		}
		if ctx.Err() != nil {
			return progressed, ctx.Err()
		}
	}
}

// jsMessage checks one JetStream message's place in its consumer and
// stream and queues it; emitted says it was queued.
func (r *run) jsMessage(ctx context.Context, msg jetstream.Msg, cur *streamCursor) (emitted bool, err error) {
	now := time.Now()
	md, err := msg.Metadata()
	if err != nil {
		return false, fmt.Errorf("message metadata: %w", err)
	}
	consumerJumped := false
	if want := cur.consSeq + 1; md.Sequence.Consumer != want {
		consumerJumped = true
		if md.Sequence.Consumer < want {
			// A redelivery cannot happen with AckNone; if the server
			// says otherwise, a fresh consumer is the safe way on.
			return false, errors.New("consumer sequence went backwards")
		}
		r.stats.Drops[tap.DropUpstreamGap].Add(md.Sequence.Consumer - want)
		cur.gap = true
	}
	if cur.unfiltered && !consumerJumped && cur.next > 0 && md.Sequence.Stream > cur.next {
		// An unfiltered consumer delivers every stored message: a jump in
		// the stream sequence is messages deleted before the tap read them.
		r.stats.Drops[tap.DropUpstreamGap].Add(md.Sequence.Stream - cur.next)
		cur.gap = true
	}
	cur.consSeq = md.Sequence.Consumer
	cur.next = md.Sequence.Stream + 1
	if lag := int64(md.NumPending); lag != cur.lag {
		r.stats.Lag.Add(lag - cur.lag)
		cur.lag = lag
	}

	data := msg.Data()
	r.stats.Count(tap.DirNone, len(data))
	if len(data) > r.cfg.MaxMessageBytes {
		r.stats.Drop(tap.DropOversize)
		cur.gap = true
		return false, nil
	}
	m := tap.Message{
		Tap: r.cfg.Name,
		Pos: tap.Position{
			Kind:   tap.PosSubject,
			Name:   msg.Subject(),
			Offset: int64(md.Sequence.Stream),
			Line:   int64(md.Sequence.Consumer),
		},
		Time: now,
		Gap:  cur.gap,
	}
	m.Data, m.Format = payload(msg.Headers(), data)
	// JetStream keeps what the tap has not read: wait for the budget (read
	// slower), never drop.
	if err := r.cfg.Budget.Acquire(ctx, len(m.Data)); err != nil {
		return false, err
	}
	m.Charged = len(m.Data)
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
	return true, nil
}

// fetchMaxBytes bounds what one fetch may hold in the client: a batch of
// FetchBatch small messages, or fewer large ones (never less than one
// message of MaxMessageBytes, which the server would otherwise never send).
func (r *run) fetchMaxBytes() int {
	return max(32<<20, r.cfg.MaxMessageBytes+1<<20)
}
