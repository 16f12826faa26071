// Package natstap is the NATS source of e2atap: it watches core NATS
// subjects and JetStream streams without taking part in the application's
// delivery, and hands every payload to the engine as a tap.Message.
//
// # Place in the pipeline
//
//	NATS server ──► natstap.Tap ──► emit (engine: classify, decode, validate)
//
// The tap is a bystander:
//
//   - Core subjects (wildcards allowed) are read through plain
//     subscriptions. A plain subscription receives its own copy of every
//     message and never takes one away from an application's queue group.
//     Config.Queue puts the tap into e2atap's own queue group, for replicas
//     of e2atap that share the load; it must never be an application's
//     group name.
//   - JetStream streams are read through ephemeral, in-memory, AckNone pull
//     consumers that the tap orders itself: it never acks, nacks or pulls for
//     an application's consumer, so their state is untouched. The tap sends
//     its own pull requests of Config.FetchBatch messages, two open at once,
//     all answered into one inbox whose channel the stream goroutine reads
//     itself (so the server's round-robin over waiting requests cannot
//     reorder anything, and no goroutine or timer stands between the client
//     and the tap for each message). After any failure (missed heartbeats,
//     consumer deleted, server restart) the consumer is recreated from the
//     stream sequence after the last one emitted, with capped exponential
//     backoff and jitter; after a reconnect, at once.
//
// # Payloads
//
// Data is the NATS payload, byte for byte, with a Format hint from the first
// byte (0xEF: EventMeshFrame; '{' or '[': JSON: E2A or CloudEvents
// structured). A CloudEvents binary-mode message (a ce-specversion header,
// NATS protocol binding) is turned into a CloudEvents structured JSON object,
// because the engine reads structured JSON and a Format hint cannot carry the
// headers: the context attributes come from the ce-* headers (names
// lower-cased, values as strings), datacontenttype from ce-datacontenttype
// or else Content-Type; the body becomes "data" (embedded verbatim when it is
// valid JSON and the content type is JSON or absent), a "data" string (text/*
// content, or valid UTF-8 with no content type) or "data_base64" (anything
// else). Keys are written specversion, id, source, type, the rest sorted,
// data last.
//
// A message with an empty body that is not such an event carries no record
// and is not emitted (counted in Stats.Messages only): NATS uses
// headers-only messages as signals (a status such as 503 no responders or
// 100 idle heartbeat, a KV delete marker), and none is an E2A message or a
// frame that could be judged (e2a.decode), as a blank log line is none.
// JetStream's cursor moves past it as past any message read.
//
// # Positions and losses
//
// Pos.Kind is tap.PosSubject with Name = the subject. For JetStream, Offset
// is the stream sequence and Line the consumer sequence (of the tap's current
// consumer: it restarts at 1 when the consumer is recreated).
//
// Losses are the tap's, not the protocol's. Each is counted in Stats.Drops
// and said in order, as a control Message with Lost (scope Conn "", the
// whole tap: its streams have no connection) or as Gap on the next message
// (the engine handles both the same way: every open stream of the tap is
// re-based, not judged across the loss, and no missing final is reported).
// A loss also opens the join window (a Reconnected control message, at most
// one per 100 ms): what was lost may hold the start of a stream first seen
// after it.
//
//   - tap.DropReconnect: an established connection broke. Core NATS does
//     not replay what was published until the client is back, so every
//     core subscription lost messages from the point where its old
//     connection ended. The disconnect handler finds that point in each
//     subscription's own order (the messages its callback has started plus
//     those still pending in the client, give or take the one in the
//     callback), and the callback emits a Lost before the first message
//     after it (Gap on the one or two after, which the uncertainty covers).
//     A Lost is also emitted at the reconnect itself, so that a stream the
//     outage cut whose rest never comes is not e2a.missing_final when
//     nothing at all is published after it.
//     One drop is counted per disconnect (how many messages were published
//     meanwhile is not known), with Stats.Errors[tap.ErrDisconnect].
//   - tap.DropQueueFull: the client reported a slow consumer (the pending
//     limits, Config.PendingMsgs/PendingBytes, were exceeded; counted in
//     messages, with Stats.Errors[tap.ErrSlowConsumer]). The client drops
//     at arrival; the callback sees the drop count change at its next call
//     and knows the drop lies within the messages pending then, so the
//     first of them is preceded by a Lost and the rest carry Gap.
//   - tap.DropUpstreamGap: JetStream messages the tap could not read: a
//     jump in the consumer sequence (delivered to the tap, never arrived), a
//     jump in the stream sequence of an unfiltered consumer (deleted before
//     the tap read them), or a resume point older than the stream's first
//     message (removed by the stream's limits: exact for an unfiltered
//     consumer; for a filtered one the server cannot say how many matched,
//     and the tap counts one). The next message carries Gap.
//   - tap.DropOversize: a payload over Config.MaxMessageBytes; the next
//     message of its subscription carries Gap.
//
// # Cursors (Config.Positions)
//
// With a cursors file, the tap keeps, per JetStream stream, where to read
// on: every Config.SaveInterval, and once more when Run ends, it calls
// Config.BeforeSave (which returns once what was emitted is judged and
// written out, DESIGN.md "Durability order", and says per stream the first
// sequence of the oldest stream still open) and writes, per stream, that
// sequence or the one after the last message emitted, whichever is lower.
// A tap started again (a restart, a crash, a reload, its supervisor) reads
// each stream on from its cursor (it wins over StartSeq): what was stored
// while it was down is read, every stream open then is read from its start
// (what the engine saw of it already is judged silently: the messages below
// the file's judged mark, the sequence after the last message emitted
// before the save, carry tap.Message.Reread, and the record log recognises
// what was judged after the save), and the usual checks apply (a cursor older than the
// stream's first message, a stream created again: losses). When Run ends
// it hands every stream over (a Lost with Pos Kind PosSubject, Partition
// the stream's, Name ""; not counted): the engine drops their open streams
// with no verdict, since whoever reads on from the cursors reads them
// from their start. JetStream messages carry Pos.Partition = 1 + the
// stream's index in Config.Streams, which the engine keys open streams by.
// Without a cursors file a start reads from StartSeq, or only what is
// stored after it: what was stored while no tap ran is not read, and is no
// loss the tap can count.
//
// # Concurrency and flow control
//
// Run owns everything it starts (the connection, its subscriptions, one
// goroutine per JetStream stream) and waits for all of it before it returns.
// emit is called one message at a time, never concurrently: by a core
// subscription's callback (the client runs one callback goroutine per
// subscription, in arrival order), by a JetStream stream's goroutine, or by
// Run's goroutine (control messages), so messages of one subscription reach emit in the
// order NATS delivered them.
//
//   - Core NATS has no backpressure, so the client's own pending buffer is
//     the tap's buffer: the callback emits itself, and while the engine is
//     busy (or the budget spent) it waits and the burst waits in the client,
//     up to Config.PendingBytes per subscription (default: the budget's
//     limit split over the subjects; no limit by count). Only past that does
//     the client drop (slow consumer), and that is the only place core NATS
//     loses messages under load. Every message handed over is charged to
//     Config.Budget (tap.Message.Charged) until the engine has judged it.
//   - JetStream is lossless under backpressure: a stream goroutine waits for
//     the budget and emits itself, so a slow engine only slows the pull.
//     Each pull request asks for at most Config.FetchBatch messages
//     (default 1024) and 32 MiB (or one message of MaxMessageBytes, if that
//     is more); two are open at once, so the client holds at most twice that.
//   - Control messages (Reconnected) travel through their own 16-message
//     queue; when it is full a Reconnected is coalesced with the ones queued.
//
// # Health and the log
//
// Stats.Up is true while Run runs (the tap serves even with the server
// down: it connects and reconnects by itself, with capped exponential
// backoff and jitter, also when the server is down at start).
// Stats.UpstreamUp follows the connection. Stats.Reconnects counts
// reconnects, Stats.Errors[tap.ErrDial] failed connection attempts and
// Stats.Errors[tap.ErrHandshake] refused ones (credentials, TLS). An
// outage is logged once when it starts ("nats server unreachable": the
// address with any credentials removed, the error), at most once a minute
// while it lasts, and once when it ends ("nats server reachable again": how
// long, how many attempts failed). Every connect and reconnect emits a
// control Message with Reconnected = true, so that the engine opens its
// join window. Stats.Lag is the sum over JetStream streams of the messages
// not yet delivered to the tap (NumPending); core NATS has no lag. A
// JetStream stream with messages pending is told behind before the message
// (a control Message with Progress and Behind, Pos as a handover's), and
// caught up after the one with none pending: while it is behind, the
// streams opened on it do not go idle, since a catch-up (a restart that
// reads on from its cursors) reads their records later than they were
// stored; the tap is late, not the stream.
//
// # Security
//
// Config.TLS is the client side of TLS (tlsfiles.Client: a CA file, a
// client certificate for mutual TLS that a reconnect presents renewed,
// server_name, insecure_skip_verify with a warning at start); Config.Auth
// is user and password, a token, an nkey seed or a credentials (JWT) file,
// each read from its file at every connect (a rotated Secret is picked up)
// and never logged. A refused credential is retried with the same backoff
// as an unreachable server, not given up.
//
// # Performance
//
// BenchmarkCoreBurst and BenchmarkCoreSustained compare the tap (no-op
// emit) with a bare nats.go subscriber on the same in-process server, 920-byte
// records; BenchmarkJetStreamCatchUp compares reading a stored stream with
// the library's Messages iterator. They measure the tap, not the engine
// behind it.
package natstap
