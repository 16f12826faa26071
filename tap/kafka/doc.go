// Package kafkatap is the Kafka source of e2atap: it reads topics in its own
// consumer group and hands every record value to the engine as a
// tap.Message.
//
// # Place in the pipeline
//
//	Kafka brokers ──► kafkatap.Tap ──► emit (engine: classify, decode, validate)
//
// The tap is a bystander: it consumes in its own group (Config.Group,
// default "e2atap") and commits offsets for that group only, so the
// application's groups, their members and their committed offsets are
// untouched. Config.Group must never be an application's group.
//
// # Records
//
// Data is the record value, byte for byte, with a Format hint from its first
// byte: EventMesh stores EventMeshFrame bytes (0xEF) as the value, and older
// bodies are CloudEvents structured JSON ('{'), the engine's own fallback.
// Keys and headers are not passed on. Pos is tap.PosKafka with Name = the
// topic, Partition and Offset; Time is when the tap received the record.
// Topics are named (Config.Topics) or, with Config.Regex, matched by regular
// expressions, topics created later included.
//
// # Concurrency, flow control, commits
//
// Run owns the franz-go client, whose goroutines it closes before
// returning, and one health goroutine that it waits for. Run's goroutine
// polls and calls emit, one record at a time, in partition order. A blocking
// emit is backpressure: the tap stops polling and nothing is dropped (Kafka
// keeps the records). Offsets are marked after emit returns and committed by
// the client's autocommit (AutoCommitMarks), on revoke and on shutdown: what
// was committed has been handed to the engine (at least once). Rebalances
// are held while one poll's records are emitted (BlockRebalanceOnPoll), so a
// very slow emit delays them.
//
// # Health
//
// The client reconnects and backs off by itself. Stats.Up is true after a
// successful broker round trip (a poll, or a ping every
// Config.HealthInterval) and false after a failed one; every false→true
// counts in Stats.Reconnects. Every partition assignment emits a control
// Message with Reconnected = true: the tap starts reading those partitions
// where the group left off, possibly mid-stream, and the engine opens its
// join window. Stats.Lag is the sum over assigned partitions of the high
// watermark minus the next offset to read, as of the last fetch: records.
package kafkatap
