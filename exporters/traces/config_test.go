package traces

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFromEnv(t *testing.T) {
	def := DefaultConfig()
	with := func(f func(*Config)) Config {
		c := DefaultConfig()
		f(&c)
		return c
	}
	tests := []struct {
		name    string
		env     map[string]string
		want    Config
		wantErr []string // substrings of the error
	}{
		{name: "nothing set: off", env: nil, want: def},
		{name: "http base endpoint gets the traces path",
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"},
			want: with(func(c *Config) { c.Endpoint = "http://collector:4318/v1/traces" })},
		{name: "traces endpoint used as is and wins",
			env: map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT":        "http://other:4318",
				"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://collector/custom/path",
			},
			want: with(func(c *Config) { c.Endpoint = "https://collector/custom/path" })},
		{name: "grpc host:port, insecure",
			env: map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4317",
				"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
				"OTEL_EXPORTER_OTLP_INSECURE": "true",
			},
			want: with(func(c *Config) { c.Endpoint = "http://collector:4317"; c.Protocol = ProtocolGRPC })},
		{name: "signal protocol wins, headers, timeout, resource, sampler",
			env: map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT":        "https://collector:4317",
				"OTEL_EXPORTER_OTLP_PROTOCOL":        "http/protobuf",
				"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc",
				"OTEL_EXPORTER_OTLP_HEADERS":         "api-key=s%3Dcret, x-tenant = a",
				"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT":  "2500",
				"OTEL_RESOURCE_ATTRIBUTES":           "service.name=from-attrs,deployment.environment=prod",
				"OTEL_SERVICE_NAME":                  "sidecar",
				"OTEL_TRACES_SAMPLER":                "parentbased_traceidratio",
				"OTEL_TRACES_SAMPLER_ARG":            "0.25",
				"OTEL_BSP_MAX_QUEUE_SIZE":            "100",
			},
			want: with(func(c *Config) {
				c.Endpoint = "https://collector:4317"
				c.Protocol = ProtocolGRPC
				c.Headers = map[string]string{"api-key": "s=cret", "x-tenant": "a"}
				c.Timeout = 2500 * time.Millisecond
				c.ServiceName = "sidecar"
				c.ResourceAttributes = map[string]string{"deployment.environment": "prod"}
				c.Ratio = 0.25
				c.QueueSize = 100
			})},
		{name: "always_off keeps flagged streams only",
			env:  map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c/v1/traces", "OTEL_TRACES_SAMPLER": "always_off"},
			want: with(func(c *Config) { c.Endpoint = "http://c/v1/traces"; c.Ratio = 0 })},
		{name: "disabled SDK", env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, want: def},
		{name: "exporter none", env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, want: def},
		{name: "every problem named",
			env: map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://c",
				"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
				"OTEL_TRACES_SAMPLER_ARG":     "2",
				"OTEL_EXPORTER_OTLP_TIMEOUT":  "soon",
				"OTEL_EXPORTER_OTLP_HEADERS":  "secretvalue",
				"OTEL_BSP_MAX_QUEUE_SIZE":     "0",
			},
			want: def,
			wantErr: []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL",
				"OTEL_TRACES_SAMPLER_ARG", "OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_BSP_MAX_QUEUE_SIZE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromEnv(func(k string) string { return tt.env[k] })
			if len(tt.wantErr) == 0 && err != nil {
				t.Fatalf("error: %v", err)
			}
			for _, s := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), s) {
					t.Errorf("error %v does not name %s", err, s)
				}
			}
			if err != nil && strings.Contains(err.Error(), "secretvalue") {
				t.Errorf("error echoes a header value: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			if err == nil {
				if err := got.Validate(); err != nil {
					t.Errorf("Validate: %v", err)
				}
			}
		})
	}
}

func TestLogValueHidesHeaders(t *testing.T) {
	c := DefaultConfig()
	c.Endpoint = "https://c/v1/traces"
	c.Headers = map[string]string{"authorization": "Bearer sk-live-123"}
	var b strings.Builder
	slog.New(slog.NewTextHandler(&b, nil)).Info("traces", "config", c)
	if strings.Contains(b.String(), "sk-live") || !strings.Contains(b.String(), "authorization") {
		t.Errorf("log line: %s", b.String())
	}
}

func TestParseTraceparent(t *testing.T) {
	tests := []struct {
		in      string
		ok      bool
		sampled bool
	}{
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true, true},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", true, false},
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", true, true},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", false, false},
		{"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false, false},
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", false, false},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false, false},
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false, false},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", false, false},
		{"", false, false},
	}
	for _, tt := range tests {
		sc, ok := parseTraceparent([]byte(tt.in))
		if ok != tt.ok || (ok && sc.IsSampled() != tt.sampled) {
			t.Errorf("%q: ok %v sampled %v, want %v %v", tt.in, ok, sc.IsSampled(), tt.ok, tt.sampled)
		}
	}
}

func TestRatioKeep(t *testing.T) {
	kept := 0
	const n = 20000
	b := ratioBound(0.25)
	for range n {
		if ratioKeep(newTraceID(), b) {
			kept++
		}
	}
	if kept < n/5 || kept > n*3/10 {
		t.Errorf("ratio 0.25 kept %d of %d", kept, n)
	}
	if ratioKeep(newTraceID(), ratioBound(0)) {
		t.Error("ratio 0 kept a trace")
	}
	for range 100 {
		if !ratioKeep(newTraceID(), ratioBound(1)) {
			t.Fatal("ratio 1 dropped a trace")
		}
	}
}
