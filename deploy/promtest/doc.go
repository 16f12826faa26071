// Package promtest is the test harness shared by the dashboard, alert and
// end-to-end tests: it starts a real Prometheus server (the Debian package
// `prometheus`) on 127.0.0.1 with a temporary storage directory, queries it
// through the HTTP API, and reads PromQL and exposition files to check that
// dashboards and alerts only name metrics e2atap really exports.
//
// Place in the pipeline: none; it sits beside the sinks and looks at the
// exposition exporters/metrics produces, the way an operator's Prometheus
// would. Nothing outside tests imports it.
//
// Concurrency: a *Server is safe for concurrent queries. StartPrometheus
// registers a t.Cleanup that stops the process and waits for it, so no
// process or goroutine outlives the test that started it.
//
// Missing binaries: RequireBinary skips the test with a message naming the
// Debian package, unless the environment variable E2ATAP_REQUIRE_PACKAGES
// is 1 (CI sets it), in which case the test fails instead.
package promtest
