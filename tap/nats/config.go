package natstap

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/tap/tlsfiles"
)

// Config is one NATS tap. Zero numeric and duration fields take the value of
// DefaultConfig.
type Config struct {
	// Name is the tap's name: Message.Tap and the metric label.
	Name string
	// URL is the NATS server URL, or a comma-separated list of them.
	URL string
	// Subjects are core NATS subjects (wildcards allowed) read through plain
	// subscriptions.
	Subjects []string
	// Queue, if set, subscribes to Subjects in this queue group: e2atap's
	// own group, shared by e2atap replicas. Never an application's group:
	// that would take messages away from the application.
	Queue string
	// Streams are JetStream streams read through the tap's own ephemeral
	// consumers.
	Streams []StreamConfig

	// PendingMsgs and PendingBytes are the NATS client's pending limits per
	// core subscription; beyond them the client drops (slow consumer), and
	// that is the only place where core NATS loses messages. PendingMsgs -1
	// (the default) is no limit by count; PendingBytes 0 is the budget's
	// limit split over the subjects (64 MiB each without a budget).
	PendingMsgs  int
	PendingBytes int
	// Budget is the byte budget for what waits for the engine (nil:
	// unlimited). Core NATS and JetStream wait for it (read slower) and
	// charge every message they hand over (tap.Message.Charged).
	Budget *tap.Budget
	// MaxMessageBytes is the largest payload passed on; larger ones are
	// dropped and counted (tap.DropOversize).
	MaxMessageBytes int

	// ReconnectWait is the first delay before a reconnect or a JetStream
	// consumer recreation; it doubles on every failed attempt up to
	// ReconnectMaxWait.
	ReconnectWait    time.Duration
	ReconnectMaxWait time.Duration

	// FetchBatch is how many JetStream messages one pull request asks for;
	// two are open at once (each is also bounded in bytes: 32 MiB, or one
	// message of MaxMessageBytes if that is more).
	FetchBatch int
	// Heartbeat is the JetStream idle heartbeat (500ms to 15s); two missed
	// heartbeats make the tap recreate its consumer.
	Heartbeat time.Duration

	// Positions, if set, is a file where the tap keeps, per JetStream
	// stream, the sequence after the last message judged and written out
	// (saved every SaveInterval, after BeforeSave, and at the end of Run);
	// a tap started again reads on from there (it wins over StartSeq).
	// Unset: a start reads from StartSeq, or only what is stored after it.
	Positions string
	// SaveInterval is how often the cursors are saved (default 1s).
	SaveInterval time.Duration
	// BeforeSave, if set, is called before the cursors are written: it
	// returns once what the tap emitted so far is judged and written out
	// (DESIGN.md, "Durability order"), and says, per stream, the sequence
	// of the oldest open stream's first record: the cursor saved goes no
	// further, so that a tap started again reads every stream open then
	// from its start. An error skips that save.
	BeforeSave func(context.Context) (OpenFirst, error)

	// TLS is the client side of TLS to the server (tlsfiles.Files: ca_file,
	// cert_file and key_file for mutual TLS, server_name,
	// insecure_skip_verify). Zero: TLS only if the server or the URL
	// (tls://) asks for it, verified against the system's CAs.
	TLS tlsfiles.Files
	// Auth is how the tap authenticates (zero: as the URL says, or not).
	Auth Auth
}

// OpenFirst says, for the JetStream stream whose messages carry
// Position.Partition partition, the stream sequence of the first record of
// the oldest stream the engine still holds open from it (ok false: none).
type OpenFirst func(partition int32) (seq int64, ok bool)

// StreamConfig is one JetStream stream to watch.
type StreamConfig struct {
	// Stream is the stream's name.
	Stream string
	// FilterSubjects restricts the tap to these subjects of the stream;
	// empty means every message of the stream.
	FilterSubjects []string
	// StartSeq is the first stream sequence to read. 0 reads only messages
	// stored after the tap started. A StartSeq older than the stream's first
	// message counts the removed messages as losses (tap.DropUpstreamGap).
	StartSeq uint64
}

// DefaultConfig returns a config with every default set; Name and Subjects
// or Streams still have to be filled in.
func DefaultConfig() Config {
	return Config{
		URL:              "nats://127.0.0.1:4222",
		PendingMsgs:      -1,
		MaxMessageBytes:  16 << 20,
		ReconnectWait:    100 * time.Millisecond,
		ReconnectMaxWait: 5 * time.Second,
		FetchBatch:       1024,
		Heartbeat:        5 * time.Second,
		SaveInterval:     time.Second,
	}
}

// withDefaults fills zero fields from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.URL == "" {
		c.URL = d.URL
	}
	setInt(&c.PendingMsgs, d.PendingMsgs)
	setInt(&c.MaxMessageBytes, d.MaxMessageBytes)
	setInt(&c.FetchBatch, d.FetchBatch)
	if c.ReconnectWait == 0 {
		c.ReconnectWait = d.ReconnectWait
	}
	if c.ReconnectMaxWait == 0 {
		c.ReconnectMaxWait = max(d.ReconnectMaxWait, c.ReconnectWait)
	}
	if c.Heartbeat == 0 {
		c.Heartbeat = d.Heartbeat
	}
	if c.SaveInterval == 0 {
		c.SaveInterval = d.SaveInterval
	}
	return c
}

func setInt(p *int, d int) {
	if *p == 0 {
		*p = d
	}
}

// Validate reports every problem of the config at once (errors.Join). Zero
// numeric fields are valid: they mean the default.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("nats tap %q: "+format, append([]any{c.Name}, args...)...))
	}
	if c.Name == "" {
		bad("name is empty")
	}
	for _, u := range strings.Split(c.URL, ",") {
		// The URL may carry credentials (nats://user:pass@host): only its
		// userinfo-free form and the reason are printed, never url.Error's
		// text, which quotes the URL whole.
		if _, err := url.Parse(strings.TrimSpace(u)); err != nil {
			bad("url %q: %s", tap.RedactURL(u), tap.URLReason(u, err))
		}
	}
	if len(c.Subjects) == 0 && len(c.Streams) == 0 {
		bad("neither subjects nor streams are set")
	}
	seen := map[string]bool{}
	for _, s := range c.Subjects {
		if err := checkSubject(s); err != nil {
			bad("subject %q: %v", s, err)
		}
		if seen[s] {
			bad("subject %q listed twice", s)
		}
		seen[s] = true
	}
	if strings.ContainsAny(c.Queue, " \t\r\n.*>") {
		bad("queue %q: must be one token without wildcards", c.Queue)
	}
	streams := map[string]bool{}
	for i, s := range c.Streams {
		if s.Stream == "" {
			bad("streams[%d]: stream name is empty", i)
		} else if strings.ContainsAny(s.Stream, " \t\r\n.*>") {
			bad("streams[%d]: stream name %q: must be one token without wildcards", i, s.Stream)
		}
		if streams[s.Stream] {
			bad("stream %q listed twice", s.Stream)
		}
		streams[s.Stream] = true
		for _, f := range s.FilterSubjects {
			if err := checkSubject(f); err != nil {
				bad("stream %q: filter subject %q: %v", s.Stream, f, err)
			}
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"pending_bytes", c.PendingBytes},
		{"pending_bytes", c.PendingBytes},
		{"max_message_bytes", c.MaxMessageBytes},
		{"fetch_batch", c.FetchBatch},
	} {
		if f.v < 0 {
			bad("%s is negative (%d)", f.name, f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    time.Duration
	}{
		{"reconnect_wait", c.ReconnectWait},
		{"reconnect_max_wait", c.ReconnectMaxWait},
		{"heartbeat", c.Heartbeat},
		{"save_interval", c.SaveInterval},
	} {
		if f.v < 0 {
			bad("%s is negative (%v)", f.name, f.v)
		}
	}
	if c.Heartbeat != 0 && (c.Heartbeat < 500*time.Millisecond || c.Heartbeat > 15*time.Second) {
		// The client's limits: 500ms-30s, and under half the 30s pull expiry.
		bad("heartbeat (%v) must be between 500ms and 15s", c.Heartbeat)
	}
	if c.PendingMsgs < -1 {
		bad("pending_msgs (%d) must be -1 (no limit) or positive", c.PendingMsgs)
	}
	if c.ReconnectWait > 0 && c.ReconnectMaxWait > 0 && c.ReconnectMaxWait < c.ReconnectWait {
		bad("reconnect_max_wait (%v) is less than reconnect_wait (%v)", c.ReconnectMaxWait, c.ReconnectWait)
	}
	if k := c.TLS.ServerOnly(); k != nil {
		bad("tls: %s is a server's setting (a tap dialing NATS takes ca_file, cert_file, key_file, server_name, insecure_skip_verify)", strings.Join(k, ", "))
	}
	if c.TLS.ClientEnabled() {
		for _, err := range splitJoined(c.TLS.ValidateClient()) {
			bad("tls: %v", err)
		}
	}
	for _, err := range c.Auth.validate(c.URL) {
		bad("%v", err)
	}
	return errors.Join(errs...)
}

// checkSubject accepts what a subscription accepts: dot-separated non-empty
// tokens without whitespace, '*' and '>' only as whole tokens, '>' last.
func checkSubject(s string) error {
	if s == "" {
		return errors.New("empty")
	}
	if strings.ContainsAny(s, " \t\r\n") {
		return errors.New("contains whitespace")
	}
	toks := strings.Split(s, ".")
	for i, tok := range toks {
		switch {
		case tok == "":
			return errors.New("empty token")
		case tok == ">" && i != len(toks)-1:
			return errors.New("'>' must be the last token")
		case len(tok) > 1 && strings.ContainsAny(tok, "*>"):
			return errors.New("wildcards must be whole tokens")
		}
	}
	return nil
}

// splitJoined returns the errors an errors.Join holds (or err itself).
func splitJoined(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
