// Package demo is the simulation behind `e2atap demo` and the whole-system
// test: a simulated AgentServer and Gateway that talk E2A over a real
// WebSocket as the reference implementation does (connection.ack first,
// streaming chats with keepalives, unary calls, server push, user
// interrupts), the AgentServer's own JSON-lines log, an embedded NATS
// server with an agent publishing EventMesh stream frames, and exact
// bookkeeping of the faults injected into all of it.
//
// # Place in the pipeline
//
// None: the package produces the traffic that e2atap's real taps watch.
// cmd/e2atap wires it to a sidecar (the same one `e2atap run` assembles):
//
//	Gateway ──ws──► tap/ws proxy ──ws──► AgentServer ──► agentserver.jsonl ◄── tap/logdir
//	FramePublisher ──► NATS (agent.>, client.>) ◄── tap/nats
//
// # Ordering and bookkeeping
//
// A Conductor takes the scripted traffic from internal/gen (E2A) and from
// a FrameGen (frames) and sends it one message at a time: a request through
// the Gateway, a response through the AgentServer, a frame through the
// publisher. It waits until the peer at the other end of the WebSocket has
// received each message before it sends the next, so every observer (the
// proxy, the log) sees the one order the script has, and it checks that
// the received bytes are the sent bytes. A fault is booked in the Ledger
// only once the message that carries it was written to the wire or to the
// log, with the finding each observer must report: (rule, tap, stream).
// The Collector (a validate.Sink) gathers what e2atap reported; Match sets
// the two side by side.
//
// # Concurrency
//
// The Conductor is used from one goroutine. AgentServer, Gateway and
// FramePublisher own their connections' goroutines and stop them in Close.
// Ledger and Collector are safe for concurrent use.
package demo
