// Command e2atap watches E2A and EventMesh traffic and checks it against
// the protocol's invariants: live as a sidecar (run), or offline on
// captures and logs (validate), with the same verdicts.
//
// Commands: run (the sidecar), validate and decode (offline), gen
// (synthetic traffic), demo (everything on one machine). This package only
// wires: flags, configuration, signals, and the assembly of taps, engine
// and exporters; the logic lives in the packages it imports.
package main
