package positions

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Version is the format version written into the file.
const Version = 1

// ErrCorrupt is returned (wrapped) by Load when the file exists but cannot
// be understood: empty, cut short, garbage, another version, or values no
// Save writes. Since Save never leaves a partial file, someone or something
// else wrote it (a full disk under another writer, a restore, a hand edit).
// The caller decides what to do; the logdir tap moves it aside
// (MoveAside) and starts from a documented position.
var ErrCorrupt = errors.New("positions file is corrupt")

// maxFingerprintLen bounds Entry.FingerprintLen when reading: larger values
// were never written by Save.
const maxFingerprintLen = 1 << 20

// Entry is one file's checkpoint.
type Entry struct {
	// Path is the name the file had when the checkpoint was taken (for
	// operators; identity is Dev/Inode/Fingerprint).
	Path  string `json:"path"`
	Dev   uint64 `json:"dev"`
	Inode uint64 `json:"inode"`
	// FingerprintLen is how many leading bytes Fingerprint covers (at most
	// the tailer's fingerprint size; less while the file was shorter).
	FingerprintLen int `json:"fingerprint_len"`
	// Fingerprint is the hex SHA-256 of the first FingerprintLen bytes.
	Fingerprint string `json:"fingerprint"`
	// Offset is the byte offset of the first line not yet handled: every
	// line before it was emitted (or reported as oversize).
	Offset int64 `json:"offset"`
	// Line is the number of lines before Offset (as tracked by the tailer).
	Line int64 `json:"line"`
	// Seen is when the file was last seen; entries for files that stay
	// missing are forgotten after a while.
	Seen time.Time `json:"seen"`
}

// Sum is the fingerprint of b, as stored in Entry.Fingerprint.
func Sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

type document struct {
	Version int     `json:"version"`
	Files   []Entry `json:"files"`
}

// Load reads the checkpoints at path. A missing file is not an error: it
// returns nil entries and exists == false.
func Load(path string) (entries []Entry, exists bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read positions: %w", err)
	}
	entries, err = Decode(b)
	if err != nil {
		return nil, true, fmt.Errorf("%s: %w", path, err)
	}
	return entries, true, nil
}

// Decode parses the content of a positions file.
func Decode(b []byte) ([]Entry, error) {
	var doc document
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data", ErrCorrupt)
	}
	if doc.Version != Version {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrCorrupt, doc.Version, Version)
	}
	for i, e := range doc.Files {
		if err := e.check(); err != nil {
			return nil, fmt.Errorf("%w: entry %d (%s): %v", ErrCorrupt, i, e.Path, err)
		}
	}
	return doc.Files, nil
}

// check rejects values that Save never writes: resuming from them would
// read from a made-up place.
func (e Entry) check() error {
	switch {
	case e.Offset < 0 || e.Line < 0:
		return fmt.Errorf("negative offset %d or line %d", e.Offset, e.Line)
	case e.Line > e.Offset:
		return fmt.Errorf("%d lines in %d bytes", e.Line, e.Offset)
	case e.FingerprintLen < 0 || e.FingerprintLen > maxFingerprintLen:
		return fmt.Errorf("fingerprint length %d", e.FingerprintLen)
	case len(e.Fingerprint) != 2*sha256.Size:
		return fmt.Errorf("fingerprint is not a hex SHA-256")
	}
	if _, err := hex.DecodeString(e.Fingerprint); err != nil {
		return fmt.Errorf("fingerprint is not a hex SHA-256")
	}
	return nil
}

// corruptSuffix is what MoveAside appends to the name, before the time.
const corruptSuffix = ".corrupt-"

// MoveAside renames a corrupt positions file to
// <path>.corrupt-<unix seconds>.<nanoseconds> (for an operator to look at) and removes
// the oldest such files beyond keep. It returns the new name. The rename is
// in the same directory, so it is atomic: the next Load finds no file.
func MoveAside(path string, now time.Time, keep int) (string, error) {
	// Seconds and nanoseconds, fixed width: names sort by time. A new name
	// sorts after every older one even if the clock did not move (or went
	// back), so that the oldest are the ones removed.
	old, _ := filepath.Glob(escapeGlob(path) + corruptSuffix + "*")
	newest := ""
	for _, p := range old {
		newest = max(newest, p)
	}
	var sec, nsec int64
	if _, err := fmt.Sscanf(strings.TrimPrefix(newest, path+corruptSuffix), "%d.%d", &sec, &nsec); err == nil {
		if last := time.Unix(sec, nsec); !now.After(last) {
			now = last.Add(time.Nanosecond)
		}
	}
	for ; ; now = now.Add(time.Nanosecond) {
		aside := fmt.Sprintf("%s%s%d.%09d", path, corruptSuffix, now.Unix(), now.Nanosecond())
		if _, err := os.Lstat(aside); errors.Is(err, fs.ErrNotExist) {
			if err := moveAside(path, aside, keep); err != nil {
				return "", err
			}
			return aside, nil
		}
	}
}

func moveAside(path, aside string, keep int) error {
	if err := os.Rename(path, aside); err != nil {
		return fmt.Errorf("move corrupt positions aside: %w", err)
	}
	old, _ := filepath.Glob(escapeGlob(path) + corruptSuffix + "*")
	if len(old) > keep {
		// Names sort by the time they were moved aside (unix seconds have
		// 10 digits until 2286).
		sort.Strings(old)
		for _, p := range old[:len(old)-keep] {
			if p != aside {
				_ = os.Remove(p)
			}
		}
	}
	return nil
}

// escapeGlob quotes the glob characters of a literal path.
func escapeGlob(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Encode renders entries as the content of a positions file.
func Encode(entries []Entry) ([]byte, error) {
	if entries == nil {
		entries = []Entry{}
	}
	b, err := json.MarshalIndent(document{Version: Version, Files: entries}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Save replaces the file at path with entries, atomically (see the package
// documentation).
func Save(path string, entries []Entry) error {
	b, err := Encode(entries)
	if err != nil {
		return fmt.Errorf("encode positions: %w", err)
	}
	return writeAtomic(path, b)
}

func writeAtomic(path string, b []byte) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("save positions: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(b); err != nil {
		return fmt.Errorf("save positions: %w", err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("save positions: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("save positions: %w", err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("save positions: %w", err)
	}
	// The rename is durable only once the directory is synced. Some
	// filesystems refuse to sync a directory; the file itself is complete
	// either way, so that is not worth failing the save for.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
