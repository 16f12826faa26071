package tlsfiles

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/e2atap/e2atap/redact"
)

// ReadSecret reads a secret file (a password, a token: a mounted
// Kubernetes Secret): its content without trailing newlines. Its errors
// name the file and never quote the content; an empty file is an error.
func ReadSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return "", fmt.Errorf("%s: %w", ShownPath(path), pe.Err)
		}
		return "", err
	}
	b = bytes.TrimRight(b, "\r\n")
	if len(b) == 0 {
		return "", fmt.Errorf("%s: is empty", ShownPath(path))
	}
	return string(b), nil
}

// Secret is a secret file read again at every use (a connect, a
// reconnect), so that a rotated Secret is picked up without a restart.
// When a read fails the last value read is used (the server then says
// whether it is still good) and OnError is told once per run of failures.
// Safe for concurrent use.
type Secret struct {
	path    string
	onError func(error) // may be nil
	onBack  func()      // may be nil

	mu     sync.Mutex
	last   string
	failed bool
}

// NewSecret reads the file once: an error here is a configuration error.
// onError and onBack (both may be nil) are told when a later read fails
// and when the file is readable again.
func NewSecret(path string, onError func(error), onBack func()) (*Secret, error) {
	v, err := ReadSecret(path)
	if err != nil {
		return nil, err
	}
	return &Secret{path: path, onError: onError, onBack: onBack, last: v}, nil
}

// Get reads the file again and returns its value, or the last value read
// if it cannot.
func (s *Secret) Get() string {
	v, err := ReadSecret(s.path)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if !s.failed && s.onError != nil {
			s.onError(err)
		}
		s.failed = true
		return s.last
	}
	if s.failed && s.onBack != nil {
		s.onBack()
	}
	s.failed, s.last = false, v
	return v
}

// String keeps the value out of any print of a Secret (%v, a log
// attribute): only the file is named.
func (s *Secret) String() string { return "secret file " + ShownPath(s.path) }

// ShownPath is how the path of a secret file (a password, token, nkey
// seed, creds or TLS key file) is printed: as it is when it reads as a
// path (it holds a '/' or '\\', or is a lower-case file name with an
// extension: "nats.pw"), else masked with its fingerprint. A secret
// written where its file's path goes ("password_file: hunter2-Zq9") was
// printed by every error about the file (no such file) and by the
// secret's log lines; the redactor sees no shape in a bare password.
func ShownPath(path string) string {
	if strings.ContainsAny(path, "/\\") || plainFileName(path) {
		return path
	}
	return string(redact.AppendMask(redact.Default(), nil, path))
}

// plainFileName reports a name of lower-case letters, digits, '-' and '_'
// with a '.' and an extension of 1 to 8 of them.
func plainFileName(p string) bool {
	dot := strings.LastIndexByte(p, '.')
	if dot <= 0 || len(p)-dot-1 < 1 || len(p)-dot-1 > 8 {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
