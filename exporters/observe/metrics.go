package observe

import "github.com/prometheus/client_golang/prometheus"

// Register exports the hub's own counters: events published, events lost
// by slow watchers, watchers connected.
func (h *Hub) Register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "e2atap_observe_events_total",
			Help: "Events (findings, stream outcomes, records asked for) published to e2atap observe watchers."},
			func() float64 { e, _, _ := h.Stats(); return float64(e) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "e2atap_observe_lost_total",
			Help: "Events dropped for observe watchers that read too slowly (each watcher is told its count)."},
			func() float64 { _, l, _ := h.Stats(); return float64(l) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "e2atap_observe_watchers",
			Help: "e2atap observe watchers connected now."},
			func() float64 { _, _, w := h.Stats(); return float64(w) }),
	} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
