package jsonlog

import (
	"context"
	"fmt"
	"log/slog"
)

// TextRedactor masks credentials and personal data in free text, appending
// the result to dst as plain text (Redactor.MaskText is one).
type TextRedactor interface {
	MaskText(dst, s []byte) []byte
}

// LogHandler is the redaction policy for the process's own log lines: a
// slog.Handler that passes the message and every attribute value that can
// hold text (strings, errors, Stringers, anything printed with %v, after
// LogValuer resolution, inside groups) through a TextRedactor before the
// next handler sees it. Numbers, booleans, durations and times are kept.
// Every logger of the process is built on it, so that a log line added
// tomorrow cannot forget the policy.
type LogHandler struct {
	next slog.Handler
	red  TextRedactor
}

var _ slog.Handler = (*LogHandler)(nil)

// NewLogHandler wraps next with the redaction policy red.
func NewLogHandler(next slog.Handler, red TextRedactor) *LogHandler {
	return &LogHandler{next: next, red: red}
}

// Enabled reports what next reports.
func (h *LogHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

// Handle redacts the record and passes it on.
func (h *LogHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.text(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

// WithAttrs redacts attrs once, when they are bound.
func (h *LogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.attr(a)
	}
	return &LogHandler{next: h.next.WithAttrs(red), red: h.red}
}

// WithGroup passes the group on.
func (h *LogHandler) WithGroup(name string) slog.Handler {
	return &LogHandler{next: h.next.WithGroup(name), red: h.red}
}

func (h *LogHandler) text(s string) string {
	if s == "" {
		return s
	}
	b := h.red.MaskText(make([]byte, 0, len(s)+16), []byte(s))
	if string(b) == s {
		return s
	}
	return string(b)
}

func (h *LogHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.text(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, ga := range g {
			out[i] = h.attr(ga)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		var s string
		switch x := v.Any().(type) {
		case nil:
			return slog.Attr{Key: a.Key, Value: v}
		case error:
			s = x.Error()
		case fmt.Stringer:
			s = x.String()
		default:
			s = fmt.Sprintf("%+v", x)
		}
		return slog.String(a.Key, h.text(s))
	}
	return slog.Attr{Key: a.Key, Value: v}
}
