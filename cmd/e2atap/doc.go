// Command e2atap watches E2A and EventMesh traffic and checks it against
// the protocol's invariants: live as a sidecar (run), or offline on
// captures and logs (validate), with the same verdicts.
//
// Commands: run (the sidecar), validate and decode (offline), gen
// (synthetic traffic), demo (everything on one machine). This package only
// wires: flags, configuration, signals, and the assembly of taps, engine
// and exporters; the logic lives in the packages it imports.
//
// Concurrency of run: Run owns every goroutine it starts. Each tap runs
// under its own supervisor (supervise.go), so that one tap's failure stops
// nothing else; the engine runs until the taps have stopped and drains;
// the HTTP server (probes.go: /readyz, /healthz; /metrics) stops last.
// Memory held for the engine is bounded by one byte budget (memory.go).
package main
