package validate

import (
	"fmt"
	"strings"
)

// longID: the request_ids of the streams fed, instead of uuid4s (which
// the tables pack in 16 bytes), 200-byte ids, that fill the tables' key
// chunks sooner (tests that run out of memory need fewer streams).
var longID = "q" + strings.Repeat("x", 190) + "%08x"

// streamRecord is a response of stream n (a uuid4-shaped request_id, or
// id when it is not "") at seq; final ends it.
func streamRecord(dst []byte, n, seq int, final bool, id ...string) []byte {
	f := "%08x-0000-4000-8000-000000000000"
	if len(id) > 0 {
		f = id[0]
	}
	kind, status, body := "e2a.chunk", "in_progress", `{"delta_kind":"text","delta":"x"}`
	if final {
		kind, status, body = "e2a.complete", "succeeded", `{"result":{}}`
	}
	return fmt.Appendf(dst[:0], `{"protocol_version":"1.0","response_id":"r%d-%d","request_id":"`+f+`","sequence":%d,"is_final":%t,"status":%q,"response_kind":%q,"timestamp":"2026-03-29T12:00:00Z","provenance":{},"body":%s}`,
		n, seq, n, seq, final, status, kind, body)
}
