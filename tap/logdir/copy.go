package logdir

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/tap/logdir/positions"
)

// maxCopyCandidates bounds how many files of a directory are opened to
// look for the copy of a truncated file (the most recently modified first).
const maxCopyCandidates = 32

// copyRead is the copy of a truncated file's old content, being finished
// from where the file was when it was truncated.
type copyRead struct {
	tf *tracked // the copy, read like any file; its Pos name is the copy's
	// oldFp and oldSum are the truncated file's fingerprint before the
	// truncation: its checkpoint keeps them until the copy is finished, so
	// that a restart finds the copy again (truncatedWhileDown).
	oldFp  []byte
	oldSum string
	oldLen int
	// seen is how much of the old content the tailer knew of (its size at
	// the last stat before the truncation; 0 if unknown): a copy shorter
	// than that does not hold everything.
	seen int64
}

// prefixMatch says whether the first bytes of a candidate are the old
// content's. n is how many bytes are compared.
type prefixMatch struct {
	n   int
	raw []byte // the bytes themselves, when known
	sum string // else their positions.Sum
}

func (m prefixMatch) matches(b []byte) bool {
	if len(b) < m.n {
		return false
	}
	if m.raw != nil {
		return bytes.Equal(b[:m.n], m.raw[:m.n])
	}
	return positions.Sum(b[:m.n]) == m.sum
}

// findCopy looks in the directory of path for a regular file, other than
// the truncated one (self) and the files the tailer tracks (except its
// shadows: copies the globs matched), whose first bytes match and that
// holds at least from bytes: the copy made by a copy-truncate rotation. It
// returns the copy opened, or nil.
func (t *Tailer) findCopy(path string, self *tracked, m prefixMatch, from int64) (*os.File, string, os.FileInfo) {
	if m.n <= 0 {
		return nil, "", nil // nothing to recognise it by
	}
	dir, base := filepath.Dir(path), filepath.Base(path)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.warnOnce(dir+"\x00copy", "cannot look for the copy of a truncated file", "dir", dir, "err", err)
		return nil, "", nil
	}
	type cand struct {
		path string
		fi   fs.FileInfo
		near bool // named after the file (app.jsonl.1, app-2024.jsonl)
	}
	var cands []cand
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		fi, err := e.Info()
		if err != nil || fi.Size() < from || fi.Size() < int64(m.n) {
			continue
		}
		key := keyOf(fi, p)
		if tr := t.byKey[key]; key == self.key || (tr != nil && tr.shadowOf != self) {
			continue
		}
		near := strings.HasPrefix(e.Name(), stem) || t.byKey[key] != nil
		if !near && m.n < fingerprintSize {
			continue // a short prefix is too weak to take a file named otherwise for the copy
		}
		cands = append(cands, cand{p, fi, near})
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].near != cands[j].near {
			return cands[i].near
		}
		return cands[i].fi.ModTime().After(cands[j].fi.ModTime())
	})
	buf := t.fpCheck
	for i, c := range cands {
		if i == maxCopyCandidates {
			break
		}
		f, err := os.Open(c.path)
		if err != nil {
			continue
		}
		prefix, err := readPrefix(f, buf, m.n)
		if err == nil && m.matches(prefix) {
			return f, c.path, c.fi
		}
		f.Close()
	}
	return nil, "", nil
}

// startCopy switches tf, found truncated, to finishing its copy: the old
// content from tf's committed offset. It returns false when there is no
// copy (the caller counts the loss).
func (t *Tailer) startCopy(tf *tracked, m prefixMatch, from, line, seen int64) bool {
	f, path, fi := t.findCopy(tf.path, tf, m, from)
	if f == nil {
		return false
	}
	ctf := &tracked{
		key: keyOf(fi, path), path: path, f: f,
		size: fi.Size(), mtime: fi.ModTime(),
		readOff: from, commitOff: from, line: line,
		fp: bytes.Clone(m.raw), // not extended: the copy is never checkpointed
	}
	cr := &copyRead{tf: ctf, seen: seen, oldSum: m.sum, oldLen: m.n}
	if m.raw != nil {
		cr.oldFp = bytes.Clone(m.raw[:m.n])
		cr.oldSum = positions.Sum(cr.oldFp)
	}
	ctf.fpLen = len(ctf.fp) + 1 // never recomputed (sum is not used for a copy)
	t.nOpen++
	tf.copy = cr
	if sh := t.byKey[ctf.key]; sh != nil {
		sh.shadowOf = tf // a copy the globs match: it is read as the copy, never on its own
	}
	t.log.Info("file truncated (copy-truncate rotation); finishing its copy first",
		"path", tf.path, "copy", path, "offset", from, "copy_size", fi.Size())
	return true
}

// readCopy reads tf's copy; once it is read to its end it is closed, and
// what it did not hold is counted as a loss. It reports whether tf may be
// read now (the copy is finished).
func (t *Tailer) readCopy(ctx context.Context, emit tap.EmitFunc, tf *tracked) (int, bool, error) {
	cr := tf.copy
	ctf := cr.tf
	n, err := t.readFile(ctx, emit, ctf, roundBudget)
	if err != nil {
		if e := (errEmit{}); errors.As(err, &e) {
			return n, false, err
		}
		t.warnOnce(ctf.path+"\x00read", "read of the copy failed; giving it up", "path", ctf.path, "err", err)
	} else if n > 0 {
		return n, false, nil
	}
	// Read to its end (a copy is not written to any more), or unreadable.
	t.release(ctf)
	ctf.f.Close()
	t.nOpen--
	tf.copy = nil
	t.dirty = true
	t.copied(ctf)
	if ctf.partial() || err != nil || (cr.seen > 0 && ctf.commitOff < cr.seen) {
		t.log.Info("copy of a truncated file holds less than the tailer saw; the rest is lost",
			"path", tf.path, "copy", ctf.path, "copy_end", ctf.commitOff, "seen", cr.seen)
		t.lose(tap.DropTruncated)
		tf.torn = true
	} else {
		t.log.Debug("copy of a truncated file finished; nothing lost", "path", tf.path, "copy", ctf.path, "offset", ctf.commitOff)
	}
	return n, true, nil
}

// maxCopiesKept bounds the copies remembered after they were finished.
const maxCopiesKept = 64

// copied remembers a finished copy: if the globs match it, it is tracked
// from where the copy was finished, not read again from 0.
func (t *Tailer) copied(ctf *tracked) {
	done := copyDone{off: ctf.commitOff, line: ctf.line}
	if sh := t.byKey[ctf.key]; sh != nil && sh.shadowOf != nil {
		sh.shadowOf, sh.tentative = nil, false
		t.release(sh)
		sh.dropBuffer()
		sh.readOff, sh.commitOff, sh.line = done.off, done.off, done.line
		sh.looked = -1 // looked at again by checkFile
		return
	}
	if len(t.copies) >= maxCopiesKept {
		clear(t.copies)
	}
	t.copies[ctf.key] = done
}

// copyDone is where a finished copy ended.
type copyDone struct{ off, line int64 }

// shadowFor decides how a file the globs matched for the first time
// relates to a copy-truncate rotation: the copy being finished, a copy
// already finished, or a copy of a tracked file: named after it and
// starting with its whole fingerprint (1 KiB, or all of a file shorter
// than that but at least minShortPrefix long). Such a copy holds what that
// file holds, and is read only as its copy if it is truncated. A file named
// after it whose content so far is a prefix of that fingerprint may be a
// copy still being written (cp creates it empty): it is a tentative shadow,
// looked at again until it either holds the whole fingerprint or differs.
func (t *Tailer) shadowFor(path string, key fileKey, fp []byte) (of *tracked, tentative bool, done copyDone, isDone bool) {
	if d, ok := t.copies[key]; ok {
		delete(t.copies, key)
		return nil, false, d, true
	}
	for _, o := range t.files {
		if cr := o.copy; cr != nil && cr.tf.key == key {
			return o, false, copyDone{}, false
		}
	}
	for _, o := range t.files {
		if o.shadowOf != nil || !namedAfter(path, o.path) {
			continue
		}
		if c := copyOf(fp, o.fp); c != notCopy {
			return o, c == maybeCopy, copyDone{}, false
		}
	}
	return nil, false, copyDone{}, false
}

type copyMatch uint8

const (
	notCopy copyMatch = iota
	isCopy
	maybeCopy // a prefix so far
)

// copyOf compares the first bytes of a file with the fingerprint of the
// file it may be a copy of.
func copyOf(fp, of []byte) copyMatch {
	n := len(of)
	if n < fingerprintSize && n < minShortPrefix {
		return notCopy // too short to tell a copy from a file that starts alike
	}
	if len(fp) >= n {
		if bytes.Equal(fp[:n], of) {
			return isCopy
		}
		return notCopy
	}
	if bytes.Equal(fp, of[:len(fp)]) {
		return maybeCopy
	}
	return notCopy
}

// lookShadow keeps a shadow's checkpoint at its last complete line (what
// it holds was read through the file it copies, so a restart must not read
// it again), and decides a tentative shadow: a copy once it holds the whole
// fingerprint, a file of its own (read from 0) once it differs.
func (t *Tailer) lookShadow(tf *tracked) {
	fi, err := os.Stat(tf.path)
	if err != nil || keyOf(fi, tf.path) != tf.key || (fi.Size() == tf.size && fi.ModTime().Equal(tf.mtime)) {
		return
	}
	f, fi, ok := t.openFile(tf.path, nil, false)
	if !ok {
		return
	}
	defer func() {
		f.Close()
		t.nOpen--
	}()
	if keyOf(fi, tf.path) != tf.key {
		return
	}
	size := fi.Size()
	fp, err := readPrefix(f, nil, int(min(size, fingerprintSize)))
	if err != nil {
		return
	}
	tf.size, tf.mtime = size, fi.ModTime()
	if tf.tentative {
		switch copyOf(fp, tf.shadowOf.fp) {
		case isCopy:
			tf.tentative = false
		case notCopy:
			t.log.Debug("file named like a copy is not one; reading it", "path", tf.path)
			tf.shadowOf, tf.tentative = nil, false
			tf.fp, tf.fpSum = fp, ""
			tf.readOff, tf.commitOff, tf.line, tf.looked = 0, 0, 0, -1
			t.dirty = true
			return
		}
	}
	tf.fp, tf.fpSum = fp, ""
	if off := lastLineEnd(f, size, t.scratch); off != tf.commitOff {
		tf.readOff, tf.commitOff = off, off
		t.dirty = true
	}
}

// minShortPrefix is the shortest fingerprint of a small file (under 1 KiB)
// by which a file named after it is taken for its copy.
const minShortPrefix = 64

// namedAfter reports whether path looks like a rotated copy of orig: in
// the same directory, and named after it (app.jsonl.1, app.jsonl-20260329,
// app-20260329.jsonl). Two files that merely start alike (the same capture
// written twice) are not each other's copies.
func namedAfter(path, orig string) bool {
	if path == orig || filepath.Dir(path) != filepath.Dir(orig) {
		return false
	}
	base := filepath.Base(orig)
	return strings.HasPrefix(filepath.Base(path), strings.TrimSuffix(base, filepath.Ext(base)))
}
