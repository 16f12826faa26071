// Package validate is the rule engine: it takes messages (JSON records and
// EventMesh frames) from the taps or from files, classifies them, and
// checks every record and every stream against the rule catalogue
// (docs/rules.md), under a profile (spec, or jiuwenswarm: the reference
// implementation's real behaviour). What it sees goes to a Sink: every
// record (for metrics and the redacted log), every finding, and each
// stream's start and end with its outcome and timings.
//
// Place in the pipeline: taps → validate → exporters. It imports only e2a
// and frame.
//
// Pieces:
//
//   - Engine: one pure state machine. Observe(record) reports findings; no
//     goroutines, no clock reads (time comes with each Input, and Expire is
//     given the time). Streams live in a bounded table (40 bytes of state,
//     a 4-byte slot and the key per open stream, off the Go heap:
//     offheap.go); ended streams leave it for
//     a compact tombstone set that catches records after the final. The
//     state is split into fixed partitions by a fixed-seed hash of the
//     stream key (partition.go), each with its share of the limits.
//   - Sharded: several Engines, one goroutine each, streams sharded by key
//     (request_id, sid, event id), so that one goroutine owns a stream and
//     per-stream order is kept while all cores work. A shard owns whole
//     partitions, so the limits are global and the verdicts (evictions
//     included) are the same for any number of shards. Interrupts reach
//     every shard, in order. The reader routes a JSON record by a short
//     byte search where it can (route.go), hands batches to the shards (a
//     frame with the decoding it already did), and an offline run of one
//     shard judges on the reader's goroutine (Inline: no copy, no queue).
//   - Live: the entrance for taps (any goroutine may Submit); it opens join
//     windows, runs idle timeouts and drains at shutdown.
//   - Read: offline readers for JSON-lines and frame files (gzip-compressed or
//     not; a regular file is read by pread(2) into a reused buffer with one
//     shard, and in pread(2) chunks split over the shards with several:
//     splitwalk.go, framesplit.go; JSON lines for a record log, which needs
//     the hand-off's order, through a mapping: walk.go), shared by `e2atap
//     validate` and `e2atap decode`. The sidecar's own record log is replayed
//     (replay.go): each record in the tap and connection scope it had live, so
//     that it gives the live findings. A log line holding NUL bytes is read
//     as the logdir tap reads it (a writer's crash residue: a loss, then the
//     rest of the line). ReadOptions.Stop ends a read at its next refill
//     (a signal to validate or decode).
//
// Concurrency: an Engine is not safe for concurrent use. Sharded's and
// Live's methods say which goroutine may call them. A Sink is called from
// every shard and must be safe for concurrent use; the calls for one stream
// are ordered.
package validate
