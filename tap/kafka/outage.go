package kafkatap

import "strings"

// redactBroker returns a broker address with any credentials removed
// (user:password@host:port keeps host:port).
func redactBroker(s string) string {
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		return s[i+1:]
	}
	return s
}
