package traces

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/e2atap/e2atap/exporters/jsonlog"
	"github.com/e2atap/e2atap/validate"
)

// TestSpanValuesRedacted: a request_id, session, channel, method, agent id
// and name, task and context ids, response_id, error code and finding
// message carrying credentials and personal data reach the collector only
// as the record log's masks, with the record log's fingerprints (the same
// key gives the same mark); without a Redactor they are masked whole. A
// credential is never a name: not the span's, not error.type.
func TestSpanValuesRedacted(t *testing.T) {
	const (
		sk    = "sk-proj-Zq7XAbCdEfGhIjKlMnOp"
		phone = "+8613912345678"
		mail  = "alice.leak@example.com"
		jwt   = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJsZWFrIn0.c2lnbmF0dXJl"
	)
	red := jsonlog.NewRedactor(jsonlog.ContentMask, 0, testKey)
	mark := func(v string) string { return string(red.MaskText(nil, []byte(v))) }
	for _, withRedactor := range []bool{true, false} {
		cfg := DefaultConfig()
		var rcv *receiver
		rcv, cfg.Endpoint = startGRPC(t)
		cfg.Protocol = ProtocolGRPC
		var tr *Tracer
		if withRedactor {
			tr = newTracer(t, cfg)
		} else {
			var err error
			if tr, err = New(context.Background(), cfg, nil); err != nil {
				t.Fatal(err)
			}
		}
		key := "id/" + phone + "/" + sk // "-sk-" is not detected before the sec-detect merge
		req := jsonRecord(t, "agent-ws", key, t0, `{"request_id":"`+key+`","method":"`+sk+`","session_id":"`+mail+`","channel":"`+jwt+`",
			"agent_id":"`+sk+`","agent_ref":{"id":"`+mail+`"},"task_id":"`+phone+`","context_id":"`+jwt+`",
			"provenance":{"source_protocol":"`+sk+`"},"params":{}}`)
		tr.Record(req)
		// A failed reply whose response_id and code are credentials.
		tr.Record(jsonRecord(t, "agent-ws", key, t0, `{"protocol_version":"1.0","request_id":"`+key+`","response_id":"`+jwt+`",
			"sequence":0,"is_final":true,"status":"failed","response_kind":"e2a.error","body":{"code":"`+sk+`"}}`))
		tr.StreamStart(&validate.StreamInfo{Tap: "agent-ws", Protocol: "e2a", Key: key, Start: t0})
		tr.Finding(&validate.Finding{Rule: "e2a.status", Severity: validate.Error, Stream: key, Tap: "agent-ws",
			Message: `status "` + sk + `" is not succeeded, failed or in_progress`, Time: t0})
		tr.StreamEnd(&validate.StreamInfo{Tap: "agent-ws", Protocol: "e2a", Key: key, Outcome: validate.OutcomeFailed,
			Start: t0, End: t0.Add(time.Second), Records: 1})
		if err := tr.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		rcv.mu.Lock()
		spans := rcv.spans
		rcv.mu.Unlock()
		if len(spans) != 1 {
			t.Fatalf("%d spans, want 1", len(spans))
		}
		sp := spans[0]
		all := sp.GetName()
		a := attrs(sp.GetAttributes())
		for _, v := range a {
			all += "\n" + v
		}
		for _, ev := range sp.GetEvents() {
			for _, v := range attrs(ev.GetAttributes()) {
				all += "\n" + v
			}
		}
		for _, secret := range []string{sk, strings.TrimPrefix(sk, "sk-"), phone, strings.TrimPrefix(phone, "+"), mail, jwt} {
			if strings.Contains(all, secret) {
				t.Errorf("redactor %t: %q reaches the collector:\n%s", withRedactor, secret, all)
			}
		}
		if sp.GetName() != OperationInvokeAgent {
			t.Errorf("span name %q: a credential-shaped method must not name the span", sp.GetName())
		}
		want := map[string]string{AttrRequestID: mark(key), AttrConversationID: mark(mail), AttrChannel: mark(jwt),
			AttrAgentID: mark(sk), AttrAgentName: mark(mail), AttrResponseID: mark(jwt), AttrErrorType: ErrorTypeOther}
		if !withRedactor {
			want = map[string]string{AttrRequestID: "******", AttrConversationID: "******", AttrChannel: "******",
				AttrAgentID: "******", AttrAgentName: "******", AttrResponseID: "******", AttrErrorType: ErrorTypeOther}
		}
		if _, ok := a[AttrSourceProtocol]; ok {
			t.Errorf("redactor %t: a credential-shaped source_protocol is exported: %q", withRedactor, a[AttrSourceProtocol])
		}
		for k, v := range want {
			if a[k] != v {
				t.Errorf("redactor %t: %s = %q, want %q", withRedactor, k, a[k], v)
			}
		}
		if withRedactor && !strings.Contains(a[AttrRequestID], "(fp:") {
			t.Errorf("request_id %q carries no fingerprint", a[AttrRequestID])
		}
	}
}
