package natstap

import (
	"net/url"
	"strings"
)

// redactURLs returns a server URL, or a comma-separated list of them, with
// any user, password or token removed.
func redactURLs(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		u, err := url.Parse(p)
		switch {
		case err == nil && u.Host != "":
			u.User = nil
			parts[i] = u.String()
		case strings.Contains(p, "@"):
			// Not a URL we can parse (host:port with credentials, say):
			// keep only what follows the last '@'.
			parts[i] = p[strings.LastIndexByte(p, '@')+1:]
		default:
			parts[i] = p
		}
	}
	return strings.Join(parts, ",")
}
