package validate

import (
	"strconv"
	"time"

	"github.com/e2atap/e2atap/e2a"
)

// A finding message never quotes a value of a record that no redactor has
// seen (issue 9): the message goes to the findings log, offline output,
// span events and the terminal, and an unknown credential shape in a status
// or a kind would reach them verbatim. So a string value is quoted only
// when it is a word of the protocol's vocabulary (a value of one of its
// enumerations, in any field: "status \"e2a.chunk\"" is a useful message
// and no secret), a short version number, or, for timestamps, a date-time
// in a common layout; any other value is shown masked with its length, as
// the record log masks content: "status \"******(len:23)\"".

// vocabulary holds the values of the protocol's enumerations and their
// common near misses.
var vocabulary = func() map[string]bool {
	m := map[string]bool{}
	add := func(ss ...string) {
		for _, s := range ss {
			m[s] = true
		}
	}
	add("succeeded", "failed", "in_progress", "success", "successful", "failure", "error", "complete",
		"completed", "done", "running", "pending", "ok", "cancelled", "canceled", "in-progress",
		"inprogress", "partial", "final", "chunk", "stream")
	add(e2a.E2AResponseKinds[:]...)
	add(e2a.A2AStreamBranches[:]...)
	add(e2a.ACPSessionUpdateKinds[:]...)
	add(e2a.DeltaText, e2a.DeltaReasoning, e2a.DeltaTool, e2a.DeltaCustom)
	add(string(e2a.OriginSystem), string(e2a.OriginUser), string(e2a.OriginAgent), string(e2a.OriginService))
	add("text", "thought", "tool", "structured", "keepalive", "reasoning", "custom")
	// Frame attribute names (a duplicate attribute names one of them).
	add("sid", "replyTo", "id", "type", "source", "err", "meta", "etype", "seq", "done", "traceparent",
		"specversion", "datacontenttype", "subject", "time")
	return m
}()

// quoteString quotes s if it may be printed (vocabulary, a short version
// number), else masks it with its length.
func quoteString(s []byte) string {
	if vocabulary[string(s)] || isShortVersion(s) {
		return strconv.Quote(string(s))
	}
	return maskedLen(len(s))
}

// quoteTimestamp quotes a timestamp that is a date-time in a common layout
// (what a person needs to see to fix it), else masks it.
func quoteTimestamp(v *e2a.Value) string {
	if v.Type == e2a.String && len(v.Str) <= 40 {
		if _, ok := parseRFC3339(v.Str); ok {
			return strconv.Quote(string(v.Str))
		}
		for _, layout := range timestampLayouts {
			if _, err := time.Parse(layout, string(v.Str)); err == nil {
				return strconv.Quote(string(v.Str))
			}
		}
	}
	return quoteValue(v)
}

var timestampLayouts = [...]string{
	"2006-01-02 15:04:05", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05", "2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05Z07:00", "2006-01-02", time.RFC1123, time.RFC1123Z, time.RFC850, time.ANSIC,
	"2006/01/02 15:04:05", "02/01/2006 15:04:05",
}

// isShortVersion: digits and dots, at most 8 bytes ("2.0", "1.0.3"): no
// room for a phone number or an identity number.
func isShortVersion(s []byte) bool {
	if len(s) == 0 || len(s) > 8 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && c != '.' {
			return false
		}
	}
	return true
}

func maskedLen(n int) string { return `"******(len:` + strconv.Itoa(n) + `)"` }
