// Package tap defines what every source of traffic hands to the engine: a
// Message (tap name, position, direction, capture time, bytes) and the
// Source contract, Run(ctx, emit). One sub-package per kind of source: ws
// (a transparent WebSocket proxy), nats, kafka and logdir.
//
// Concurrency: a Source's Run owns every goroutine it starts and waits for
// them before returning. emit may block (that is backpressure); a source
// that must never block traffic puts a bounded queue in front of it and
// counts what it drops in its Stats.
//
// tap imports only the standard library (sub-packages add their client
// library): it knows nothing of the protocols or of Prometheus.
package tap
