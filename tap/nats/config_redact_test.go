package natstap

import (
	"strings"
	"testing"
)

// TestConfigErrorHidesURLCredentials: a URL that does not parse is named in
// the error without its userinfo (url.Error would quote it whole).
func TestConfigErrorHidesURLCredentials(t *testing.T) {
	c := DefaultConfig()
	c.Name, c.Subjects = "mesh", []string{"agent.>"}
	c.URL = "nats://u:PASSWORD@bad host:4222"
	err := c.Validate()
	if err == nil {
		t.Fatal("a URL with a space in its host is accepted")
	}
	if strings.Contains(err.Error(), "PASSWORD") || strings.Contains(err.Error(), "u:") {
		t.Fatalf("the error shows the credentials: %v", err)
	}
	if !strings.Contains(err.Error(), "nats://******@bad host:4222") {
		t.Fatalf("the error does not name the URL: %v", err)
	}
}
