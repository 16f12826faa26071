package redact

import (
	"fmt"
	"strings"
	"testing"
)

// Texts of the hot path: a record's strings with nothing to mask (prose,
// ids, paths, timestamps), and one with a token.
var (
	benchClean = strings.Repeat("2026-03-29T12:00:01Z stream req_1 of tap ws: status in_progress, sequence 12 after 11 "+
		"(e2a.chunk) /tmp/TestNATSSlowConsumerGivesNoFalseFinding1724886460/001/out.jsonl The quick brown fox, getOrderById. ", 8)
	benchDirty = benchClean + " key " + "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
	benchB64   = strings.Repeat("the reply was c2stcHJvai1BYkNkRWZHaElqS2xNbk9wUXJTdFV2V3hZejAxMjM0NTY3ODk= and then ", 8)
)

func benchFind(b *testing.B, s string) {
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		for from := 0; from < len(s); {
			m, ok := Find(s, from)
			if !ok {
				break
			}
			from = m.End
		}
	}
}

func BenchmarkFindClean(b *testing.B)  { benchFind(b, benchClean) }
func BenchmarkFindDirty(b *testing.B)  { benchFind(b, benchDirty) }
func BenchmarkFindBase64(b *testing.B) { benchFind(b, benchB64) }

func BenchmarkMayHoldCredential(b *testing.B) {
	b.SetBytes(int64(len(benchClean)))
	for i := 0; i < b.N; i++ {
		MayHoldCredential(benchClean)
	}
}

// benchProse has no anchor but a few capitals and dashes: the fast path.
var benchProse = strings.Repeat("The agent answered the question about the weather in three short paragraphs, then asked whether the user wanted a longer forecast for the week ahead. ", 10)

func BenchmarkFindProse(b *testing.B) { benchFind(b, benchProse) }

// BenchmarkFindIDs: stream keys as the observe hub redacts them at every
// stream's end (a UUID, a hex digest): long words of digits and letters,
// each digit of which is an anchor.
func BenchmarkFindIDs(b *testing.B) {
	for _, id := range []string{"6f1c2a4e-9b1e-4b1e-9c3d-2f5a6b7c8d9e", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"} {
		b.Run(fmt.Sprint(len(id)), func(b *testing.B) { benchFind(b, id) })
	}
}

// BenchmarkMayStartCredential: the tail check splitSecret runs on each
// delta of a stream, on an ASCII one and on a Chinese one (the Python
// corpora's deltas, unescaped).
func BenchmarkMayStartCredential(b *testing.B) {
	for _, tail := range []string{"token 17 of the answer ", "，这是一个流式回答的片段，这是一个流式回答的片段"} {
		b.Run(fmt.Sprint(len(tail)), func(b *testing.B) {
			for b.Loop() {
				MayStartCredential(tail)
			}
		})
	}
}

// BenchmarkRunLong: the walk of a long base64 run a byte at a time
// ("scalar", the baseline) and by the AVX2 kernel ("avx2", where the CPU
// has it). The kernel is only worth its call where it is several times the
// baseline: with a legacy SSE instruction before its VEX code it was 7.5×
// slower than the baseline on this project's Xeon machines
// (internal/layers' TestAsmVEXOnly). It leaves out the run's neighbours:
// runLong's caller looks at the first eight bytes itself.
func BenchmarkRunLong(b *testing.B) {
	s := []byte(strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkrLw", 200))
	for _, avx2 := range []bool{false, true} {
		name := "scalar"
		if avx2 {
			name = "avx2"
		}
		b.Run(name, func(b *testing.B) {
			if avx2 && !haveVec {
				b.Skip("no AVX2 here")
			}
			old := vecRuns
			vecRuns = avx2
			defer func() { vecRuns = old }()
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if e := runLong(s, 0, word); e != len(s) {
					b.Fatalf("runLong ended at %d of %d", e, len(s))
				}
			}
		})
	}
}
