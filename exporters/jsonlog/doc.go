// Package jsonlog is the redacted record log and the findings log: the
// sinks at the end of the pipeline (tap → decode → validate → sinks) that
// write one JSON line per record the engine saw and one per finding.
//
// # Lines
//
// A JSON record (response, request, event frame, JSON-RPC, CloudEvent) is
// written in its own shape, redacted in place, with an "_e2atap" object
// appended: tap, direction, capture time, source position, connection,
// kind, the paths that were masked ("redacted", at most 64, "[]" for array
// elements), and "truncated", "gap", "joined" when they apply. An
// "_e2atap" key already in the record is replaced. Keys keep their order,
// numbers their literal, untouched strings their bytes; insignificant
// whitespace is removed so that a record is one line. A response (class
// response) lacking a minimum key of spec §12.7 (request_id, response_id,
// sequence, is_final, response_kind, timestamp) gets it as null, which the
// rules treat as missing, so the verdict does not change.
//
// Input that is not a JSON object is written as
// {"_e2atap":{..., "invalid":true, "length":N, "reason":...}}, with none of
// its content.
//
// A decoded EventMeshFrame is written as a JSON object
// {"msgType","flags","seq","attrs":{name: value, in wire order},"data"},
// "_e2atap.format":"frame"; a replay encodes it again and judges it as a
// frame. Data that is a JSON object or array (an
// E2A record or CloudEvent carried in a frame) and JSON attribute values
// (meta) are redacted as JSON and written as a string; other data is
// content (below); binary data kept under "keep" is written in base64 with
// "data_encoding":"base64", credentials masked in the bytes first.
//
// # Replay
//
// The record log is valid input for `e2atap validate` and gives the live
// run's findings (rule, stream and source; validate/replay.go reads it):
// a file whose first line has an "_e2atap" object is replayed, each record
// in the tap and connection scope it had live, with its live source,
// capture time, join window and losses ("gap" marks the connection as the
// live run did: the first record of a scope after its loss carries it; a
// loss that no record of its connection followed is a line of its own,
// {"_e2atap":{"tap","time","conn","lost":true}}, with no record; and lines
// the log itself lost to a failed write, which the live run judged, are
// followed by {"_e2atap":{"tap":"","lost":true,"all":true}}: the replay
// gaps every open stream there; the same line with "open":true ends the
// log of a run that stopped with streams open and did not finish them
// (with streams.finish_on_shutdown false): the replay drops them there
// with no finding and no outcome, as the run did, and counts them as
// open). No value the rules read is changed: types never change
// (a masked string stays a string, a masked object stays an object with
// the single key "_masked"); sequence, is_final, status, response_kind,
// ids, method, timestamp, protocol_version, provenance, body.delta_kind,
// body.branch, body.sessionUpdate, body.code, body.event_type,
// metadata._jiuwenswarm_server_push, params.intent and params.files[].uri's
// type are never masked for size. Credential shapes cannot occur in valid
// values of the enumerated fields, so masking them never turns a valid
// value invalid; personal data inside an id is masked with a fingerprint,
// so equal ids stay equal and different ids different. What the masking
// takes away from a rule is carried in "_e2atap": "from_log" and, for a
// record read from a log that held a credential, "secret" with its kind
// and path (never the value), for e2a.secret; for undecodable input,
// "invalid", its length and "reason", and "proto" for which decode rule.
// Only the messages of a few findings differ: an undecodable input's (its
// bytes are gone) and the reason a stream ended (idle_timeout or
// disconnect live, end_of_input in the replay).
//
// A record whose position survives a restart of its tap (a log file's
// byte offset, a Kafka partition's offset, a JetStream stream sequence:
// validate.Input.ResumePoint) carries it as "at":{"src","off","len"} (src
// redacted like the source, len the input's bytes). A tap reads such
// records again after a crash; the live run skips those its log holds
// already, and a replay skips a line whose point, length and content
// (fingerprints aside) it saw already: judged once.
//
// # Crashes
//
// Both logs are whole lines across a crash: lines are gathered in a buffer
// and written out with one write call, whole lines only (a write to a
// regular file is not cut short by a signal), and a file that ends in a
// partial line when it is opened (power loss, a full disk) is cut back to
// its last newline before anything is appended (Cut says how much). A
// write that fails part way is cut back the same way.
//
// # Redaction policy
//
//	what                                          how                       rule
//	--------------------------------------------  ------------------------  --------------
//	auth.bearer_token, auth.extra_headers.*,      ******(fp:16 hex)         auth
//	auth._meta.*, any other auth.* but method_id
//	*_ref strings (api_key_ref, credential_ref)   ******(fp:…)              ref
//	keys redact.ClassifyKey calls credentials     ******(fp:…)              credential_key
//	(*password*, *secret*, passwd, pwd,
//	authorization, credential, api key, private
//	key, access/account/signing key, cookie,
//	bearer, sig, auth; not *_hint, *_url,
//	*_name...), any depth: strings and numbers,
//	everything below the key
//	keys whose last word is token (token,         strings ******(fp:…);     credential_key
//	access_token, idToken): "tokens",             numbers kept
//	"max_tokens", "token_count" are not
//	in any string or key, wherever they start     ******(fp:…)              bearer, basic,
//	(redact.Find): Bearer/Basic/Authorization     (the scheme kept:         authorization,
//	(any scheme)/Cookie values, JWT, sk-…,        "Bearer ******(fp:…)")    jwt, sk, ghp,
//	gh[pousr]_…, github_pat_…, glpat-…, AKIA…,                              glpat, aws,
//	xox?-…, sk_live_…, AIza…, PEM private keys,                             slack, stripe,
//	password=…/api_key: …/token=… pairs (URLs,                              google,
//	query strings, text; also URL-encoded),                                 private_key,
//	URL userinfo, other providers' tokens                                   cookie,
//	(npm_, hf_, pypi-, SG., Twilio, Discord,                                key_value,
//	Telegram, dapi, dop_v1_, shpat_…), long                                 url_userinfo,
//	random tokens (≥32, mixed, ≥4.3 bits/char);                             vendor_token,
//	the "value" after a credential-named                                    high_entropy
//	"name"/"key" field ({"name":"DB_PASSWORD",
//	"value":…}: env lists, HAR headers)
//	e-mail addresses, phone numbers (+CC…,        ****** (fingerprinted     email, phone,
//	CN mobile, North American), CN ID numbers     inside rule-read ids      cn_id, user_id,
//	(check digit), card numbers (Luhn), IBANs     and in keys)              card, iban
//	(mod 97), user_id=… in text; email/phone/
//	mobile/tel keys; an integer literal of 11
//	to 19 digits that is one of these
//	body.delta, body.result, top-level result     content policy            content
//	and projections; keys delta, text, content,
//	prompt, query, content_blocks, parts,
//	rawInput, rawOutput, thought, reasoning at
//	any depth
//	data: URL payloads in any string              content policy            data_url
//	metadata._e2a_wire_legacy_* (any depth)       content policy            legacy_blob
//	values over max_record_bytes, largest         ******(len:N), same type  truncated
//	first, never a value the rules read
//
// Credentials are masked whatever the configuration. Booleans and nulls are
// never masked; empty strings stay empty (nothing to hide, and an empty
// bearer_token stays visibly empty). A value that already is a mask
// ("******", "******(fp:…)", "******(len:N)") is left alone, so the log
// can be redacted again without change.
//
// The fingerprint is the first 16 hex digits (64 bits) of
// HMAC-SHA256(key, value) (redact.Fingerprint); for "Bearer <token>" the
// value is the token, so a bearer_token and the same token in an
// Authorization header join. The key comes from the configuration
// (fingerprint_key, E2ATAP_FINGERPRINT_KEY); without one a random key is
// made once per process (redact.DefaultKey): fingerprints join within a
// run, never across runs. Masks of 8 hex digits (logs written before) are
// still recognised as masks.
//
// Invalid UTF-8 inside a string or key is written as U+FFFD, so that every
// line is valid JSON for strict readers; the engine judged the original
// bytes.
//
// # Secrets split across chunks
//
// Under content: keep a stream's body.delta texts (and the text data of an
// EventMesh sid's STREAM_CHUNK frames) are written, and a secret may be
// split across two of them. The Writer scans the last 256 bytes of a
// stream's previous delta again with the start of the next one; a match
// across the boundary is masked on both sides with the whole secret's
// fingerprint, and a value wholly in the next delta whose key or scheme
// ends the previous one ("Authorization: Token " | token) in the next. So the latest chunk line of each stream is held
// until the stream's next record, its end (StreamEnd), the second Flush
// after it was held, or Close; at most 64 KiB a line and 4 MiB in all
// (past that the oldest is written). carry.go has the details; a boundary
// whose earlier line had to be written already is counted (CarryMissed).
// A model streams a few characters a chunk: while the joined end of a
// stream's text may start a credential, the lines of its last few deltas
// (up to 256 bytes of text, 64 lines) are held, and a credential that
// starts in an earlier one masks each line it touches whole.
//
// The content policy (content: mask | keep | drop): mask writes
// "******(len:N)" for strings (N: bytes of the text), {"_masked":
// "******(len:N)"} and ["******(len:N)"] for objects and arrays (N: bytes of
// the JSON text), and "<media type>,******(len:N)" for data: URLs; drop
// writes "", {} or []; keep keeps the content but still masks credentials
// and personal data in it (data: URLs are kept). Numbers, booleans and
// nulls are content-free and kept.
//
// # Every other output
//
// The same masking covers what is not a record: Redactor.RedactText (JSON
// string content) and MaskText (plain text) mask free text with the
// record log's masks and fingerprints; the findings log uses it for a
// finding's stream, source and message, cmd's policy for offline findings,
// spans (exporters/traces Config.Redactor), the demo view and error
// messages, and LogHandler, a slog.Handler, for the process's own log lines.
//
// # Concurrency
//
// Redactor is immutable and safe for concurrent use (scratch buffers come
// from a pool). Writer and FindingWriter implement validate.Sink and are
// safe for concurrent use from every shard: a record is redacted outside
// the lock and its line written under it, so lines never interleave. Lines
// are buffered (256 KiB) and reach the file when the buffer fills (the
// record log writes the findings log out first: FlushFirst), on Flush, on
// Sync (also fsync: the caller does it at points where everything handed
// over is judged, and before a tap commits positions) and on Close. Rotation is by size: when a
// line would take the file past rotate_bytes, path.N-1 … path.1 shift up
// (the oldest beyond keep is removed), path becomes path.1 and a new path
// is opened. Write errors do not stop the pipeline: they are counted
// (Failed) and the first is kept (Err). Redaction counts by rule are
// atomics (Writer.Redactions, names in RuleNames) for the metrics exporter.
package jsonlog
