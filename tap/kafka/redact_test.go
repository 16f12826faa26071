package kafkatap

import (
	"strings"
	"testing"
)

// A broker written with credentials (user:password@host:port, with or
// without a scheme) is refused, and neither the refusal nor RedactBroker
// prints the password.
func TestBrokerCredentialsNeverPrinted(t *testing.T) {
	const pw = "CRPSkafkaBrokerPw0rd"
	for _, b := range []string{
		"alice:" + pw + "@127.0.0.1:9092",
		"sasl_ssl://alice:" + pw + "@broker:9092",
		"alice:" + pw + "@bad host:9092",
		pw + "@127.0.0.1:9092",
	} {
		if r := RedactBroker(b); strings.Contains(r, pw) || strings.Contains(r, "alice") || !strings.Contains(r, "******@") {
			t.Errorf("RedactBroker(%q) = %q", b, r)
		}
		cfg := Config{Name: "bus", Brokers: []string{b}, Topics: []string{"t"}}
		err := cfg.Validate()
		if err == nil {
			t.Errorf("broker %q: accepted", b)
			continue
		}
		if strings.Contains(err.Error(), pw) || strings.Contains(err.Error(), "alice") {
			t.Errorf("broker %q: the error prints the credentials: %v", b, err)
		}
	}
	if r := RedactBroker("127.0.0.1:9092"); r != "127.0.0.1:9092" {
		t.Errorf("RedactBroker of a plain host:port = %q", r)
	}
}
