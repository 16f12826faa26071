package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/e2atap/e2atap/exporters/jsonlog"
	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/tap/tlsfiles"
	"github.com/e2atap/e2atap/validate"
)

// Config is the configuration of `e2atap run` (DESIGN.md, "Configuration
// of e2atap run"). Every key has a default; an unknown key is an error that
// names it.
type Config struct {
	Profile string            `yaml:"profile"`
	Listen  string            `yaml:"listen"`
	Streams StreamsConfig     `yaml:"streams"`
	Rules   map[string]string `yaml:"rules"` // severity overrides: rule id → error|warning|info|off
	Taps    []TapConfig       `yaml:"taps"`
	Outputs OutputsConfig     `yaml:"outputs"`
	Memory  MemoryConfig      `yaml:"memory"`
	// TLS serves the HTTP listener (/metrics, /healthz, /readyz, /observe)
	// over TLS from certificate files, reloaded when they are renewed.
	TLS tlsfiles.Files `yaml:"tls"`
}

// StreamsConfig bounds the stream table.
type StreamsConfig struct {
	Max              int           `yaml:"max"`
	IdleTimeout      time.Duration `yaml:"idle_timeout"`
	JoinWindow       time.Duration `yaml:"join_window"`
	Shards           int           `yaml:"shards"`
	Queue            int           `yaml:"queue"`
	FinishOnShutdown bool          `yaml:"finish_on_shutdown"`
	MaxRecordBytes   int           `yaml:"max_record_bytes"`
}

// TapConfig is one tap. Which keys apply depends on type (tapKeys).
type TapConfig struct {
	Name string `yaml:"name"`
	Type string `yaml:"type"`
	// ws
	Listen           string        `yaml:"listen"`
	Upstream         string        `yaml:"upstream"`
	QueueSize        int           `yaml:"queue_size"`
	MaxMessageBytes  int           `yaml:"max_message_bytes"`
	DialTimeout      time.Duration `yaml:"dial_timeout"`
	HandshakeTimeout time.Duration `yaml:"handshake_timeout"`
	// TLS serves the tap's listener over TLS (wss:// for the Gateway).
	TLS tlsfiles.Files `yaml:"tls"`
	// logdir
	Paths        []string `yaml:"paths"`
	Positions    string   `yaml:"positions"`
	MaxLineBytes int      `yaml:"max_line_bytes"`
	StartAt      string   `yaml:"start_at"`
	MaxOpenFiles int      `yaml:"max_open_files"`
	// nats
	URL       string            `yaml:"url"`
	Subjects  []string          `yaml:"subjects"`
	Queue     string            `yaml:"queue"`
	JetStream []JetStreamConfig `yaml:"jetstream"`
	// PendingBytes: the NATS client's pending buffer per core subject
	// (default: the byte budget split over the subjects).
	PendingBytes int `yaml:"pending_bytes"`
	// kafka
	Brokers []string `yaml:"brokers"`
	Topics  []string `yaml:"topics"`
	Regex   bool     `yaml:"regex"`
	Group   string   `yaml:"group"`
	Start   string   `yaml:"start"`

	line int // where the tap is in the file, for messages
}

// JetStreamConfig is one JetStream stream a nats tap reads.
type JetStreamConfig struct {
	Stream         string   `yaml:"stream"`
	FilterSubjects []string `yaml:"filter_subjects"`
	StartSeq       uint64   `yaml:"start_seq"`
}

// tapKeys lists the keys each tap type takes (besides name and type).
var tapKeys = map[string][]string{
	"ws":     {"listen", "upstream", "queue_size", "max_message_bytes", "dial_timeout", "handshake_timeout", "tls"},
	"logdir": {"paths", "positions", "max_line_bytes", "start_at", "max_open_files"},
	"nats":   {"url", "subjects", "queue", "jetstream", "pending_bytes", "max_message_bytes"},
	"kafka":  {"brokers", "topics", "regex", "group", "start"},
}

// UnmarshalYAML checks that every key of a tap is one its type takes.
func (t *TapConfig) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: a tap is a mapping of keys (name, type, ...)", n.Line)
	}
	typ := ""
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "type" {
			typ = n.Content[i+1].Value
		}
	}
	keys, known := tapKeys[typ]
	var errs []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		if k == "name" || k == "type" {
			continue
		}
		if !known {
			continue // Validate names the bad type
		}
		ok := false
		for _, a := range keys {
			ok = ok || a == k
		}
		if !ok {
			all := false
			for _, ks := range tapKeys {
				for _, a := range ks {
					all = all || a == k
				}
			}
			if all {
				errs = append(errs, fmt.Sprintf("line %d: key %q is not a setting of a %s tap (it takes %s)", n.Content[i].Line, k, typ, strings.Join(keys, ", ")))
			} else {
				errs = append(errs, fmt.Sprintf("line %d: unknown key %q in a %s tap (it takes %s)", n.Content[i].Line, k, typ, strings.Join(keys, ", ")))
			}
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	type plain TapConfig
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*t = TapConfig(p)
	t.line = n.Line
	return nil
}

// OutputsConfig: where findings and the redacted log go.
type OutputsConfig struct {
	Findings FindingsConfig `yaml:"findings"`
	Log      jsonlog.Config `yaml:"log"`
}

// FindingsConfig is the findings log ("-" is standard output, "" none).
type FindingsConfig struct {
	Path string `yaml:"path"`
}

// DefaultConfig has a default for every key; it taps nothing.
func DefaultConfig() Config {
	lc := jsonlog.DefaultConfig()
	lc.Path = ""
	return Config{
		Profile: validate.ProfileJiuwenswarm,
		Listen:  "127.0.0.1:9464",
		Streams: StreamsConfig{Max: 1_000_000, IdleTimeout: 10 * time.Minute, JoinWindow: 30 * time.Second, Shards: 2, Queue: 4096, MaxRecordBytes: 8 << 20},
		Outputs: OutputsConfig{Findings: FindingsConfig{Path: "-"}, Log: lc},
	}
}

// LoadConfig reads a YAML file over the defaults, strictly, then applies
// the environment overrides.
func LoadConfig(path string, getenv func(string) string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	cfg, err := ParseConfig(b)
	if err != nil {
		return cfg, fmt.Errorf("%s: %w", path, err)
	}
	cfg.applyEnv(getenv)
	return cfg, nil
}

// ParseConfig decodes YAML over the defaults; unknown keys are errors.
func ParseConfig(b []byte) (Config, error) {
	cfg := DefaultConfig()
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, errEOF) && err.Error() != "EOF" {
		return cfg, errors.New(unknownField.ReplaceAllStringFunc(err.Error(), func(m string) string {
			sub := unknownField.FindStringSubmatch(m)
			where := sections[sub[2]]
			if where == "" {
				where = "the configuration"
			}
			return fmt.Sprintf("unknown key %q in %s", sub[1], where)
		}))
	}
	return cfg, nil
}

// unknownField matches yaml's error for an unknown key; sections names the
// place of each configuration type as a user writes it.
var (
	unknownField = regexp.MustCompile(`field (\S+) not found in type ([\w.]+)`)
	sections     = map[string]string{
		"main.Config": "the top level", "main.StreamsConfig": "streams", "main.OutputsConfig": "outputs",
		"main.FindingsConfig": "outputs.findings", "jsonlog.Config": "outputs.log", "main.JetStreamConfig": "a jetstream entry",
		"main.MemoryConfig": "memory",
	}
)

var errEOF = errors.New("EOF")

// Environment overrides, for secrets that do not belong in a ConfigMap:
//
//	E2ATAP_FINGERPRINT_KEY           key of the redaction fingerprints
//	E2ATAP_TAP_<NAME>_URL            a nats tap's URL (with credentials)
//	E2ATAP_TAP_<NAME>_BROKERS        a kafka tap's brokers, comma-separated
//
// <NAME> is the tap name in upper case with every other character as "_".
func (c *Config) applyEnv(getenv func(string) string) {
	if v := getenv("E2ATAP_FINGERPRINT_KEY"); v != "" {
		c.Outputs.Log.FingerprintKey = []byte(v)
	}
	for i := range c.Taps {
		t := &c.Taps[i]
		p := "E2ATAP_TAP_" + envName(t.Name) + "_"
		if v := getenv(p + "URL"); v != "" {
			t.URL = v
		}
		if v := getenv(p + "BROKERS"); v != "" {
			t.Brokers = strings.Split(v, ",")
		}
	}
}

func envName(s string) string {
	b := []byte(strings.ToUpper(s))
	for i, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
}

var tapName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// Validate reports every problem of the configuration at once.
func (c *Config) Validate() error {
	var errs []string
	add := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	if _, err := validate.ProfileByName(c.Profile); err != nil {
		add("profile: %v", err)
	} else if p, _ := validate.ProfileByName(c.Profile); len(c.Rules) > 0 {
		if _, err := p.WithSeverities(c.Rules); err != nil {
			add("rules: %v", err)
		}
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		add("listen: %q is not host:port: %v", c.Listen, err)
	}
	if c.TLS.Enabled() || c.TLS.ClientCAFile != "" {
		if err := c.TLS.Validate(); err != nil {
			add("tls: %v", err)
		}
	}
	s := c.Streams
	if s.Max < 1 {
		add("streams.max: %d, want at least 1", s.Max)
	}
	if s.IdleTimeout < 0 {
		add("streams.idle_timeout: %s is negative", s.IdleTimeout)
	}
	if s.JoinWindow < 0 {
		add("streams.join_window: %s is negative", s.JoinWindow)
	}
	if s.Shards < 1 || s.Shards > 256 {
		add("streams.shards: %d, want 1 to 256", s.Shards)
	}
	if s.Queue < 1 {
		add("streams.queue: %d, want at least 1", s.Queue)
	}
	if s.MaxRecordBytes < 1 {
		add("streams.max_record_bytes: %d, want at least 1", s.MaxRecordBytes)
	}
	if b := c.Memory.BudgetBytes; b < -1 || (b > 0 && b < budgetMinBytes) {
		add("memory.budget_bytes: %d, want 0 (derived from the memory limit), -1 (unlimited) or at least %d", b, budgetMinBytes)
	}
	if len(c.Taps) == 0 {
		add("taps: none configured (a sidecar needs at least one tap: ws, logdir, nats or kafka)")
	}
	names := map[string]bool{}
	listens := map[string]string{c.Listen: "listen"}
	for i, t := range c.Taps {
		where := fmt.Sprintf("taps[%d]", i)
		if t.Name != "" {
			where = fmt.Sprintf("taps[%d] (%s)", i, t.Name)
		}
		switch {
		case t.Name == "":
			add("%s: name is missing", where)
		case !tapName.MatchString(t.Name):
			add("%s: name %q: use letters, digits, '.', '_' or '-' (it is a metric label)", where, t.Name)
		case names[t.Name]:
			add("%s: name %q is used by another tap", where, t.Name)
		}
		names[t.Name] = true
		switch t.Type {
		case "ws":
			if _, _, err := net.SplitHostPort(t.Listen); err != nil {
				add("%s: listen: %q is not host:port", where, t.Listen)
			} else if other, dup := listens[t.Listen]; dup {
				add("%s: listen %s is also used by %s", where, t.Listen, other)
			}
			listens[t.Listen] = where
			if u, err := url.Parse(t.Upstream); err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
				add("%s: upstream: %q is not a ws:// or wss:// URL", where, tap.RedactURL(t.Upstream))
			} else if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
				add("%s: upstream: %q: only scheme, host, port and path are allowed", where, tap.RedactURL(t.Upstream))
			}
			if t.TLS.Enabled() || t.TLS.ClientCAFile != "" {
				if err := t.TLS.Validate(); err != nil {
					add("%s: tls: %v", where, err)
				}
			}
			if t.DialTimeout < 0 || t.HandshakeTimeout < 0 {
				add("%s: dial_timeout and handshake_timeout must be positive (or unset: 30s, 60s)", where)
			}
		case "logdir":
			if len(t.Paths) == 0 {
				add("%s: paths: at least one glob is needed", where)
			}
			if t.Positions == "" {
				add("%s: positions: a file to keep read offsets in is needed", where)
			}
			if t.MaxOpenFiles < 0 {
				add("%s: max_open_files: %d is negative (0 = the default, 256)", where, t.MaxOpenFiles)
			}
		case "nats":
			for _, one := range strings.Split(t.URL, ",") { // a list of servers
				if u, err := url.Parse(strings.TrimSpace(one)); err != nil || u.Host == "" {
					add("%s: url: %q is not a URL like nats://host:4222", where, tap.RedactURL(one))
				}
			}
			if len(t.Subjects) == 0 && len(t.JetStream) == 0 {
				add("%s: subjects or jetstream: name at least one subject or stream", where)
			}
		case "kafka":
			if len(t.Brokers) == 0 {
				add("%s: brokers: at least one host:port is needed", where)
			}
			if len(t.Topics) == 0 {
				add("%s: topics: at least one topic (or regex) is needed", where)
			}
		case "":
			add("%s: type is missing (ws, logdir, nats or kafka)", where)
		default:
			add("%s: type %q is not ws, logdir, nats or kafka", where, t.Type)
		}
	}
	if err := c.Outputs.Log.Validate(); c.Outputs.Log.Path != "" && err != nil {
		add("outputs.log: %v", err)
	}
	if len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool { return false })
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}
