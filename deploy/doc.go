// Package deploy holds what it takes to run e2atap next to an agent: the
// container image (Dockerfile), the Prometheus alert rules (prometheus/,
// with promtool unit tests), and Kubernetes manifests (kubernetes/: a
// kustomize base with the agent Deployment, e2atap as a native sidecar, its
// ConfigMap, a Service, a PodMonitor and the PrometheusRule; an example
// overlay). The Go code here is tests only: they decode every manifest
// strictly into the real Kubernetes and Prometheus Operator types, keep the
// PrometheusRule identical to the plain rule file, run promtool, and run
// every dashboard query and alert expression against a real Prometheus
// scraping a running `e2atap run` (built from cmd/e2atap) whose logdir, ws
// and nats taps are fed faulty traffic, and run every command of
// docs/runbook.md and docs/deploy.md that can run without a cluster against
// such a sidecar (TestDocCommands; kubectl cp or a shell in the distroless
// sidecar is an error there).
//
// The reusable harness (start Prometheus, query it, parse PromQL and the
// exposition) is the sub-package promtest.
//
// Place in the pipeline: after the sinks; nothing imports this package.
// Concurrency: no exported API.
package deploy
