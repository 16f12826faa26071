package kafkatap

import (
	"strings"

	"github.com/e2atap/e2atap/tap"
)

// redactBroker returns a broker address with any credentials removed
// (user:password@host:port keeps host:port).
func redactBroker(s string) string {
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// RedactBroker is a broker address as it may be printed: the userinfo of
// "user:password@host:9092" masked ("******@host:9092"), and that of a URL
// ("sasl_ssl://user:password@host:9092") as tap.RedactURL masks it. A
// broker is host:port; one that carries credentials is a configuration
// error, and its message must not print them.
func RedactBroker(s string) string {
	s = tap.RedactURL(s)
	if i := strings.LastIndexByte(s, '@'); i >= 0 && !strings.Contains(s[:i], "://") {
		return "******" + s[i:]
	}
	return s
}
