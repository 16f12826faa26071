package e2a

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

// checkPrimed holds a Scan into a record whose key memos (keyMemo) and
// clean texts were left by prime to a Scan into a fresh record: the same
// error (text and offset), Record, MayHoldSecret and RawDelta.
func checkPrimed(t testing.TB, prime, data []byte) {
	t.Helper()
	primed := new(Record)
	_ = Scan(prime, primed)
	checkPrimedRecord(t, primed, prime, data)
	// Primed twice: the first Scan leaves the key memos, the second the
	// values after them (keyMemo.v), which data's Scan then compares.
	twice := new(Record)
	_ = Scan(prime, twice)
	_ = Scan(prime, twice)
	checkPrimedRecord(t, twice, prime, data)
	// Thrice: the third Scan makes spans of the members the second left
	// whole (putSpan), which data's Scan then compares.
	thrice := new(Record)
	for range 3 {
		_ = Scan(prime, thrice)
	}
	checkPrimedRecord(t, thrice, prime, data)
	// A record ScanStd filled (the fields it set are not the ones Scan
	// marks), then the Scan cleared only what it marked and did not write (clearStale).
	std := new(Record)
	_ = ScanStd(prime, std)
	checkPrimedRecord(t, std, prime, data)
}

// checkPrimedRecord holds a Scan of data into primed (which prime left) to
// a Scan into a fresh record.
func checkPrimedRecord(t testing.TB, primed *Record, prime, data []byte) {
	t.Helper()
	fresh := new(Record)
	pe, fe := Scan(data, primed), Scan(data, fresh)
	if (pe == nil) != (fe == nil) || pe != nil && pe.Error() != fe.Error() {
		t.Fatalf("%q after %q: error %v, fresh record %v", data, prime, pe, fe)
	}
	var ps, fs *SyntaxError
	if errors.As(pe, &ps) != errors.As(fe, &fs) || ps != nil && *ps != *fs {
		t.Fatalf("%q after %q: error %#v, fresh record %#v", data, prime, pe, fe)
	}
	if d := diffRecords(primed, fresh); len(d) > 0 {
		t.Fatalf("%q after %q differs from a fresh record (primed vs fresh):\n%s", data, prime, strings.Join(d, "\n"))
	}
	if primed.MayHoldSecret() != fresh.MayHoldSecret() {
		t.Fatalf("%q after %q: MayHoldSecret %v, fresh record %v", data, prime, primed.MayHoldSecret(), fresh.MayHoldSecret())
	}
	pd, pesc, pok := primed.RawDelta()
	fd, fesc, fok := fresh.RawDelta()
	if !bytes.Equal(pd, fd) || pesc != fesc || pok != fok {
		t.Fatalf("%q after %q: RawDelta %q %v %v, fresh record %q %v %v", data, prime, pd, pesc, pok, fd, fesc, fok)
	}
	checkDeltaText(t, data, primed)
	checkDeltaText(t, data, fresh)
}

// memoPairs are records that write the keys of the one before them almost
// as it did: the same key then another of the same length, a longer key
// with the same start, an escaped spelling, whitespace before the colon,
// no space after it, the same key in another object (where it means
// something else), a secret key after a plain one, and inputs that end or
// break inside what a memo compares.
var memoPairs = [][2]string{
	{`{"status": "a", "sequence": 1, "is_final": true}`, `{"status": "a", "sequencf": 1, "is_final": true}`},
	{`{"status": "a", "sequence": 1}`, `{"status": "a", "sequence_x": 1}`},
	{`{"status": "a", "sequence": 1}`, `{"status": "a", "sequ\u0065nce": 2}`},
	{`{"status": "a", "sequence": 1}`, `{"status": "a", "sequence" : 3}`},
	{`{"status": "a", "sequence": 1}`, `{"status":"a","sequence":4}`},
	{`{"status":"a","sequence":4}`, `{"status": "a", "sequence": 5}`},
	{`{"body": {"delta_kind": "text", "delta": "x"}}`, `{"delta_kind": "text", "delta": "x", "body": {"delta_kind": "y"}}`},
	{`{"provenance": {"kind": "k"}, "kind": "x"}`, `{"kind": "x", "provenance": {"kind": "k"}}`},
	{`{"body": {"event_type": "e", "delta_kind": "text"}}`, `{"event_type": "e", "delta_kind": "text"}`},
	{`{"error": {"code": 1, "message": "m"}}`, `{"code": 1, "message": "m"}`},
	{`{"params": {"intent": "i", "_meta": {"traceparent": "t"}}}`, `{"intent": "i", "_meta": {"traceparent": "t"}}`},
	{`{"params": {"intent": "cancel"}, "method": "m"}`, `{"params": {"intent": "cancel", "token": "hunter2"}, "method": "m"}`},
	{`{"status": "a", "user_id": "u"}`, `{"status": "a", "password": "hunter2hunter2"}`},
	{`{"status": "a", "auth": null}`, `{"status": "a", "auth": "opaque"}`},
	{`{"status": "a", "user_id": "u"}`, `{"status": "a", "user_id": "sk-proj-CRPSabcdefghijklmnop0123"}`},
	{`{"status": "a", "sequence": 1, "is_final": true}`, `{"status": "a", "sequence": 1`},
	{`{"status": "a", "sequence": 1, "is_final": true}`, `{"status": "a", "sequence": 1, "is_fi`},
	{`{"status": "a", "sequence": 1, "is_final": true}`, `{"status": "a", "sequence"`},
	{`{"status": "a", "sequence": 1, "is_final": true}`, `{"status": "a", "sequence"; 1}`},
	{`{"status": "a", "sequence": 1, "is_final": true}`, "{\"status\": \"a\", \"sequence\":\x01 1}"},
	{`{"status": "a", "sequence": 1, "is_final": true}`, `{"status": "a", "sequence": 1, "is_final": true, "sequence": 2}`},
	{`{"params": {"_meta": {"traceparent": "t"}}}`, `{"params": {"_meta": {"traceparent": "u", "traceparent": null}}}`},
	// In objects skipContainer reads (their own memos).
	{`{"provenance": {"kind": "a", "is_complete": false}}`, `{"provenance": {"kind": "a", "is_completf": false}}`},
	{`{"provenance": {"kind": "a", "auth": null}}`, `{"provenance": {"kind": "a", "auth": "opaque"}}`},
	{`{"expected_output_modes": [{"kind": "a", "auth": null}]}`, `{"expected_output_modes": [{"kind": "a", "auth": "opaque"}]}`},
	{`{"x": {"details": {"kind": 1}}, "y": {"details": {"kind": 2}}}`, `{"x": {"details": {"kind": 1}}, "y": {"details": {"kind" 2}}}`},
	{`{"x": {"kind": "a", "name": "n"}}`, `{"x": {"kind": "a", "n\u0061me": "n"}}`},
	// The values after remembered keys (keyMemo.v): the same, another of
	// the same length, longer, escaped, cut, a credential, white space
	// before it, a value that fills the memo's bytes, one past them.
	{`{"status": "a", "channel": "web", "user_id": "u-1"}`, `{"status": "a", "channel": "wex", "user_id": "u-2"}`},
	{`{"status": "a", "channel": "web", "user_id": "u-1"}`, `{"status": "a", "channel": "webx", "user_id": "u-10"}`},
	{`{"status": "a", "channel": "web", "user_id": "u-1"}`, `{"status": "a", "channel": "w\u0065b", "user_id": "u\"1"}`},
	{`{"status": "a", "channel": "web", "user_id": "u-1"}`, `{"status": "a", "channel": "we`},
	{`{"status": "a", "channel": "web", "user_id": "u-1"}`, `{"status": "a", "channel": "web"`},
	{`{"status": "a", "channel": "web", "user_id": "u-1"}`, `{"status": "a", "channel": "web", "user_id": "ghp_CRPSabcdefghijklmnopqrstuvwxyz0123456789"}`},
	{`{"status": "a", "channel": "web", "user_id": "u-1"}`, `{"status": "a", "channel":  "web", "user_id" : "u-1"}`},
	{`{"status": "a", "channel": "web", "user_id": "u-1"}`, `{"status": "a", "channel": 7, "user_id": null}`},
	{`{"status": "a", "response_kind": "e2a.complete"}`, `{"status": "a", "response_kind": "e2a.completf"}`},
	{`{"status": "a", "response_kind": "e2a.completed"}`, `{"status": "a", "response_kind": "e2a.complete"}`},
	{`{"status": "a", "password": "x", "channel": "web"}`, `{"status": "a", "password": "x", "channel": "web"}`},
	{`{"status": "a", "converted_at": null, "model": "gpt"}`, `{"status": "a", "converted_at": null, "model": "gpt\u0000"}`},
	// Whole members (keyMemo.whole: the key, the value and what follows
	// it): more white space after the comma or before the brace, a value
	// that goes on (a longer number, a non-empty container), a literal of
	// another type, the input ending right after what the memo compares,
	// a container key repeated (memoSet forgets the first), members of
	// nested objects and of objects skipContainer reads.
	{`{"status": "a", "auth": null, "x": 1}`, `{"status": "a", "auth": null,   "x": 1}`},
	{`{"status": "a", "auth": null}`, `{"status": "a", "auth": null }`},
	{`{"status": "a", "auth": null}`, `{"status": "a", "auth": null}}`},
	{`{"status": "a", "sequence": 1, "x": 2}`, `{"status": "a", "sequence": 12, "x": 2}`},
	{`{"status": "a", "sequence": 1, "x": 2}`, `{"status": "a", "sequence": 1.5, "x": 2}`},
	{`{"status": "a", "sequence": -1, "x": 2}`, `{"status": "a", "sequence": -1e5, "x": 2}`},
	{`{"status": "a", "is_final": true, "x": 2}`, `{"status": "a", "is_final": false, "x": 2}`},
	{`{"status": "a", "metadata": {}, "x": 2}`, `{"status": "a", "metadata": {"_jiuwenswarm_server_push": true}, "x": 2}`},
	{`{"status": "a", "metadata": [], "x": 2}`, `{"status": "a", "metadata": [1], "x": 2}`},
	{`{"session_update_kind": null,    "x": 1}`, `{"session_update_kind": null,    `},
	{`{"session_update_kind": null,    "x": 1}`, `{"session_update_kind": null,    }`},
	{`{"metadata": {"_jiuwenswarm_server_push": true}, "metadata": {}, "x": 1}`, `{"metadata": {"_jiuwenswarm_server_push": true}, "metadata": {}, "x": 1}`},
	{`{"body": {"delta_kind": "text", "delta": "x"}, "body": null, "x": 1}`, `{"body": {"delta_kind": "text", "delta": "x"}, "body": null, "x": 1}`},
	{`{"params": {"_meta": {"traceparent": "t"}}, "params": {}, "acp_meta": {"traceparent": "u"}, "acp_meta": {}}`, `{"params": {"_meta": {"traceparent": "t"}}, "params": {}, "acp_meta": {"traceparent": "u"}, "acp_meta": {}}`},
	{`{"body": {"delta_kind": "text", "event_type": "e"}, "x": 1}`, `{"body": {"delta_kind": "text", "event_type": "e" }, "x": 1}`},
	{`{"body": {"delta_kind": "text", "event_type": "e"}, "x": 1}`, `{"body": {"delta_kind": "text", "event_type": 7}, "x": 1}`},
	{`{"error": {"code": 1, "message": "m"}, "x": 1}`, `{"error": {"code": 10, "message": "m"}, "x": 1}`},
	{`{"provenance": {"source_protocol": "e2a", "converter": null, "details": {"is_complete": false}}}`, `{"provenance": {"source_protocol": "e2a", "converter": null, "details": {"is_complete": false }}}`},
	{`{"provenance": {"source_protocol": "e2a", "converter": null, "details": {"is_complete": false}}}`, `{"provenance": {"source_protocol": "e2a", "converter": nul}}`},
	{`{"provenance": {"source_protocol": "e2a", "converter": null}}`, `{"provenance": {"source_protocol": "e2a", "converter": null,  "kind": 1}}`},
	{`{"provenance": {"kind": "a", "user_id": "u-1", "z": 1}}`, `{"provenance": {"kind": "a", "user_id": "ghp_CRPSabcdefghijklmnopqrstuvwxyz0123456789", "z": 1}}`},
	{`{"status": "a", "user_id": "u-1", "z": 1}`, `{"status": "a", "user_id": "u-1", "z": 1, "user_id": "sk-proj-CRPSabcdefghijklmnop0123"}`},
	// Runs of whole members (spans): a key twice in one (the last wins,
	// whether its value has a Str or not), a repeated container key that
	// forgets what the first held, a run cut short, longer or changed,
	// and runs in nested objects.
	{`{"status": "a", "sequence": 1, "sequence": null, "x": 1}`, `{"status": "a", "sequence": 1, "sequence": null, "x": 1}`},
	{`{"status": "a", "sequence": null, "sequence": 1, "x": 1}`, `{"status": "a", "sequence": null, "sequence": 1, "x": 1}`},
	{`{"metadata": {"_jiuwenswarm_server_push": true}, "status": "a", "metadata": {}, "is_final": true}`, `{"metadata": {"_jiuwenswarm_server_push": true}, "status": "a", "metadata": {}, "is_final": true}`},
	{`{"status": "a", "is_final": true, "sequence": 1, "x": 1}`, `{"status": "a", "is_final": true, "sequence": 2, "x": 1}`},
	{`{"status": "a", "is_final": true, "sequence": 1, "x": 1}`, `{"status": "a", "is_final": true, "sequence": 1}`},
	{`{"status": "a", "is_final": true, "sequence": 1, "x": 1}`, `{"status": "a", "is_final": true, "sequence": 1, "is_stream": false}`},
	{`{"status": "a", "is_final": true, "sequence": 1}`, `{"status": "a", "is_final": true, "sequence": 1, "is_stream": false}`},
	{`{"status": "a", "is_final": true, "sequence": 1}`, `{"status": "a", "is_final": true, "sequence": 1 `},
	{`{"body": {"delta_kind": "text", "event_type": "e", "delta": "x"}, "x": 1}`, `{"body": {"delta_kind": "text", "event_type": "f", "delta": "x"}, "x": 1}`},
	{`{"error": {"code": 1, "message": "m"}, "status": "a", "is_final": true}`, `{"error": {"code": 1, "message": "m"}, "status": "a", "is_final": true}`},
	// The last members, within keyMemoLen bytes of the input's end
	// (memoAt): as before, cut inside the key, the value or before the
	// closing brace, a brace too many, white space after it, a byte
	// changed in the last place a memo compares.
	{`{"status": "a", "a2a_metadata": {}, "acp_meta": {}}`, `{"status": "a", "a2a_metadata": {}, "acp_meta": {}}`},
	{`{"status": "a", "a2a_metadata": {}, "acp_meta": {}}`, `{"status": "a", "a2a_metadata": {}, "acp_met`},
	{`{"status": "a", "a2a_metadata": {}, "acp_meta": {}}`, `{"status": "a", "a2a_metadata": {}, "acp_meta": {`},
	{`{"status": "a", "a2a_metadata": {}, "acp_meta": {}}`, `{"status": "a", "a2a_metadata": {}, "acp_meta": {}`},
	{`{"status": "a", "a2a_metadata": {}, "acp_meta": {}}`, `{"status": "a", "a2a_metadata": {}, "acp_meta": {}}}`},
	{`{"status": "a", "a2a_metadata": {}, "acp_meta": {}}`, `{"status": "a", "a2a_metadata": {}, "acp_meta": {}} `},
	{`{"status": "a", "a2a_metadata": {}, "acp_meta": {}}`, `{"status": "a", "a2a_metadata": {}, "acp_meta": {}]`},
	{`{"status": "a", "a2a_metadata": {}, "acp_meta": {}}`, `{"status": "a", "a2a_metadata": {}, "acp_meta": []}`},
	{`{"status": "a", "user_id": "u-1"}`, `{"status": "a", "user_id": "u-1\u0000"}`},
	{`{"status": "a", "user_id": "u-1"}`, `{"status": "a", "user_id": "u-1" }`},
	{`{"status": "a", "user_id": "u-1"}`, `{"status": "a", "user_id": "u-"}`},
	{`{"status": "a", "user_id": "u-1"}`, "{\"status\": \"a\", \"user_id\": \"u-1\"\x00"},
	{`{"provenance": {"kind": "a", "is_complete": false}}`, `{"provenance": {"kind": "a", "is_complete": false}`},
	{`{"provenance": {"kind": "a", "is_complete": false}}`, `{"provenance": {"kind": "a", "is_complete": fals`},
	{`{"provenance": {"kind": "a", "is_complete": false}}`, `{"provenance": {"kind": "a", "is_complete": false}}}`},
}

func TestKeyMemo(t *testing.T) {
	defer func(v bool) { vectorScan = v }(vectorScan)
	for _, v := range []bool{false, haveKernel} {
		vectorScan = v
		for _, p := range memoPairs {
			// As written, and with room after them for a memo's compare
			// (keyMemoLen bytes from a key's opening quote).
			for _, pad := range []string{"", strings.Repeat(" ", keyMemoLen)} {
				a, b := []byte(p[0]+pad), []byte(p[1]+pad)
				checkPrimed(t, a, b)
				checkPrimed(t, b, a)
				checkPrimed(t, b, b)
			}
		}
		recs := append(benchRecords(), genRecords...)
		for _, a := range recs {
			for _, b := range recs {
				checkPrimed(t, a.data, b.data)
				// b cut short and b with each key renamed: the memos a
				// left almost match.
				checkPrimed(t, a.data, b.data[:len(b.data)*2/3])
				checkPrimed(t, a.data, bytes.ReplaceAll(b.data, []byte(`": `), []byte(`x": `)))
				checkPrimed(t, a.data, bytes.ReplaceAll(b.data, []byte(`_id": `), []byte(`_i\u0064": `)))
			}
		}
	}
}

// FuzzScanMemo: a Scan into a record that another input primed says what
// a Scan into a fresh record says; the input is scanned after itself (its
// own memos match it everywhere), after the seeds, and after itself
// changed (its memos nearly match).
func FuzzScanMemo(f *testing.F) {
	for _, p := range memoPairs {
		f.Add([]byte(p[0]), []byte(p[1]))
		f.Add([]byte(p[0]+strings.Repeat(" ", keyMemoLen)), []byte(p[1]+strings.Repeat(" ", keyMemoLen)))
	}
	for _, p := range longPairs() {
		f.Add([]byte(p[0]), []byte(p[1]))
	}
	for _, rec := range genRecords {
		f.Add(rec.data, rec.data)
	}
	f.Add(genRecords[0].data, genRecords[1].data)
	f.Fuzz(func(t *testing.T, prime, data []byte) {
		// keyKinds learns the keys, as rule e2a.secret's walk does: keys
		// outside knownKeys get memos of their own (unknownKeyMemo).
		ScanSecrets(prime)
		ScanSecrets(data)
		checkPrimed(t, prime, data)
		checkPrimed(t, data, data)
		checkPrimed(t, data, prime)
		checkScan(t, data, new(Record))
	})
}

// TestKeyMemoDepth: a member a memo remembers whole, met again one level
// too deep, still fails at the depth limit (skipContainer's memos keep no
// container values, whose depth they do not know).
func TestKeyMemoDepth(t *testing.T) {
	prime := []byte(`{"provenance": [{"status": {}}]}` + strings.Repeat(" ", keyMemoLen))
	for _, n := range []int{MaxDepth - 4, MaxDepth - 3, MaxDepth - 2} {
		deep := []byte(`{"provenance": ` + strings.Repeat("[", n) + `{"status": {}}` + strings.Repeat("]", n) + `}`)
		checkPrimed(t, prime, deep)
	}
}

// TestUnknownKeyMemos: keys outside knownKeys that keyKinds knows have
// memo slots of their own (unknownKeyMemo), at a record's top level and in
// the objects skipContainer reads: a Scan primed with them says what a
// fresh one says, a credential or a secret key after them is still seen
// by the secret pre-check (MayHoldSecret), and the memos are really used.
func TestUnknownKeyMemos(t *testing.T) {
	const tok = "sk-proj-CRPSabcdefghijklmnop0123"
	var many, manyTok strings.Builder
	for i := range 200 { // more unknown keys than unknownKeyMemos: slots shared
		sep := ", "
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(&many, `%s"k%d": %d`, sep, i, i)
		if i == 150 {
			fmt.Fprintf(&manyTok, `%s"k%d": %q`, sep, i, tok)
		} else {
			fmt.Fprintf(&manyTok, `%s"k%d": %d`, sep, i, i)
		}
	}
	pairs := [][2]string{
		{`{"body": {"tool_args": {"foo": {"bar": "x"}, "baz": 1}}}`, `{"body": {"tool_args": {"foo": {"bar": "x"}, "api_key": "` + tok + `"}}}`},
		{`{"body": {"args": {"zz": {"a1": "clean"}}}}`, `{"body": {"args": {"zz": {"a1": "` + tok + `"}}}}`},
		{`{"x": {"my_password": "", "q": 1}}`, `{"x": {"my_password": "hunter2hunter2", "q": 1}}`},
		{`{"x": {"foo": 1, "bar": 2}}`, `{"x": {"foo": 1, "b\u0061r": 2}}`},
		{`{"x": {"foo": 1, "bar": 2}}`, `{"x": {"foo": 1, "bar": 2, "bar": "` + tok + `"}}`},
		{`{"x": {"foo": [{"k": 0, "v": "a"}, {"k": 1, "v": "b"}]}}`, `{"x": {"foo": [{"k": 0, "v": "a"}, {"k": 1, "v": "` + tok + `"}]}}`},
		{`{"x": {` + many.String() + `}}`, `{"x": {` + manyTok.String() + `}}`},
		// Top level (object's memos, spans of whole members included).
		{`{"x_ext": 1, "y_ext": "a", "z_ext": null, "status": "in_progress"}`, `{"x_ext": 1, "y_ext": "` + tok + `", "z_ext": null, "status": "in_progress"}`},
		{`{"x_ext": 1, "my_password": "", "status": "failed"}`, `{"x_ext": 1, "my_password": "hunter2hunter2", "status": "failed"}`},
		{`{"x_ext": 1, "y_ext": 2, "sequence": 3, "is_final": true}`, `{"x_ext": 1, "y_ext": 2, "sequence": 4, "is_final": false}`},
		{`{"x_ext": 1, "y_ext": 2, "sequence": 3}`, `{"x_ext": 1, "y_\u0065xt": 2, "sequence": 3}`},
		{`{` + many.String() + `, "status": "a"}`, `{` + manyTok.String() + `, "status": "a"}`},
	}
	pad := strings.Repeat(" ", keyMemoLen)
	skipped, top := false, false
	for _, p := range pairs {
		a, b := []byte(p[0]+pad), []byte(p[1]+pad)
		ScanSecrets(a) // keyKinds learns the keys, as rule e2a.secret's walk does
		ScanSecrets(b)
		checkPrimed(t, a, b)
		checkPrimed(t, b, a)
		r := new(Record)
		for range 3 {
			if err := Scan(a, r); err != nil {
				t.Fatalf("%s: %v", p[0], err)
			}
		}
		for h := range uint(unknownKeyMemos) {
			skipped = skipped || r.memo.s[unknownKeyMemo(h)].m != 0
			top = top || r.memo.e[unknownKeyMemo(h)][0].m != 0
		}
		_ = Scan(b, r)
		if _, _, found := ScanSecrets(b); found && !r.MayHoldSecret() {
			t.Errorf("%s after %s: ScanSecrets finds a secret, the primed pre-check says none", p[1], p[0])
		}
	}
	if !skipped || !top {
		t.Errorf("unknown-key memos filled in skipped objects %t, at the top level %t: the test does not test them", skipped, top)
	}
}

// longPairs are records whose clean string values do not fit in a key
// memo's bytes with their key (keyMemo.lv): the same value, one that
// differs in its last byte or goes on past it, an escape or a non-ASCII
// byte in it, a credential, the input cut inside it, values of
// longValueLen bytes and one more, at the top level (a field, a skipped
// member), in body and in an object skipContainer reads.
func longPairs() [][2]string {
	conv := "jiuwenswarm.common.e2a.gateway_normalize:e2a_response_from_agent_chunk"
	tok := "ghp_CRPSabcdefghijklmnopqrstuvwxyz0123456789"
	fit := strings.Repeat("a", longValueLen-2)
	over := strings.Repeat("b", longValueLen-1)
	var pairs [][2]string
	for _, w := range []string{
		`{"status": "a", "response_kind": "%s", "x": 1}`,
		`{"status": "a", "x_converter_name": "%s", "x": 1}`,
		`{"body": {"delta_kind": "text", "source_chunk_type": "%s", "x": 1}}`,
		`{"provenance": {"source_protocol": "e2a", "converter": "%s", "x": 1}}`,
		`{"provenance": {"source_protocol": "e2a", "details": {"kind": "%s"}}}`,
	} {
		for _, p := range [][2]string{
			{conv, conv},
			{conv, conv[:len(conv)-1] + "X"},
			{conv, conv + "_and_more"},
			{conv + "_and_more", conv},
			{conv, conv[:20] + `\u0041` + conv[26:]},
			{conv, conv[:20] + "é" + conv[22:]},
			{conv, conv[:30] + " password=hunter2hunter2 " + conv[30:]},
			{conv + " " + tok, conv + " " + tok},
			{conv, tok + conv[len(tok):]},
			{fit, fit},
			{over, over},
			{fit, over},
		} {
			pairs = append(pairs, [2]string{fmt.Sprintf(w, p[0]), fmt.Sprintf(w, p[1])})
		}
		cut := fmt.Sprintf(w, conv)
		pairs = append(pairs, [2]string{fmt.Sprintf(w, conv), cut[:strings.Index(cut, conv)+len(conv)-3]})
		pairs = append(pairs, [2]string{fmt.Sprintf(w, conv), cut[:strings.Index(cut, conv)+len(conv)]})
	}
	return pairs
}

// TestLongValueMemo: a Scan primed with records holding long clean
// strings says what a fresh one says (checkPrimed, both paths), and the
// long values are really remembered (lv) and taken (the record's Str
// aliases the input where the memo matched).
func TestLongValueMemo(t *testing.T) {
	defer func(v bool) { vectorScan = v }(vectorScan)
	for _, v := range []bool{false, haveKernel} {
		vectorScan = v
		for _, p := range longPairs() {
			for _, pad := range []string{"", strings.Repeat(" ", keyMemoLen)} {
				a, b := []byte(p[0]+pad), []byte(p[1]+pad)
				checkPrimed(t, a, b)
				checkPrimed(t, b, a)
				checkPrimed(t, b, b)
			}
		}
	}
	// Used: a top-level field, a skipped member, a member of an object
	// skipContainer reads.
	conv := "jiuwenswarm.common.e2a.gateway_normalize:e2a_response_from_agent_chunk"
	rec := []byte(`{"response_kind": "` + conv + `", "body": {"source_chunk_type": "llm_output_of_a_long_kind"}, "provenance": {"converter": "` + conv + `"}, "x": 1}`)
	r := new(Record)
	for range 3 {
		if err := Scan(rec, r); err != nil {
			t.Fatal(err)
		}
	}
	var top, skip bool
	for p := range r.memo.e {
		for w := range r.memo.e[p] {
			if e := &r.memo.e[p][w]; e.lv != 0 {
				top = top || e.act.kind == aField
				skip = skip || e.act.kind == aSkip
			}
		}
	}
	nested := false
	for p := range r.memo.s {
		nested = nested || r.memo.s[p].lv != 0
	}
	if !top || !skip || !nested {
		t.Errorf("long values remembered: top-level field %t, skipped member %t, skipped object %t", top, skip, nested)
	}
	if got := string(r.Fields[FResponseKind].Str); got != conv {
		t.Errorf("response_kind %q, want %q", got, conv)
	}
	// A date-time, new each record, is not kept (its compare would fail).
	ts := []byte(`{"status": "a", "timestamp": "2026-03-29T12:00:00.003000+00:00", "x": 1}`)
	for range 3 {
		if err := Scan(ts, r); err != nil {
			t.Fatal(err)
		}
	}
	seen := false
	for p := range r.memo.e {
		for w := range r.memo.e[p] {
			if e := &r.memo.e[p][w]; e.m != 0 && e.act == (action{aField, uint8(FTimestamp)}) {
				seen = true
				if e.lv != 0 {
					t.Errorf("the timestamp's memo keeps a long value of %d bytes", e.lv)
				}
			}
		}
	}
	if !seen {
		t.Error("no memo of the timestamp's key")
	}
}

// TestTailMemo: the members within keyMemoLen bytes of a record's end
// are remembered and taken as the others (memoAt): a gen record's last
// member is a whole member at the top level, and the run of members
// before it ends in a span that closes the record.
func TestTailMemo(t *testing.T) {
	defer func(v bool) { vectorScan = v }(vectorScan)
	for _, v := range []bool{false, haveKernel} {
		vectorScan = v
		for _, rec := range genRecords {
			if !bytes.HasSuffix(rec.data, []byte(`"acp_meta": {}}`)) {
				continue
			}
			// (The members after the key memos' first Scan, their values'
			// second, spans of at most spanLen bytes from the third.)
			r := new(Record)
			for range 5 {
				if err := Scan(rec.data, r); err != nil {
					t.Fatal(err)
				}
			}
			whole := false
			for p := range r.memo.e {
				for w := range r.memo.e[p] {
					if e := &r.memo.e[p][w]; e.k == kTop && e.last && e.whole != 0 {
						whole = true
					}
				}
			}
			closing := false
			if r.memo.spans != nil {
				for _, p := range r.memo.spans.s {
					for _, sp := range p.s {
						closing = closing || sp.n != 0 && sp.k == kTop && sp.last
					}
				}
			}
			if !whole || !closing {
				t.Errorf("%s: the last member remembered whole %t, in a span that closes the record %t", rec.data, whole, closing)
			}
		}
	}
}

// TestKeyMemoSize: a key memo is a cache line, so that the compare of its
// bytes and the look at its fields touch one (object reads two ways of a
// key before each member). A long value's buffer is out of it
// (keyMemos.longs).
func TestKeyMemoSize(t *testing.T) {
	if n := unsafe.Sizeof(keyMemo{}); n != 64 {
		t.Errorf("a keyMemo is %d bytes, want 64", n)
	}
}
