// Package traces is the OpenTelemetry sink of e2atap: one span per stream,
// exported over OTLP (gRPC or HTTP/protobuf) as configured by the standard
// OTEL_* environment variables (FromEnv).
//
// Place in the pipeline: taps → decode → validate → sinks. A *Tracer is one
// validate.Sink beside exporters/metrics and exporters/jsonlog. The engine
// reports records, findings and stream starts and ends; the Tracer keeps a
// small bounded state per stream (method, session, channel, W3C parent,
// request time, the first findings) and builds the whole span at StreamEnd
// with explicit start and end timestamps: no span is ever held open, so an
// abandoned stream costs nothing in the SDK.
//
// Sampling is decided at the end of the stream, when the verdict is known:
// streams that failed, ended without success, lost messages or have
// findings are always exported; clean successful streams are kept at
// Config.Ratio, decided from the trace id (so that every replica and an
// upstream ratio sampler agree). The SDK itself samples everything.
//
// Names follow the OpenTelemetry semantic conventions where they fit: a
// span that invokes an agent is "invoke_agent {gen_ai.agent.name}" with
// gen_ai.operation.name invoke_agent, gen_ai.conversation.id,
// gen_ai.request.stream, gen_ai.response.time_to_first_chunk, error.type,
// network.protocol.name and server.address; an A2A projection adds a2a.*;
// E2A ids without a convention stay under e2a.*, and e2atap's own verdicts
// and counts are e2atap.* (semconv.go; docs/traces.md is the mapping). A
// ws tap relays the call, so its spans are CLIENT; the other taps watch
// copies and make INTERNAL spans.
//
// Span attributes carry only ids, names, codes, counts, rule ids and the
// validator's finding messages: never record content. Every value taken
// from a record (ids, session and context, channel, agent, model, method,
// error codes, finding messages) passes Config.Redactor, the process's one
// redaction policy, at StreamEnd: a credential or personal datum in an id
// shows as the same fingerprint as in the record log and the findings log.
// A value used as a name or a low-cardinality value (span name, method,
// error.type) is used only if the policy leaves it unchanged. Without a
// Redactor record values are exported as "******".
//
// The fields the engine's scanner does not keep (agent_id, agent_ref,
// source_agent_id, task_id, context_id, provenance) are read from the
// first 16 KiB of each request (reqscan.go): once per stream, never on
// the responses' path.
//
// Concurrency: every method of *Tracer is safe for concurrent use. The
// per-stream state is sharded by stream key, each shard behind its own
// mutex, and bounded (Config.MaxStreams; the stalest entries are evicted
// and counted). Export runs in the SDK's batch processor goroutine; a span
// that finds Config.QueueSize spans waiting for export is dropped and
// counted (Stats.Dropped) rather than block the engine. Shutdown flushes
// the queue and waits for it as long as its context allows; what is not
// exported by then is counted as failed. A disabled Tracer (no endpoint configured)
// does nothing and keeps no state.
package traces
