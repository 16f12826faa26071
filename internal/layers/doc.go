// Package layers holds the test that enforces the import direction of
// DESIGN.md: e2a and frame import only the standard library; validate
// imports e2a and frame; tap imports the standard library and its client
// libraries; exporters import e2a, frame and validate; cmd imports
// everything. It has no code of its own.
package layers
