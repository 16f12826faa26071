package ws

import (
	"strings"
	"testing"
)

// TestUpstreamErrorHidesCredentials: an upstream with userinfo, or one that
// does not parse, is named in the error without user or password.
func TestUpstreamErrorHidesCredentials(t *testing.T) {
	for _, up := range []string{"ws://user:PASSWORD@agent:18092", "ws://user:PASSWORD@bad host:18092", "ws://user:PASSWORD@agent:1%zz"} {
		c := DefaultConfig()
		c.Name, c.Upstream = "agent-ws", up
		err := c.Validate()
		if err == nil {
			t.Fatalf("upstream %q accepted", up)
		}
		if strings.Contains(err.Error(), "PASSWORD") || strings.Contains(err.Error(), "user") {
			t.Errorf("upstream %q: the error shows the credentials: %v", up, err)
		}
	}
}
