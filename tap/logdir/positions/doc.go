// Package positions is the checkpoint store of the logdir tap: which files
// it has read and how far. It is a small file of its own so that it can be
// replaced (or read by an operator) without touching the tailer.
//
// The file is JSON and is always replaced whole and atomically: the new
// content goes to a temporary file in the same directory, which is synced
// and then renamed over the old one, and the directory is synced so that the
// rename itself survives a power cut. A reader therefore sees either the old
// file or the new one, never a mix or a prefix.
//
// The file never holds log content: a file is recognised by device, inode
// and a SHA-256 of its first bytes, not by the bytes themselves (a log line
// may carry credentials, and no output of e2atap may leak one).
//
// Concurrency: Load and Save are plain functions with no shared state. Two
// processes must not Save to the same path (the last rename wins).
package positions
