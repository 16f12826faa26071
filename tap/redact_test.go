package tap

import (
	"net/url"
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"nats://127.0.0.1:4222", "nats://127.0.0.1:4222"},
		{"nats://u:PASSWORD@bad host:4222", "nats://******@bad host:4222"},
		{`url: "nats://u:PASSWORD@bad host:4222" is not a URL`, `url: "nats://******@bad host:4222" is not a URL`},
		{"ws://user:pass@agent:18092/ws?x=1", "ws://******@agent:18092/ws?x=1"},
		{"nats://a:b@h1:4222,nats://c:d@h2:4222", "nats://******@h1:4222,nats://******@h2:4222"},
		{"nats://tok@h1,nats://h2", "nats://******@h1,nats://h2"},
		{"wss://p%40ss:w@rd@host/x", "wss://******@host/x"},
		{"no url here: a@b", "no url here: a@b"},
		{"https://******(fp:4c3150ab6d10a8db)@example.com/p", "https://******(fp:4c3150ab6d10a8db)@example.com/p"},
		{"https://******@example.com/p", "https://******@example.com/p"},
		{"https://******(x):pw@example.com/p", "https://******@example.com/p"},
		{"mail user@host after ws://h/x@y", "mail user@host after ws://h/x@y"},
		// a '#' in the password, and a fragment
		{"nats://u:PASS#WORD@h:4222 ws://h:1/#a@b https://h#x@y http://h:80#a@b", "nats://******@h:4222 ws://h:1/#a@b https://h#x@y http://h:80#a@b"},
	} {
		if got := RedactURL(c.in); got != c.want {
			t.Errorf("RedactURL(%q) = %q, want %q", c.in, got, c.want)
		}
		if strings.Contains(RedactURL(c.in), "PASS") {
			t.Errorf("%q keeps the password", c.in)
		}
	}
}

// TestURLReason: url.Parse's reason for a URL with userinfo and a '#' or
// '/' in its password ("invalid port \":PASS\" after host") is not
// printed.
func TestURLReason(t *testing.T) {
	for _, s := range []string{"nats://u:PASS#WORD@h:4222", "ws://u:PASS/WORD@h:1/x", "nats://h:PASS"} {
		_, err := url.Parse(s)
		if err == nil {
			t.Fatalf("%q parses", s)
		}
		r := URLReason(s, err)
		if strings.Contains(r, "PASS") {
			t.Errorf("URLReason(%q) = %q", s, r)
		}
	}
}
