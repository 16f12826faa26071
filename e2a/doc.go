// Package e2a is e2atap's model of the E2A protocol: what a JSON message on
// an agent link is, and what it says.
//
// It sits between the taps and the validators. Two paths share it:
//
//   - the fast path reads only the fields the rules need into a reusable
//     Record (Scan, with ScanStd as its encoding/json twin) and tells the
//     kinds of message apart (Classify, IsResponseWireDict) without
//     allocating in the steady state; FindCredential and ScanSecrets spot
//     credentials for redaction;
//   - the slow path decodes a whole message into an Envelope or a Response
//     exactly as the reference implementation (jiuwenswarm) does, legacy
//     keys and Python coercions included (EnvelopeFromDict,
//     ResponseFromDict), writes it back in the reference's to_dict form, and
//     converts to and from ACP, A2A and the legacy AgentResponse shapes. It
//     is for the adapters, the tests and the decode command, not the hot
//     path.
//
// The constants are the reference's (protocol version, the 13 response
// kinds, statuses, ACP method lists, wire metadata keys) and the facts the
// validators rely on, such as KindFinalAllowed and KeepaliveSequence.
//
// Concurrency: every function is pure and safe for concurrent use; the
// adapters copy what they return and never modify their inputs. A Record is
// not safe for concurrent use: one goroutine owns it and reuses it message
// after message. Envelope and Response values are plain data: share them
// read-only or not at all.
//
// Secrets: Auth never prints its credentials (String, Format, LogValue mask
// them), and Envelope and Response log only routing ids. MarshalJSON and
// ToDict give the wire form, secrets included; redaction of that form is the
// exporters' job.
package e2a
