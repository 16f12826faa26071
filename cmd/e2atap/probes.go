package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// The probes (DESIGN.md, "Readiness is serving"):
//
//   - /readyz: e2atap can relay. A configuration is loaded and every ws tap
//     is running, which means its listener accepts (the proxy listens when
//     it is built and serves while it runs). The health of upstreams and
//     brokers is never part of it: a sidecar failing its readiness probe
//     takes the whole agent pod out of its Service, and a pod that is out
//     gets no client that could show the upstream is back.
//   - /healthz: the process is alive: 200 whenever it answers at all, with
//     each tap's state as detail (plain text, or JSON with ?format=json).
//     A failed tap, a broker down, a full budget are detail, never a 5xx:
//     restarting the sidecar would cut every relayed connection and fix
//     none of them.

// wsNotAccepting lists the ws taps whose listener does not accept.
func (s *sidecar) wsNotAccepting() (down []string, ws int) {
	for _, t := range s.tapList() {
		if t.typ != "ws" {
			continue
		}
		ws++
		// Running (Run entered) and Up (the ws tap's listener accepts).
		if !t.sup.running.Load() || !t.stats.Up.Load() {
			down = append(down, t.name)
		}
	}
	return down, ws
}

func (s *sidecar) serveReady(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if s.draining.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "not ready: draining: stopping once the open ws connections close (%d open)\n", s.openConns())
		return
	}
	down, ws := s.wsNotAccepting()
	if len(down) > 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "not ready: ws taps not accepting connections: %s (see /healthz)\n", strings.Join(down, ", "))
		return
	}
	fmt.Fprintf(w, "ready: configuration loaded at %s; %d ws taps accepting, %d taps in all\n",
		time.Unix(0, s.loadedAt.Load()).UTC().Format(time.RFC3339), ws, len(s.taps))
}

// health is the /healthz document.
type health struct {
	Status         string      `json:"status"` // always "ok": the process answers
	Version        string      `json:"version"`
	Ready          bool        `json:"ready"`
	ConfigLoadedAt time.Time   `json:"config_loaded_at"`
	Budget         budgetState `json:"budget"`
	Taps           []tapHealth `json:"taps"`
}

type budgetState struct {
	LimitBytes int64 `json:"limit_bytes"` // 0: unlimited
	UsedBytes  int64 `json:"used_bytes"`
}

func (s *sidecar) health() health {
	down, _ := s.wsNotAccepting()
	h := health{Status: "ok", Version: version, Ready: len(down) == 0, ConfigLoadedAt: time.Unix(0, s.loadedAt.Load()).UTC(),
		Budget: budgetState{LimitBytes: s.budget.Limit(), UsedBytes: s.budget.Used()}}
	for _, t := range s.tapList() {
		h.Taps = append(h.Taps, t.sup.health())
	}
	return h
}

func (s *sidecar) serveHealth(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	h := s.health()
	if r.URL.Query().Get("format") == "json" {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(h)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	ready := "ready"
	if !h.Ready {
		ready = "not ready"
	}
	budget := "unlimited"
	if h.Budget.LimitBytes > 0 {
		budget = fmt.Sprintf("%s of %s used", mib(h.Budget.UsedBytes), mib(h.Budget.LimitBytes))
	}
	fmt.Fprintf(w, "ok: e2atap %s is alive (%s); configuration loaded at %s; byte budget %s\n",
		h.Version, ready, h.ConfigLoadedAt.Format(time.RFC3339), budget)
	for _, t := range h.Taps {
		fmt.Fprintf(w, "tap %s (%s): %s; up=%t", t.Name, t.Type, t.State, t.Up)
		if t.UpstreamUp != nil {
			fmt.Fprintf(w, " upstream_up=%t", *t.UpstreamUp)
		}
		if t.Failures > 0 {
			fmt.Fprintf(w, " failures=%d failing_since=%s retry_at=%s", t.Failures,
				t.FailingSince.UTC().Format(time.RFC3339), t.RetryAt.UTC().Format(time.RFC3339))
		}
		if len(t.Errors) > 0 {
			fmt.Fprintf(w, " errors=%s", counts(t.Errors))
		}
		if len(t.Drops) > 0 {
			fmt.Fprintf(w, " drops=%s", counts(t.Drops))
		}
		if t.LastError != "" {
			fmt.Fprintf(w, " last_error_at=%s last_error=%q", t.LastErrorAt.UTC().Format(time.RFC3339), t.LastError)
		}
		fmt.Fprintln(w)
	}
}

// counts formats reason counts as reason:n,... in name order.
func counts(m map[string]uint64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s:%d", k, m[k])
	}
	return b.String()
}
