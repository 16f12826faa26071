// Package metrics is the Prometheus sink of e2atap: it turns what the
// validation engine reports (records, findings, stream starts and ends) into
// the e2atap_* metric families of DESIGN.md, and exposes the taps' own
// health and the redaction counts through collectors that read snapshots
// when Prometheus scrapes.
//
// Place in the pipeline: taps → decode → validate → sinks. A *Metrics is one
// validate.Sink beside exporters/jsonlog and exporters/traces. It knows
// nothing of the taps (exporters do not import tap/): cmd/e2atap adapts
// tap.Stats into TapSnapshot values for RegisterTaps.
//
// Concurrency: every method of *Metrics is safe for concurrent use; a
// sharded engine calls one Metrics from all its shards. Record is the hot
// path (every record): it does no label-map lookup in the client library
// and no allocation in the steady state. Children of the vectors are cached
// per label combination in a copy-on-write map (readers take no lock; a new
// combination copies the map under a mutex), so the cost of a record is one
// atomic load, one map lookup and one atomic add.
//
// Cardinality: label values come already bounded from the engine; the sink
// still caps the distinct values of every label (Options.MaxLabelValues) and
// folds the excess into "other". Stream keys, session ids and users never
// become labels: a stream reaches the metrics only as an exemplar trace id
// on the stream histograms, when Options.TraceID provides one.
//
// The registry is made in main and passed to New; nothing here touches the
// default registry or keeps global state.
package metrics
