// Package logdir is the tap that tails directories of JSON-lines logs: the
// agent's own logs, or e2atap's redacted log replayed. Every complete line
// of every file matched by the configured globs becomes one tap.Message
// (FromLog, Dir none, Pos name:line with the byte offset of the line), in
// order per file; the engine decodes and validates it like any other
// record.
//
// # Finding files
//
// Files are known by identity, not by name: device and inode while open,
// plus a fingerprint (the first 1 KiB, or all of a shorter file). A periodic
// rescan of the globs is the truth about which files exist; filesystem
// events (fsnotify, on the directories) only wake the tailer sooner.
// Directories that do not exist yet are fine: their nearest existing parent
// is watched and the rescan picks them up.
//
//   - Rename rotation (name → name.1, new file at name): the renamed file is
//     still the same open file and is finished from where it was; the new
//     file at the name starts at 0. A file the globs no longer match
//     (renamed away, deleted) is read to its end and closed once it has been
//     quiet for a rescan interval; an unfinished last line it leaves is
//     counted as tap.DropUpstreamGap.
//   - Copy-truncate rotation: a file that shrinks below what was read, or
//     whose first bytes change, was truncated; it is read again from 0, the
//     event is counted as tap.DropUpstreamGap, and the next message from it
//     carries Gap. What was appended after the tailer's last read and
//     before the truncation is lost: the lost lines are always a suffix of
//     the old content, never lines in the middle, never lines written after
//     the truncation. The tailer wakes on every write event, so the window
//     is short, but it is not zero. The copy is not tailed specially: point
//     the globs at the live name only (a glob that also matches the copy
//     reads the copy as a new file, i.e. twice). The only exception is a
//     restart: a copy whose full 1 KiB fingerprint matches a checkpoint
//     resumes from that checkpoint.
//   - A file that is created and rotated out of the globs (or deleted)
//     before the tailer first looks is never seen. A Create event wakes a
//     rescan even while the tailer is busy reading, so the window is a read
//     round (256 KiB per file) plus event latency, or RescanInterval when
//     events are unavailable; a blocking emit widens it.
//   - New files that appear while running are read from the beginning.
//     StartAt "end" applies only to the files found at the very first start
//     (no positions file yet); it starts after the last complete line.
//
// # Lines
//
// A line is emitted only once its newline has been read; a partial last
// line waits (and on shutdown it stays unread and uncommitted). A trailing
// \r is removed. A line longer than MaxLineBytes is never held whole: once
// the limit is passed, the rest is read through a fixed scratch buffer and
// dropped up to the newline, so memory stays near MaxLineBytes + 64 KiB per
// file whatever the line's length. It is counted as a message and as
// tap.DropOversize, and reported to Config.OnOversize (at its position);
// the next message carries no Gap, since a log file carries many streams
// and the one line is reported where it was. Line numbers count from the
// start of the file as tracked: from 1 after a truncation, from the
// starting point with StartAt "end".
//
// Message.Data is a sub-slice of a 64 KiB read chunk that the tailer never
// writes again (capacity clipped, so appending copies); a receiver that
// keeps one line keeps its chunk alive.
//
// # Delivery
//
// A line's offset is committed (advanced in memory) only after emit
// returned nil for it; a line whose emit failed is emitted again. The
// positions file (package positions: atomic temp + fsync + rename) records
// the committed offsets every SaveInterval and when Run returns, whatever
// the reason. Hence:
//
//   - Clean shutdown (ctx cancelled, or emit failed): exactly once. Every
//     line emit accepted is behind the saved offset; the line in flight,
//     the partial last line and everything after are read by the next run.
//   - Crash (SIGKILL, power loss): nothing is lost, and the lines repeated
//     by the next run are exactly those emit accepted after the last save,
//     at most SaveInterval's worth, each with the same Pos (name, line,
//     offset) as the first time, so that a consumer can recognise them.
//     Exactly once across a crash would need the engine's output and the
//     offsets committed together; the tap has no such ack to build on.
//   - A file renamed out of the globs and not finished when the tailer
//     stops is not found again by the next run (it is matched by glob):
//     use a glob that also matches rotated names (e.g. "*.jsonl*") to make
//     rename rotation lossless across restarts.
//
// # Concurrency
//
// Run owns everything and waits for every goroutine it starts: its own
// goroutine reads all files and calls emit; one goroutine turns fsnotify
// events into wakes through two channels of capacity 1 (a pending wake is
// enough; more are dropped); one goroutine writes positions snapshots (taken
// on Run's goroutine, so consistent) through a channel of capacity 1 where a
// newer snapshot replaces a pending older one, so that a slow fsync never
// stalls reading. The final save is synchronous, after the saver stopped. emit is called from Run's goroutine only, one line at a time;
// a blocking emit is backpressure and delays reading, never loses lines.
// Config.OnOversize is called from the same goroutine. Stats is updated with
// atomics and may be read at any time. Run must not be called concurrently
// with itself (it returns ErrRunning).
package logdir
