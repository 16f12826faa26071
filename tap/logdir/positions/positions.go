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
	"time"
)

// Version is the format version written into the file.
const Version = 1

// ErrCorrupt is returned (wrapped) by Load when the file exists but cannot
// be understood. Since Save never leaves a partial file, this means someone
// else wrote it; the caller should refuse to guess.
var ErrCorrupt = errors.New("positions file is corrupt")

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
	return doc.Files, nil
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
