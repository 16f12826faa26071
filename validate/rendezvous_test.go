package validate

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestLiveOrderedRendezvous: with the order across shards needed from the
// start (a record log: LiveConfig.Unordered false) and several shards, Run
// judges no shard itself and the shards meet at each chat.interrupt.
// Every record submitted before an interrupt reaches the sink before it
// and every record after it after it, over the streams of every shard;
// and Run does not wait at an interrupt: with a shard busy with a record
// before it, everything after it is still taken from the queue (a queue
// of 16 and 36 records), and judged once that shard is done.
func TestLiveOrderedRendezvous(t *testing.T) {
	// More than Run takes at a barrier (at most a queue's worth of 16
	// with the interrupt, then 16 more queued), fewer than it takes
	// meeting (8 batches queued to each shard, 7 to the held one, at least
	// one record each, then 16 queued).
	const afterInterrupt = 36
	cfg := DefaultLiveConfig()
	cfg.Shards = 3
	cfg.JoinWindow = 0
	cfg.Queue = 16
	sink := &blockingSink{entered: make(chan struct{}), release: make(chan struct{}), sawByKey: map[string]bool{}}
	l := NewLive(cfg, sink)
	if l.run.inline {
		t.Fatal("ordered, 3 shards: Run judges shard 0 itself (Inline): interrupts would wait at barriers")
	}
	// Phase two's streams, chosen before Run starts (the routing is the
	// test's until then): a record held on one shard, an interrupt owned
	// by another, then records over all three in turn.
	held := ""
	for i := 0; held == ""; i++ {
		if k := fmt.Sprintf("held%d", i); l.run.shardOf([]byte(k), false) != l.run.shards[0] {
			held = k
		}
	}
	heldShard := l.run.shardOf([]byte(held), false)
	intID := ""
	for i := 0; intID == ""; i++ {
		if k := fmt.Sprintf("late%d", i); l.run.shardOf([]byte(k), false) != heldShard {
			intID = k
		}
	}
	var after []string
	for i := 0; len(after) < afterInterrupt; i++ {
		k := fmt.Sprintf("after%d", i)
		if l.run.shardOf([]byte(k), false) == l.run.shards[len(after)%3] {
			after = append(after, k)
		}
	}
	sink.hold = held
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan Stats, 1)
	go func() { done <- l.Run(ctx) }()
	at := time.Now()
	submit := func(ctx context.Context, line string) error {
		return l.Submit(ctx, Input{Tap: "t", Time: at, Data: []byte(line)})
	}
	interrupt := func(id string) string {
		return `{"request_id":"` + id + `","session_id":"s1","method":"chat.interrupt","params":{}}`
	}

	// The order: one record a stream, an interrupt every 40th.
	var keys []string
	for k := 0; k < 2000; k++ {
		key := fmt.Sprintf("r%d", k)
		line := resp(0, "request_id", key)
		if k%40 == 39 {
			key = fmt.Sprintf("int%d", k)
			line = interrupt(key)
		}
		keys = append(keys, key)
		if err := submit(ctx, line); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool {
		sink.orderMu.Lock()
		defer sink.orderMu.Unlock()
		return len(sink.streams) >= len(keys)
	})
	sink.orderMu.Lock()
	pos := make(map[string]int, len(sink.streams))
	for i, k := range sink.streams {
		pos[k] = i
	}
	sink.orderMu.Unlock()
	shardsSeen := map[*shard]bool{}
	for k, key := range keys {
		shardsSeen[l.run.shardOf([]byte(key), false)] = true
		if k%40 != 39 {
			continue
		}
		p, ok := pos[key]
		if !ok {
			t.Fatalf("interrupt %s never reached the sink", key)
		}
		for j, other := range keys {
			if q := pos[other]; j < k && q > p || j > k && q < p {
				t.Fatalf("record %d (%s) reached the sink at %d, interrupt %d (%s) at %d", j, other, q, k, key, p)
			}
		}
	}
	if len(shardsSeen) != 3 {
		t.Fatalf("the streams fell on %d shards, want 3", len(shardsSeen))
	}

	// Run does not wait at the interrupt while the held shard is busy
	// with a record before it: at a barrier it took nothing more from the
	// queue until that shard was done; meeting, it hands the next records
	// over until the shards' queues are full (afterInterrupt).
	sink.armed.Store(true)
	if err := submit(ctx, resp(0, "request_id", held)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sink.entered:
	case <-time.After(60 * time.Second):
		t.Fatal("the held record never reached its shard")
	}
	if err := submit(ctx, interrupt(intID)); err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithTimeout(ctx, 20*time.Second)
	defer scancel()
	for k, key := range after {
		if err := submit(sctx, resp(0, "request_id", key)); err != nil {
			t.Fatalf("record %d after the interrupt: %v (Run waits at the interrupt)", k, err)
		}
	}
	if sink.saw(intID) {
		t.Fatal("the interrupt was judged before the record submitted ahead of it")
	}
	for k, key := range after {
		if sink.saw(key) {
			t.Fatalf("record %d after the interrupt was judged before it", k)
		}
	}
	sink.release <- struct{}{}
	waitFor(t, func() bool { return sink.saw(after[len(after)-1]) && sink.saw(intID) })
	if n := sink.countBefore(held, intID); n != 1 {
		t.Fatalf("%d records of the held stream before the interrupt, want 1", n)
	}
	for k, key := range after {
		if n := sink.countBefore(key, intID); n != 0 {
			t.Fatalf("record %d after the interrupt reached the sink before it", k)
		}
	}
	cancel()
	<-done
}
