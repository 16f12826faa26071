package jsonlog

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/e2atap/e2atap/frame"
	"github.com/e2atap/e2atap/validate"
)

// findingsOf keeps the findings a validator reports.
type findingsOf struct{ fs []validate.Finding }

func (f *findingsOf) Record(*validate.RecordInfo)      {}
func (f *findingsOf) Finding(x *validate.Finding)      { f.fs = append(f.fs, *x) }
func (f *findingsOf) StreamStart(*validate.StreamInfo) {}
func (f *findingsOf) StreamEnd(*validate.StreamInfo)   {}

// keys is a finding list as sorted "rule stream source" lines.
func (f *findingsOf) keys() []string {
	var out []string
	for _, x := range f.fs {
		out = append(out, x.Rule+" "+x.Stream+" "+x.Source)
	}
	slices.Sort(out)
	return out
}

// liveInput is one message as a tap hands it to the engine.
type liveInput struct {
	in    validate.Input
	frame bool
}

// streamCases turns the rule contract's cases into live traffic: each case
// on a connection of its own, every record read from a log (so e2a.secret
// applies), some of them after a loss or inside a join window.
func streamCases(t *testing.T) map[string][]liveInput {
	t.Helper()
	read := func(name string) [][]byte {
		b, err := os.ReadFile("../../validate/testdata/vectors/" + name)
		if err != nil {
			t.Fatal("vectors:", err)
		}
		return bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	}
	byProfile := map[string][]liveInput{}
	at := time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC)
	n := 0
	add := func(profile, tapName, conn string, data []byte, isFrame bool, i int) {
		n++
		in := validate.Input{
			Tap: tapName, Conn: conn, Dir: uint8(1 + n%2),
			Pos:     validate.Position{Kind: validate.PosConn, Name: conn, Offset: int64(i)},
			Time:    at.Add(time.Duration(n) * time.Millisecond),
			Data:    data,
			FromLog: !isFrame,
			Joined:  n%11 == 0,
			Gap:     n%17 == 0,
		}
		byProfile[profile] = append(byProfile[profile], liveInput{in, isFrame})
	}
	for ci, l := range read("e2a_streams.jsonl") {
		var c struct {
			Profile string
			Lines   []string
		}
		if err := json.Unmarshal(l, &c); err != nil {
			t.Fatal(err)
		}
		for i, x := range c.Lines {
			add(c.Profile, "agent-ws", fmt.Sprintf("c%d", ci), []byte(x), false, i)
		}
	}
	for ci, l := range read("frame_streams.jsonl") {
		var c struct{ Hex string }
		if err := json.Unmarshal(l, &c); err != nil {
			t.Fatal(err)
		}
		b, err := hex.DecodeString(c.Hex)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; len(b) > 0; i++ {
			_, rest, err := frame.Decode(b)
			if err != nil { // the undecodable tail: one message
				add(validate.ProfileJiuwenswarm, "mesh", fmt.Sprintf("f%d", ci), b, true, i)
				break
			}
			add(validate.ProfileJiuwenswarm, "mesh", fmt.Sprintf("f%d", ci), b[:len(b)-len(rest)], true, i)
			b = rest
		}
	}
	return byProfile
}

// The record log replays to the live run's findings: the same rule, stream
// and source for each, e2a.secret (whose values the log masks), frames,
// undecodable input, losses and join windows included. The live run here
// is the engine fed as the taps feed it, with this Writer as its sink.
func TestReplayGivesTheLiveFindings(t *testing.T) {
	cases := streamCases(t)
	covered := map[string]bool{}
	for _, profile := range []string{validate.ProfileJiuwenswarm, validate.ProfileSpec} {
		inputs := cases[profile]
		if len(inputs) == 0 {
			continue
		}
		t.Run(profile, func(t *testing.T) {
			p, err := validate.ProfileByName(profile)
			if err != nil {
				t.Fatal(err)
			}
			cfg := validate.DefaultConfig()
			cfg.Profile = p
			cfg.IdleTimeout = 0
			var buf bytes.Buffer
			w := NewWriterTo(&buf, NewRedactor(ContentMask, 65536, testKey))
			live := &findingsOf{}
			e := validate.NewEngine(cfg, validate.MultiSink{live, w})
			for _, li := range inputs {
				in := li.in
				if in.Gap {
					e.Gap(&in)
				}
				e.Observe(&in)
			}
			for _, tapName := range []string{"agent-ws", "mesh"} {
				e.Finish(validate.ReasonEOF, &validate.Input{Tap: tapName})
			}
			w.Flush()
			if bytes.Contains(buf.Bytes(), []byte("sk-")) && !bytes.Contains(buf.Bytes(), []byte("******")) {
				t.Fatal("the log is not redacted")
			}

			replayed := &findingsOf{}
			r := validate.NewEngine(cfg, replayed)
			if _, err := validate.Read(bytes.NewReader(buf.Bytes()), "records.jsonl", validate.FormatAuto, validate.ReadOptions{FromLog: true}, r); err != nil {
				t.Fatal(err)
			}
			r.Finish(validate.ReasonEOF, &validate.Input{Pos: validate.Position{Name: "records.jsonl"}})

			want, got := live.keys(), replayed.keys()
			if len(want) < 20 {
				t.Fatalf("only %d live findings: the test feeds too little", len(want))
			}
			for _, k := range want {
				covered[strings.Fields(k)[0]] = true
			}
			t.Logf("%d live findings, %d log lines", len(want), bytes.Count(buf.Bytes(), []byte("\n")))
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				for _, k := range want {
					if !slices.Contains(got, k) {
						t.Errorf("live only:   %s", k)
					}
				}
				for _, k := range got {
					if !slices.Contains(want, k) {
						t.Errorf("replay only: %s", k)
					}
				}
			}
		})
	}
	for _, must := range []string{"e2a.secret", "e2a.decode", "e2a.seq_gap", "e2a.missing_final", "e2a.request_dup", "frame.decode", "frame.seq_gap", "frame.attr", "frame.missing_done"} {
		if !covered[must] {
			t.Errorf("no live %s finding: the test does not cover it", must)
		}
	}
}
