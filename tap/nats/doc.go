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
//     an application's consumer, so their state is untouched. The tap pulls
//     with explicit fetches of Config.FetchBatch messages, the next one sent
//     as soon as the current one has all its messages (the server spreads
//     messages round-robin over a consumer's waiting requests, so two open
//     at once would interleave). After any failure (missed heartbeats,
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
// # Positions and losses
//
// Pos.Kind is tap.PosSubject with Name = the subject. For JetStream, Offset
// is the stream sequence and Line the consumer sequence (of the tap's current
// consumer: it restarts at 1 when the consumer is recreated).
//
// Losses are the tap's, not the protocol's: they are counted in Stats.Drops
// and the next message emitted carries Gap = true.
//
//   - tap.DropQueueFull: the bounded queue between the NATS callback and emit
//     was full, or the client reported a slow consumer (its per-subscription
//     pending limits, Config.PendingMsgs/PendingBytes, were exceeded).
//   - tap.DropUpstreamGap: a jump in the JetStream consumer sequence
//     (messages the server delivered to the tap that never arrived), or a
//     resume point older than the stream's first message (messages removed by
//     the stream's limits before the tap read them: exact for an unfiltered
//     consumer; for a filtered one the server cannot say how many of the
//     removed messages matched, and the tap counts one).
//   - tap.DropOversize: a payload over Config.MaxMessageBytes.
//
// # Concurrency and flow control
//
// Run owns everything it starts (the connection, its subscriptions, one
// goroutine per JetStream stream) and waits for all of it before it returns.
// emit is called from Run's goroutine only, one message at a time, so
// messages of one subscription reach emit in the order NATS delivered them.
//
//   - Core NATS has no backpressure: the subscription callback never blocks.
//     It puts the message into a queue of Config.QueueSize messages (default
//     8192); when the queue is full the message is dropped and counted
//     (DropQueueFull). The NATS client buffers in front of that, up to
//     PendingMsgs/PendingBytes per subscription, and what it drops is counted
//     too.
//   - JetStream is lossless under backpressure: a stream goroutine blocks on
//     a 64-message queue, so a slow emit only slows the pull.
//   - Control messages (Reconnected) travel through their own 16-message
//     queue; when it is full a Reconnected is coalesced with the ones queued.
//
// Stats.Up follows the connection (connect, disconnect, reconnect handlers
// of the NATS client, which reconnects by itself with capped exponential
// backoff). Every connect and reconnect emits a control Message with
// Reconnected = true, so that the engine opens its join window. Stats.Lag is
// the sum over JetStream streams of the messages not yet delivered to the
// tap (NumPending); core NATS has no lag.
package natstap
