package observe

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/e2atap/e2atap/validate"
)

// ServeHTTP streams events as JSON lines. Query parameters (all optional):
//
//	follow=1            keep the connection open and send events as they come
//	last=N              first send the last N matching events kept (default 0)
//	since=10m|RFC3339   first send the kept events since then
//	types=finding,stream,record   (default finding,stream)
//	rule=a,b  severity=warning  tap=a,b  stream=ID
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "observe: GET only", http.StatusMethodNotAllowed)
		return
	}
	f, last, follow, err := ParseQuery(r.URL.Query().Get, h.opts.Now())
	if err != nil {
		http.Error(w, "observe: "+err.Error(), http.StatusBadRequest)
		return
	}
	wt, backlog := h.subscribe(f, last)
	defer h.unsubscribe(wt)
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	flush := func() {
		if fl != nil {
			fl.Flush()
		}
	}
	for _, line := range backlog {
		if _, err := w.Write(line); err != nil {
			return
		}
	}
	flush()
	if !follow {
		return
	}
	ping := time.NewTicker(15 * time.Second)
	defer ping.Stop()
	var told uint64
	for {
		select {
		case <-r.Context().Done():
			return
		case <-h.closed:
			return
		case line := <-wt.ch:
			if _, err := w.Write(line); err != nil {
				return
			}
			// Drain what is queued before flushing: one syscall a burst.
			for more := true; more; {
				select {
				case line := <-wt.ch:
					if _, err := w.Write(line); err != nil {
						return
					}
				default:
					more = false
				}
			}
			if n := wt.lost.Load(); n > told {
				if _, err := w.Write(lostLine(n-told, h.opts.Now())); err != nil {
					return
				}
				told = n
			}
			flush()
		case <-ping.C:
			// A blank line keeps proxies (kubectl port-forward) from
			// closing an idle stream; readers skip it.
			if n := wt.lost.Load(); n > told {
				w.Write(lostLine(n-told, h.opts.Now()))
				told = n
			}
			if _, err := w.Write([]byte("\n")); err != nil {
				return
			}
			flush()
		}
	}
}

// ParseQuery reads the observe parameters through get (url.Values.Get, or
// the client's flags); now resolves a relative since.
func ParseQuery(get func(string) string, now time.Time) (f Filter, last int, follow bool, err error) {
	set := func(s string) map[string]bool {
		if s == "" {
			return nil
		}
		m := map[string]bool{}
		for _, v := range strings.Split(s, ",") {
			if v = strings.TrimSpace(v); v != "" {
				m[v] = true
			}
		}
		return m
	}
	f.Types, f.Rules, f.Taps, f.Stream = set(get("types")), set(get("rule")), set(get("tap")), get("stream")
	for t := range f.Types {
		if t != TypeFinding && t != TypeStream && t != TypeRecord {
			return f, 0, false, fmt.Errorf("types: unknown type %q (want finding, stream or record)", t)
		}
	}
	if s := get("severity"); s != "" {
		sev, ok := validate.ParseSeverity(s)
		if !ok || sev == validate.Off {
			return f, 0, false, fmt.Errorf("severity: unknown severity %q (want info, warning or error)", s)
		}
		f.Severity = sev
	}
	if s := get("last"); s != "" {
		if last, err = strconv.Atoi(s); err != nil || last < 0 {
			return f, 0, false, fmt.Errorf("last: %q is not a count", s)
		}
	}
	if s := get("since"); s != "" {
		if d, err := time.ParseDuration(s); err == nil && d >= 0 {
			f.Since = now.Add(-d)
		} else if t, err := time.Parse(time.RFC3339, s); err == nil {
			f.Since = t
		} else {
			return f, 0, false, fmt.Errorf("since: %q is neither a duration (10m) nor an RFC 3339 time", s)
		}
	}
	switch get("follow") {
	case "", "0", "false":
	case "1", "true":
		follow = true
	default:
		return f, 0, false, fmt.Errorf("follow: %q, want 1 or 0", get("follow"))
	}
	return f, last, follow, nil
}
