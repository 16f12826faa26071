// Package gen makes synthetic E2A traffic shaped like the reference
// implementation's (jiuwenswarm): request envelopes, streaming chats with
// keepalives, unary calls, server push, user interrupts, and a labelled
// rate of injected faults. The demo, the whole-system test and `e2atap gen`
// use it. A Generator is deterministic for a seed and not safe for
// concurrent use.
package gen
