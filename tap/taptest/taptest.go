// Package taptest holds what the taps' tests share: the numbered
// records they publish, a locked buffer for logs, and a replay of the engine's reading of the
// emitted messages that tells which sequence jumps no loss covers. It is
// imported by tests only.
package taptest

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/e2atap/e2atap/tap"
)

// SeqRecord is the payload of the loss tests: stream S, sequence I.
type SeqRecord struct {
	S int `json:"s"`
	I int `json:"i"`
}

// UnjudgedJumps replays what the engine does with one tap's messages: a
// Lost control message, or a message with Gap, re-bases every open stream
// of the tap. It returns every jump in a stream's sequence that no loss
// covers (a false e2a.seq_gap the engine would report) and how many
// consecutive pairs it checked. Messages that are not SeqRecords (probes,
// markers) are skipped.
func UnjudgedJumps(msgs []tap.Message) (jumps []string, checked int) {
	last := map[int]int{}     // stream → last sequence
	rebased := map[int]bool{} // stream → a loss since its last message
	for _, m := range msgs {
		if m.Reconnected {
			continue
		}
		if m.Lost || m.Gap {
			for s := range last {
				rebased[s] = true
			}
		}
		if m.Lost {
			continue
		}
		var r SeqRecord
		if !bytes.HasPrefix(m.Data, []byte(`{"s":`)) || json.Unmarshal(m.Data, &r) != nil {
			continue
		}
		if prev, ok := last[r.S]; ok && !rebased[r.S] {
			checked++
			if r.I != prev+1 {
				jumps = append(jumps, fmt.Sprintf("stream %d: %d after %d", r.S, r.I, prev))
			}
		}
		last[r.S] = r.I
		rebased[r.S] = false
	}
	return jumps, checked
}
