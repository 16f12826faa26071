// Package layers holds the test that enforces the import direction of
// DESIGN.md: redact (the one redaction policy) imports only the standard
// library; e2a imports redact; frame imports only the standard library;
// validate imports e2a, frame and redact; tap imports the standard library,
// redact and its client libraries; exporters import e2a, frame, validate
// and redact; cmd imports everything. It has no code of its own.
package layers
