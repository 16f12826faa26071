package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/e2atap/e2atap/exporters/traces"
)

// checkMode says how much checkConfig looks at beyond the file.
type checkMode int

const (
	// atStart: what `e2atap run` needs before it starts anything. A tap's
	// problem on the machine is a warning (the tap is isolated: it is
	// down, retried and reported while the rest runs).
	atStart checkMode = iota
	// forCheck: `run --check`, which judges everything a start would meet;
	// it also tries the listen ports, a busy one being a warning (the
	// running sidecar itself holds it).
	forCheck
)

// checkConfig loads the configuration file at path and reports every
// problem at once: those of the file (keys, types), of the values
// (Validate, on whatever could be decoded), of the OTEL_* variables the
// process reads, and of the machine (output and positions directories,
// ports). It creates nothing.
// environ is the environment as os.Environ gives it, for the names of the
// OTEL_* variables that are set.
func checkConfig(path string, getenv func(string) string, environ []string, mode checkMode) (Config, Problems) {
	b, err := os.ReadFile(path)
	if err != nil {
		return DefaultConfig(), Problems{{Msg: fmt.Sprintf("cannot read the file: %v", err)}}
	}
	cfg, probs := parseChecked(b, getenv)
	if len(probs) == 1 && probs[0].syntax {
		return cfg, probs
	}
	probs = append(probs, otelProblems(getenv, environ)...)
	probs = append(probs, cfg.checkHost(mode)...)
	return cfg, probs.sorted()
}

// parseChecked decodes b, applies the environment and validates, and
// returns every problem of the three at once. The Config is usable only
// when no problem is an error.
func parseChecked(b []byte, getenv func(string) string) (Config, Problems) {
	cfg, err := ParseConfig(b)
	var probs Problems
	errors.As(err, &probs)
	if len(probs) == 1 && probs[0].syntax {
		return cfg, probs // the defaults: nothing of the file to validate
	}
	cfg.applyEnv(getenv)
	return cfg, append(probs, cfg.validate()...).sorted()
}

// otelProblems validates the OTEL_* variables as the trace exporter will
// read them, each problem naming its variable: those traces.FromEnv reads
// (it never quotes a header value or an endpoint's user:password), and
// those the OTLP exporter reads by itself (compression, TLS files). A
// variable of environ that is not one e2atap reads but is one edit or two
// from one is a warning (a typo there silently leaves the default).
func otelProblems(getenv func(string) string, environ []string) Problems {
	var probs Problems
	tc, err := traces.FromEnv(getenv)
	if err != nil {
		for _, e := range splitErr(err) {
			probs = append(probs, Problem{Msg: "traces: " + e.Error()})
		}
	}
	pick := func(suffix string) (string, string) {
		if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_" + suffix)); v != "" {
			return "OTEL_EXPORTER_OTLP_TRACES_" + suffix, v
		}
		return "OTEL_EXPORTER_OTLP_" + suffix, strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + suffix))
	}
	if err == nil && tc.Enabled() {
		if name, v := pick("COMPRESSION"); v != "" && v != "gzip" && v != "none" {
			probs = append(probs, Problem{Msg: fmt.Sprintf("traces: %s=%q: want gzip or none", name, v)})
		}
		files := map[string]string{}
		for _, suffix := range []string{"CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY"} {
			name, v := pick(suffix)
			if v == "" {
				continue
			}
			files[suffix] = v
			if err := access(v, rOK); err != nil {
				probs = append(probs, Problem{Msg: fmt.Sprintf("traces: %s=%q: cannot read the file: %v", name, v, err)})
			}
		}
		if (files["CLIENT_CERTIFICATE"] == "") != (files["CLIENT_KEY"] == "") {
			probs = append(probs, Problem{Msg: "traces: OTEL_EXPORTER_OTLP_[TRACES_]CLIENT_CERTIFICATE and CLIENT_KEY go together: set both or neither"})
		}
	}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "OTEL_") || contains(otelKnown, name) ||
			strings.HasPrefix(name, "OTEL_EXPORTER_OTLP_METRICS_") || strings.HasPrefix(name, "OTEL_EXPORTER_OTLP_LOGS_") {
			continue
		}
		if s := closest(name, otelRead); s != "" {
			probs = append(probs, Problem{Warning: true, Msg: fmt.Sprintf("traces: %s is not a variable e2atap reads (did you mean %s?)", name, s)})
		}
	}
	return probs
}

// otelRead are the OTEL_* variables that configure e2atap's traces;
// otelKnown adds the other variables of the OpenTelemetry specification
// that are not typos of them.
var (
	otelRead = func() []string {
		out := []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES",
			"OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"}
		for _, s := range []string{"PROTOCOL", "INSECURE", "HEADERS", "TIMEOUT", "COMPRESSION", "CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY"} {
			out = append(out, "OTEL_EXPORTER_OTLP_"+s, "OTEL_EXPORTER_OTLP_TRACES_"+s)
		}
		return out
	}()
	otelKnown = append([]string{"OTEL_LOG_LEVEL", "OTEL_PROPAGATORS", "OTEL_METRICS_EXPORTER", "OTEL_LOGS_EXPORTER",
		"OTEL_BSP_SCHEDULE_DELAY", "OTEL_BSP_EXPORT_TIMEOUT", "OTEL_BSP_MAX_QUEUE_SIZE", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
		"OTEL_BLRP_SCHEDULE_DELAY", "OTEL_BLRP_EXPORT_TIMEOUT", "OTEL_BLRP_MAX_QUEUE_SIZE", "OTEL_BLRP_MAX_EXPORT_BATCH_SIZE",
		"OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "OTEL_ATTRIBUTE_COUNT_LIMIT", "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT",
		"OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "OTEL_SPAN_EVENT_COUNT_LIMIT", "OTEL_SPAN_LINK_COUNT_LIMIT",
		"OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT", "OTEL_LINK_ATTRIBUTE_COUNT_LIMIT", "OTEL_METRIC_EXPORT_INTERVAL",
		"OTEL_METRIC_EXPORT_TIMEOUT", "OTEL_EXPORTER_ZIPKIN_ENDPOINT", "OTEL_EXPORTER_ZIPKIN_TIMEOUT",
		"OTEL_EXPORTER_PROMETHEUS_HOST", "OTEL_EXPORTER_PROMETHEUS_PORT", "OTEL_GO_X_EXEMPLAR", "OTEL_GO_X_RESOURCE"}, otelRead...)
)

// checkHost checks what the configuration needs of this machine: that
// the output files can be created or appended to (their directory exists
// and is writable; for a rotated log, also when the file exists), that each logdir tap
// can write its positions, and in forCheck mode that the listen ports are
// free. It creates and changes nothing.
func (c *Config) checkHost(mode checkMode) Problems {
	var probs Problems
	add := func(path string, warn bool, format string, a ...any) {
		line, env := c.src.where(path)
		probs = append(probs, Problem{Line: line, Env: env, Warning: warn, Msg: fmt.Sprintf(format, a...)})
	}
	for _, o := range []struct {
		key, path string
		rotated   bool
	}{
		{"outputs.findings.path", c.Outputs.Findings.Path, false},
		{"outputs.log.path", c.Outputs.Log.Path, c.Outputs.Log.RotateBytes > 0},
	} {
		if o.path == "" || o.path == "-" {
			continue
		}
		if err := checkWritableFile(o.path, o.rotated); err != nil {
			add(o.key, false, "%s: %q: %v", o.key, o.path, err)
		}
	}
	for i, t := range c.Taps {
		key := fmt.Sprintf("taps[%d]", i)
		where := key
		if t.Name != "" {
			where = fmt.Sprintf("taps[%d] (%s)", i, t.Name)
		}
		if t.Type != "logdir" && t.Type != "nats" {
			continue
		}
		if t.Positions != "" {
			if err := checkWritableFile(t.Positions, true); err != nil {
				add(key+".positions", mode == atStart, "%s: positions: %q: %v", where, t.Positions, err)
			}
		}
		if t.Type != "logdir" {
			continue
		}
		for j, p := range t.Paths {
			// The tap waits for files to appear, not for their directory.
			if dir := globDir(p); dir != "" {
				if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
					add(fmt.Sprintf("%s.paths[%d]", key, j), true, "%s: paths: %q: directory %s does not exist (yet): nothing is read until it does", where, p, dir)
				}
			}
		}
	}
	if mode == forCheck {
		addrs := []struct{ key, addr, what string }{{"listen", c.Listen, "listen"}}
		for i, t := range c.Taps {
			if t.Type == "ws" {
				addrs = append(addrs, struct{ key, addr, what string }{fmt.Sprintf("taps[%d].listen", i), t.Listen, fmt.Sprintf("taps[%d] (%s): listen", i, t.Name)})
			}
		}
		for _, a := range addrs {
			if checkHostPort(a.addr, true) != nil {
				continue // Validate said why
			}
			if err := tryListen(a.addr); err != nil {
				add(a.key, true, "%s: %s: %v", a.what, a.addr, err)
			}
		}
	}
	return probs
}

// checkWritableFile reports why path could not be opened for appending
// (created if missing), without creating or opening it. inDir: the file
// is also replaced or rotated beside itself (a temp file and a rename), so
// its directory must be writable even when the file exists.
func checkWritableFile(path string, inDir bool) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return errors.New("is a directory")
	case err == nil:
		if err := access(path, wOK); err != nil {
			return fmt.Errorf("is not writable: %w", err)
		}
		if !inDir {
			return nil
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	dir := filepath.Dir(path)
	di, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("directory %s does not exist", dir)
	case err != nil:
		return err
	case !di.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	if err := access(dir, wOK|xOK); err != nil {
		return fmt.Errorf("directory %s is not writable: %w", dir, err)
	}
	return nil
}

// globDir is the directory part of a glob before its first pattern
// character ("" if the pattern starts there).
func globDir(pattern string) string {
	i := strings.IndexAny(pattern, "*?[\\")
	if i < 0 {
		return filepath.Dir(pattern)
	}
	j := strings.LastIndex(pattern[:i], string(filepath.Separator))
	if j < 0 {
		return ""
	}
	if j == 0 {
		return string(filepath.Separator)
	}
	return pattern[:j]
}

// tryListen binds addr for a moment to see whether a start could.
func tryListen(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err == nil {
		return l.Close()
	}
	if errors.Is(err, syscall.EADDRINUSE) {
		return errors.New("in use (by another process, or by the running sidecar itself)")
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return fmt.Errorf("cannot listen: %v", oe.Err)
	}
	return fmt.Errorf("cannot listen: %v", err)
}
