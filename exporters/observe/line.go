package observe

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// appendLine appends ev's line: what json.Marshal(ev) gives, byte for
// byte (TestLineIsMarshal), and a newline. Written out because it runs
// for every event the hub publishes: encoding/json's reflection and
// allocations were most of the hub's cost.
func appendLine(b []byte, ev *Event) []byte {
	b = append(b, `{"type":`...)
	b = appendString(b, ev.Type)
	b = append(b, `,"time":"`...)
	b = ev.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	b = appendField(b, `,"tap":`, ev.Tap)
	b = appendField(b, `,"rule":`, ev.Rule)
	b = appendField(b, `,"severity":`, ev.Severity)
	b = appendField(b, `,"stream":`, ev.Stream)
	b = appendField(b, `,"source":`, ev.Source)
	b = appendField(b, `,"message":`, ev.Message)
	b = appendField(b, `,"outcome":`, ev.Outcome)
	b = appendField(b, `,"protocol":`, ev.Protocol)
	b = appendField(b, `,"reason":`, ev.Reason)
	if ev.Records != 0 {
		b = append(b, `,"records":`...)
		b = strconv.AppendUint(b, uint64(ev.Records), 10)
	}
	if ev.Duration != 0 {
		b = append(b, `,"duration_seconds":`...)
		b = appendFloat(b, ev.Duration)
	}
	if ev.Gap {
		b = append(b, `,"gap":true`...)
	}
	b = appendField(b, `,"kind":`, ev.Kind)
	b = appendField(b, `,"status":`, ev.Status)
	if len(ev.Record) > 0 {
		// Valid, compact JSON from the Redactor (Hub.Record checks it).
		b = append(b, `,"record":`...)
		b = append(b, ev.Record...)
	}
	if ev.Lost != 0 {
		b = append(b, `,"lost":`...)
		b = strconv.AppendUint(b, ev.Lost, 10)
	}
	return append(b, '}', '\n')
}

// appendField appends an omitempty string member.
func appendField(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	return appendString(append(b, key...), v)
}

// appendFloat formats f as encoding/json does (ES6 number form).
func appendFloat(b []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return append(b, '0') // json.Marshal fails on these; durations are finite
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 → e-9, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// plain: the bytes appendString copies as they are (printable ASCII but
// for the quote, the backslash and HTML's <, > and &).
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendString appends s as a JSON string, escaped as encoding/json
// escapes it (HTML-safe; invalid UTF-8 as U+FFFD; U+2028 and U+2029
// escaped).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plain[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// lineSize is len(appendLine(nil, ev)), worked out without writing the
// line: the ring needs only the length of what it keeps while nobody
// watches (FuzzLineSize holds the two together).
func lineSize(ev *Event) int {
	n := len(`{"type":`) + stringSize(ev.Type) + len(`,"time":"`) + timeSize(ev.Time) + len(`"`)
	n += fieldSize(`,"tap":`, ev.Tap) + fieldSize(`,"rule":`, ev.Rule) + fieldSize(`,"severity":`, ev.Severity) +
		fieldSize(`,"stream":`, ev.Stream) + fieldSize(`,"source":`, ev.Source) + fieldSize(`,"message":`, ev.Message) +
		fieldSize(`,"outcome":`, ev.Outcome) + fieldSize(`,"protocol":`, ev.Protocol) + fieldSize(`,"reason":`, ev.Reason)
	if ev.Records != 0 {
		n += len(`,"records":`) + uintSize(uint64(ev.Records))
	}
	if ev.Duration != 0 {
		var b [40]byte
		n += len(`,"duration_seconds":`) + len(appendFloat(b[:0], ev.Duration))
	}
	if ev.Gap {
		n += len(`,"gap":true`)
	}
	n += fieldSize(`,"kind":`, ev.Kind) + fieldSize(`,"status":`, ev.Status)
	if len(ev.Record) > 0 {
		n += len(`,"record":`) + len(ev.Record)
	}
	if ev.Lost != 0 {
		n += len(`,"lost":`) + uintSize(ev.Lost)
	}
	return n + len("}\n")
}

func fieldSize(key, v string) int {
	if v == "" {
		return 0
	}
	return len(key) + stringSize(v)
}

// stringSize is len(appendString(nil, s)).
func stringSize(s string) int {
	n := len(s) + 2
	for i := 0; i < len(s); {
		c := s[i]
		if plain[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\', '\b', '\f', '\n', '\r', '\t':
				n++
			default:
				n += 5 // \u00XX
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			n += 5 // \ufffd for one byte
		} else if r == '\u2028' || r == '\u2029' {
			n += 6 - size
		}
		i += size
	}
	return n
}

// Unix seconds of 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the
// years RFC 3339 writes in four digits.
const minYear0, maxYear9999 = -62167219200, 253402300799

// timeSize is the length of t in RFC 3339 with nanoseconds, as appendLine
// writes it: fixed for a UTC time of years 0-9999 but for the fraction
// (its trailing zeros left out).
func timeSize(t time.Time) int {
	sec := t.Unix()
	if t.Location() != time.UTC || sec < minYear0 || sec > maxYear9999 {
		var b [64]byte
		return len(t.AppendFormat(b[:0], time.RFC3339Nano))
	}
	n := len("2006-01-02T15:04:05Z")
	if ns := t.Nanosecond(); ns != 0 {
		d := 9
		for ns%10 == 0 {
			ns /= 10
			d--
		}
		n += 1 + d
	}
	return n
}

// uintSize is the number of decimal digits of v.
func uintSize(v uint64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}
