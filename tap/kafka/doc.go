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
// Data is the record value, byte for byte: EventMesh stores EventMeshFrame
// bytes (0xEF) as the value, and older bodies are CloudEvents structured
// JSON ('{'). Format is FormatAuto: the engine tells them apart by the first
// byte as it reads the record; the tap never reads a value (on a catch-up,
// a first look at each record from the tap's core cost 4 % of the CPU, a
// cache miss the engine then took again on its own core).
// Records of transactional producers are read as their consumers read
// them (Config.Isolation, read_committed by default): what was committed,
// once; an aborted transaction's records (a batch the producer retried in
// a new one, the exactly-once pattern) are not emitted, nor are the
// transaction markers (control records), which the tap reads and skips so
// that its commits and Stats.Lag move past them. So is a record with no
// value (a tombstone, a compacted topic's delete of its key; an empty
// value): no frame and no JSON, nothing to judge, counted in
// Stats.Messages only. The offsets those take, and the
// ones a compacted topic left out, are no loss: the tap never reads a loss
// into a jump of offsets.
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
// until the engine has judged it; the records of a poll are charged a chunk
// at a time, at most 1 MiB or a sixteenth of the budget ahead, and what a
// poll did not use is given back), stops polling meanwhile, and nothing is
// dropped (Kafka keeps the records). Rebalances are held while one poll's
// records are emitted (BlockRebalanceOnPoll), so a very slow emit delays
// them.
//
// A poll takes the whole fetch the client has buffered: the client sends
// its next fetch (and decompresses it, on its own goroutine) only once the
// last one is taken, so a catch-up fetches while the engine judges. Two
// fetches are then held outside the budget, one buffered and one being
// emitted; Config.FetchMaxBytes (by default a 128th of the budget, 1 to
// 16 MiB of compressed records) bounds them.
//
// The client decompresses a batch, and decodes its records, into memory
// the tap pools (fetchPool): every record emitted carries itself as
// tap.Message.Recycle, whoever takes it calls Recycle once done with Data
// (the engine: once judged, or copied for another shard), and the batch's
// memory goes back to the pool after its last record. The tap reads
// nothing of a record after emitting it, and recycles itself the records
// it does not emit (transaction markers, tombstones, records read twice).
// A taker that never recycles leaves the memory to the collector.
//
// The tap commits itself (no autocommit): every Config.CommitInterval
// between polls, when partitions are revoked, and at shutdown. Before a
// commit it calls Config.BeforeCommit, which returns once what was emitted
// is judged and written out (DESIGN.md, "Durability order") and says, per
// partition, the offset of the oldest open stream's first record; the tap
// commits, per partition, that offset or the one after the last record
// emitted, whichever is lower: what no open stream still needs. Whoever
// reads the partition next (another replica after a rebalance, this one
// after a crash) therefore reads every stream open then from its start.
// A stream that never ends holds its partition's commit back until the
// engine ends it (idle timeout). Where an open stream holds a commit back,
// its metadata says "e2atap judged N": N is the offset after the last
// record emitted, judged and written out before the commit. The next
// reader fetches the group's commits of the partitions it is assigned
// (before their records) and marks the records below N Message.Reread:
// judged for their streams' state only, reported no second time. The
// tap commits and fetches with OffsetCommit and OffsetFetch at most
// version 9 (10 names topics by ID only).
//
// # A partition behind
//
// Every Config.EndCheck (cmd/e2atap: a quarter of idle_timeout, at most
// 1 s) a goroutine looks up the high watermark of the partitions assigned,
// open transactions' records included, and the poll loop tells the engine,
// after the poll's records, of each partition found behind (records past
// the last one emitted) or caught up since it was last told: a control
// Message with Progress and Behind. While a partition is behind, the
// streams opened on it do not go idle: a read_committed fetch reads nothing
// past a transaction still open (a producer that died inside one: until
// the broker aborts it, transaction.timeout.ms, a minute by default), and a
// catch-up reads a stream's records later than they were written; their
// stream is not idle, the tap is late.
//
// # Rebalances
//
// A partition revoked (the group moved it; committed first) or lost (the
// session expired; no commit is possible, the next owner starts at the
// last one) is handed over: a control Message with Lost, LossReason
// tap.DropRebalance and Pos naming the partition (Kind tap.PosKafka, Name
// the topic, Partition), emitted before any record read after it. The
// engine drops that partition's streams with no verdict (no missing_final:
// the next owner reads them from their start) and touches no other
// partition's. A partition assigned opens a join window of its own
// (Config.JoinWindow): its records carry Message.Joined for that long, in
// case it resumes at a commit that did not wait for open streams (an older
// e2atap, another tool, start: latest). Records read again from the commit
// after a handover are judged silently up to the commit's judged mark;
// what the old owner judged after its last commit (a replica killed
// between two commits) is judged again by the new one: a finding can then
// be reported twice, never lost. A tap that gets back a partition it lost
// (its session expired while the process was stalled: no commit was
// possible) or had revoked judges silently what it emitted of it before,
// as below a judged mark: it reported those findings itself.
// When Run returns it commits, then hands every partition it held over
// the same way (not counted as a loss): whoever reads them next, another
// replica or this tap run again by a reload or its supervisor, reads their
// open streams from the commit, so the engine neither reports them missing
// at shutdown nor sees their start twice.
//
// # Health and the log
//
// The client reconnects and backs off by itself; the tap never fails
// because a broker is down, at start or later. Stats.Up is true while Run
// runs. Stats.UpstreamUp is true after a successful broker round trip (a
// poll, or a ping every Config.HealthInterval) and false after a failed one;
// every false→true counts in Stats.Reconnects. Every failed connection to a
// broker counts in Stats.Errors[tap.ErrDial], one the broker refused (TLS,
// SASL, a hang-up during the session setup) in
// Stats.Errors[tap.ErrHandshake]; per broker, an outage is
// logged once when it starts ("kafka broker unreachable": the address, the
// error), at most once a minute while it lasts, and once when it ends
// ("kafka broker reachable again": how long, how many attempts failed).
// Fetch errors are logged at most once a minute. Stats.Lag is the sum over
// assigned partitions of the high watermark minus the next offset to read,
// as of the last fetch: records.
//
// # Security
//
// Config.TLS is the client side of TLS (tlsfiles.Client: a CA file, a
// client certificate for mutual TLS that a reconnect presents renewed,
// server_name, insecure_skip_verify with a warning at start); Config.SASL
// is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 with a username and a password
// file read again at every authentication and never logged.
//
// BenchmarkCatchUp compares reading a stored topic with a bare franz-go
// consumer.
package kafkatap
