// Command frameloop is the plain-Go baseline of make bench-system for
// EventMesh frame files: it reads concatenated frames with encoding/binary
// (the header, each attribute, the data), keeps each stream's last
// sequence in a map keyed by its sid attribute, and counts gaps, as a Go
// programmer would without e2atap's codec.
package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

func main() {
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var hdr [14]byte
	last := map[string]int32{}
	var frames, problems int
	buf := make([]byte, 0, 4096)
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			break
		}
		if hdr[0] != 0xEF || hdr[1] != 1 {
			problems++
			break
		}
		msgType, flags := hdr[2], hdr[3]
		seq := int32(binary.BigEndian.Uint32(hdr[4:8]))
		keys := int(binary.BigEndian.Uint16(hdr[8:10]))
		dataLen := int(int32(binary.BigEndian.Uint32(hdr[10:14])))
		sid := ""
		for i := 0; i < keys; i++ {
			var l2 [2]byte
			io.ReadFull(r, l2[:])
			name := make([]byte, binary.BigEndian.Uint16(l2[:]))
			io.ReadFull(r, name)
			var l4 [4]byte
			io.ReadFull(r, l4[:])
			value := make([]byte, int32(binary.BigEndian.Uint32(l4[:])))
			io.ReadFull(r, value)
			if string(name) == "sid" {
				sid = string(value)
			}
		}
		if cap(buf) < dataLen {
			buf = make([]byte, dataLen)
		}
		if _, err := io.ReadFull(r, buf[:dataLen]); err != nil {
			problems++
			break
		}
		frames++
		if msgType != 2 {
			continue
		}
		prev, ok := last[sid]
		if ok && seq != prev+1 || !ok && seq != 0 {
			problems++
		}
		last[sid] = seq
		if flags&1 != 0 {
			delete(last, sid)
		}
	}
	problems += len(last)
	fmt.Printf("%d frames, %d problems\n", frames, problems)
}
