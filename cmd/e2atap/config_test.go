package main

import (
	"strings"
	"testing"
	"time"
)

// TestConfigErrors: unknown keys are errors that name the key, its line
// and its place; Validate reports every problem at once; secrets in URLs
// are not echoed.
func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"unknown-top", "profile: spec\ncolour: red\n", []string{`line 2: unknown key "colour" in the top level`}},
		{"unknown-log", "outputs:\n  log: {path: /tmp/x, colr: 1}\n", []string{`unknown key "colr" in outputs.log`}},
		{"unknown-memory", "memory: {budget: 1}\n", []string{`unknown key "budget" in memory`}},
		{"key-of-another-tap-type", "taps:\n  - {name: l, type: logdir, paths: [a], positions: p, upstream: ws://x}\n",
			[]string{`line 2: key "upstream" is not a setting of a logdir tap`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(c.yaml))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}

	cfg, err := ParseConfig([]byte(`profile: strict
listen: 9464
taps:
  - {name: "agent ws", type: ws, listen: 127.0.0.1:1, upstream: http://x}
  - {name: mesh, type: nats, url: "nats://user:hunter2@host:4222"}
  - {type: kafka}
memory: {budget_bytes: 1000}
`))
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.Validate()
	if err == nil {
		t.Fatal("an invalid configuration validated")
	}
	for _, w := range []string{"profile:", "listen:", `name "agent ws"`, "upstream:", "subjects or jetstream", "taps[2]: name is missing", "brokers:", "topics:", "memory.budget_bytes: 1000"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Validate does not report %q:\n%v", w, err)
		}
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Error("Validate echoes a password")
	}
	if def := DefaultConfig(); def.Validate() == nil || !strings.Contains(def.Validate().Error(), "taps: none configured") {
		t.Error("the defaults alone (no tap) must not validate")
	}
}

// The ws tap's timeouts are settings of the tap (issue 8 a).
func TestConfigWSTimeouts(t *testing.T) {
	cfg, err := ParseConfig([]byte("taps:\n  - {name: w, type: ws, listen: 127.0.0.1:1, upstream: ws://127.0.0.1:2, dial_timeout: 3s, handshake_timeout: 90s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Taps[0]; got.DialTimeout != 3*time.Second || got.HandshakeTimeout != 90*time.Second {
		t.Errorf("dial_timeout %v, handshake_timeout %v", got.DialTimeout, got.HandshakeTimeout)
	}
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
	cfg, err = ParseConfig([]byte("taps:\n  - {name: w, type: ws, listen: 127.0.0.1:1, upstream: \"ws://u:hunter2@x:2\", dial_timeout: -1s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "dial_timeout") {
		t.Errorf("a negative dial_timeout validated: %v", err)
	}
}
