package tap

import (
	"errors"
	"net/url"
	"strings"
)

// RedactURL masks the userinfo (user name and password) of every URL in s,
// "nats://u:pw@host:4222" becoming "nats://******@host:4222". It works on
// text that does not parse as a URL (the error message for a bad URL must
// not print its password either) and on comma-separated lists of URLs.
// The configuration errors of every tap print URLs through it.
func RedactURL(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		i += len("://")
		b.WriteString(s[:i])
		s = s[i:]
		// The authority ends at the path, query or fragment, or where the
		// next URL of a list begins.
		end := authorityEnd(s)
		if j := strings.Index(s, "://"); j >= 0 && j < end {
			if k := strings.LastIndexAny(s[:j], ", \t\n"); k >= 0 {
				end = k
			}
		}
		// A userinfo that already is a mask ("******", "******(fp:…)",
		// what the text masker leaves) stays: it carries the fingerprint
		// that joins it with the other outputs.
		if at := strings.LastIndexByte(s[:end], '@'); at >= 0 && !isMask(s[:at]) {
			b.WriteString("******")
			s = s[at:]
		}
	}
}

// authorityEnd is where the authority that starts s ends: at its path or
// query, or at a fragment's '#' unless an '@' comes after it (a '#' in
// the password, "u:pa#ss@host", as generated passwords are pasted
// unencoded; url.Parse takes it for a fragment).
func authorityEnd(s string) int {
	end := len(s)
	if j := strings.IndexAny(s, "/?"); j >= 0 {
		end = j
	}
	if h := strings.IndexByte(s[:end], '#'); h >= 0 {
		// A fragment, unless the '#' is in a password: after a ':' and
		// not a port's digits, with an '@' after it.
		c := strings.IndexByte(s[:h], ':')
		if c < 0 || strings.LastIndexByte(s[:end], '@') < h || strings.TrimLeft(s[c+1:h], "0123456789") == "" {
			end = h
		}
	}
	return end
}

// URLReason is the reason of url.Parse's error err, fit to print beside
// RedactURL(s): url.Error quotes the URL whole, and its "invalid port"
// quotes what follows the first ':' of what it took for the authority,
// the start of a password where the password holds a '#', '/' or '?'
// ("invalid port \":pa\" after host" for "u:pa#ss@host"), so that one is
// not quoted.
func URLReason(s string, err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if r := err.Error(); !strings.HasPrefix(r, "invalid port") {
		return r
	}
	return BadPortReason
}

// BadPortReason is URLReason's for an invalid port.
const BadPortReason = "invalid port, or a '#', '/' or '?' in the password (write them %23, %2F, %3F)"

// isMask reports a userinfo that is a mask: "******", "******(fp:<hex>)"
// or "******(len:<digits>)".
func isMask(userinfo string) bool {
	const mask = "******"
	if userinfo == mask {
		return true
	}
	inner, ok := strings.CutPrefix(userinfo, mask+"(")
	if !ok || !strings.HasSuffix(inner, ")") {
		return false
	}
	inner = inner[:len(inner)-1]
	var digits string
	if d, ok := strings.CutPrefix(inner, "fp:"); ok {
		digits = d
	} else if d, ok := strings.CutPrefix(inner, "len:"); ok {
		digits = d
	}
	if digits == "" {
		return false
	}
	for _, c := range digits {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// RedactErr wraps err so that its message has every URL's userinfo masked
// (RedactURL); errors.Is and errors.As still see err. Use it for errors of
// client libraries that quote the URL they were given (net/url's do).
func RedactErr(err error) error {
	if err == nil {
		return nil
	}
	return redactedErr{err}
}

type redactedErr struct{ err error }

func (e redactedErr) Error() string { return RedactURL(e.err.Error()) }
func (e redactedErr) Unwrap() error { return e.err }
