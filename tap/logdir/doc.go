// Package logdir is the tap that tails directories of JSON-lines logs: the
// agent's own logs, or e2atap's redacted log replayed. Every complete line
// of every file matched by the configured globs becomes one tap.Message
// (FromLog, Dir none, Pos name:line with the byte offset of the line), in
// order per file; the engine decodes and validates it like any other
// record.
//
// # Finding files
//
// Files are known by identity, not by name: device and inode, plus a
// fingerprint (the first 1 KiB, or all of a shorter file). A periodic
// rescan of the globs is the truth about which files exist; filesystem
// events (fsnotify, on the directories) only wake the tailer sooner.
// Directories that do not exist yet are fine: their nearest existing parent
// is watched and the rescan picks them up.
//
// A scan that fails (EMFILE, EACCES, EIO on a directory or a stat; unlike
// filepath.Glob, which ignores such errors) is counted as
// tap.ErrScan, logged when it starts and when it ends, and retried; it
// never makes a file look deleted: no file becomes an orphan on a failed
// scan, no checkpoint is dropped, nothing is read again from 0.
//
//   - Rename rotation (name → name.1, new file at name): the renamed file is
//     still the same file and is finished from where it was; the new
//     file at the name starts at 0. A file the globs no longer match
//     (renamed away, deleted) is read to its end and forgotten once it has
//     been quiet for a rescan interval; an unfinished last line it leaves is
//     a loss (tap.DropUpstreamGap).
//   - Copy-truncate rotation (copy name → name.1, truncate name): a file
//     that shrinks below what was read, or whose first bytes change, was
//     truncated. The tailer then looks in the same directory for the copy: a
//     regular file, not tracked, whose first bytes are the truncated file's
//     old first bytes (up to 1 KiB) and that holds at least the committed
//     offset (files named after the truncated one first, then the most
//     recently modified; at most 32 are opened). The copy is finished from
//     the old offset (its lines carry the copy's name in Pos, with the old
//     line numbers), and only then is the file read again from 0. Nothing is
//     a loss unless the copy holds less than the tailer saw of the old
//     content, or ends in half a line; with no copy at all, everything not
//     yet read is lost: counted as tap.DropTruncated and reported as a loss
//     (below). After such a loss, a first line of the truncated file that
//     is no JSON is the rest of a line the truncation cut (a writer that
//     buffers its output writes it there) and is dropped with the loss,
//     not handed over. What the writer appended after the copy was made and before
//     the truncation is in neither file: that is copytruncate's own window
//     (logrotate documents it), invisible to any reader unless the tailer
//     happened to see it. A copy that is not in the same directory, or is
//     compressed at once, is not found. Globs may match the copies too: a
//     new file named after a tracked one (app.jsonl.1, app.jsonl-20260329,
//     app-1.jsonl) that starts with that file's whole fingerprint (1 KiB,
//     or all of a shorter file if at least 64 bytes) is its shadow: never
//     read on its own (it holds what the file holds), only as its copy once
//     the file is truncated, and checkpointed at its last line. One whose
//     content so far is a prefix of that (cp creates the copy empty) is
//     looked at again until it is one or the other. A copy of a file
//     shorter than 64 bytes, or named otherwise, is read as a new file.
//     A restart finds the copy too: a file whose inode holds other first
//     bytes than its checkpoint was truncated while the tailer was down,
//     and a file with the checkpoint's fingerprint is finished from the
//     checkpoint (while a copy is being finished, the checkpoint keeps the
//     old fingerprint and the offset in the copy, so a crash then resumes
//     the copy).
//   - A file that is created and rotated out of the globs (or deleted)
//     before the tailer first looks is never seen. A Create event wakes a
//     rescan even while the tailer is busy reading, so the window is a read
//     round (256 KiB per file) plus event latency, or RescanInterval when
//     events are unavailable; a blocking emit widens it.
//   - A file rewritten whole and renamed over the old one (an atomic save:
//     temp file + rename, as transcript and session stores write) is a new
//     file; when it holds the old one's whole content (compared byte for
//     byte through the old descriptor, up to 64 MiB) and more, it is read
//     on from where the old one was, not again from 0.
//   - New files that appear while running are read from the beginning.
//     StartAt "end" applies only to the files found at the very first start
//     (no positions file yet); it starts after the last complete line.
//
// # Open files
//
// At most MaxOpenFiles (default 256) descriptors are held, in the manner of
// the OpenTelemetry Collector's fileconsumer and its max_concurrent_files:
// when a file has data and no descriptor is free, the file that was read
// least recently among those read to their current end is closed (idle
// ones first, then ones still being written). A closed file keeps its
// identity, offsets and fingerprint; it is looked at by name (stat, no
// descriptor) when a write event names it, or every RescanInterval (every
// PollInterval when events are unavailable or were lost), and reopened
// when its size or mtime changes; on reopening, device and inode must match, and a change of its
// first bytes is a truncation as above. A partial last line is dropped on
// close and read again. A line buffer is sized to what is waiting (4 KiB to
// 64 KiB), so thousands of quiet files hold little memory. An open that
// fails with EMFILE or ENFILE is counted as tap.ErrScan and lowers the
// bound below what is open (giving it back a minute after the last
// failure), so the tailer makes room by itself; it is never taken as the
// file being gone. A file that goes away (renamed out of the globs,
// deleted) while closed cannot be finished: if it had unread bytes, or was
// closed while still being written, that is a loss (tap.DropUpstreamGap).
// Under the bound, files are closed only when they are forgotten.
//
// # Losses
//
// What the tailer could not read is reported in the stream of messages, in
// order, as a control message with no Data: Message.Lost (scope "", the
// whole tap, since a log file carries many streams; LossReason the Drop*
// reason, also counted in Stats.Drops) followed by Message.Reconnected (a
// join window: a stream whose first records were in what was lost may
// start mid-stream). The engine gaps every open stream of the tap: no
// sequence rule and no missing_final across the loss, and no finding for
// it. Losses are: a truncation without a copy (or with a short one), a file
// that went away while closed or with an unfinished last line, the start
// after a corrupt positions file, and NUL bytes where a line was due: a
// writer that crashed leaves its last writes as a run of NULs (an extended
// or preallocated tail whose data never reached the disk, cutting a record
// short) and appends after it on its restart. JSON holds no raw NUL, so a
// line's bytes up to its last NUL are dropped as that loss and the rest is
// the line (none if nothing is left; a run longer than MaxLineBytes takes
// the line after it along, with no e2a.decode for it); logged once per
// file. NULs up to the end of the file are not residue but a tail not
// written yet (a preallocated file its writer fills in place, its size
// unchanged): they are left unread, and read again at the next look,
// until data follows them.
//
// # Positions file faults
//
// A positions file that cannot be read (EACCES, EIO, a directory in its
// place) keeps the tap down (Stats.Up false) and retrying with backoff up
// to 30s, counted as tap.ErrPositions and logged when it starts and ends:
// starting without it would read files again from a guessed place.
//
// A corrupt one (empty, garbage, cut short, values no Save writes; the
// tailer itself never leaves one, see package positions) is logged with
// its path and what is wrong, counted once as tap.ErrPositions, and moved
// aside to <positions>.corrupt-<unix seconds>.<nanoseconds> (the newest
// three are kept). The tailer then starts in recovery: every file found by
// the first scan is read from its current end (after its last complete
// line), files that appear later from their start, and a loss
// (tap.DropUpstreamGap) and a rejoin are reported before any line. That is
// the one starting point that gives no false finding: reading from 0 would
// repeat lines already judged (e2a.after_final, duplicates), and whatever
// was appended while the positions were unknown is reported as lost, so no
// open stream is judged across it and streams first seen now may start
// mid-stream. Lines written while the tap was down are not read.
//
// A positions file that cannot be written (full disk, missing directory,
// read-only volume) is counted as tap.ErrPositions per failed save, logged
// when it starts and ends, and tried again at the next save; never fatal.
// The file is written only when a checkpoint changed (its Seen time alone
// changes at most hourly), so an idle tailer does not rewrite it.
//
// Run returns only when ctx ends or emit fails; everything else is retried.
//
// # Lines
//
// A line is emitted only once its newline has been read; a partial last
// line waits (and on shutdown it stays unread and uncommitted). A trailing
// \r is removed. A line longer than MaxLineBytes is never held whole: once
// the limit is passed, the rest is read through a fixed scratch buffer and
// dropped up to the newline, so memory stays near MaxLineBytes + 64 KiB per
// file whatever the line's length; and across files, lines longer than a
// 64 KiB chunk that are still being read hold at most 2 × MaxLineBytes
// (each reserves MaxLineBytes; a file that cannot reserve waits until
// another long line is handed over or dropped). It is counted as a message and as
// tap.DropOversize, and reported to Config.OnOversize at its position with
// its head (the first 64 KiB: a record's request_id and sequence come
// first), so that the engine gaps that line's stream only; no loss is
// reported for the tap, since a log file carries many streams. The
// default limit, 10 MiB, takes the largest message the reference lets
// through (8 MiB; 6 MiB send budget) with room for a log envelope. Line
// numbers count from the start of the file as tracked: from 1 after a
// truncation, from the starting point with StartAt "end".
//
// Message.Data is a sub-slice of a 64 KiB read chunk that the tailer never
// writes again (capacity clipped, so appending copies); a receiver that
// keeps one line keeps its chunk alive.
//
// # Delivery
//
// With Config.Budget, a line's bytes are charged (Acquire) before emit and
// Message.Charged says how many: while the budget is spent the tailer
// waits, reading slower; it never drops a line for it.
//
// A line's offset is committed (advanced in memory) only after emit
// returned nil for it; a line whose emit failed is emitted again. The
// positions file (package positions: atomic temp + fsync + rename) records
// the committed offsets every SaveInterval (if they changed) and when Run
// returns, whatever the reason. The durability order of DESIGN.md: a save
// takes the offsets of the lines emitted so far, then calls
// Config.BeforeSave (which returns once the engine has judged and the
// record log has flushed everything emitted before it), and only then
// writes those offsets; a BeforeSave error skips that save. Hence:
//
//   - Clean shutdown (ctx cancelled, or emit failed): exactly once. Every
//     line emit accepted is behind the saved offset; the line in flight,
//     the partial last line and everything after are read by the next run.
//   - Crash (SIGKILL, power loss): nothing is lost, and the lines repeated
//     by the next run are exactly those emit accepted after the last save,
//     at most SaveInterval's worth (plus what BeforeSave waited for), each
//     with the same Pos (name, line, offset) as the first time, so that a
//     consumer can recognise them (and, with BeforeSave, every one of them
//     is in the record log already).
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
// enough; more are dropped) and notes the names of written files in a
// mutex-guarded set of at most 4096 (past that, every closed file is
// looked at); one goroutine (the saver) calls BeforeSave and
// writes positions snapshots (taken on Run's goroutine, so consistent)
// through a channel of capacity 1 where a newer snapshot replaces a pending
// older one, so that a slow fsync or a BeforeSave waiting for the engine
// never stalls reading. The final save is synchronous, after the saver
// stopped (BeforeSave then gets up to 10s). emit is called from Run's
// goroutine only, one message at a time; a blocking emit is backpressure
// and delays reading, never loses lines. Config.OnOversize is called from
// the same goroutine. Stats is updated with atomics and may be read at any
// time. Run must not be called concurrently with itself (it returns
// ErrRunning).
package logdir
