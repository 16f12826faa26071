package tap

import (
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
	} {
		if got := RedactURL(c.in); got != c.want {
			t.Errorf("RedactURL(%q) = %q, want %q", c.in, got, c.want)
		}
		if strings.Contains(RedactURL(c.in), "PASSWORD") {
			t.Errorf("%q keeps the password", c.in)
		}
	}
}
