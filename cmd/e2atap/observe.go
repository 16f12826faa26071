package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/e2atap/e2atap/exporters/observe"
	"github.com/e2atap/e2atap/validate"
)

const observeUsage = `Usage: e2atap observe [flags]

Follows a running sidecar's findings and stream outcomes live (and, with
--records, its redacted records), over its HTTP listener, so it works
through 'kubectl port-forward pod/NAME 9464'. Everything shown was redacted
by the sidecar, as in its logs. A watcher that reads too slowly loses
events (the sidecar never waits for it) and is told how many.

  e2atap observe --addr 127.0.0.1:9464 --severity error
  e2atap observe --rule e2a.seq_gap,e2a.missing_final --since 10m --follow=false
  e2atap observe --records --tap agent-ws --output json | jq .

Exit status: 0 when the stream ends (or on Ctrl-C), 2 when the sidecar
cannot be reached or refuses the request.

Flags:
`

func cmdObserve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("observe", stderr)
	addr := fs.String("addr", "127.0.0.1:9464", "the sidecar's listen address (host:port or http://host:port)")
	follow := fs.Bool("follow", true, "keep following new events (--follow=false: print what is kept and exit)")
	last := fs.Int("last", 20, "first print the last N matching events the sidecar kept")
	since := fs.String("since", "", "first print the kept events since then: a duration (10m) or an RFC 3339 time")
	rule := fs.String("rule", "", "only findings of these rules (comma-separated)")
	severity := fs.String("severity", "", "only findings at or above this severity: info, warning or error")
	tapName := fs.String("tap", "", "only events of these taps (comma-separated)")
	stream := fs.String("stream", "", "only events of this stream (its id as the sidecar prints it: fingerprinted ids by their mark)")
	records := fs.Bool("records", false, "also show every record, redacted (costs the sidecar a redaction per record while you watch)")
	streams := fs.Bool("streams", true, "show stream outcomes")
	output := fs.String("output", "table", "table (one aligned line per event) or json (the sidecar's JSON lines)")
	if done, code := parseFlags(fs, observeUsage, args, stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "e2atap observe: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return exitUsage
	}
	if *output != "table" && *output != "json" {
		fmt.Fprintf(stderr, "e2atap observe: --output: unknown output %q (want table or json)\n", *output)
		return exitUsage
	}
	types := []string{observe.TypeFinding}
	if *streams {
		types = append(types, observe.TypeStream)
	}
	if *records {
		types = append(types, observe.TypeRecord)
	}
	q := url.Values{}
	q.Set("types", strings.Join(types, ","))
	q.Set("last", strconv.Itoa(*last))
	for k, v := range map[string]string{"since": *since, "rule": *rule, "severity": *severity, "tap": *tapName, "stream": *stream} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if *follow {
		q.Set("follow", "1")
	}
	// Check the query here, so that a bad flag is a usage error that names
	// the flag, before anything is sent.
	if _, _, _, err := observe.ParseQuery(q.Get, time.Now()); err != nil {
		fmt.Fprintf(stderr, "e2atap observe: --%v\n", err)
		return exitUsage
	}
	base := *addr
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		fmt.Fprintf(stderr, "e2atap observe: --addr %q is not host:port or an http URL\n", *addr)
		return exitUsage
	}
	u.Path, u.RawQuery, u.User = "/observe", q.Encode(), nil
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		fmt.Fprintf(stderr, "e2atap observe: %v\n", err)
		return exitUsage
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return exitOK
		}
		fmt.Fprintf(stderr, "e2atap observe: cannot reach the sidecar at %s: %v\n", u.Host, errors.Unwrap(err))
		return exitUsage
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		fmt.Fprintf(stderr, "e2atap observe: %s answered %s: %s\n", u.Host, resp.Status, strings.TrimSpace(string(msg)))
		return exitUsage
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	if *output == "table" {
		fmt.Fprintf(w, "%-12s %-12s %-8s %-22s %-24s %s\n", "TIME", "TAP", "EVENT", "RULE/OUTCOME", "STREAM", "DETAIL")
		w.Flush()
	}
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue // keep-alive
		}
		if *output == "json" {
			w.Write(line)
			w.WriteByte('\n')
		} else {
			var ev observe.Event
			if json.Unmarshal(line, &ev) != nil {
				continue
			}
			writeEventRow(w, &ev)
		}
		w.Flush()
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "e2atap observe: the stream from %s broke: %v\n", u.Host, err)
		return exitUsage
	}
	return exitOK
}

// outcomeWord is a stream outcome as a person reads it: an EventMesh
// stream with no done chunk is missing_done (its rule's name), not the
// metric label missing_final.
func outcomeWord(ev *observe.Event) string {
	if ev.Outcome == validate.OutcomeMissingFinal.String() && ev.Protocol == validate.ProtoEventMesh {
		return "missing_done"
	}
	return ev.Outcome
}

// writeEventRow prints one event as an aligned row; the detail column is
// never cut. Every string is printed termSafe: stream keys, messages,
// kinds and records come from traffic.
func writeEventRow(w io.Writer, in *observe.Event) {
	ev := *in
	for _, s := range []*string{&ev.Tap, &ev.Rule, &ev.Severity, &ev.Stream, &ev.Source, &ev.Message, &ev.Outcome, &ev.Reason, &ev.Kind, &ev.Status} {
		*s = termSafe(*s)
	}
	ev.Record = json.RawMessage(termSafe(string(ev.Record)))
	t := ev.Time.Local().Format("15:04:05.000")
	switch ev.Type {
	case observe.TypeFinding:
		fmt.Fprintf(w, "%-12s %-12s %-8s %-22s %-24s %s (%s)\n", t, ev.Tap, ev.Severity, ev.Rule, ev.Stream, ev.Message, ev.Source)
	case observe.TypeStream:
		detail := fmt.Sprintf("%d records in %s", ev.Records, time.Duration(ev.Duration*float64(time.Second)).Round(time.Millisecond))
		if ev.Reason != "" {
			detail += ", " + ev.Reason
		}
		if ev.Gap {
			detail += ", across a loss (not judged across it)"
		}
		fmt.Fprintf(w, "%-12s %-12s %-8s %-22s %-24s %s\n", t, ev.Tap, "stream", outcomeWord(&ev), ev.Stream, detail)
	case observe.TypeRecord:
		fmt.Fprintf(w, "%-12s %-12s %-8s %-22s %-24s %s %s\n", t, ev.Tap, "record", ev.Kind+"/"+ev.Status, ev.Stream, ev.Source, ev.Record)
	case observe.TypeLost:
		fmt.Fprintf(w, "%-12s %-12s %-8s %-22s %-24s %s\n", t, "", "lost", "", "", ev.Message)
	}
}
