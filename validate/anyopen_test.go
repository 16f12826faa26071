package validate

import (
	"fmt"
	"testing"
)

// TestAnyOpenInEveryPartition: anyOpenIn finds a connection's open stream
// in whichever partition of the stream tables its key went to. It looked
// at the partition a shard had used last alone, so that a live run wrote
// no loss mark in the record log for most connections it cut (Live's
// ConnClosed after a loss), and their replay reported missing_final.
func TestAnyOpenInEveryPartition(t *testing.T) {
	for _, shards := range []int{1, 2} {
		s := NewSharded(shards, DefaultConfig(), &collector{})
		const conns = 40
		for i := range conns {
			id := fmt.Sprintf("req-%d", i)
			s.Observe(&Input{Tap: "ws", Conn: fmt.Sprintf("c%d", i), Data: []byte(fmt.Sprintf(
				`{"protocol_version":"1.0","response_id":%q,"request_id":%q,"sequence":0,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","timestamp":"2026-03-29T12:00:00Z","provenance":{"source_protocol":"e2a"},"body":{"delta_kind":"text","delta":"x"}}`, id, id))})
		}
		s.barrier()
		for i := range conns {
			if in := (&Input{Tap: "ws", Conn: fmt.Sprintf("c%d", i)}); !s.anyOpenIn(in) {
				t.Errorf("%d shards: no open stream found on connection %s", shards, in.Conn)
			}
		}
		if s.anyOpenIn(&Input{Tap: "ws", Conn: "c99"}) {
			t.Errorf("%d shards: an open stream found on a connection that has none", shards)
		}
		s.Close()
	}
}
