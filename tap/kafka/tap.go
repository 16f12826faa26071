package kafkatap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// pollWait bounds one poll, so that a partition handed over is announced
// and the commit moves on (streams ending by idle timeout) even when no
// record follows.
const pollWait = 500 * time.Millisecond

// ErrAlreadyRunning is returned by Run when the tap is already running.
var ErrAlreadyRunning = errors.New("kafka tap: already running")

// Tap is a Kafka source. Create it with New; Run it once at a time.
type Tap struct {
	cfg     Config
	stats   *tap.Stats
	log     *slog.Logger
	running atomic.Bool
}

var _ tap.Source = (*Tap)(nil)

// New checks cfg (zero fields take their defaults) and returns a tap that
// reports into stats. It does not connect: Run does.
func New(cfg Config, stats *tap.Stats, logger *slog.Logger) (*Tap, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if stats == nil {
		return nil, fmt.Errorf("kafka tap %q: stats is nil", cfg.Name)
	}
	if logger == nil {
		return nil, fmt.Errorf("kafka tap %q: logger is nil", cfg.Name)
	}
	return &Tap{cfg: cfg, stats: stats, log: logger.With("tap", cfg.Name)}, nil
}

// Config returns the tap's config with defaults applied.
func (t *Tap) Config() Config { return t.cfg }

type topicPartition struct {
	topic     string
	partition int32
}

// run is the state of one Run call.
type run struct {
	*Tap
	wasUp atomic.Bool // UpstreamUp has been true once: a later false→true is a reconnect

	commitMu sync.Mutex // serializes commit

	// recreated: topics deleted and created again that readAgain added
	// back, and when; their partitions, once assigned after that, are read
	// from offset 0, not from the deleted topic's commit (poll's goroutine
	// only).
	recreated map[string]time.Time

	mu  sync.Mutex
	lag map[topicPartition]int64
	// next is, per assigned partition, the offset after the last record
	// emitted, and the leader epoch of that record: what may be committed
	// when no stream is open.
	next map[topicPartition]kgo.EpochOffset
	// assignedAt is when each partition was assigned (its join window).
	assignedAt map[topicPartition]time.Time
	// judged is, per assigned partition whose commit carries a judged
	// mark (judgedMeta), the offset after the last record its committer
	// had judged: the records below it are read again only to rebuild
	// the open streams' state (tap.Message.Reread).
	judged map[topicPartition]int64
	// emitted is, per partition this run lost (its session expired) or
	// had revoked, the offset after the last record it emitted of it:
	// what the engine judged and reported. Assigned that partition again,
	// the run reads again from the group's commit, which may be below it
	// (no commit is possible once the session expired; an open stream
	// holds commits back): the records below it are judged for their
	// streams' state only, as below a commit's judged mark, so that a
	// sidecar stalled past its session timeout (CPU throttling, a long
	// pause) reports none of its findings twice. The mark is this
	// process's own: another replica that owned the partition meanwhile
	// commits past it, or carries its own mark.
	emitted map[topicPartition]int64
	// committed is, per assigned partition not read from yet, the group's
	// commit it starts from: records below the log start of its first
	// fetch were removed (retention) before anyone read them.
	committed map[topicPartition]int64
	// lossLog rate-limits the log of records removed before they were read.
	lossLog time.Time
	// handover: partitions revoked or lost, whose open streams the engine
	// is still to drop (emitted before anything read after them).
	handover []topicPartition
	// lastCommit is when the poll loop last committed.
	lastCommit time.Time
	// end is, per assigned partition, its high watermark at the last
	// look (ends), open transactions' records included; behind is what
	// the engine was last told of it (Message.Progress), and told whether
	// the look found one to tell, which wake, the poll's cancel, hurries.
	end    map[topicPartition]int64
	behind map[topicPartition]bool
	toTell bool
	wake   context.CancelFunc

	outMu   sync.Mutex
	outages map[string]*tap.Outage // by redacted broker address
	// fetchLog rate-limits the log of fetch errors.
	fetchLog time.Time
}

// Run joins the group and emits records until ctx is done (then it commits
// what was emitted and returns nil) or emit fails (then it returns emit's
// error). Broker problems are never fatal: the client retries, and Stats.Up
// says whether the brokers answer.
func (t *Tap) Run(ctx context.Context, emit tap.EmitFunc) error {
	if !t.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer t.running.Store(false)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	r := &run{Tap: t, lag: map[topicPartition]int64{}, next: map[topicPartition]kgo.EpochOffset{},
		assignedAt: map[topicPartition]time.Time{}, outages: map[string]*tap.Outage{}, lastCommit: time.Now(),
		end: map[topicPartition]int64{}, behind: map[topicPartition]bool{}, judged: map[topicPartition]int64{},
		committed: map[topicPartition]int64{}, emitted: map[topicPartition]int64{}}
	start := kgo.NewOffset().AtEnd()
	if t.cfg.Start == "earliest" {
		start = kgo.NewOffset().AtStart()
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(t.cfg.Brokers...),
		kgo.ClientID(t.cfg.ClientID),
		kgo.ConsumerGroup(t.cfg.Group),
		kgo.ConsumeTopics(t.cfg.Topics...),
		kgo.ConsumeResetOffset(start),
		// What a consumer of a transactional topic sees: an aborted
		// transaction's records (a batch the producer retried in a new
		// one) would be judged twice, or as streams never sent.
		kgo.FetchIsolationLevel(isolation(t.cfg.Isolation)),
		// Transaction markers are read (and skipped in poll), so that the
		// commit and the lag move past them: one after the last record
		// of a partition left a lag of 1 for ever.
		kgo.KeepControlRecords(),
		// What the client buffers and a poll holds (two fetches) stays
		// in proportion to the budget; a partition may fill a fetch.
		kgo.FetchMaxBytes(t.cfg.FetchMaxBytes),
		kgo.FetchMaxPartitionBytes(min(t.cfg.FetchMaxBytes, 1<<20)),
		// The tap commits itself (commit): never past an open stream.
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(func(ctx context.Context, cl *kgo.Client, assigned map[string][]int32) {
			r.assign(assigned)
			r.loadMarks(ctx, cl, assigned)
		}),
		// The tap commits and fetches its offsets itself with a judged
		// mark in their metadata (commit, loadMarks), by topic name:
		// versions 10 and later name topics by ID only.
		kgo.MaxVersions(commitVersions()),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
			// What was read of the partitions going away is committed
			// before they go (never past an open stream: the next owner
			// reads those from their start).
			r.commit(ctx, cl)
			r.lose(revoked, "revoked")
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
			// The group moved on without us: no commit is possible, the
			// next owner starts at the last one.
			r.lose(lost, "lost")
		}),
		kgo.WithHooks(brokerHooks{r}),
		// Batches are decompressed, and their records decoded, into
		// pooled memory, taken back once the batch's records are all
		// recycled (poll, tap.Message.Recycle).
		kgo.WithPools(new(fetchPool)),
	}
	if t.cfg.Regex {
		opts = append(opts, kgo.ConsumeRegex())
	}
	if t.cfg.SessionTimeout > 0 {
		opts = append(opts, kgo.SessionTimeout(t.cfg.SessionTimeout), kgo.HeartbeatInterval(max(t.cfg.SessionTimeout/10, 100*time.Millisecond)))
	}
	security, err := t.securityOptions()
	if err != nil {
		return fmt.Errorf("kafka tap %q: %w", t.cfg.Name, err)
	}
	cl, err := kgo.NewClient(append(opts, security...)...)
	if err != nil {
		return fmt.Errorf("kafka tap %q: %w", t.cfg.Name, err)
	}

	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		r.commit(cctx, cl)
		// The group's next reader (another replica, or this tap started
		// again by a reload or its supervisor) reads the open streams
		// from the commit: this run hands them over, so that the engine
		// neither reports them missing at shutdown nor sees their start
		// twice. Nothing is committed after this (next is empty).
		r.handOverAll(cctx, emit)
		ccancel()
		cl.CloseAllowingRebalance()
		t.stats.Up.Store(false)
		t.stats.UpstreamUp.Store(false)
		t.stats.Lag.Store(0)
	}()
	t.stats.Up.Store(true)
	wg.Go(func() { r.health(ctx, cl) })
	if t.cfg.EndCheck > 0 {
		wg.Go(func() { r.ends(ctx, cl) })
	}

	for {
		pctx, pcancel := context.WithTimeout(ctx, pollWait)
		r.mu.Lock()
		r.wake = pcancel
		if r.toTell {
			pcancel() // a partition to tell of: no wait for records first
		}
		r.mu.Unlock()
		fetches := cl.PollRecords(pctx, t.cfg.MaxPollRecords)
		pcancel()
		if ctx.Err() != nil {
			return nil
		}
		if err := r.poll(ctx, cl, fetches, emit); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("kafka tap %q: emit: %w", t.cfg.Name, err)
		}
	}
}

// isolation is the client's isolation level for Config.Isolation.
func isolation(s string) kgo.IsolationLevel {
	if s == ReadUncommitted {
		return kgo.ReadUncommitted()
	}
	return kgo.ReadCommitted()
}

// poll handles one poll's fetches: errors, lag, records. It returns only
// emit's error.
func (r *run) poll(ctx context.Context, cl *kgo.Client, fetches kgo.Fetches, emit tap.EmitFunc) error {
	defer cl.AllowRebalance()
	now := time.Now()
	failed := false
	var recreated []string
	fetches.EachError(func(topic string, partition int32, err error) {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return // our own poll bound
		}
		if errors.Is(err, kerr.UnknownTopicID) && !slices.Contains(recreated, topic) {
			recreated = append(recreated, topic)
		}
		failed = true
		if now.Sub(r.fetchLog) >= tap.OutageEvery {
			r.fetchLog = now
			r.log.Warn("kafka fetch failed (logged at most once a minute)", "topic", topic, "partition", partition, "err", err)
		}
	})
	if failed {
		r.setUp(false)
	} else if fetches.NumRecords() > 0 {
		r.setUp(true)
	}
	for _, topic := range recreated {
		r.readAgain(cl, topic)
	}
	fresh := r.readFromStart(cl)
	// A partition taken away (revoked, or lost with the group session):
	// the streams it carried go on at its next owner, which reads them from
	// the commit, that is from their start. This tap drops them with no
	// verdict (a handover: a Lost scoped to the partition), before any
	// record read after it.
	r.mu.Lock()
	handover := r.handover
	r.handover = nil
	r.mu.Unlock()
	for _, tp := range handover {
		r.stats.Drop(tap.DropRebalance)
		m := tap.Message{Tap: r.cfg.Name, Time: now, Lost: true, LossReason: tap.DropRebalance,
			Pos: tap.Position{Kind: tap.PosKafka, Name: tp.topic, Partition: tp.partition, Offset: -1}}
		if err := emit(ctx, m); err != nil {
			return err
		}
	}

	var err error
	// Kafka keeps what the tap has not read: wait for the budget (read
	// slower), never drop. The records polled are in memory already: they
	// are charged a chunk at a time (credit), and what a poll did not use
	// is returned at its end.
	cr := newCredit(r.cfg.Budget)
	defer cr.close()
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		tp := topicPartition{p.Topic, p.Partition}
		if err != nil || len(p.Records) == 0 || fresh[tp] {
			return // fresh: fetched from the deleted topic's commit, read again from 0
		}
		r.setLag(tp, p.HighWatermark-(p.Records[len(p.Records)-1].Offset+1))
		r.mu.Lock()
		next, seen := r.next[tp]
		mark := r.judged[tp]
		joinUntil := r.assignedAt[tp].Add(r.cfg.JoinWindow)
		// A fetch that did not reach the partition's end (a catch-up, or
		// records past a transaction still open): behind, told before
		// its records, since emitting them may take longer than
		// idle_timeout.
		_, mine := r.assignedAt[tp]
		tell := mine && !r.behind[tp] && p.HighWatermark > p.Records[len(p.Records)-1].Offset+1
		if mine {
			r.end[tp] = p.HighWatermark // fresher than the last look
			r.behind[tp] = r.behind[tp] || tell
		}
		r.mu.Unlock()
		if tell {
			if err = emit(ctx, progressMessage(r.cfg.Name, tp, true, now)); err != nil {
				return
			}
		}
		if lost, lerr := r.removedBeforeRead(ctx, emit, tp, p.LogStartOffset, next.Offset, seen, now); lerr != nil {
			err = lerr
			return
		} else if lost {
			joinUntil = now.Add(r.cfg.JoinWindow)
		}
		joined := r.cfg.JoinWindow > 0 && now.Before(joinUntil)
		// Counted once for the partition's records (two atomic adds, not
		// two a record), before any is emitted.
		fresh, rest := 0, 0
		for _, rec := range p.Records {
			if (!seen || rec.Offset >= next.Offset) && !rec.Attrs.IsControl() {
				fresh++
				rest += len(rec.Value)
			}
		}
		r.stats.Messages[tap.DirNone].Add(uint64(fresh))
		r.stats.Bytes[tap.DirNone].Add(uint64(rest))
		for _, rec := range p.Records {
			if err != nil {
				break
			}
			if seen && rec.Offset < next.Offset {
				rec.Recycle()
				continue // emitted already in this assignment
			}
			// rec is the engine's once emitted (it recycles it: its
			// batch's buffer goes back to the pool and rec is zeroed),
			// so what is read of it after emit is read before.
			after := kgo.EpochOffset{Epoch: rec.LeaderEpoch, Offset: rec.Offset + 1}
			if rec.Attrs.IsControl() || len(rec.Value) == 0 {
				// A transaction marker, or a record with no value (a
				// tombstone: a compacted topic's delete of its key): no
				// record to judge (it was an e2a.decode finding no
				// producer had caused), read past.
				rec.Recycle()
				next, seen = after, true
				continue
			}
			n := len(rec.Value)
			rest -= n
			if err = cr.take(ctx, n, rest); err != nil {
				return
			}
			err = emit(ctx, tap.Message{
				Tap:     r.cfg.Name,
				Pos:     tap.Position{Kind: tap.PosKafka, Name: rec.Topic, Partition: rec.Partition, Offset: rec.Offset},
				Time:    now,
				Data:    rec.Value,
				Charged: n,
				Joined:  joined,
				Reread:  rec.Offset < mark,
				Recycle: rec,
			})
			if err != nil {
				r.cfg.Budget.Release(n)
				break
			}
			next, seen = after, true
		}
		if seen {
			r.mu.Lock()
			if _, mine := r.assignedAt[tp]; mine {
				r.next[tp] = next
			}
			if mark > 0 && next.Offset >= mark {
				delete(r.judged, tp) // read past it
			}
			r.mu.Unlock()
		}
	})
	if err == nil {
		err = r.progress(ctx, emit)
	}
	if err == nil && now.Sub(r.lastCommit) >= r.cfg.CommitInterval {
		// While the rebalance is held (BlockRebalanceOnPoll): the
		// partitions committed are the ones read.
		r.lastCommit = now
		r.commit(ctx, cl)
	}
	return err
}

// commit commits, per partition read, what no open stream still needs:
// the offset after the last record emitted, or the first offset of the
// oldest stream still open there, whichever is lower, once everything
// emitted is judged and written out (Config.BeforeCommit). Where an open
// stream holds the offset back, the commit's metadata carries the offset
// after the last record emitted (judgedMeta): whoever reads on from the
// commit, this tap again or another replica, judges the records below it
// silently. A failure is logged; the next commit tries again.
func (r *run) commit(ctx context.Context, cl *kgo.Client) {
	// The poll loop and the revoke callback may both commit: one at a
	// time, so that an older commit never lands after a newer one.
	r.commitMu.Lock()
	defer r.commitMu.Unlock()
	r.mu.Lock()
	next := make(map[topicPartition]kgo.EpochOffset, len(r.next))
	judged := make(map[topicPartition]int64, len(r.next))
	for tp, n := range r.next {
		next[tp] = n
		judged[tp] = max(n.Offset, r.judged[tp])
	}
	r.mu.Unlock()
	if len(next) == 0 {
		return
	}
	var open OpenFirst
	if r.cfg.BeforeCommit != nil {
		var err error
		if open, err = r.cfg.BeforeCommit(ctx); err != nil {
			if ctx.Err() == nil {
				r.log.Warn("kafka commit skipped: what was read is not written out yet", "err", err)
			}
			return
		}
	}
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group = r.cfg.Group
	req.MemberID, req.Generation = cl.GroupMetadata()
	topics := map[string]int{}
	for tp, n := range next {
		p := kmsg.NewOffsetCommitRequestTopicPartition()
		p.Partition, p.Offset, p.LeaderEpoch = tp.partition, n.Offset, n.Epoch
		if open != nil {
			if first, ok := open(tp.topic, tp.partition); ok && first < n.Offset {
				p.Offset = first
			}
		}
		if j := judged[tp]; j > p.Offset {
			meta := judgedMeta(j)
			p.Metadata = &meta
		}
		i, ok := topics[tp.topic]
		if !ok {
			i = len(req.Topics)
			topics[tp.topic] = i
			t := kmsg.NewOffsetCommitRequestTopic()
			t.Topic = tp.topic
			req.Topics = append(req.Topics, t)
		}
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err == nil {
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err == nil {
					err = kerr.ErrorForCode(p.ErrorCode)
				}
			}
		}
	}
	if err != nil && ctx.Err() == nil {
		r.log.Warn("kafka commit failed", "err", err)
	}
}

// judgedPrefix starts the metadata of a commit that an open stream held
// back: the offset after the last record judged follows it.
const judgedPrefix = "e2atap judged "

func judgedMeta(off int64) string { return judgedPrefix + strconv.FormatInt(off, 10) }

// parseJudged reads judgedMeta's offset; ok is false for any other
// metadata (another client's, or none).
func parseJudged(meta *string) (int64, bool) {
	if meta == nil || !strings.HasPrefix(*meta, judgedPrefix) {
		return 0, false
	}
	off, err := strconv.ParseInt((*meta)[len(judgedPrefix):], 10, 64)
	if err != nil || off <= 0 {
		return 0, false
	}
	return off, true
}

// commitVersions are the client's request versions with OffsetCommit and
// OffsetFetch at most 9, which name topics (10 names them by ID only).
func commitVersions() *kversion.Versions {
	v := kversion.Stable()
	v.SetMaxKeyVersion(int16(kmsg.OffsetCommit), 9)
	v.SetMaxKeyVersion(int16(kmsg.OffsetFetch), 9)
	return v
}

// loadMarks reads the judged marks of the partitions just assigned from
// their group's commits (before their records are fetched). Without one
// (an error, an old commit, another client's), every record is judged.
func (r *run) loadMarks(ctx context.Context, cl *kgo.Client, assigned map[string][]int32) {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = r.cfg.Group
	for topic, ps := range assigned {
		t := kmsg.NewOffsetFetchRequestTopic()
		t.Topic, t.Partitions = topic, ps
		req.Topics = append(req.Topics, t)
	}
	if len(req.Topics) == 0 {
		return
	}
	resp, err := req.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("kafka judged marks not read: records read again from the commit are judged again", "err", err)
		}
		return
	}
	marks := map[topicPartition]int64{}
	committed := map[topicPartition]int64{}
	add := func(topic string, partition int32, offset int64, meta *string) {
		if offset >= 0 {
			committed[topicPartition{topic, partition}] = offset
		}
		if j, ok := parseJudged(meta); ok && j > offset {
			marks[topicPartition{topic, partition}] = j
		}
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			add(t.Topic, p.Partition, p.Offset, p.Metadata)
		}
	}
	for _, g := range resp.Groups {
		for _, t := range g.Topics {
			for _, p := range t.Partitions {
				add(t.Topic, p.Partition, p.Offset, p.Metadata)
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for tp, j := range marks {
		if _, mine := r.assignedAt[tp]; mine {
			r.judged[tp] = max(r.judged[tp], j) // (assign may have set this run's own)
		}
	}
	for tp, c := range committed {
		if _, mine := r.assignedAt[tp]; mine {
			if _, read := r.next[tp]; !read {
				r.committed[tp] = c
			}
		}
	}
}

// removedBeforeRead tells a loss for tp before the records of a fetch whose
// log start (logStart) is above the offset the tap reads from: the offset
// after the last record emitted (next, when seen), or else the group's
// commit it started from. Those records were removed (retention, delete
// records) before anyone read them; the client resumed at the log start
// and the streams they carried must not be judged across the hole: those
// open on the partition are let go with no verdict (a partition's Lost),
// and those that began in the hole are joined (the join window opens
// again).
func (r *run) removedBeforeRead(ctx context.Context, emit tap.EmitFunc, tp topicPartition, logStart, next int64, seen bool, now time.Time) (lost bool, err error) {
	r.mu.Lock()
	from, ok := next, seen
	if !seen {
		from, ok = r.committed[tp]
	}
	delete(r.committed, tp)
	lost = ok && logStart > from
	if _, mine := r.assignedAt[tp]; lost && mine {
		// The streams that began in what was removed are read from
		// their middle: the partition's join window opens again, as at
		// its assignment.
		r.assignedAt[tp] = now
	}
	r.mu.Unlock()
	if !lost {
		return false, nil
	}
	r.stats.Drop(tap.DropUpstreamGap)
	if now.Sub(r.lossLog) >= tap.OutageEvery {
		r.lossLog = now
		r.log.Warn("kafka records removed before they were read (retention): their streams are not judged across them",
			"topic", tp.topic, "partition", tp.partition, "from", from, "log_start", logStart)
	}
	return true, emit(ctx, tap.Message{Tap: r.cfg.Name, Time: now, Lost: true, LossReason: tap.DropUpstreamGap,
		Pos: tap.Position{Kind: tap.PosKafka, Name: tp.topic, Partition: tp.partition, Offset: from}})
}

// handOverAll hands every partition of this run over as the run ends
// (not a loss: nothing is counted).
func (r *run) handOverAll(ctx context.Context, emit tap.EmitFunc) {
	r.mu.Lock()
	parts := r.handover
	for tp := range r.assignedAt {
		parts = append(parts, tp)
	}
	r.handover = nil
	clear(r.next)
	clear(r.assignedAt)
	clear(r.end)
	clear(r.behind)
	clear(r.judged)
	clear(r.committed)
	clear(r.emitted)
	r.mu.Unlock()
	now := time.Now()
	for _, tp := range parts {
		m := tap.Message{Tap: r.cfg.Name, Time: now, Lost: true, LossReason: tap.DropRebalance,
			Pos: tap.Position{Kind: tap.PosKafka, Name: tp.topic, Partition: tp.partition, Offset: -1}}
		if emit(ctx, m) != nil {
			return
		}
	}
}

// readAgain starts reading topic over: it was deleted and created again
// under the same name (its fetches fail with UNKNOWN_TOPIC_ID: the client
// keeps the old topic's ID and never takes the new one by itself, so the
// tap read nothing more of it, for as long as it ran). Purged from the
// client and added again, its partitions are revoked (their open streams
// handed over, OnPartitionsRevoked) and assigned anew, read from the
// group's commit or, with none, from Config.Start.
func (r *run) readAgain(cl *kgo.Client, topic string) {
	r.log.Warn("kafka topic deleted and created again: reading it over (its open streams are not judged across)", "topic", topic)
	cl.PurgeTopicsFromConsuming(topic)
	if !r.cfg.Regex {
		cl.AddConsumeTopics(topic)
	}
	if r.recreated == nil {
		r.recreated = map[string]time.Time{}
	}
	r.recreated[topic] = time.Now()
}

// readFromStart sets the partitions assigned of the topics readAgain added
// back to offset 0: the group's commit, and the judged mark in it, are the
// deleted topic's, and the new one's records below them were skipped or
// taken as judged already. It returns the partitions set, whose records
// fetched in this poll are not emitted (they come again from 0).
func (r *run) readFromStart(cl *kgo.Client) map[topicPartition]bool {
	if len(r.recreated) == 0 {
		return nil
	}
	set := map[string]map[int32]kgo.EpochOffset{}
	fresh := map[topicPartition]bool{}
	r.mu.Lock()
	for tp, at := range r.assignedAt {
		since, ok := r.recreated[tp.topic]
		if !ok || at.Before(since) {
			continue // not assigned again yet
		}
		if set[tp.topic] == nil {
			set[tp.topic] = map[int32]kgo.EpochOffset{}
		}
		set[tp.topic][tp.partition] = kgo.EpochOffset{Epoch: -1, Offset: 0}
		fresh[tp] = true
		delete(r.next, tp)
		delete(r.judged, tp)
	}
	r.mu.Unlock()
	for topic := range set {
		delete(r.recreated, topic)
	}
	if len(set) > 0 {
		cl.SetOffsets(set)
	}
	return fresh
}

// assign opens the join window of partitions just assigned.
func (r *run) assign(parts map[string][]int32) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for topic, ps := range parts {
		for _, p := range ps {
			tp := topicPartition{topic, p}
			r.assignedAt[tp] = now
			if e, ok := r.emitted[tp]; ok {
				r.judged[tp] = max(r.judged[tp], e)
				delete(r.emitted, tp)
			}
		}
	}
}

// brokerHooks sees every connection attempt to a broker: the log of an
// outage (once when a broker becomes unreachable, once when it is back) and
// the dial errors counted.
type brokerHooks struct{ r *run }

var _ kgo.HookBrokerConnect = brokerHooks{}

func (h brokerHooks) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, conn net.Conn, err error) {
	o := h.r.outageOf(redactBroker(net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port)))))
	if err != nil {
		// Unreachable, or refused: credentials, TLS. The client reports
		// the failure of the connection's setup (API versions, SASL) here
		// too, with the connection it dialed: a broker that answered and
		// then refused or hung up (some close on a failed SASL exchange)
		// is a handshake error, not an unreachable one.
		reason := connectErrorReason(err)
		if conn != nil {
			reason = tap.ErrHandshake
			err = fmt.Errorf("connected, then the session setup failed (SASL credentials, API versions): %w", err)
		}
		h.r.stats.Error(reason)
		o.Failed(err)
		return
	}
	o.Reachable("")
}

func (r *run) outageOf(addr string) *tap.Outage {
	r.outMu.Lock()
	defer r.outMu.Unlock()
	o, ok := r.outages[addr]
	if !ok {
		o = tap.NewOutage(r.log, "kafka broker", addr)
		r.outages[addr] = o
	}
	return o
}

// health pings a broker every HealthInterval, so that Up follows the
// brokers while no record arrives.
func (r *run) health(ctx context.Context, cl *kgo.Client) {
	tick := time.NewTicker(r.cfg.HealthInterval)
	defer tick.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, max(r.cfg.HealthInterval, time.Second))
		err := cl.Ping(pctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		r.setUp(err == nil)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// ends looks up, every EndCheck, the high watermark of the partitions
// assigned (read_uncommitted: records of open transactions included), and
// wakes the poll loop when one is to be told behind or caught up
// (progress). A failed look changes nothing: the brokers' health is the
// health goroutine's.
//
// The fetches cannot tell it: a read_committed fetch of a partition stalled
// behind an open transaction returns no record, and franz-go hands no
// empty fetch to a poll; nor can Stats.Lag, as of the last fetch with
// records.
func (r *run) ends(ctx context.Context, cl *kgo.Client) {
	tick := time.NewTicker(r.cfg.EndCheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID = -1
		req.IsolationLevel = 0
		r.mu.Lock()
		topics := map[string]int{}
		for tp := range r.assignedAt {
			i, ok := topics[tp.topic]
			if !ok {
				i = len(req.Topics)
				topics[tp.topic] = i
				t := kmsg.NewListOffsetsRequestTopic()
				t.Topic = tp.topic
				req.Topics = append(req.Topics, t)
			}
			p := kmsg.NewListOffsetsRequestTopicPartition()
			p.Partition, p.Timestamp, p.CurrentLeaderEpoch = tp.partition, -1, -1
			req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
		}
		r.mu.Unlock()
		if len(req.Topics) == 0 {
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, max(r.cfg.EndCheck, time.Second))
		resp, err := req.RequestWith(lctx, cl)
		cancel()
		if err != nil {
			continue
		}
		r.mu.Lock()
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				tp := topicPartition{t.Topic, p.Partition}
				if _, mine := r.assignedAt[tp]; !mine || p.ErrorCode != 0 {
					continue
				}
				r.end[tp] = p.Offset
				if r.isBehind(tp) != r.behind[tp] {
					r.toTell = true
				}
			}
		}
		if r.toTell && r.wake != nil {
			r.wake()
		}
		r.mu.Unlock()
	}
}

// isBehind says (under mu) whether partition tp held records past the last
// one emitted at the last look. One with no record emitted in this
// assignment has no stream open here: it is not.
func (r *run) isBehind(tp topicPartition) bool {
	end, looked := r.end[tp]
	n, seen := r.next[tp]
	return looked && seen && end > n.Offset
}

// progress tells the engine of the partitions found behind or caught up
// since it was last told (Message.Progress), after the records of the
// poll: a partition caught up is told after the records up to its end.
func (r *run) progress(ctx context.Context, emit tap.EmitFunc) error {
	type told struct {
		tp     topicPartition
		behind bool
	}
	var tell []told
	r.mu.Lock()
	for tp := range r.assignedAt {
		if b := r.isBehind(tp); b != r.behind[tp] {
			r.behind[tp] = b
			tell = append(tell, told{tp, b})
		}
	}
	r.toTell = false
	r.mu.Unlock()
	now := time.Now()
	for _, t := range tell {
		if err := emit(ctx, progressMessage(r.cfg.Name, t.tp, t.behind, now)); err != nil {
			return err
		}
	}
	return nil
}

func progressMessage(name string, tp topicPartition, behind bool, now time.Time) tap.Message {
	return tap.Message{Tap: name, Time: now, Progress: true, Behind: behind,
		Pos: tap.Position{Kind: tap.PosKafka, Name: tp.topic, Partition: tp.partition, Offset: -1}}
}

// setUp follows the brokers' health (UpstreamUp); the log of an outage is
// the broker hooks'.
func (r *run) setUp(up bool) {
	if r.stats.UpstreamUp.Swap(up) == up {
		return
	}
	if up && r.wasUp.Swap(true) {
		r.stats.Reconnects.Add(1)
	}
}

func (r *run) setLag(tp topicPartition, lag int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.Lag.Add(lag - r.lag[tp])
	r.lag[tp] = lag
}

// lose forgets the partitions taken away and queues their handover for
// the next poll.
func (r *run) lose(parts map[string][]int32, how string) {
	n := 0
	for _, ps := range parts {
		n += len(ps)
	}
	if n == 0 {
		return
	}
	r.log.Info("kafka partitions "+how+": their open streams are handed over to the next owner", "partitions", n)
	r.mu.Lock()
	defer r.mu.Unlock()
	for topic, ps := range parts {
		for _, p := range ps {
			tp := topicPartition{topic, p}
			r.stats.Lag.Add(-r.lag[tp])
			delete(r.lag, tp)
			if n, ok := r.next[tp]; ok {
				r.emitted[tp] = max(r.emitted[tp], n.Offset)
			}
			delete(r.next, tp)
			delete(r.assignedAt, tp)
			delete(r.end, tp)
			delete(r.behind, tp)
			delete(r.judged, tp)
			delete(r.committed, tp)
			r.handover = append(r.handover, tp)
		}
	}
}
