package kafkatap

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/e2atap/e2atap/tap"
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
	// ClientID identifies the tap to the brokers.
	ClientID string
	// MaxPollRecords bounds the records emitted per poll (and so how long
	// a rebalance can be held).
	MaxPollRecords int
	// HealthInterval is how often the tap pings a broker while idle.
	HealthInterval time.Duration
	// Budget is the byte budget for what waits for the engine (nil:
	// unlimited). The tap waits for it (reads slower) and charges every
	// record it emits (tap.Message.Charged).
	Budget *tap.Budget
}

// DefaultConfig returns a config with every default set; Name, Brokers and
// Topics still have to be filled in.
func DefaultConfig() Config {
	return Config{
		Group:          "e2atap",
		Start:          "latest",
		ClientID:       "e2atap",
		MaxPollRecords: 1000,
		HealthInterval: 5 * time.Second,
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
	if c.ClientID == "" {
		c.ClientID = d.ClientID
	}
	if c.MaxPollRecords == 0 {
		c.MaxPollRecords = d.MaxPollRecords
	}
	if c.HealthInterval == 0 {
		c.HealthInterval = d.HealthInterval
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
		if i := strings.LastIndexByte(b, ':'); i <= 0 || i == len(b)-1 {
			bad("broker %q: want host:port", b)
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
	if c.MaxPollRecords < 0 {
		bad("max_poll_records is negative (%d)", c.MaxPollRecords)
	}
	if c.HealthInterval < 0 {
		bad("health_interval is negative (%v)", c.HealthInterval)
	}
	return errors.Join(errs...)
}
