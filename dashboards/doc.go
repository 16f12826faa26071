// Package dashboards holds the Grafana dashboards of e2atap and their
// provisioning files, embedded so that the binary can serve or write them
// out and so that tests can check them.
//
//   - e2atap-overview.json: every tap of the selected namespaces: records,
//     findings, streams (active, outcomes, time to first chunk, duration
//     quantiles), heartbeats, tap health (up, drops, messages, bytes) and
//     redactions.
//   - e2atap-tap.json: one tap in detail.
//   - provisioning/dashboards.yaml, provisioning/datasources.yaml: Grafana
//     file provisioning.
//
// Both dashboards pick their Prometheus through the ${datasource} variable
// and filter every query by the namespace and tap variables. The queries
// only name metrics that exporters/metrics exports (a test parses every
// expression and checks it against the golden exposition), and a test in
// deploy/ runs each of them against a real Prometheus.
//
// Place in the pipeline: after the sinks; nothing in the engine imports it.
// Concurrency: FS is read-only and safe for concurrent use.
package dashboards
