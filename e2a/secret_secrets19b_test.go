package e2a

import "testing"

// TestPagerDutyKeyField: PagerDuty's integration key as a JSON field's
// value ("routing_key": 32 hex digits) is an e2a.secret finding, as
// "routing_key: <hex>" in text is; a broker's routing key, a hex value of
// another length and a key that names a data structure are none. Scan's
// pre-check lets every hit through.
func TestPagerDutyKeyField(t *testing.T) {
	const hex = "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		rec  string
		path string // "": no finding
	}{
		{`{"params":{"query":"hi","routing_key":"` + hex + `"}}`, "params.routing_key"},
		{`{"params":{"routingKey":"` + hex + `"}}`, "params.routingKey"},
		{`{"params":{"ROUTING_KEY":"` + hex + `"}}`, "params.ROUTING_KEY"},
		{`{"payload":{"integration_key":"` + hex + `","event_action":"trigger"}}`, "payload.integration_key"},
		{`{"params":{"routing_key":"\u0030123456789abcdef0123456789abcdef"}}`, "params.routing_key"},
		{`{"routing_key":"` + hex + `"}`, "routing_key"},
		{`{"params":{"routing_key":"orders.created"}}`, ""},
		{`{"params":{"routing_key":"` + hex[:31] + `"}}`, ""},
		{`{"params":{"routing_key":"0123456789012345678901234567890123"}}`, ""},
		{`{"params":{"routing_key":"******(fp:0530d22ba584f82e)"}}`, ""},
		{`{"params":{"order_routing_key":"` + hex + `"}}`, ""},
		{`{"params":{"routing_key":["` + hex + `"]}}`, ""},
		{`{"params":{"cache_key":"` + hex + `"}}`, ""},
	} {
		path, kind, ok := ScanSecrets([]byte(tc.rec))
		if tc.path == "" {
			if ok {
				t.Errorf("ScanSecrets(%s) = %q %s, want no finding", tc.rec, path, kind)
			}
			continue
		}
		if !ok || path != tc.path || kind != KeyCredential {
			t.Errorf("ScanSecrets(%s) = %q %q %v, want %q %q", tc.rec, path, kind, ok, tc.path, KeyCredential)
		}
		for round := 0; round < 2; round++ { // the key unknown, then remembered
			var r Record
			if err := Scan([]byte(tc.rec), &r); err != nil {
				t.Fatalf("Scan(%s): %v", tc.rec, err)
			}
			if !r.MayHoldSecret() {
				t.Errorf("Scan(%s) round %d: MayHoldSecret false, ScanSecrets finds %s", tc.rec, round, tc.path)
			}
		}
	}
}

// TestLoginPairDateNoFinding: a timestamp after a login's name and slash
// is no e2a.secret finding (it was one: key_value); a password there is.
func TestLoginPairDateNoFinding(t *testing.T) {
	for _, s := range []string{"Login: admin / 2024-01-01T10:00:00Z", "User: root / 2024-01-01 10:00:00.123+02:00"} {
		if _, _, k, ok := FindCredential([]byte(s)); ok {
			t.Errorf("%q: e2a.secret finding (%s), want none", s, k)
		}
	}
	if _, _, _, ok := FindCredential([]byte("Login: admin / 2024-Xq7v-9")); !ok {
		t.Errorf("a password after the slash: no finding")
	}
}

// TestSpanishCopulaEncodedFinding: "la contraseña es <pw>" URL-encoded
// is an e2a.secret finding, alone and in a record (a tool's URL).
func TestSpanishCopulaEncodedFinding(t *testing.T) {
	const s = "GET /search?q=la+contrase%C3%B1a+es+Xq7vLm2pR9tz&hl=es"
	if _, _, _, ok := FindCredential([]byte(s)); !ok {
		t.Errorf("%q: no finding", s)
	}
	rec := []byte(`{"params":{"query":"` + s + `"}}`)
	if path, _, ok := ScanSecrets(rec); !ok || path != "params.query" {
		t.Errorf("ScanSecrets(%s) = %q %v, want params.query", rec, path, ok)
	}
	var r Record
	if err := Scan(rec, &r); err != nil || !r.MayHoldSecret() {
		t.Errorf("Scan(%s): MayHoldSecret false (%v)", rec, err)
	}
	if _, _, _, ok := FindCredential([]byte("q=la+contrase%C3%B1a+es+obligatoria")); ok {
		t.Errorf("a word after the copula: a finding")
	}
}
