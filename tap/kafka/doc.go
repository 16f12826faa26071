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
// emit is backpressure, and so is the byte budget (Config.Budget): the tap
// waits for it before it emits a record (charged in tap.Message.Charged
// until the engine has judged it), stops polling meanwhile, and nothing is
// dropped (Kafka keeps the records). Offsets are marked after emit returns
// and committed by the client's autocommit (AutoCommitMarks), on revoke and
// on shutdown: what was committed has been handed to the engine (at least
// once). Rebalances are held while one poll's records are emitted
// (BlockRebalanceOnPoll), so a very slow emit delays them. The commit does
// not yet wait for open streams (DESIGN.md's "offset of the oldest open
// stream's first record"): a replica that takes a partition over reads its
// open streams from the middle, inside its join window.
//
// # Rebalances
//
// A partition revoked or lost (the group moved it, or the session expired)
// takes its open streams away: this tap will not see how they go on, and
// may get the partition back later from the group's commit. That is a loss
// (tap.DropRebalance), emitted as a control Message with Lost (scope "", the
// whole tap: a partition's streams are not known by name; over-gapping loses
// findings but never invents one) before any record read after it. Records
// this run emitted before a partition came back are not emitted again. A
// partition assigned emits a Reconnected: the tap starts reading it where
// the group left off, possibly mid-stream, and the engine opens its join
// window.
//
// # Health and the log
//
// The client reconnects and backs off by itself; the tap never fails
// because a broker is down, at start or later. Stats.Up is true while Run
// runs. Stats.UpstreamUp is true after a successful broker round trip (a
// poll, or a ping every Config.HealthInterval) and false after a failed one;
// every false→true counts in Stats.Reconnects. Every failed connection to a
// broker counts in Stats.Errors[tap.ErrDial]; per broker, an outage is
// logged once when it starts ("kafka broker unreachable": the address, the
// error), at most once a minute while it lasts, and once when it ends
// ("kafka broker reachable again": how long, how many attempts failed).
// Fetch errors are logged at most once a minute. Stats.Lag is the sum over
// assigned partitions of the high watermark minus the next offset to read,
// as of the last fetch: records.
//
// BenchmarkCatchUp compares reading a stored topic with a bare franz-go
// consumer.
package kafkatap
