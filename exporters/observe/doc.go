// Package observe is the sidecar's live view: a Sink that keeps the last
// events (findings, stream outcomes and, for watchers that ask, redacted
// records) in a bounded ring, and an HTTP handler that streams them to
// watchers as JSON lines (`e2atap observe`, or curl through kubectl
// port-forward).
//
// Place in the pipeline: one more sink beside the findings log; every
// event is redacted with the same Redactor as the findings and record
// logs, before it is kept.
//
// Concurrency: the Sink methods are called from every engine shard; each
// costs the redaction of its strings, a short critical section and, while
// someone watches, a line rendered into a reused buffer and, per watcher
// it matches, one non-blocking send (the line is copied once, only then);
// while nobody watches, only the line's length is worked out. The ring
// keeps events as compact fields, already redacted, and renders their
// lines when a watcher asks for them (last, since). A watcher has a bounded queue (QueueEvents); a slow watcher
// loses events, is told how many, and never slows the engine. The ring is
// bounded in events and bytes.
package observe
