package logdir

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"
)

// The end of a fault is logged with how long it lasted as a duration an
// operator reads ("for":"3.034s"), as tap.Outage logs it; the JSON handler
// printed a time.Duration as nanoseconds ("for":3034000000).
func TestFaultEndReadable(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	f := fault{what: "opening files"}
	start := time.Now()
	f.fail(log, start, errors.New("permission denied"))
	f.fail(log, start.Add(time.Second), errors.New("permission denied"))
	buf.Reset()
	f.ok(log, start.Add(3034*time.Millisecond))
	var line struct {
		Msg      string `json:"msg"`
		For      any    `json:"for"`
		Failures int    `json:"failures"`
	}
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if line.Msg != "opening files works again" || line.For != "3.034s" || line.Failures != 2 {
		t.Errorf("logged %s", buf.Bytes())
	}
}
