// Package frame reads and writes Apache EventMesh's binary EventMeshFrame
// and the two older encodings that can still appear where frames travel:
// CloudEvents structured-mode JSON (the storage plugins' fallback for
// bodies written before frames) and the legacy MeshMessage TCP package.
//
// Place in the pipeline: a tap (NATS, Kafka, log directory, frame file)
// hands raw bytes to the classifier; frame bytes come here, and validate/
// runs the frame rules on the decoded Frame. Decoding follows the reference
// decoder (EventMeshFrame.decode with FrameLimits, apache/eventmesh
// 13d0077) check for check, so frame.decode findings say what the
// reference would have thrown. Anything the reference accepts but the
// protocol forbids (unknown msgType, reserved flags, duplicate or
// non-UTF-8 attributes, encode-only limits) decodes fine and is left to the
// validator, with Frame.DupAttr, ValidUTF8 and OverLimits to ask about it.
//
// The hot path is Decode plus Frame.Attr: no copying, no allocation, no
// reflection. Encoding is append-style (Append, AppendFrame and the
// typed builders) and allocates only to grow the caller's buffer. The
// CloudEvents and MeshMessage paths use encoding/json and allocate; they
// are for legacy traffic, not the common case.
//
// Concurrency: every function here is pure; it reads its arguments and
// keeps nothing. A Frame, Package or CloudEvent is a value that aliases the
// input buffer it was decoded from, so it is valid as long as that buffer
// is not reused; many goroutines may read one Frame at once.
package frame
