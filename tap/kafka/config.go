package kafkatap

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/tap/tlsfiles"
)

// Config is one Kafka tap. Zero fields take the value of DefaultConfig.
type Config struct {
	// Name is the tap's name: Message.Tap and the metric label.
	Name string
	// Brokers are seed brokers, host:port.
	Brokers []string
	// Topics to read: names, or regular expressions when Regex is set.
	Topics []string
	Regex  bool
	// Group is the tap's own consumer group. Never an application's group.
	Group string
	// Start is where a partition with no committed offset for Group starts:
	// "latest" (only new records) or "earliest".
	Start string
	// Isolation is what the tap reads of transactional producers:
	// "read_committed" (the default) reads what was committed, once, as
	// every consumer of such a topic does; "read_uncommitted" reads every
	// record written, those of aborted transactions too (a batch retried
	// in a new transaction is then read twice). Either way, transaction
	// markers (control records) are never emitted, and the offsets they
	// and aborted records take are no loss.
	Isolation string
	// ClientID identifies the tap to the brokers.
	ClientID string
	// MaxPollRecords bounds the records taken per poll (and so how long
	// a rebalance can be held). 0, the default: everything the client has
	// buffered, one fetch response. The client sends its next fetch only
	// once what it buffered is taken, so a poll of the whole fetch lets it
	// fetch and decompress the next one while the engine judges this one:
	// a catch-up keeps the client and the engine busy at once. What a poll
	// holds is bounded by the fetch size (the client's FetchMaxBytes and
	// FetchMaxPartitionBytes), and a record is charged to Budget before it
	// is emitted, as before.
	MaxPollRecords int
	// FetchMaxBytes bounds one fetch response (compressed bytes, at least
	// one record batch whatever its size). The client buffers one fetch
	// and the tap polls another whole (MaxPollRecords 0): both are held
	// outside Budget, so the bound follows it. 0: a 128th of Budget,
	// from 1 MiB to 16 MiB (16 MiB with no budget).
	FetchMaxBytes int32
	// HealthInterval is how often the tap pings a broker while idle.
	HealthInterval time.Duration
	// Budget is the byte budget for what waits for the engine (nil:
	// unlimited). The tap waits for it (reads slower) and charges every
	// record it emits (tap.Message.Charged).
	Budget *tap.Budget
	// BeforeCommit, when set, is called before every commit. It returns
	// once what the tap emitted so far is judged and written out
	// (DESIGN.md, "Durability order") and says, per partition, the offset
	// of the oldest open stream's first record: the tap commits no further
	// than that, so that whoever reads the partition next reads every open
	// stream from its start. An error means no commit this time. Nil: the
	// tap commits what it has emitted.
	BeforeCommit func(context.Context) (OpenFirst, error)
	// CommitInterval is how often the tap commits (besides on revoke and
	// at shutdown).
	CommitInterval time.Duration
	// SessionTimeout is the group session timeout: how long the group
	// waits for a silent member (a crashed replica) before it hands its
	// partitions to the others. Zero: the client's default (45 s).
	SessionTimeout time.Duration
	// JoinWindow: a stream first seen this soon after its partition was
	// assigned may start mid-stream (its records carry Message.Joined):
	// the partition may resume at a commit that did not wait for open
	// streams (an older e2atap, another tool, start: latest).
	JoinWindow time.Duration
	// EndCheck is how often the tap looks up the end (high watermark) of
	// the partitions it reads, to tell the engine which of them hold
	// records it has not read yet (Message.Progress). Negative: never.
	EndCheck time.Duration

	// TLS is the client side of TLS to the brokers (tlsfiles.Files:
	// ca_file, cert_file and key_file for mutual TLS, server_name,
	// insecure_skip_verify). Zero: plaintext.
	TLS tlsfiles.Files
	// SASL authenticates the tap (zero: no SASL).
	SASL SASL
}

// Config.Isolation's values.
const (
	ReadCommitted   = "read_committed"
	ReadUncommitted = "read_uncommitted"
)

// OpenFirst says, for one partition, the offset of the first record of the
// oldest stream the engine still holds open from it (ok false: none).
type OpenFirst func(topic string, partition int32) (offset int64, ok bool)

// DefaultConfig returns a config with every default set; Name, Brokers and
// Topics still have to be filled in.
func DefaultConfig() Config {
	return Config{
		Group:          "e2atap",
		Start:          "latest",
		Isolation:      ReadCommitted,
		ClientID:       "e2atap",
		HealthInterval: 5 * time.Second,
		CommitInterval: 5 * time.Second,
		EndCheck:       time.Second,
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Group == "" {
		c.Group = d.Group
	}
	if c.Start == "" {
		c.Start = d.Start
	}
	if c.Isolation == "" {
		c.Isolation = d.Isolation
	}
	if c.ClientID == "" {
		c.ClientID = d.ClientID
	}
	if c.HealthInterval == 0 {
		c.HealthInterval = d.HealthInterval
	}
	if c.FetchMaxBytes == 0 {
		c.FetchMaxBytes = fetchMaxBytes(c.Budget)
	}
	if c.CommitInterval == 0 {
		c.CommitInterval = d.CommitInterval
	}
	if c.EndCheck == 0 {
		c.EndCheck = d.EndCheck
	}
	return c
}

// Validate reports every problem of the config at once (errors.Join). Zero
// fields are valid: they mean the default.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("kafka tap %q: "+format, append([]any{c.Name}, args...)...))
	}
	if c.Name == "" {
		bad("name is empty")
	}
	if len(c.Brokers) == 0 {
		bad("no brokers")
	}
	for _, b := range c.Brokers {
		if i := strings.LastIndexByte(b, ':'); i <= 0 || i == len(b)-1 || strings.ContainsAny(b, "@/") {
			bad("broker %q: want host:port", RedactBroker(b))
		}
	}
	if len(c.Topics) == 0 {
		bad("no topics")
	}
	seen := map[string]bool{}
	for _, tp := range c.Topics {
		switch {
		case tp == "":
			bad("empty topic")
		case c.Regex:
			if _, err := regexp.Compile(tp); err != nil {
				bad("topic pattern %q: %v", tp, err)
			}
		case strings.ContainsAny(tp, " \t\r\n/\\,"):
			bad("topic %q: invalid characters", tp)
		}
		if seen[tp] {
			bad("topic %q listed twice", tp)
		}
		seen[tp] = true
	}
	if strings.TrimSpace(c.Group) != c.Group {
		bad("group %q: leading or trailing space", c.Group)
	}
	switch c.Start {
	case "", "latest", "earliest":
	default:
		bad("start %q: want latest or earliest", c.Start)
	}
	switch c.Isolation {
	case "", ReadCommitted, ReadUncommitted:
	default:
		bad("isolation %q: want %s or %s", c.Isolation, ReadCommitted, ReadUncommitted)
	}
	if c.MaxPollRecords < 0 {
		bad("max_poll_records is negative (%d)", c.MaxPollRecords)
	}
	if c.HealthInterval < 0 {
		bad("health_interval is negative (%v)", c.HealthInterval)
	}
	if c.FetchMaxBytes < 0 {
		bad("fetch_max_bytes is negative (%d)", c.FetchMaxBytes)
	}
	if c.CommitInterval < 0 {
		bad("commit_interval is negative (%v)", c.CommitInterval)
	}
	if c.SessionTimeout < 0 {
		bad("session_timeout is negative (%v)", c.SessionTimeout)
	}
	if c.JoinWindow < 0 {
		bad("join_window is negative (%v)", c.JoinWindow)
	}
	if k := c.TLS.ServerOnly(); k != nil {
		bad("tls: %s is a server's setting (a tap dialing Kafka takes ca_file, cert_file, key_file, server_name, insecure_skip_verify)", strings.Join(k, ", "))
	}
	if c.TLS.ClientEnabled() {
		if err := c.TLS.ValidateClient(); err != nil {
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				for _, e := range j.Unwrap() {
					bad("tls: %v", e)
				}
			} else {
				bad("tls: %v", err)
			}
		}
	}
	for _, err := range c.SASL.validate() {
		bad("%v", err)
	}
	return errors.Join(errs...)
}

// Bounds of the fetch size a budget implies (Config.FetchMaxBytes).
const (
	minFetchBytes = 1 << 20
	maxFetchBytes = 16 << 20
)

// fetchMaxBytes is Config.FetchMaxBytes' default: a 128th of the budget,
// within [minFetchBytes, maxFetchBytes]. Two fetches of JSON records,
// decompressed (up to about ten times their size), then hold at most a
// sixth of the budget beside it.
func fetchMaxBytes(b *tap.Budget) int32 {
	if b == nil {
		return maxFetchBytes
	}
	return int32(min(max(b.Limit()/128, minFetchBytes), maxFetchBytes))
}
