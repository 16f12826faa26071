package logdir

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/tap/logdir/positions"
)

const (
	// fingerprintSize is how many leading bytes identify a file's content.
	fingerprintSize = 1024
	// readSize is the size of a read chunk. Emitted lines are sub-slices of
	// the chunk they were read into, so a chunk is allocated once per
	// readSize bytes, not once per line.
	readSize = 64 << 10
	// roundBudget is how many bytes one file may take in one round before
	// the next file gets its turn (and a due save is done).
	roundBudget = 256 << 10
	// minChunk is the smallest read chunk.
	minChunk = 4 << 10
)

// fileKey is a file's identity while it is open: device and inode (which
// cannot be reused while the tailer holds the file open). On platforms
// without inodes the path stands in.
type fileKey struct {
	dev, ino uint64
	path     string
}

// tracked is one file the tailer knows, open or not. Only Run's goroutine
// touches it.
type tracked struct {
	key  fileKey
	path string // last name it was seen under
	f    *os.File

	// fp is the file's first min(fingerprintSize, size) bytes, kept to
	// notice a truncation that was refilled past our offset between two
	// looks, and to know the file again when it is reopened. Only its hash
	// is ever written out.
	fp    []byte
	fpSum string // positions.Sum(fp), kept while len(fp) does not change
	fpLen int    // len(fp) when fpSum was computed

	// buf[r:w] has been read but not yet handled. Bytes before r belong to
	// lines already emitted (their receivers own them) and bytes are only
	// ever written after w, so nothing handed out is overwritten.
	buf  []byte
	r, w int
	// clean counts the bytes after r known to hold no newline, so that a
	// long line is not searched again from its start after every read.
	clean int
	// extra is what a long line in buf reserved (MaxLineBytes), counted
	// in Tailer.partial until the line is handed over or dropped.
	extra int64

	readOff   int64 // file offset of buf[w]
	commitOff int64 // offset of the first line not yet handled
	line      int64 // lines before commitOff

	nulSeen    bool   // NUL bytes were found (crashResidue), logged
	discarding bool   // inside an oversize line: bytes are read and dropped
	discardLen int64  // bytes of that line seen so far
	discardCR  bool   // the last of them is a CR: not content if an LF follows
	head       []byte // the oversize line's first bytes, for OnOversize
	// torn: the truncation the file is read again after lost content
	// (counted), which may have cut a line: a writer that buffers its
	// output writes the rest of that line at the start of the truncated
	// file (tornRest). False once the file's first line was handled.
	torn bool

	size       int64     // at the last stat
	mtime      time.Time // at the last stat
	lastGrowth time.Time
	lastRead   time.Time // when a read last found data: the least recent is closed first
	lastStat   time.Time // when it was last looked at by name while closed
	readTime   time.Time // when the bytes being handled were read
	seen       time.Time // Entry.Seen: refreshed coarsely, so that it alone never rewrites the file

	// copy is the copy of this file's old content, found at a
	// copy-truncate rotation: it is finished from the old offset before
	// the file itself is read again.
	copy *copyRead

	// looked is, while the file is closed, how far it was read when it was
	// closed: a stat that shows another size (or mtime) reopens it.
	looked int64
	// shadowOf: this file is a copy of that one (a copy-truncate copy the
	// globs match). It is not read on its own: what it holds is read
	// through the original, or as the original's copy once it is
	// truncated (then it is tracked on from the copy's end).
	shadowOf *tracked
	// tentative: a shadow whose content so far is only a prefix of the
	// fingerprint of the file it may copy (see shadowFor).
	tentative bool

	// closedActive: closed to make room while it was still being written.
	// If it then disappears, what it got meanwhile was not read: a loss.
	closedActive bool
	// gone: its name no longer holds it (seen while closed); only a scan
	// that finds it under another name brings it back.
	gone bool

	orphanSince time.Time // when the globs stopped matching it; zero while matched
}

func (tf *tracked) pos(off, line int64) tap.Position {
	return tap.Position{Kind: tap.PosLine, Name: tf.path, Offset: off, Line: line}
}

// restart forgets everything read: the file was truncated or rewritten.
func (tf *tracked) restart() {
	tf.dropBuffer()
	tf.readOff, tf.commitOff, tf.line = 0, 0, 0
	tf.fp, tf.fpSum = nil, ""
}

// dropBuffer forgets what was read after the last handled line; it is
// read again from commitOff.
func (tf *tracked) dropBuffer() {
	tf.buf, tf.r, tf.w, tf.clean = nil, 0, 0, 0
	tf.readOff = tf.commitOff
	tf.discarding, tf.discardLen, tf.head = false, 0, nil
}

// partial reports whether bytes of an unfinished line are held.
func (tf *tracked) partial() bool { return tf.w > tf.r || tf.discarding }

// sum is the hash of the fingerprint, as written to the positions file.
func (tf *tracked) sum() string {
	if tf.fpSum == "" || tf.fpLen != len(tf.fp) {
		tf.fpSum, tf.fpLen = positions.Sum(tf.fp), len(tf.fp)
	}
	return tf.fpSum
}

// readPrefix reads the first min(n, size) bytes of f into dst.
func readPrefix(f *os.File, dst []byte, n int) ([]byte, error) {
	dst = dst[:0]
	if cap(dst) < n {
		dst = make([]byte, 0, n)
	}
	k, err := f.ReadAt(dst[:n], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return dst[:0], err
	}
	return dst[:k], nil
}

// extendFingerprint grows fp while the file is shorter than
// fingerprintSize: a short file's identity grows with it.
func (tf *tracked) extendFingerprint() {
	want := min(int64(fingerprintSize), tf.readOff)
	have := int64(len(tf.fp))
	if have >= want {
		return
	}
	if cap(tf.fp) < fingerprintSize {
		nfp := make([]byte, len(tf.fp), fingerprintSize)
		copy(nfp, tf.fp)
		tf.fp = nfp
	}
	k, _ := tf.f.ReadAt(tf.fp[have:want], have)
	tf.fp = tf.fp[:have+int64(k)]
}

// utf8BOM is the byte order mark some tools write at the start of a file.
var utf8BOM = []byte("\xef\xbb\xbf")

// readFile handles up to budget bytes of tf: it reads, emits every complete
// line, and skips oversize ones. It returns how many bytes it consumed; the
// error is emit's (the line it failed on stays unhandled and uncommitted)
// or a read error.
func (t *Tailer) readFile(ctx context.Context, emit tap.EmitFunc, tf *tracked, budget int) (int, error) {
	n := 0
	defer tf.extendFingerprint()
	for n < budget {
		if tf.discarding {
			k, err := tf.f.ReadAt(t.scratch, tf.readOff)
			if k == 0 {
				return n, ignoreEOF(err)
			}
			i := bytes.IndexByte(t.scratch[:k], '\n')
			if room := OversizeHead - len(tf.head); room > 0 {
				end := k
				if i >= 0 {
					end = i
				}
				tf.head = append(tf.head, t.scratch[:min(end, room)]...)
			}
			if i >= 0 {
				// Consume through the newline only; what follows is read
				// again into the line buffer (cheaper than copying here).
				tf.readOff += int64(i + 1)
				length := tf.discardLen + int64(i)
				// The CR of a CR LF is not content (trimEOL), also when
				// it was read before the LF (the end of the last read).
				if i > 0 && t.scratch[i-1] == '\r' || i == 0 && tf.discardCR {
					length--
				}
				t.oversize(tf, length, tf.readOff, tf.head)
				tf.discarding, tf.discardLen, tf.head = false, 0, nil
				n += i + 1
				continue
			}
			tf.readOff += int64(k)
			tf.discardLen += int64(k)
			tf.discardCR = t.scratch[k-1] == '\r'
			n += k
			continue
		}
		if i := bytes.IndexByte(tf.buf[tf.r+tf.clean:tf.w], '\n'); i >= 0 {
			i += tf.clean
			tf.clean = 0
			start, next := tf.r, tf.r+i+1
			end := tf.r + i
			if end > start && tf.buf[end-1] == '\r' {
				end--
			}
			if tf.commitOff == 0 && bytes.HasPrefix(tf.buf[start:end], utf8BOM) {
				start += len(utf8BOM) // a byte order mark opens the file, not the line's JSON
			}
			if j := bytes.IndexByte(tf.buf[start:end], 0); j >= 0 {
				// A writer's crash residue: what precedes the last NUL is
				// lost, and the rest (a line appended after the restart)
				// is the record.
				start += bytes.LastIndexByte(tf.buf[start+j:end], 0) + j + 1
				t.crashResidue(tf)
				if err := t.flushPending(ctx, emit); err != nil {
					return n, err
				}
				if start == end {
					tf.r = next
					tf.commitOff += int64(i + 1)
					tf.line++
					t.dirty = true
					continue
				}
			}
			if tf.torn && t.tornRest(tf, tf.buf[start:end]) {
				tf.r = next
				tf.commitOff += int64(i + 1)
				tf.line++
				t.dirty = true
				continue
			}
			if end-start > t.cfg.MaxLineBytes {
				tf.r = next
				head := bytes.Clone(tf.buf[start:min(end, start+OversizeHead)])
				t.oversize(tf, int64(end-start), tf.commitOff+int64(i+1), head)
				continue
			}
			size := end - start
			if err := t.cfg.Budget.Acquire(ctx, size); err != nil {
				return n, errEmit{err}
			}
			msg := tap.Message{
				Tap:     t.cfg.Name,
				Pos:     tf.pos(tf.commitOff, tf.line+1),
				Dir:     tap.DirNone,
				Time:    tf.readTime,
				Data:    tf.buf[start:end:end],
				FromLog: true,
			}
			if t.cfg.Budget != nil {
				msg.Charged = size
			}
			if err := emit(ctx, msg); err != nil {
				t.cfg.Budget.Release(msg.Charged) // not handed over: nobody else will
				return n, errEmit{err}
			}
			// Only now is the line ours to forget: a failed emit leaves it
			// uncommitted, so it is emitted again (here or after a restart).
			tf.r = next
			tf.commitOff += int64(i + 1)
			tf.line++
			t.dirty = true
			if tf.extra > 0 && tf.w-tf.r < readSize {
				t.release(tf) // the long line is the receiver's now (and charged there)
			}
			t.stats.Count(tap.DirNone, size)
			continue
		}
		tf.clean = tf.w - tf.r
		if pendingContent(tf) > t.cfg.MaxLineBytes {
			// Over the limit with no newline yet: stop holding it, keeping
			// only its head for OnOversize.
			start := tf.r
			if tf.commitOff == 0 && bytes.HasPrefix(tf.buf[start:tf.w], utf8BOM) {
				start += len(utf8BOM)
			}
			tf.head = append(make([]byte, 0, OversizeHead), tf.buf[start:min(tf.w, start+OversizeHead)]...) // completed while discarding
			tf.discarding, tf.discardLen = true, int64(tf.w-start)
			tf.discardCR = tf.w > start && tf.buf[tf.w-1] == '\r'
			tf.buf, tf.r, tf.w, tf.clean = nil, 0, 0, 0 // the line is not held
			t.release(tf)
			continue
		}
		if n > 0 && time.Since(tf.readTime) > t.cfg.PollInterval {
			// emit blocked for a while since the last read: look at the
			// file again (checkFile) before reading on, so that content
			// written after a truncation meanwhile is not read from the
			// old offset.
			return n, nil
		}
		if tf.w == len(tf.buf) && !t.newBuffer(tf) {
			return n, nil // no room for a longer line now: later
		}
		k, err := tf.f.ReadAt(tf.buf[tf.w:], tf.readOff)
		if k > 0 && tf.buf[tf.w+k-1] == 0 {
			// What was read ends in NULs: a tail not written yet (a
			// preallocated file the writer fills in place) is left to be
			// read again once written; NULs that data follows are crash
			// residue, read as such.
			run := k - len(bytes.TrimRight(tf.buf[tf.w:tf.w+k], "\x00"))
			if err != nil || t.unwrittenTail(tf, tf.readOff+int64(k)) {
				k -= run
				if k == 0 {
					return n, ignoreEOF(err)
				}
				err = io.EOF // read no further this round
			}
		}
		if k == 0 {
			return n, ignoreEOF(err)
		}
		tf.readTime = time.Now()
		tf.lastRead = tf.readTime
		tf.w += k
		tf.readOff += int64(k)
		n += k
	}
	return n, nil
}

// newBuffer moves the unfinished line into a fresh chunk. The old chunk is
// left to the receivers of the lines emitted from it. A chunk is sized to
// what the last stat said is waiting (at least minChunk, at most readSize,
// unless a long line needs more): with thousands of files that each get a
// line now and then, a full chunk per file would hold 64 KiB for every
// line the engine still has.
//
// Long unfinished lines are bounded across files: a buffer beyond
// pendingContent is how much of the partial line in tf's buffer is
// content: not a byte order mark that opens the file, nor a CR that may
// be its line's end (its LF not read yet). A line of MaxLineBytes that
// ends with CR LF, read up to its CR, is not over the limit.
func pendingContent(tf *tracked) int {
	start := tf.r
	if tf.commitOff == 0 && bytes.HasPrefix(tf.buf[start:tf.w], utf8BOM) {
		start += len(utf8BOM)
	}
	n := tf.w - start
	if n > 0 && tf.buf[tf.w-1] == '\r' {
		n--
	}
	return n
}

// readSize reserves MaxLineBytes of partialLimit (2 × MaxLineBytes), and a
// file that cannot reserve waits (false) until a long line of another file
// is handed over or dropped, so that many files each in the middle of a
// long line cannot take all memory. One file alone always may.
func (t *Tailer) newBuffer(tf *tracked) bool {
	pending := tf.w - tf.r
	size := readSize
	if want := tf.size - tf.readOff + int64(pending); want < readSize {
		size = minChunk
		for int64(size) < want {
			size *= 2
		}
	}
	size = max(size, 2*pending)
	size = min(size, t.cfg.MaxLineBytes+readSize)
	if size > readSize && tf.extra == 0 {
		// A long line reserves all it may need at once, so that a line
		// that got room can always finish (two lines growing by turns
		// could otherwise each wait for the other).
		need := int64(t.cfg.MaxLineBytes)
		if t.partial > 0 && t.partial+need > t.partialLimit {
			return false
		}
		t.partial += need
		tf.extra = need
		t.maxPartial = max(t.maxPartial, t.partial)
	}
	nb := make([]byte, size)
	copy(nb, tf.buf[tf.r:tf.w])
	tf.buf, tf.r, tf.w = nb, 0, pending
	if size > t.maxBuf {
		t.maxBuf = size
	}
	return true
}

// tailCheck is how many of a file's last bytes unwrittenTail reads.
const tailCheck = 4 << 10

// unwrittenTail reports whether tf holds only NULs from off (where a run
// of NULs read so far ends) to its end: a tail preallocated (fallocate,
// ftruncate) and not written yet. A writer that fills such a file in place
// does so front to back, so its last bytes are NUL until it is full; a
// writer that crashed and appended on its restart leaves data at the end,
// after the NULs. Only the last tailCheck bytes are read.
func (t *Tailer) unwrittenTail(tf *tracked, off int64) bool {
	fi, err := tf.f.Stat()
	if err != nil {
		return false
	}
	size := fi.Size()
	if size <= off {
		return true
	}
	from := max(off, size-tailCheck)
	b := t.scratch[:min(int64(len(t.scratch)), size-from)]
	k, err := tf.f.ReadAt(b, from)
	if k < len(b) && err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	return len(bytes.TrimRight(b[:k], "\x00")) == 0
}

// release gives back what tf's buffer held beyond readSize (its long line
// was handed over or dropped).
func (t *Tailer) release(tf *tracked) {
	t.partial -= tf.extra
	tf.extra = 0
}

// crashResidue says that tf holds NUL bytes where a line was due: a
// writer that crashed left its last writes as a run of NULs (a preallocated
// or extended tail whose data never reached the disk), and went on after
// them on its restart. JSON holds no raw NUL, so they are never part of a
// record: what they replaced is lost (tap.DropUpstreamGap, before the line
// after them), logged once per file.
func (t *Tailer) crashResidue(tf *tracked) {
	if !tf.nulSeen {
		tf.nulSeen = true
		t.log.Warn("NUL bytes in a log file: its writer crashed and lost its last writes; the streams open are not judged across them (logged once per file)",
			"path", tf.path, "offset", tf.commitOff)
	}
	t.lose(tap.DropUpstreamGap)
}

// oversize records a skipped line that started at tf.commitOff and ends
// (newline included) just before next; head is its first bytes.
func (t *Tailer) oversize(tf *tracked, length, next int64, head []byte) {
	if bytes.IndexByte(head, 0) >= 0 {
		// A run of NULs longer than a line (crashResidue): the record
		// after it, if any, is lost with it; none is reported.
		tf.commitOff = next
		tf.line++
		t.dirty = true
		t.stats.Count(tap.DirNone, int(length))
		t.crashResidue(tf)
		return
	}
	pos := tf.pos(tf.commitOff, tf.line+1)
	tf.commitOff = next
	tf.line++
	// No loss for the whole tap: the skipped line is reported where it is
	// (OnOversize, with its head), so that only its own stream is gapped;
	// a log file carries many streams.
	t.dirty = true
	// The line was seen, then dropped: it counts as a message, as in the
	// other taps, so that drops per message means the same everywhere.
	t.stats.Count(tap.DirNone, int(length))
	t.stats.Drop(tap.DropOversize)
	if t.cfg.OnOversize != nil {
		t.cfg.OnOversize(pos, length, head)
	}
}

// errEmit marks an error that came from emit, not from the file.
type errEmit struct{ err error }

func (e errEmit) Error() string { return e.err.Error() }
func (e errEmit) Unwrap() error { return e.err }

func ignoreEOF(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// lastLineEnd returns the offset just after the last newline before size,
// or 0 if there is none: where to start so that no half line is read.
func lastLineEnd(f *os.File, size int64, buf []byte) int64 {
	end := size
	for end > 0 {
		start := max(0, end-int64(len(buf)))
		k, err := f.ReadAt(buf[:end-start], start)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0
		}
		if i := bytes.LastIndexByte(buf[:k], '\n'); i >= 0 {
			return start + int64(i) + 1
		}
		end = start
	}
	return 0
}

// tornRest reports whether line, the first line of a file read again
// after a truncation that lost content (tf.torn; the loss is counted), is
// the rest of a line the truncation cut: a buffering writer (stdio, a
// logging library that flushes in blocks) writes it at the start of the
// truncated file. It is no JSON of its own (the end of a JSON object never
// is), and is dropped with the loss instead of being judged as an
// e2a.decode that no agent wrote. It is not joined to the part before:
// bytes written between the copy and the truncation are in neither file,
// and a join across them may be valid JSON with other values. Only the
// file's first line is looked at, and only once.
func (t *Tailer) tornRest(tf *tracked, line []byte) bool {
	tf.torn = false
	if tf.commitOff != 0 || json.Valid(line) {
		return false
	}
	t.log.Info("the first line of a truncated file is the rest of a line the truncation cut; dropped with it",
		"path", tf.path, "bytes", len(line))
	return true
}
