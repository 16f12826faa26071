// Package tlsfiles serves TLS from certificate files that are replaced
// while the process runs (cert-manager renewing a Kubernetes Secret, which
// the kubelet swaps in place): the files are read at start, checked again
// at most once a second on a handshake, and reloaded when they changed. A
// reload that fails (a key that does not match, a half-written file) is
// reported and the previous certificate is kept.
//
// Used by the ws tap's listener and by the sidecar's HTTP listener; Client
// makes the client side of the NATS and Kafka taps (a CA, an optional
// client certificate for mutual TLS reloaded the same way, so that a
// reconnect presents a renewed one). Secret reads a password or token
// file again at every use, for the same Secrets rotated in place.
// Concurrency: a Reloader is safe for concurrent handshakes, a Secret for
// concurrent reads.
package tlsfiles
