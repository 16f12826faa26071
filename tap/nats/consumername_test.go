package natstap

import (
	"regexp"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/redact"
)

// TestConsumerNameReadable: the tap's consumer name is one the server
// takes and one the logs show as it is (an operator looks it up with
// nats consumer ls), and two are never the same.
func TestConsumerNameReadable(t *testing.T) {
	valid := regexp.MustCompile(`^e2atap-[A-Za-z0-9_-]{0,32}-[a-p]{16}$`)
	seen := map[string]bool{}
	for _, tap := range []string{"events", "", "mesh.events > *", strings.Repeat("long-tap-name", 8), "tap/with\\slashes", "ünïcode"} {
		for range 2000 {
			n := consumerName(tap)
			if !valid.MatchString(n) {
				t.Fatalf("tap %q: consumer name %q", tap, n)
			}
			if seen[n] {
				t.Fatalf("consumer name %q drawn twice", n)
			}
			seen[n] = true
			line := "jetstream consumer " + n + " deleted"
			if m := redact.MaskText(line); m != line {
				t.Fatalf("tap %q: the log shows %q as %q", tap, line, m)
			}
		}
	}
}
