package kafkatap

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func kerrOf(code int16) error { return kerr.ErrorForCode(code) }

// frame encodes a small EventMeshFrame EVENT (reference §1, §7).
func frame(id string) []byte {
	b := []byte{0xEF, 1, 3, 0, 0, 0, 0, 0}
	b = binary.BigEndian.AppendUint16(b, 1)
	b = binary.BigEndian.AppendUint32(b, 2)
	b = binary.BigEndian.AppendUint16(b, 2)
	b = append(b, "id"...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(id)))
	b = append(b, id...)
	return append(b, "{}"...)
}

type got struct {
	Pos    tap.Position
	Data   string
	Format tap.Format
}

func want(recs []*kgo.Record) map[tap.Position]got {
	m := map[tap.Position]got{}
	for _, r := range recs {
		pos := tap.Position{Kind: tap.PosKafka, Name: r.Topic, Partition: r.Partition, Offset: r.Offset}
		// The engine tells frames from JSON: the tap leaves the hint
		// at FormatAuto and never reads the value.
		m[pos] = got{pos, string(r.Value), tap.FormatAuto}
	}
	return m
}

func index(t *testing.T, msgs []tap.Message) map[tap.Position]got {
	t.Helper()
	m := map[tap.Position]got{}
	for _, msg := range msgs {
		if msg.Tap != "mesh-kafka" || msg.Time.IsZero() || msg.Gap {
			t.Errorf("message %v: tap %q time %v gap %v", msg.Pos, msg.Tap, msg.Time, msg.Gap)
		}
		if _, dup := m[msg.Pos]; dup {
			t.Errorf("%v emitted twice", msg.Pos)
		}
		m[msg.Pos] = got{msg.Pos, string(msg.Data), msg.Format}
	}
	return m
}

// records makes n records for topic: EVENT frames keyed by their id (as
// EventMesh stores them) and, every third, a legacy CE-JSON body.
func records(topic string, n int) []*kgo.Record {
	var recs []*kgo.Record
	for i := range n {
		id := fmt.Sprintf("%s-%d", topic, i)
		r := &kgo.Record{Topic: topic, Key: []byte(id), Value: frame(id)}
		if i%3 == 0 {
			r.Key = nil
			r.Value = []byte(fmt.Sprintf(`{"specversion":"1.0","id":%q,"source":"em://x","type":"stream.chunk"}`, id))
		}
		recs = append(recs, r)
	}
	return recs
}

func TestTopicsByName(t *testing.T) {
	brokers := newCluster(t, 3, "eventmesh-stream", "other")
	prod := newClient(t, brokers)
	recs := produce(t, prod, records("eventmesh-stream", 30)...)
	produce(t, prod, records("other", 5)...)

	c := &collector{}
	stats, _ := startTap(t, Config{Name: "mesh-kafka", Brokers: brokers, Topics: []string{"eventmesh-stream"}, Start: "earliest", HealthInterval: 100 * time.Millisecond, JoinWindow: time.Hour}, c)
	waitFor(t, "30 records", func() bool { msgs, _ := c.data(); return len(msgs) >= 30 })
	// Produced while the tap runs.
	recs = append(recs, produce(t, prod, records("eventmesh-stream", 6)...)...)
	waitFor(t, "36 records", func() bool { msgs, _ := c.data(); return len(msgs) >= 36 })
	msgs, _ := c.data()
	if diff := cmp.Diff(want(recs), index(t, msgs)); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	for _, m := range msgs {
		if !m.Joined {
			t.Fatalf("%v: not Joined within the join window of its partition's assignment", m.Pos)
		}
	}
	if !stats.UpstreamUp.Load() {
		t.Error("not Up")
	}
	if n := stats.Messages[tap.DirNone].Load(); n != 36 {
		t.Errorf("Stats messages = %d", n)
	}
	waitFor(t, "lag 0", func() bool { return stats.Lag.Load() == 0 })
}

func TestTopicsByRegex(t *testing.T) {
	brokers := newCluster(t, 2, "mesh.agent", "mesh.client", "meshy", "other")
	prod := newClient(t, brokers)
	var recs []*kgo.Record
	recs = append(recs, produce(t, prod, records("mesh.agent", 10)...)...)
	recs = append(recs, produce(t, prod, records("mesh.client", 10)...)...)
	produce(t, prod, records("meshy", 3)...)
	produce(t, prod, records("other", 3)...)

	c := &collector{}
	startTap(t, Config{Name: "mesh-kafka", Brokers: brokers, Topics: []string{`^mesh\.`}, Regex: true, Start: "earliest"}, c)
	waitFor(t, "20 records", func() bool { msgs, _ := c.data(); return len(msgs) >= 20 })
	time.Sleep(200 * time.Millisecond) // nothing else may come
	msgs, _ := c.data()
	if diff := cmp.Diff(want(recs), index(t, msgs)); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}

func TestOtherGroupsUntouched(t *testing.T) {
	brokers := newCluster(t, 3, "eventmesh-stream")
	prod := newClient(t, brokers)
	recs := produce(t, prod, records("eventmesh-stream", 40)...)

	// The application consumes in its own group and commits part way.
	app := newClient(t, brokers, kgo.ConsumerGroup("app"), kgo.ConsumeTopics("eventmesh-stream"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	ctx := context.Background()
	var seen int
	for seen < 10 {
		fs := app.PollRecords(ctx, 10-seen)
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		seen += fs.NumRecords()
	}
	if err := app.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	admin := newClient(t, brokers)
	before := committed(t, admin, "app")
	if len(before) == 0 {
		t.Fatal("application committed nothing")
	}

	c := &collector{}
	_, stop := startTap(t, Config{Name: "mesh-kafka", Brokers: brokers, Topics: []string{"eventmesh-stream"}, Start: "earliest"}, c)
	waitFor(t, "40 records", func() bool { msgs, _ := c.data(); return len(msgs) == 40 })
	stop()

	if diff := cmp.Diff(before, committed(t, admin, "app")); diff != "" {
		t.Errorf("application's committed offsets changed (-before +after):\n%s", diff)
	}
	// The tap's own group committed everything it emitted.
	end := map[string]map[int32]int64{"eventmesh-stream": {}}
	for _, r := range recs {
		end[r.Topic][r.Partition] = max(end[r.Topic][r.Partition], r.Offset+1)
	}
	if diff := cmp.Diff(end, committed(t, admin, "e2atap")); diff != "" {
		t.Errorf("e2atap group's offsets (-want +got):\n%s", diff)
	}

	// A second run resumes from the commit: nothing read twice.
	c2 := &collector{}
	startTap(t, Config{Name: "mesh-kafka", Brokers: brokers, Topics: []string{"eventmesh-stream"}, Start: "earliest"}, c2)
	more := produce(t, prod, records("eventmesh-stream", 3)...)
	waitFor(t, "3 new records", func() bool { msgs, _ := c2.data(); return len(msgs) >= 3 })
	time.Sleep(200 * time.Millisecond)
	msgs, _ := c2.data()
	if diff := cmp.Diff(want(more), index(t, msgs)); diff != "" {
		t.Errorf("second run (-want +got):\n%s", diff)
	}
}

func TestConfigValidate(t *testing.T) {
	err := Config{Brokers: []string{"nohost", ":9"}, Topics: []string{"a", "a", "b c", ""}, Start: "middle", Isolation: "read_some", MaxPollRecords: -1}.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{"name is empty", `broker "nohost"`, `broker ":9"`, `topic "a" listed twice`, `topic "b c"`, "empty topic", `start "middle"`, `isolation "read_some"`, "max_poll_records"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not mention %q:\n%v", w, err)
		}
	}
	if err := (Config{Name: "k", Brokers: []string{"127.0.0.1:9092"}, Topics: []string{"(["}, Regex: true}).Validate(); err == nil || !strings.Contains(err.Error(), "topic pattern") {
		t.Errorf("bad regex: %v", err)
	}
	if err := (Config{Name: "k", Brokers: []string{"127.0.0.1:9092"}, Topics: []string{"t"}}).Validate(); err != nil {
		t.Error(err)
	}
}

// The judged mark of a commit's metadata: e2atap's own form is read back,
// anything else (kgo's member id, another tool's text, a bad number) is
// no mark.
func TestJudgedMeta(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, c := range []struct {
		meta *string
		off  int64
		ok   bool
	}{
		{str(judgedMeta(42)), 42, true},
		{str(judgedMeta(1 << 40)), 1 << 40, true},
		{nil, 0, false},
		{str(""), 0, false},
		{str("kgo-1234-abcd"), 0, false},
		{str("e2atap judged "), 0, false},
		{str("e2atap judged -5"), 0, false},
		{str("e2atap judged 0"), 0, false},
		{str("e2atap judged 12x"), 0, false},
	} {
		off, ok := parseJudged(c.meta)
		if off != c.off || ok != c.ok {
			t.Errorf("parseJudged(%v) = %d, %v; want %d, %v", c.meta, off, ok, c.off, c.ok)
		}
	}
}
