// Command goloop is the plain-Go baseline of make bench-system: what a Go
// programmer would write to check the same stream invariants on a JSON
// lines capture with the standard library (bufio.Scanner, encoding/json
// into a struct, a map of sequences). It prints the records and problems
// it counted, so that the work cannot be optimised away.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

type record struct {
	RequestID    *string `json:"request_id"`
	Sequence     *int64  `json:"sequence"`
	IsFinal      *bool   `json:"is_final"`
	Status       *string `json:"status"`
	ResponseKind *string `json:"response_kind"`
}

type state struct {
	last  int64
	final bool
}

func main() {
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	streams := map[string]*state{}
	var records, problems int
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			problems++
			continue
		}
		records++
		if r.ResponseKind == nil || r.RequestID == nil || r.Sequence == nil {
			continue // a request, or not a response
		}
		seq := *r.Sequence
		if seq < 0 {
			continue // keepalive
		}
		st := streams[*r.RequestID]
		if st == nil {
			st = &state{last: -1}
			streams[*r.RequestID] = st
		}
		if st.final {
			problems++ // after final
		}
		if seq != st.last+1 {
			problems++ // gap or duplicate
		}
		st.last = seq
		if r.IsFinal != nil && *r.IsFinal {
			st.final = true
			if r.Status == nil || (*r.Status != "succeeded" && *r.Status != "failed" && *r.Status != "cancelled") {
				problems++
			}
			delete(streams, *r.RequestID)
		}
	}
	problems += len(streams) // never ended
	fmt.Printf("%d records, %d problems\n", records, problems)
}
