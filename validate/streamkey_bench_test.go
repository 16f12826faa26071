package validate

import (
	"fmt"
	"testing"
)

// BenchmarkStreamLookup is the stream table's part of every record: the
// composite key (the id encoded) and the lookup of an open stream, over
// 4096 open streams of each shape of id. It leaves out the record's
// parsing and rules.
func BenchmarkStreamLookup(b *testing.B) {
	for _, c := range []struct{ name, id string }{
		{"uuid", "%08x-9a4d-4e6f-8b7a-0c1d2e3f4a5b"},
		{"agent-uuid", "agent-1:%08x-9a4d-4e6f-8b7a-0c1d2e3f4a5b"},
		{"req-hex", "req_%08x9a4d4e6f8b7a0c1d2e3f4a5b"},
		{"base64url", "msg_01XFDUDYJgAACzvnptvV-%011d"},
		{"printable", "a b c d e f g h i j k l m n %08d"},
		{"hex64", "%08x9a4d4e6f8b7a0c1d2e3f4a5b9a4d4e6f8b7a0c1d2e3f4a5b0123456789ab"},
	} {
		b.Run(c.name, func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.IdleTimeout = 0
			e := NewEngine(cfg, nopSink{})
			const n = 4096
			ids := make([][]byte, n)
			in := &Input{Tap: "tap", Conn: "conn"}
			for i := range ids {
				ids[i] = []byte(fmt.Sprintf(c.id, i*2654435761%(1<<32)))
				if _, created, _ := e.lookup(e.composite(in, protoE2A, ids[i]), true, false, in); !created {
					b.Fatalf("%s: not created", ids[i])
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if j, _, _ := e.lookup(e.composite(in, protoE2A, ids[i&(n-1)]), false, false, in); j < 0 {
					b.Fatal("lost")
				}
			}
		})
	}
}

// BenchmarkStreamID is the encoding of an id alone.
func BenchmarkStreamID(b *testing.B) {
	for _, id := range []string{"3f2b8c1e-9a4d-4e6f-8b7a-0c1d2e3f4a5b", "req_0123456789abcdef0123456789abcdef", "msg_01XFDUDYJgAACzvnptvV-01234567890", "a b c d e f g h i j k l m n 01234567", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"} {
		b.Run(id[:8], func(b *testing.B) {
			k, s := make([]byte, 0, 128), []byte(id)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				k = appendStreamID(k[:0], protoE2A, s)
			}
		})
	}
}
