package traces

import (
	"strings"
	"testing"
)

// TestFromEnvNamesWithoutSecrets: an endpoint's user:password@ and the
// headers' values never appear in the errors (e2atap run --check prints
// them), and an endpoint's port is checked.
func TestFromEnvNamesWithoutSecrets(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"malformed endpoint with userinfo", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://user:PWplanted1@bad host:4318"},
			[]string{`OTEL_EXPORTER_OTLP_ENDPOINT="http://******@bad host:4318": invalid character`}},
		{"wrong scheme with userinfo", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "ftp://user:PWplanted1@c/v1/traces"},
			[]string{`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="ftp://******@c/v1/traces": want an http:// or https:// URL`}},
		{"port out of range", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://user:PWplanted1@c:99999"},
			[]string{`OTEL_EXPORTER_OTLP_ENDPOINT="https://******@c:99999": port "99999": want a number from 1 to 65535`}},
		// A '#' in the password: url.Parse ends the authority there and
		// reads "PWpl" as a port.
		{"endpoint with a # in its password", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://user:PWpl#anted1@c:4318/v1/traces"},
			[]string{`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://******@c:4318/v1/traces": invalid port, or a '#'`}},
		{"headers not key=value", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "Bearer PWplanted1"},
			[]string{`OTEL_EXPORTER_OTLP_TRACES_HEADERS="…": want key=value pairs`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromEnv(func(k string) string { return tt.env[k] })
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "PWpl") || strings.Contains(err.Error(), "user:") {
				t.Errorf("the error shows a credential: %v", err)
			}
		})
	}
	if c, err := FromEnv(func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}[k]
	}); err != nil || c.Endpoint != "http://c:4318/v1/traces" {
		t.Errorf("a valid endpoint: %+v, %v", c, err)
	}
}
