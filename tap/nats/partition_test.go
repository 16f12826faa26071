package natstap

import (
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/e2atap/e2atap/internal/gen"
	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/validate"
	"github.com/nats-io/nats.go/jetstream"
)

// Scaling NATS taps out (README, "Scaling past one pod"): a queue group
// hands each message to any member, so a stream's records scatter over the
// replicas; subject-mapped partitions keep a stream on one replica. The
// server maps e2a.<request_id> to e2a.part.<N>.<request_id> with N =
// partition(2, request_id), a deterministic hash of the token (a mapping
// function must be a whole token: p{{partition(2,1)}} is taken literally),
// and each replica subscribes to its own partition's subjects.

// findingSink keeps the findings of one replica's engine.
type findingSink struct {
	mu       sync.Mutex
	findings []string // "rule stream"
}

func (s *findingSink) Record(*validate.RecordInfo)      {}
func (s *findingSink) StreamStart(*validate.StreamInfo) {}
func (s *findingSink) StreamEnd(*validate.StreamInfo)   {}
func (s *findingSink) Finding(f *validate.Finding) {
	s.mu.Lock()
	s.findings = append(s.findings, f.Rule+" "+f.Stream)
	s.mu.Unlock()
}

// judge runs one replica's engine over what its tap read, to the end of
// input (a stream without its final is missing_final, one read from the
// middle starts at the wrong sequence).
func judge(msgs []tap.Message) []string {
	sink := &findingSink{}
	cfg := validate.DefaultConfig()
	e := validate.NewEngine(cfg, sink)
	for i := range msgs {
		m := &msgs[i]
		e.Observe(&validate.Input{Tap: "mesh", Pos: validate.Position(m.Pos), Time: m.Time, Data: m.Data, Index: uint64(i + 1)})
	}
	e.Finish(validate.ReasonEOF, &validate.Input{Tap: "mesh"})
	return sink.findings
}

// partitionTraffic publishes gen traffic (200 streams, some with a lost
// chunk) on e2a.<request_id> and returns the planted violations and the
// messages per stream.
func partitionTraffic(t *testing.T, url string) (planted map[string]bool, perStream map[string]int, total int) {
	t.Helper()
	nc := connect(t, url)
	g := gen.New(gen.Config{Seed: 4, Concurrent: 40, MinChunks: 3, MaxChunks: 12, FaultRate: 0.2, Faults: []gen.Fault{gen.LostChunk}})
	planted, perStream = map[string]bool{}, map[string]int{}
	var msgs []gen.Message
	for len(perStream) < 200 {
		m := g.Next()
		msgs = append(msgs, m)
		perStream[m.Stream]++
	}
	for _, m := range g.Drain() {
		msgs = append(msgs, m)
		perStream[m.Stream]++
	}
	for _, m := range msgs {
		if m.Fault != "" {
			planted[m.Fault.Rule()+" "+m.Stream] = true
		}
		if err := nc.Publish("e2a."+m.Stream, m.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return planted, perStream, len(msgs)
}

// streamsOf counts each replica's records per stream (request_id is the
// subject's last token).
func streamsOf(msgs []tap.Message) map[string]int {
	out := map[string]int{}
	for _, m := range msgs {
		name := m.Pos.Name
		out[name[lastDot(name)+1:]]++
	}
	return out
}

func lastDot(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return i
		}
	}
	return -1
}

// TestSubjectMappedPartitionsKeepAStreamOnOneReplica: with the server's
// subject mapping and one subscription per replica (partition), every
// stream is read whole by exactly one of two replicas, each replica's
// engine finds exactly the violations planted in its streams, and
// together they find all of them, with no false finding. The same traffic
// through a queue group (the contrast) splits streams across the replicas
// and makes their engines report violations that did not happen.
func TestSubjectMappedPartitionsKeepAStreamOnOneReplica(t *testing.T) {
	s := startServer(t, 0, "")
	if err := s.GlobalAccount().AddMapping("e2a.*", "e2a.part.{{partition(2,1)}}.{{wildcard(1)}}"); err != nil {
		t.Fatal(err)
	}
	url := s.ClientURL()
	replicas := []*collector{{}, {}}
	for i, c := range replicas {
		subject := fmt.Sprintf("e2a.part.%d.>", i)
		before := s.NumSubscriptions() // (the server's own: 63)
		startTap(t, Config{Name: "mesh", URL: url, Subjects: []string{subject}}, c)
		waitFor(t, "the subscription to "+subject, func() bool { return s.NumSubscriptions() > before })
	}
	planted, perStream, total := partitionTraffic(t, url)
	eachStreamAtOneReplica(t, replicas, planted, perStream, total)
}

// TestJetStreamPartitionsKeepAStreamOnOneReplica: the same without
// touching the subjects the applications see: a JetStream stream over
// e2a.* stores its messages under the partitioned subjects (its subject
// transform), and each replica reads its partition with a consumer of its
// own (a nats tap's jetstream: with filter_subjects).
func TestJetStreamPartitionsKeepAStreamOnOneReplica(t *testing.T) {
	s := startServer(t, 0, "")
	url := s.ClientURL()
	createStream(t, newJS(t, connect(t, url)), jetstream.StreamConfig{Name: "E2A", Subjects: []string{"e2a.*"}, Storage: jetstream.MemoryStorage,
		SubjectTransform: &jetstream.SubjectTransformConfig{Source: "e2a.*", Destination: "e2a.part.{{partition(2,1)}}.{{wildcard(1)}}"}})
	planted, perStream, total := partitionTraffic(t, url)
	replicas := []*collector{{}, {}}
	for i, c := range replicas {
		startTap(t, Config{Name: "mesh", URL: url, Streams: []StreamConfig{{Stream: "E2A", StartSeq: 1, FilterSubjects: []string{fmt.Sprintf("e2a.part.%d.>", i)}}}}, c)
	}
	eachStreamAtOneReplica(t, replicas, planted, perStream, total)
}

// eachStreamAtOneReplica waits for the replicas to read all total
// messages and checks that every stream was read whole by exactly one,
// and that judging what each read finds the planted violations and
// nothing else.
func eachStreamAtOneReplica(t *testing.T, replicas []*collector, planted map[string]bool, perStream map[string]int, total int) {
	t.Helper()
	waitFor(t, "every message at some replica", func() bool {
		n := 0
		for _, c := range replicas {
			msgs, _ := c.data()
			n += len(msgs)
		}
		return n == total
	})

	owner := map[string]int{}
	found := map[string]bool{}
	for i, c := range replicas {
		msgs, _ := c.data()
		got := streamsOf(msgs)
		if len(got) == 0 {
			t.Fatalf("replica %d read no stream: the mapping did not partition", i)
		}
		for stream, n := range got {
			if o, dup := owner[stream]; dup {
				t.Errorf("stream %s read by replicas %d and %d", stream, o, i)
			}
			owner[stream] = i
			if n != perStream[stream] {
				t.Errorf("stream %s: replica %d read %d of its %d records", stream, i, n, perStream[stream])
			}
		}
		for _, f := range judge(msgs) {
			if !planted[f] {
				t.Errorf("replica %d: false finding %s", i, f)
			}
			found[f] = true
		}
	}
	var missed []string
	for f := range planted {
		if !found[f] {
			missed = append(missed, f)
		}
	}
	sort.Strings(missed)
	if len(missed) > 0 {
		t.Errorf("%d of %d planted violations found by no replica: %v", len(missed), len(planted), missed)
	}
	if len(owner) != len(perStream) || len(planted) == 0 {
		t.Errorf("%d streams owned of %d, %d planted", len(owner), len(perStream), len(planted))
	}
	t.Logf("%d streams, %d messages, %d planted violations: each stream whole at one replica, all found", len(perStream), total, len(planted))
}

// TestQueueGroupScattersStreams is the contrast: two replicas in one queue
// group split streams between them, and judging what each got reports
// violations that were never sent (a stream read from the middle, a final
// the other replica got).
func TestQueueGroupScattersStreams(t *testing.T) {
	s := startServer(t, 0, "")
	url := s.ClientURL()
	replicas := []*collector{{}, {}}
	for _, c := range replicas {
		// Each tap's own subscription, counted from before it starts: the
		// server has 63 of its own, so a count of i+1 was met at once, and
		// traffic sent before the second replica subscribed went to one
		// (the test failed once in go test ./tap/...: no stream split).
		before := s.NumSubscriptions()
		startTap(t, Config{Name: "mesh", URL: url, Subjects: []string{"e2a.>"}, Queue: "e2atap"}, c)
		waitFor(t, "the queue subscription", func() bool { return s.NumSubscriptions() > before })
	}
	planted, _, total := partitionTraffic(t, url)
	waitFor(t, "every message at some replica", func() bool {
		n := 0
		for _, c := range replicas {
			msgs, _ := c.data()
			n += len(msgs)
		}
		return n == total
	})
	a, _ := replicas[0].data()
	b, _ := replicas[1].data()
	sa, sb := streamsOf(a), streamsOf(b)
	split := 0
	for stream := range sa {
		if sb[stream] > 0 {
			split++
		}
	}
	falses := 0
	for _, msgs := range [][]tap.Message{a, b} {
		for _, f := range judge(msgs) {
			if !planted[f] {
				falses++
			}
		}
	}
	if split == 0 || falses == 0 {
		t.Fatalf("a queue group kept streams whole (%d split, %d false findings): the contrast does not hold", split, falses)
	}
	t.Logf("queue group: %d of %d streams split across the replicas, %d false findings", split, len(sa)+len(sb)-split, falses)
}
