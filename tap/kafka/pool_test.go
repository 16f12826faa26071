package kafkatap

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/klauspost/compress/s2"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestPoolClasses: a buffer got for n bytes holds n, wastes at most an
// eighth past the smallest size, and goes back to a class whose buffers
// all hold what that class is asked for.
func TestPoolClasses(t *testing.T) {
	sizes := []int{0, 1, 1 << 10, 1<<16 - 1, 1 << 16, 1<<16 + 1, 70_000, 1_049_173, 3 << 20, 240 << 20}
	for range 2000 {
		sizes = append(sizes, rand.IntN(240<<20))
	}
	for _, n := range sizes {
		class, size, ok := classOf(n)
		if !ok {
			t.Fatalf("classOf(%d): none", n)
		}
		if size < n || size > max(n+n/8, 1<<poolMinShift) {
			t.Fatalf("classOf(%d) = size %d", n, size)
		}
		if back, ok := classFor(size); !ok || back != class {
			t.Fatalf("classOf(%d) = class %d size %d, but classFor(%d) = %d, %v", n, class, size, size, back, ok)
		}
		// A grown buffer (any capacity) goes back to the largest class
		// whose size it holds.
		c := size + rand.IntN(size)
		if back, ok := classFor(c); ok {
			if s := sizeOf(back); s > c || (back+1 < poolClasses && sizeOf(back+1) <= c) {
				t.Fatalf("classFor(%d) = class %d of size %d", c, back, s)
			}
		}
	}
	if _, _, ok := classOf(240<<20 + 1); ok {
		t.Error("a buffer past 240 MiB is pooled")
	}
	if _, ok := classFor(256 << 20); ok {
		t.Error("a buffer of 256 MiB goes back to the pool")
	}
	if _, ok := classFor(1<<16 - 1); ok {
		t.Error("a buffer below the smallest class is pooled")
	}
}

// sizeOf is the size of class's buffers.
func sizeOf(class int) int { return (class%8 + 8) << (class/8 + poolMinShift - 3) }

// TestPoolReusesBuffers: a buffer put back is the one got next for a
// batch of its class, with room for the snappy batch's decoded size; so
// is a slice of records for a batch's count.
func TestPoolReusesBuffers(t *testing.T) {
	var p fetchPool
	src := s2.EncodeSnappy(nil, make([]byte, 900_000))
	reused := false
	// sync.Pool may drop what is put (a collection; at random under the
	// race detector): a few tries.
	for range 100 {
		b := p.GetDecompressBytes(src, kgo.CodecSnappy)
		if len(b) != 0 || cap(b) < 900_000 || cap(b) > 900_000+900_000/8 {
			t.Fatalf("got len %d cap %d for 900000 bytes", len(b), cap(b))
		}
		p.PutDecompressBytes(b[:cap(b)])
		if b2 := p.GetDecompressBytes(src, kgo.CodecSnappy); cap(b2) > 0 && &b2[:1][0] == &b[:1][0] {
			reused = true
			break
		}
	}
	if !reused {
		t.Error("a buffer put back was never got again")
	}
	for _, n := range []int{0, 1, 64, 65, 1140, 1 << 16} {
		rs := p.GetRecords(n)
		if len(rs) != 0 || cap(rs) < n || cap(rs) > max(2*n, 64) {
			t.Errorf("GetRecords(%d): len %d cap %d", n, len(rs), cap(rs))
		}
	}
	if rs := p.GetRecords(1<<16 + 1); rs != nil {
		t.Errorf("GetRecords(65537): a pooled slice of cap %d", cap(rs))
	}
	reused = false
	for range 100 {
		rs := p.GetRecords(1140)
		p.PutRecords(rs[:cap(rs)])
		if rs2 := p.GetRecords(1100); &rs2[:1][0] == &rs[:1][0] {
			reused = true
			break
		}
	}
	if !reused {
		t.Error("a record slice put back was never got again")
	}
}

// TestRecycledRecordsKeepTheirData: records of snappy batches, each
// recycled by another goroutine (as the engine does once it has judged
// one) while the tap goes on with the rest of its batch, come out whole
// and in order: the tap reads nothing of a record after emitting it (the
// race detector sees a read of a record Recycle zeroed), and the buffers
// recycled are decompressed into again without a record still held
// seeing it.
func TestRecycledRecordsKeepTheirData(t *testing.T) {
	brokers := newCluster(t, 2, "ev")
	const n = 6000
	prod := newClient(t, brokers, kgo.DefaultProduceTopic("ev"), kgo.ProducerBatchCompression(kgo.SnappyCompression()))
	want := map[tap.Position]string{}
	for i := 0; i < n; i += 500 {
		var recs []*kgo.Record
		for j := i; j < i+500; j++ {
			id := fmt.Sprintf("r%d", j)
			recs = append(recs, &kgo.Record{Key: []byte(id), Value: fmt.Appendf(nil, `{"request_id":%q,"sequence":%d,"body":"%0400d"}`, id, j, j)})
		}
		for _, r := range produce(t, prod, recs...) {
			want[tap.Position{Kind: tap.PosKafka, Name: r.Topic, Partition: r.Partition, Offset: r.Offset}] = string(r.Value)
		}
	}

	var mu sync.Mutex
	got := map[tap.Position]string{}
	var unowned atomic.Int64
	recycle := make(chan tap.Recycler, 64)
	var wg sync.WaitGroup
	wg.Go(func() {
		for r := range recycle {
			if rand.IntN(50) == 0 {
				time.Sleep(time.Millisecond) // an engine that is busy now and then
			}
			r.Recycle()
		}
	})
	emit := func(ctx context.Context, m tap.Message) error {
		if m.Lost || m.Progress || m.Reconnected {
			return nil
		}
		if m.Recycle == nil {
			unowned.Add(1)
		}
		mu.Lock()
		got[m.Pos] = string(m.Data)
		mu.Unlock()
		if m.Recycle != nil {
			select {
			case recycle <- m.Recycle:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	// Small fetches: many batches, and buffers recycled while the next
	// are decompressed.
	tp, err := New(Config{Name: "mesh-kafka", Brokers: brokers, Topics: []string{"ev"}, Start: "earliest", FetchMaxBytes: 64 << 10}, new(tap.Stats), discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tp.Run(ctx, emit) }()
	waitFor(t, "every record", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) >= n })
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	close(recycle)
	wg.Wait()
	if u := unowned.Load(); u != 0 {
		t.Errorf("%d records emitted with no Recycle", u)
	}
	mu.Lock()
	defer mu.Unlock()
	bad := 0
	for pos, v := range want {
		if got[pos] != v {
			if bad++; bad <= 3 {
				t.Errorf("%v: got %.60q, want %.60q", pos, got[pos], v)
			}
		}
	}
	if bad > 0 || len(got) != len(want) {
		t.Errorf("%d of %d records differ; %d emitted", bad, len(want), len(got))
	}
}
