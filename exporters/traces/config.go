package traces

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Protocols of the OTLP exporter.
const (
	ProtocolGRPC = "grpc"
	ProtocolHTTP = "http/protobuf"
)

// Config configures the trace exporter. The zero Endpoint means tracing is
// off.
type Config struct {
	// Endpoint is the OTLP traces endpoint as a URL: for HTTP the full URL
	// including the path (…/v1/traces), for gRPC scheme://host:port (http
	// means no TLS).
	Endpoint string
	// Protocol is ProtocolGRPC or ProtocolHTTP.
	Protocol string
	// Headers are sent with every export (often an API key: LogValue hides
	// the values).
	Headers map[string]string
	// Timeout of one export; 0 keeps the exporter's default (10s).
	Timeout time.Duration
	// ServiceName is the resource's service.name.
	ServiceName string
	// ResourceAttributes are extra resource attributes
	// (OTEL_RESOURCE_ATTRIBUTES).
	ResourceAttributes map[string]string
	// Ratio is the fraction of clean successful streams exported, in [0, 1].
	// Failed, unsuccessful and flagged streams are always exported.
	Ratio float64
	// MaxStreams bounds the per-stream state (entries, all taps together).
	MaxStreams int
	// MaxFindings bounds the finding events kept per span; the rest are
	// counted in the e2atap.findings_dropped attribute.
	MaxFindings int
	// QueueSize bounds the spans ended and not yet exported (queued, or
	// in the batch being exported); spans beyond it are dropped and
	// counted (Stats.Dropped), never waited for. OTEL_BSP_MAX_QUEUE_SIZE.
	QueueSize int
	// Redactor is the process's redaction policy: every attribute and
	// event value taken from a record (ids, session, channel, method,
	// finding messages) passes it before it reaches the SDK, so that a span
	// shows what the record log shows (the same fingerprints). Nil masks
	// those values whole ("******"): a Tracer never exports a record's
	// value that no redactor has seen.
	Redactor Redactor
	// Taps describes a tap by name (its type and upstream) for the kind
	// and network attributes of its spans. It is called at the end of an
	// exported stream, never on the record path, and must not block. Nil,
	// or a tap it does not know: an INTERNAL span with no network
	// attributes.
	Taps func(name string) (Tap, bool)
}

// Redactor masks credentials and personal data in free text, appending the
// result to dst as plain text (no JSON escaping): the text masking of the
// record log (exporters/jsonlog's Redactor.MaskText).
type Redactor interface {
	MaskText(dst, s []byte) []byte
}

// DefaultConfig is tracing off, with the defaults used once an endpoint is
// set.
func DefaultConfig() Config {
	return Config{
		Protocol:    ProtocolHTTP,
		ServiceName: "e2atap",
		Ratio:       1,
		MaxStreams:  100_000,
		MaxFindings: 16,
		QueueSize:   8192,
	}
}

// Enabled reports whether spans are exported at all.
func (c Config) Enabled() bool { return c.Endpoint != "" }

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	if !c.Enabled() {
		return nil
	}
	var errs []error
	switch c.Protocol {
	case ProtocolGRPC, ProtocolHTTP:
	default:
		errs = append(errs, fmt.Errorf("traces: protocol %q: want %q or %q", c.Protocol, ProtocolGRPC, ProtocolHTTP))
	}
	if u, err := url.Parse(c.Endpoint); err != nil {
		errs = append(errs, fmt.Errorf("traces: endpoint: %w", err))
	} else if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("traces: endpoint %q: want an http:// or https:// URL with a host", c.Endpoint))
	}
	if !(c.Ratio >= 0 && c.Ratio <= 1) {
		errs = append(errs, fmt.Errorf("traces: ratio %v: want a number in [0, 1]", c.Ratio))
	}
	if c.MaxStreams <= 0 {
		errs = append(errs, fmt.Errorf("traces: max streams %d: want > 0", c.MaxStreams))
	}
	if c.MaxFindings < 0 {
		errs = append(errs, fmt.Errorf("traces: max findings %d: want >= 0", c.MaxFindings))
	}
	if c.QueueSize <= 0 {
		errs = append(errs, fmt.Errorf("traces: queue size %d: want > 0", c.QueueSize))
	}
	return errors.Join(errs...)
}

// LogValue hides the header values, which are usually credentials.
func (c Config) LogValue() slog.Value {
	names := make([]string, 0, len(c.Headers))
	for k := range c.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	return slog.GroupValue(
		slog.String("endpoint", c.Endpoint),
		slog.String("protocol", c.Protocol),
		slog.Any("header_names", names),
		slog.Duration("timeout", c.Timeout),
		slog.String("service_name", c.ServiceName),
		slog.Float64("ratio", c.Ratio),
		slog.Int("max_streams", c.MaxStreams),
	)
}

// FromEnv reads the standard OpenTelemetry variables through getenv
// (os.Getenv in main; a map in tests):
//
//	OTEL_SDK_DISABLED=true, OTEL_TRACES_EXPORTER=none   tracing off
//	OTEL_EXPORTER_OTLP_TRACES_ENDPOINT                 full URL, used as is
//	OTEL_EXPORTER_OTLP_ENDPOINT                        base URL (HTTP: + /v1/traces)
//	OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL               grpc | http/protobuf (default)
//	OTEL_EXPORTER_OTLP_[TRACES_]INSECURE               scheme for a gRPC endpoint given as host:port
//	OTEL_EXPORTER_OTLP_[TRACES_]HEADERS                k=v,k2=v2 (values URL-decoded)
//	OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT                milliseconds
//	OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES        resource (default service.name e2atap)
//	OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG       ratio of clean successful streams
//
// Tracing is off unless an endpoint is set. Every problem is reported, each
// naming its variable.
func FromEnv(getenv func(string) string) (Config, error) {
	c := DefaultConfig()
	env := func(name string) string { return strings.TrimSpace(getenv(name)) }
	// A signal-specific variable wins over the general one.
	pick := func(suffix string) (string, string) {
		if v := env("OTEL_EXPORTER_OTLP_TRACES_" + suffix); v != "" {
			return "OTEL_EXPORTER_OTLP_TRACES_" + suffix, v
		}
		return "OTEL_EXPORTER_OTLP_" + suffix, env("OTEL_EXPORTER_OTLP_" + suffix)
	}
	var errs []error
	bad := func(name, v, why string) { errs = append(errs, fmt.Errorf("%s=%q: %s", name, v, why)) }

	if v := env("OTEL_SDK_DISABLED"); strings.EqualFold(v, "true") {
		return c, nil
	}
	switch v := env("OTEL_TRACES_EXPORTER"); v {
	case "", "otlp":
	case "none":
		return c, nil
	default:
		bad("OTEL_TRACES_EXPORTER", v, "only otlp or none are supported")
	}

	if name, v := pick("PROTOCOL"); v != "" {
		switch v {
		case ProtocolGRPC, ProtocolHTTP:
			c.Protocol = v
		default:
			bad(name, v, "want grpc or http/protobuf")
		}
	}
	insecure := false
	if name, v := pick("INSECURE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad(name, v, "want true or false")
		}
		insecure = b
	}

	endpointVar := "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	endpoint := env(endpointVar)
	signal := endpoint != ""
	if !signal {
		endpointVar = "OTEL_EXPORTER_OTLP_ENDPOINT"
		endpoint = env(endpointVar)
	}
	if endpoint != "" {
		if !strings.Contains(endpoint, "://") {
			// A bare host:port, common for gRPC collectors.
			if insecure {
				endpoint = "http://" + endpoint
			} else {
				endpoint = "https://" + endpoint
			}
		}
		u, err := url.Parse(endpoint)
		shown := hideUserinfo(endpoint) // never a user:password@ in an error
		switch {
		case err != nil:
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err // url.Error quotes the whole URL
			}
			reason := err.Error()
			if strings.HasPrefix(reason, "invalid port") {
				// It quotes what follows the authority's first ':', the
				// start of the password where it holds a '#', '/' or '?'
				// ("invalid port \":pa\" after host" for "u:pa#ss@host").
				reason = "invalid port, or a '#', '/' or '?' in the password (write them %23, %2F, %3F)"
			}
			bad(endpointVar, shown, reason)
		case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			bad(endpointVar, shown, "want an http:// or https:// URL with a host")
		case !validPort(u.Port()):
			bad(endpointVar, shown, fmt.Sprintf("port %q: want a number from 1 to 65535", u.Port()))
		default:
			if !signal && c.Protocol == ProtocolHTTP {
				// The general endpoint is a base: the traces path is appended.
				u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
			}
			c.Endpoint = u.String()
		}
	}

	if name, v := pick("HEADERS"); v != "" {
		h, err := parseKV(v)
		if err != nil {
			bad(name, "…", err.Error()) // the value may be a credential: not echoed
		}
		c.Headers = h
	}
	if name, v := pick("TIMEOUT"); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 0 {
			bad(name, v, "want milliseconds")
		} else {
			c.Timeout = time.Duration(ms) * time.Millisecond
		}
	}

	if v := env("OTEL_BSP_MAX_QUEUE_SIZE"); v != "" {
		// The SDK's own variable, which an explicit queue size would
		// otherwise override.
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			bad("OTEL_BSP_MAX_QUEUE_SIZE", v, "want a number of spans > 0")
		} else {
			c.QueueSize = n
		}
	}

	if v := env("OTEL_RESOURCE_ATTRIBUTES"); v != "" {
		attrs, err := parseKV(v)
		if err != nil {
			bad("OTEL_RESOURCE_ATTRIBUTES", v, err.Error())
		}
		if sn, ok := attrs["service.name"]; ok && sn != "" {
			c.ServiceName = sn
		}
		delete(attrs, "service.name")
		if len(attrs) > 0 {
			c.ResourceAttributes = attrs
		}
	}
	if v := env("OTEL_SERVICE_NAME"); v != "" {
		c.ServiceName = v
	}

	sampler, arg := env("OTEL_TRACES_SAMPLER"), env("OTEL_TRACES_SAMPLER_ARG")
	switch sampler {
	case "", "traceidratio", "parentbased_traceidratio":
		if arg != "" {
			r, err := strconv.ParseFloat(arg, 64)
			if err != nil || !(r >= 0 && r <= 1) {
				bad("OTEL_TRACES_SAMPLER_ARG", arg, "want a ratio in [0, 1]")
			} else {
				c.Ratio = r
			}
		}
	case "always_on", "parentbased_always_on":
		c.Ratio = 1
	case "always_off", "parentbased_always_off":
		c.Ratio = 0 // flagged streams are still exported
	default:
		bad("OTEL_TRACES_SAMPLER", sampler, "want always_on, always_off, traceidratio or their parentbased_ forms")
	}
	if err := errors.Join(errs...); err != nil {
		return DefaultConfig(), err
	}
	return c, nil
}

// hideUserinfo masks what lies between "://" and an "@" of the authority:
// an endpoint may carry credentials, and an error about it is printed.
func hideUserinfo(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	rest := s[i+3:]
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	if h := strings.IndexByte(rest[:end], '#'); h >= 0 {
		// A fragment, unless the '#' is in a password: after a ':' and
		// not a port's digits, with an '@' after it.
		c := strings.IndexByte(rest[:h], ':')
		if c < 0 || strings.LastIndexByte(rest[:end], '@') < h || strings.TrimLeft(rest[c+1:h], "0123456789") == "" {
			end = h
		}
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		return s[:i+3] + "******@" + rest[at+1:]
	}
	return s
}

// validPort: empty (the scheme's default) or a number from 1 to 65535.
func validPort(p string) bool {
	if p == "" {
		return true
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

// parseKV reads the W3C-baggage-like list the OTEL_* variables use:
// key=value pairs separated by commas, values percent-decoded.
func parseKV(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return out, errors.New("want key=value pairs separated by commas")
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return out, errors.New("a value is not valid percent-encoding")
		}
		out[k] = dv
	}
	return out, nil
}
