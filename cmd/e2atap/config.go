package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/e2atap/e2atap/exporters/jsonlog"
	"github.com/e2atap/e2atap/redact"
	"github.com/e2atap/e2atap/tap"
	kafkatap "github.com/e2atap/e2atap/tap/kafka"
	natstap "github.com/e2atap/e2atap/tap/nats"
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
	// ShutdownTimeout bounds the stop after SIGTERM or SIGINT: past it the
	// process exits (status 1) without the rest of the drain, which an
	// output that takes no writes (a standard output nobody reads) or a
	// tap that does not stop would hold for ever. Below the pod's
	// terminationGracePeriodSeconds, so that the kubelet never has to
	// SIGKILL it.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`

	src *configSource // where each value came from, for messages
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
	// DrainTimeout: at SIGTERM or SIGINT, how long the tap goes on
	// relaying the connections open then, until their peers close them,
	// before it closes what is left with 1001 (drain.go). 0: at once.
	DrainTimeout time.Duration `yaml:"drain_timeout"`
	// TLS: for ws, serves the tap's listener over TLS (wss:// for the
	// Gateway: cert_file, key_file, client_ca_file); for nats and kafka,
	// the client side to the broker (ca_file, cert_file and key_file for
	// mutual TLS, server_name, insecure_skip_verify).
	TLS tlsfiles.Files `yaml:"tls"`
	// logdir
	Paths []string `yaml:"paths"`
	// Positions: a logdir tap's positions file, a nats tap's JetStream
	// cursors file.
	Positions    string `yaml:"positions"`
	MaxLineBytes int    `yaml:"max_line_bytes"`
	StartAt      string `yaml:"start_at"`
	MaxOpenFiles int    `yaml:"max_open_files"`
	// nats
	URL       string            `yaml:"url"`
	Subjects  []string          `yaml:"subjects"`
	Queue     string            `yaml:"queue"`
	JetStream []JetStreamConfig `yaml:"jetstream"`
	// PendingBytes: the NATS client's pending buffer per core subject
	// (default: the byte budget split over the subjects).
	PendingBytes int `yaml:"pending_bytes"`
	// Auth: how a nats tap authenticates; secrets only by their files.
	Auth NATSAuthConfig `yaml:"auth"`
	// kafka
	Brokers []string `yaml:"brokers"`
	Topics  []string `yaml:"topics"`
	Regex   bool     `yaml:"regex"`
	Group   string   `yaml:"group"`
	Start   string   `yaml:"start"`
	// Isolation: read_committed (default) or read_uncommitted, what the
	// tap reads of transactional producers.
	Isolation string `yaml:"isolation"`
	// CommitInterval: how often offsets are committed (default 5s).
	CommitInterval time.Duration `yaml:"commit_interval"`
	// SessionTimeout: how long the group waits for a silent replica
	// before its partitions go to the others (default the client's, 45s).
	SessionTimeout time.Duration `yaml:"session_timeout"`
	// SASL: how a kafka tap authenticates.
	SASL SASLConfig `yaml:"sasl"`

	line int // where the tap is in the file, for messages
}

// NATSAuthConfig is a nats tap's credentials (natstap.Auth): one of user
// and password_file, token_file, nkey_file (an nkey seed) or creds_file
// (a JWT and its seed). Each file is read again at every reconnect.
type NATSAuthConfig struct {
	User         string `yaml:"user"`
	PasswordFile string `yaml:"password_file"`
	TokenFile    string `yaml:"token_file"`
	NKeyFile     string `yaml:"nkey_file"`
	CredsFile    string `yaml:"creds_file"`
}

// SASLConfig is a kafka tap's SASL (kafkatap.SASL): PLAIN, SCRAM-SHA-256
// or SCRAM-SHA-512, a username and the file holding the password.
type SASLConfig struct {
	Mechanism    string `yaml:"mechanism"`
	Username     string `yaml:"username"`
	PasswordFile string `yaml:"password_file"`
}

// JetStreamConfig is one JetStream stream a nats tap reads.
type JetStreamConfig struct {
	Stream         string   `yaml:"stream"`
	FilterSubjects []string `yaml:"filter_subjects"`
	StartSeq       uint64   `yaml:"start_seq"`
}

// tapKeys lists the keys each tap type takes (besides name and type).
var tapKeys = map[string][]string{
	"ws":     {"listen", "upstream", "queue_size", "max_message_bytes", "dial_timeout", "handshake_timeout", "drain_timeout", "tls"},
	"logdir": {"paths", "positions", "max_line_bytes", "start_at", "max_open_files"},
	"nats":   {"url", "subjects", "queue", "jetstream", "positions", "pending_bytes", "max_message_bytes", "tls", "auth"},
	"kafka":  {"brokers", "topics", "regex", "group", "start", "isolation", "commit_interval", "session_timeout", "tls", "sasl"},
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

// defaultShards is streams.shards' default: half the CPUs the process may
// use (GOMAXPROCS, which follows a container's CPU limit), at least one.
// The taps and their clients take about as much CPU per record again as
// the engine (a JetStream or core NATS message: the client ~0.7 µs, the
// tap ~0.3, the engine ~1.7), and a second shard adds routing and a copy
// to every record: on 2 CPUs one shard judged JetStream and Kafka
// catch-ups at 11-12 % less CPU than two (make bench-system -only live).
// Where other processes keep the CPUs busy, two shards (two threads) get
// a larger share of them: there a configured 2 drains bursts sooner.
//
// A record log (outputs.log.path) changes the balance: the log writer
// runs on the shard, and its redaction costs about four times the
// engine's work per record, so the shards are then the bottleneck and the
// default is every CPU. On 2 CPUs with the record log, core NATS held
// 150 k msgs/s with one shard and 200 k with two (make bench-system
// -only live -live-only nats -live-record-log, -live-shards 1 for one).
func defaultShards(recordLog bool) int {
	if recordLog {
		return max(1, runtime.GOMAXPROCS(0))
	}
	return max(1, runtime.GOMAXPROCS(0)/2)
}

// DefaultConfig has a default for every key; it taps nothing.
func DefaultConfig() Config {
	lc := jsonlog.DefaultConfig()
	lc.Path = ""
	return Config{
		Profile: validate.ProfileJiuwenswarm,
		Listen:  "127.0.0.1:9464",
		Streams: StreamsConfig{Max: 1_000_000, IdleTimeout: 10 * time.Minute, JoinWindow: 30 * time.Second, Shards: defaultShards(false), Queue: 4096, MaxRecordBytes: 8 << 20},
		Outputs: OutputsConfig{Findings: FindingsConfig{Path: "-"}, Log: lc},
		// The manifests' terminationGracePeriodSeconds is 30.
		ShutdownTimeout: 25 * time.Second,
	}
}

// LoadConfig reads a YAML file over the defaults, leniently (decode.go:
// every problem of the file is found, and what could be decoded is kept),
// then applies the environment overrides. The error is Problems.
func LoadConfig(path string, getenv func(string) string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return DefaultConfig(), err
	}
	cfg, err := ParseConfig(b)
	cfg.applyEnv(getenv)
	if err != nil {
		return cfg, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig decodes YAML over the defaults. Unknown keys and values of
// the wrong type are problems that name their line and key path; every one
// is reported (the error is Problems), and the returned Config holds
// everything else the file sets, so that Validate can judge it too.
func ParseConfig(b []byte) (Config, error) {
	cfg := DefaultConfig()
	d := newConfigDecoder()
	d.document(b, &cfg)
	cfg.src = &configSource{lines: d.lines}
	if !d.set["streams.shards"] { // left out, or null
		cfg.Streams.Shards = defaultShards(cfg.Outputs.Log.Path != "")
	}
	if len(d.probs) > 0 {
		return cfg, d.probs.sorted()
	}
	return cfg, nil
}

// Environment overrides, for secrets that do not belong in a ConfigMap:
//
//	E2ATAP_FINGERPRINT_KEY           key of the redaction fingerprints
//	E2ATAP_TAP_<NAME>_URL            a nats tap's URL (with credentials)
//	E2ATAP_TAP_<NAME>_BROKERS        a kafka tap's brokers, comma-separated
//
// <NAME> is the tap name in upper case with every other character as "_".
// What they set is remembered, so that a problem with it names the
// variable rather than a line of the file.
func (c *Config) applyEnv(getenv func(string) string) {
	if v := getenv("E2ATAP_FINGERPRINT_KEY"); v != "" {
		c.Outputs.Log.FingerprintKey = []byte(v)
	}
	if c.src == nil {
		c.src = &configSource{}
	}
	if v := getenv("E2ATAP_FINGERPRINT_KEY"); v != "" {
		c.src.setEnv("outputs.log.fingerprint_key", "E2ATAP_FINGERPRINT_KEY")
	}
	for i := range c.Taps {
		t := &c.Taps[i]
		p := "E2ATAP_TAP_" + envName(t.Name) + "_"
		if v := getenv(p + "URL"); v != "" {
			t.URL = v
			c.src.setEnv(fmt.Sprintf("taps[%d].url", i), p+"URL")
		}
		if v := getenv(p + "BROKERS"); v != "" {
			t.Brokers = strings.Split(v, ",")
			c.src.setEnv(fmt.Sprintf("taps[%d].brokers", i), p+"BROKERS")
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

// validTapName says whether s is a tap name: 1 to 63 letters, digits and
// "_.-", the first a letter or digit. A loop, not a regexp: compiling
// `^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$` (62 copies of the class) at init was
// the costliest part of package main's start, paid by every command
// (TestValidTapName holds the two to the same answers).
func validTapName(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && (c == '_' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// checkHostPort checks a host:port address; the port is a number from 0
// to 65535 (0: any free port, for a listen address only).
func checkHostPort(addr string, listen bool) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) {
			return errors.New(ae.Err)
		}
		return err
	}
	n, err := strconv.Atoi(port)
	switch {
	case port == "":
		return errors.New("the port is missing")
	case err != nil || n < 0 || n > 65535:
		return fmt.Errorf("port %q: want a number from 1 to 65535", port)
	case n == 0 && !listen:
		return errors.New("port 0: want a number from 1 to 65535")
	}
	return nil
}

// checkURLPort checks the port of a parsed URL, if it has one.
// anyPort reports whether a listen address asks for a port the system
// picks (port 0): two of them never collide.
func anyPort(addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	return err == nil && port == "0"
}

func checkURLPort(u *url.URL) error {
	p := u.Port()
	if p == "" {
		return nil
	}
	if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q: want a number from 1 to 65535", p)
	}
	return nil
}

// Validate reports every problem of the configuration at once (the error
// is Problems), each with the line of the file or the environment
// variable its value came from.
func (c *Config) Validate() error { return c.validate().err() }

func (c *Config) validate() Problems {
	var probs Problems
	add := func(path, format string, a ...any) {
		line, env := c.src.where(path)
		probs = append(probs, Problem{Line: line, Env: env, Msg: fmt.Sprintf(format, a...)})
	}
	if _, err := validate.ProfileByName(c.Profile); err != nil {
		add("profile", "profile: %v", err)
	}
	if c.ShutdownTimeout <= 0 {
		add("shutdown_timeout", "shutdown_timeout: %v, want a positive duration", c.ShutdownTimeout)
	}
	ids := make([]string, 0, len(c.Rules))
	for id := range c.Rules {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids { // each override with its own line
		if _, ok := validate.ParseRule(id); !ok {
			hint := ""
			if s := closest(id, validate.RuleIDs[:]); s != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", s)
			}
			add("rules."+id, "rules: unknown rule %q%s", id, hint)
		} else if _, ok := validate.ParseSeverity(c.Rules[id]); !ok {
			add("rules."+id, "rules.%s: unknown severity %q (want error, warning, info or off)", id, c.Rules[id])
		}
	}
	if err := checkHostPort(c.Listen, true); err != nil {
		add("listen", "listen: %q is not host:port: %v", c.Listen, err)
	}
	if c.TLS.Enabled() || c.TLS.ClientCAFile != "" {
		if err := c.TLS.Validate(); err != nil {
			add("tls", "tls: %v", err)
		}
	}
	for _, k := range c.TLS.ClientOnly() {
		add("tls."+k, "tls: %s is a setting of a nats or kafka tap's tls (the client side); this tls serves the HTTP listener", k)
	}
	s := c.Streams
	if s.Max < 1 {
		add("streams.max", "streams.max: %d, want at least 1", s.Max)
	}
	if s.IdleTimeout < 0 {
		add("streams.idle_timeout", "streams.idle_timeout: %s is negative", s.IdleTimeout)
	}
	if s.JoinWindow < 0 {
		add("streams.join_window", "streams.join_window: %s is negative", s.JoinWindow)
	}
	if s.Shards < 1 || s.Shards > 256 {
		add("streams.shards", "streams.shards: %d, want 1 to 256", s.Shards)
	}
	if s.Queue < 1 {
		add("streams.queue", "streams.queue: %d, want at least 1", s.Queue)
	}
	if s.MaxRecordBytes < 1 {
		add("streams.max_record_bytes", "streams.max_record_bytes: %d, want at least 1", s.MaxRecordBytes)
	}
	if b := c.Memory.BudgetBytes; b < -1 || (b > 0 && b < budgetMinBytes) {
		add("memory.budget_bytes", "memory.budget_bytes: %d, want 0 (derived from the memory limit), -1 (unlimited) or at least %d", b, budgetMinBytes)
	}
	if len(c.Taps) == 0 {
		add("taps", "taps: none configured (a sidecar needs at least one tap: ws, logdir, nats or kafka)")
	}
	names := map[string]bool{}
	listens := map[string]string{c.Listen: "listen"}
	for i, t := range c.Taps {
		key := fmt.Sprintf("taps[%d]", i)
		where := key
		if t.Name != "" {
			where = fmt.Sprintf("taps[%d] (%s)", i, t.Name)
		}
		switch {
		case t.Name == "":
			add(key, "%s: name is missing", where)
		case !validTapName(t.Name):
			add(key+".name", "%s: name %q: use letters, digits, '.', '_' or '-' (it is a metric label)", where, t.Name)
		case redact.Contains(t.Name):
			add(key+".name", "%s: name %s holds a credential or personal data: it is a metric label, printed everywhere", where, redact.MaskID(t.Name))
		case names[t.Name]:
			add(key+".name", "%s: name %q is used by another tap", where, t.Name)
		}
		names[t.Name] = true
		switch t.Type {
		case "ws":
			if t.Listen == "" {
				add(key, "%s: listen is missing (the host:port the tap accepts connections on)", where)
			} else if err := checkHostPort(t.Listen, true); err != nil {
				add(key+".listen", "%s: listen: %q is not host:port: %v", where, t.Listen, err)
			} else if other, dup := listens[t.Listen]; dup && !anyPort(t.Listen) {
				add(key+".listen", "%s: listen %s is also used by %s", where, t.Listen, other)
			}
			listens[t.Listen] = where
			if t.Upstream == "" {
				add(key, "%s: upstream is missing (the ws:// or wss:// URL it relays to)", where)
			} else if u, err := url.Parse(t.Upstream); err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
				add(key+".upstream", "%s: upstream: %q is not a ws:// or wss:// URL", where, tap.RedactURL(t.Upstream))
			} else if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
				add(key+".upstream", "%s: upstream: %q: only scheme, host, port and path are allowed", where, tap.RedactURL(t.Upstream))
			} else if err := checkURLPort(u); err != nil {
				add(key+".upstream", "%s: upstream: %q: %v", where, tap.RedactURL(t.Upstream), err)
			}
			if t.TLS.Enabled() || t.TLS.ClientCAFile != "" {
				if err := t.TLS.Validate(); err != nil {
					add(key+".tls", "%s: tls: %v", where, err)
				}
			}
			for _, k := range t.TLS.ClientOnly() {
				add(key+".tls."+k, "%s: tls: %s is a setting of a nats or kafka tap's tls (the client side); a ws tap's tls serves its listener", where, k)
			}
			if t.DialTimeout < 0 || t.HandshakeTimeout < 0 {
				add(key+".dial_timeout", "%s: dial_timeout and handshake_timeout must be positive (or unset: 30s, 60s)", where)
			}
			if t.DrainTimeout < 0 {
				add(key+".drain_timeout", "%s: drain_timeout: %v, want 0 (close at once) or a positive duration", where, t.DrainTimeout)
			} else if c.ShutdownTimeout > 0 && t.DrainTimeout >= c.ShutdownTimeout {
				add(key+".drain_timeout", "%s: drain_timeout %v must be shorter than shutdown_timeout %v (the drain is part of the stop)", where, t.DrainTimeout, c.ShutdownTimeout)
			}
		case "logdir":
			if len(t.Paths) == 0 {
				add(key+".paths", "%s: paths: at least one glob is needed", where)
			}
			for j, p := range t.Paths {
				if _, err := filepath.Match(p, ""); err != nil {
					add(fmt.Sprintf("%s.paths[%d]", key, j), "%s: paths: %q is not a valid glob: %v", where, p, err)
				}
			}
			if t.Positions == "" {
				add(key+".positions", "%s: positions: a file to keep read offsets in is needed", where)
			}
			if t.MaxOpenFiles < 0 {
				add(key+".max_open_files", "%s: max_open_files: %d is negative (0 = the default, 256)", where, t.MaxOpenFiles)
			}
		case "nats":
			for _, one := range strings.Split(t.URL, ",") { // a list of servers
				if u, err := url.Parse(strings.TrimSpace(one)); err != nil || u.Host == "" {
					add(key+".url", "%s: url: %q is not a URL like nats://host:4222", where, tap.RedactURL(one))
				} else if err := checkURLPort(u); err != nil {
					add(key+".url", "%s: url: %q: %v", where, tap.RedactURL(one), err)
				}
			}
			if len(t.Subjects) == 0 && len(t.JetStream) == 0 {
				add(key, "%s: subjects or jetstream: name at least one subject or stream", where)
			}
			c.validateClientTLS(add, key, where, t.TLS)
			for _, e := range splitErr(t.natsAuth().Validate(t.URL)) {
				add(key+".auth", "%s: %v", where, e)
			}
		case "kafka":
			if len(t.Brokers) == 0 {
				add(key+".brokers", "%s: brokers: at least one host:port is needed", where)
			}
			for j, b := range t.Brokers {
				if err := checkHostPort(strings.TrimSpace(b), false); err != nil {
					add(fmt.Sprintf("%s.brokers[%d]", key, j), "%s: brokers: %q is not host:port: %v", where, kafkatap.RedactBroker(b), err)
				} else if strings.Contains(b, "@") {
					add(fmt.Sprintf("%s.brokers[%d]", key, j), "%s: brokers: %q is not host:port: it holds credentials", where, kafkatap.RedactBroker(b))
				}
			}
			if len(t.Topics) == 0 {
				add(key+".topics", "%s: topics: at least one topic (or regex) is needed", where)
			}
			switch t.Isolation {
			case "", kafkatap.ReadCommitted, kafkatap.ReadUncommitted:
			default:
				add(key+".isolation", "%s: isolation: %q is not %s (the default: what was committed, as the topic's consumers read it) or %s (aborted transactions' records too)", where, t.Isolation, kafkatap.ReadCommitted, kafkatap.ReadUncommitted)
			}
			if t.CommitInterval < 0 || t.SessionTimeout < 0 {
				add(key+".commit_interval", "%s: commit_interval and session_timeout must be positive (or unset: 5s, the client's 45s)", where)
			}
			c.validateClientTLS(add, key, where, t.TLS)
			for _, e := range splitErr(t.kafkaSASL().Validate()) {
				add(key+".sasl", "%s: %v", where, e)
			}
		case "":
			add(key, "%s: type is missing (ws, logdir, nats or kafka)", where)
		default:
			hint := ""
			if s := closest(t.Type, []string{"ws", "logdir", "nats", "kafka"}); s != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", s)
			}
			add(key+".type", "%s: type %q is not ws, logdir, nats or kafka%s", where, t.Type, hint)
		}
	}
	if err := c.Outputs.Log.Validate(); c.Outputs.Log.Path != "" && err != nil {
		for _, e := range splitErr(err) {
			k, _, _ := strings.Cut(e.Error(), ":")
			add("outputs."+k, "outputs.%v", e)
		}
	}
	return probs.sorted()
}

// validateClientTLS reports the problems of a nats or kafka tap's tls
// block (the client side), each naming its key and file.
func (c *Config) validateClientTLS(add func(path, format string, a ...any), key, where string, f tlsfiles.Files) {
	for _, k := range f.ServerOnly() {
		add(key+".tls."+k, "%s: tls: %s is a setting of a ws tap's tls (a server's); a tap dialing its broker takes ca_file, cert_file, key_file, server_name, insecure_skip_verify", where, k)
	}
	if !f.ClientEnabled() {
		return
	}
	for _, e := range splitErr(f.ValidateClient()) {
		add(key+".tls", "%s: tls: %v", where, e)
	}
}

// natsAuth is the tap's auth block as the nats tap takes it.
func (t *TapConfig) natsAuth() natstap.Auth {
	a := t.Auth
	return natstap.Auth{User: a.User, PasswordFile: a.PasswordFile, TokenFile: a.TokenFile, NKeyFile: a.NKeyFile, CredsFile: a.CredsFile}
}

// kafkaSASL is the tap's sasl block as the kafka tap takes it.
func (t *TapConfig) kafkaSASL() kafkatap.SASL {
	return kafkatap.SASL{Mechanism: t.SASL.Mechanism, Username: t.SASL.Username, PasswordFile: t.SASL.PasswordFile}
}

// splitErr returns the errors an errors.Join holds (or err itself).
func splitErr(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
