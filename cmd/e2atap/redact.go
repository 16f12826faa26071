package main

import (
	"io"
	"log/slog"

	"github.com/e2atap/e2atap/exporters/jsonlog"
	"github.com/e2atap/e2atap/tap"
)

// textMasker is what the commands need of the redaction policy: free text
// with every credential and personal datum masked, fingerprinted with the
// key of the record log, so that the same value shows the same mark in
// every output. exporters/jsonlog's Redactor is one.
type textMasker interface {
	MaskText(dst, s []byte) []byte
}

// newMasker is the one place that chooses the text masking of the process
// (HOUSE_STYLE 16): every output of every command that is not the record
// log goes through the policy built on it.
func newMasker(key []byte) textMasker {
	return jsonlog.NewRedactor(jsonlog.ContentMask, 0, key)
}

// newRecordRedactor is the redaction of whole JSON records, the record
// log's (exporters/jsonlog), for outputs that print records: decode.
func newRecordRedactor(content jsonlog.Content, key []byte) *jsonlog.Redactor {
	return jsonlog.NewRedactor(content, 0, key)
}

// policy is the process's redaction policy for everything it prints
// besides the record log: findings (live and offline, text and JSON), span
// attributes and events, its own log lines, the decode and demo output, and
// error messages that can hold configuration or input. It masks what the
// masker detects, then the userinfo of any URL (which the masker may not
// recognise: nats://user:password@host).
type policy struct{ m textMasker }

func newPolicy(key []byte) *policy { return &policy{m: newMasker(key)} }

// MaskText appends s with the policy applied.
func (p *policy) MaskText(dst, s []byte) []byte {
	base := len(dst)
	dst = p.m.MaskText(dst, s)
	if masked := dst[base:]; containsScheme(masked) {
		r := tap.RedactURL(string(masked))
		dst = append(dst[:base], r...)
	}
	return dst
}

// String is MaskText for strings.
func (p *policy) String(s string) string {
	if s == "" {
		return s
	}
	b := p.MaskText(make([]byte, 0, len(s)+16), []byte(s))
	if string(b) == s {
		return s
	}
	return string(b)
}

// logger is a JSON logger on w whose every line passes the policy.
func (p *policy) logger(w io.Writer, level slog.Leveler) *slog.Logger {
	return slog.New(jsonlog.NewLogHandler(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}), p))
}

// writer is w with every Write passing the policy: the standard error of
// every command, so that an error about a flag, an argument or a file name
// printed before the configuration (and its fingerprint key) is read
// cannot print a credential; text already masked stays as it is. A Write
// is one message (fmt.Fprint, a log line); it is safe for concurrent use
// when w is.
func (p *policy) writer(w io.Writer) io.Writer { return &policyWriter{p: p, w: w} }

type policyWriter struct {
	p *policy
	w io.Writer
}

func (pw *policyWriter) Write(b []byte) (int, error) {
	m := pw.p.MaskText(make([]byte, 0, len(b)+32), b)
	if _, err := pw.w.Write(m); err != nil {
		return 0, err
	}
	return len(b), nil
}

func containsScheme(b []byte) bool {
	for i := 0; i+2 < len(b); i++ {
		if b[i] == ':' && b[i+1] == '/' && b[i+2] == '/' {
			return true
		}
	}
	return false
}
