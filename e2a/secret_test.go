package e2a

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/e2atap/e2atap/redact"
)

func TestFindCredential(t *testing.T) {
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"
	cases := []struct {
		in, want, kind string // want: the matched span
	}{
		{"use Bearer " + jwt, jwt, "bearer"},
		{"Authorization: bearer abc123def456", "abc123def456", "authorization"},
		{"BEARER\tx1y2z3w4==", "x1y2z3w4==", "bearer"},
		{"Bearer abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz", "bearer"},
		{"the Bearer authentication scheme", "", ""},
		{"Bearer abc12", "", ""},
		{"Bearer ******(fp:0123abcd)", "", ""},
		{"xBearer abc123def456", "", ""},
		{"Bearer", "", ""},
		{"token " + jwt + " end", jwt, "jwt"},
		{"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0", "", ""},
		{"eyJa.b.c.d", "eyJa.b.c", "jwt"},
		{"xeyJa.b.c", "eyJa.b.c", "jwt"},
		{"key sk-abcd1234 here", "sk-abcd1234", "sk"},
		{"sk-proj-AbC_123-xyz", "sk-proj-AbC_123-xyz", "sk"},
		{"sk-1234567", "", ""},
		{"task-12345678", "", ""},
		{"my_sk-12345678", "sk-12345678", "sk"},
		{"x-sk-12345678", "sk-12345678", "sk"},
		{"idsk-sk-proj-AbC_123-xyz", "sk-proj-AbC_123-xyz", "sk"},
		{"AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "aws"},
		{"xoxb-123456789012-abcdefghij", "xoxb-123456789012-abcdefghij", "slack"},
		{"pw sk_live_51HxAbCdEfGhIjKl", "sk_live_51HxAbCdEfGhIjKl", "stripe"},
		{"gho_abcdefghij0123456789", "gho_abcdefghij0123456789", "ghp"},
		{"password=hunter2 ok", "hunter2", "key_value"},
		{"Authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz", "authorization"},
		{"nats://u:PASSWORD@host:4222", "u:PASSWORD", "url_userinfo"},
		{"mail a@example.com then sk-12345678", "sk-12345678", "sk"},
		{"mail a@example.com, phone 13912345678", "", ""},
		{"(sk-12345678)", "sk-12345678", "sk"},
		{"\u4ee4\u724csk-12345678", "sk-12345678", "sk"},
		{"SK-12345678", "", ""},
		{"ghp_abcdefghij0123456789", "ghp_abcdefghij0123456789", "ghp"},
		{"ghp_abcdefghij012345678", "", ""},
		{"ghp_abcdefghij0123456789_x", "ghp_abcdefghij0123456789_x", "ghp"},
		{"glpat-abcdefghij-123456789", "glpat-abcdefghij-123456789", "glpat"},
		{"glpat-short", "", ""},
		{"sk-12345678 then ghp_abcdefghij0123456789", "sk-12345678", "sk"},
		{"", "", ""},
	}
	for _, c := range cases {
		start, end, kind, ok := FindCredential([]byte(c.in))
		got := ""
		if ok {
			got = c.in[start:end]
		}
		if got != c.want || kind != c.kind || ok != (c.kind != "") {
			t.Errorf("FindCredential(%q) = %q %q %v, want %q %q", c.in, got, kind, ok, c.want, c.kind)
		}
		checkFindCredential(t, []byte(c.in))
	}
}

func checkFindCredential(t testing.TB, s []byte) {
	t.Helper()
	st, en, kind, ok := FindCredential(s)
	if !ok {
		if st != 0 || en != 0 || kind != "" {
			t.Fatalf("FindCredential(%q): no hit but %d %d %q", s, st, en, kind)
		}
		return
	}
	if st < 0 || en <= st || en > len(s) || kind == "" {
		t.Fatalf("FindCredential(%q) = %d %d %q", s, st, en, kind)
	}
	// The hit is redact's first credential.
	for from := 0; ; {
		m, found := redact.Find(s, from)
		if !found {
			t.Fatalf("FindCredential(%q) = %q, redact.Find has no credential", s, s[st:en])
		}
		if m.Kind.Credential() {
			if m.Start != st || m.End != en || m.Kind.String() != kind {
				t.Fatalf("FindCredential(%q) = %d %d %s, redact.Find %v", s, st, en, kind, m)
			}
			break
		}
		from = m.End
	}
}

func FuzzFindCredential(f *testing.F) {
	for _, s := range []string{"Bearer abc123def456", "eyJa.b.c", "sk-12345678", "ghp_abcdefghij0123456789", "glpat-abcdefghij-123456789", "x sk-1 Bearer  a=", "bearer =========="} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) { checkFindCredential(t, s) })
}

func TestIsSecretKey(t *testing.T) {
	yes := []string{"bearer_token", "BEARER_TOKEN", "api_key", "apikey", "api-key", "API_Key", "password", "Password", "authorization", "Authorization",
		"token", "access_token", "client_secret", "x-api-key", "user_password", "passwords", "private_key", "Cookie", "AccountKey"}
	no := []string{"", "tokens", "max_tokens", "token_count", "api", "password_hint", "authorization_url", "api_key_ref", "request_id", "user_id"}
	for _, k := range yes {
		if !IsSecretKey([]byte(k)) {
			t.Errorf("IsSecretKey(%q) = false", k)
		}
	}
	for _, k := range no {
		if IsSecretKey([]byte(k)) {
			t.Errorf("IsSecretKey(%q) = true", k)
		}
	}
}

// secretCases are the table cases of ScanSecrets and the seeds of
// FuzzScanSecrets: input, wanted path and kind ("" = nothing found).
var secretTable = []struct{ in, path, kind string }{
	{`{"protocol_version": "1.0", "response_id": "q1-r0", "request_id": "q1", "sequence": 0, "body": {"delta_kind": "text", "delta": "use Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlc2lnbmF0dXJl"}}`, "body.delta", "bearer"},
	{`{"protocol_version": "1.0", "response_id": "q1-r0", "request_id": "q1", "sequence": 0, "body": {"delta_kind": "text", "delta": "tok0"}}`, "", ""},
	{`{"auth":{"bearer_token":"opaque"}}`, "auth.bearer_token", "bearer_token"},
	{`{"auth":{"bearer_token":""}}`, "", ""},
	{`{"auth":{"bearer_token":null,"api_key":3}}`, "", ""},
	{`{"auth":{"Bearer_Token":"******(fp:0123abcd)"}}`, "", ""},
	{`{"headers":{"Authorization":"Basic dXNlcjpwYXNz"}}`, "headers.Authorization", "authorization"},
	{`{"a":[1,{"x":"k"},{"API-KEY":"v"}]}`, "a[2].API-KEY", "api_key"},
	{`{"password":{"hint":"dog"}}`, "", ""},
	{`{"password":["x"]}`, "", ""},
	{`{"p\u0061ssword":"x"}`, "password", "password"},
	{`{"text":"key: s\u006b-12345678"}`, "text", "sk"},
	{`{"text":"line\nsk-12345678"}`, "text", "sk"},
	{`{"text":"\u4ee4\u724csk-12345678"}`, "text", "sk"},
	{`{"text":"task-12345678 and risk-assessment"}`, "", ""},
	{`{"params":{"files":[{"uri":"https://x/?t=ghp_abcdefghij0123456789"}]}}`, "params.files[0].uri", "ghp"},
	{`{"tokens":{"sk-12345678":true}}`, "tokens.{key}", "sk"},
	{`{"sk-12345678":true}`, "{key}", "sk"},
	{`{"a.b":{"c d":"glpat-abcdefghij-123456789"}}`, `["a.b"]["c d"]`, "glpat"},
	{`"Bearer abc123def456"`, "$", "bearer"},
	{`["x", "eyJa.b.c"]`, "[1]", "jwt"},
	{`{"a":"sk-12345678","password":"p"}`, "a", "sk"},
	{`{"password":"p","a":"sk-12345678"}`, "password", "password"},
	{`{"a":{"b":[[{"c":"sk-12345678"}]]}}`, "a.b[0][0].c", "sk"},
	// JSON text held in a string, "sk-" spelled with an escape: found as
	// the redactor masks it (unescaped).
	{`{"x":"\\u0073k-12345678"}`, "x", "sk"},
	{`{"x":"\\u0073x-12345678 \\u0041KIb"}`, "", ""},
	{`{"x":"apikey api_key api-key password authorization bearer"}`, "", ""},
	{"{\"x\xff\":{\"y\":\"sk-12345678\"}}", "[\"x\uFFFD\"].y", "sk"},
	{`{"a":1,"b":true,"c":null,"d":-1.5e3,"e":[],"f":{},"g":"Bearer abc123def456"}`, "g", "bearer"},
	{`{"params":{"text":"key AKIAIOSFODNN7EXAMPLE"}}`, "params.text", "aws"},
	{`{"request_id":"idsk-sk-proj-AbCdEfGhIjKl"}`, "request_id", "sk"},
	{`{"metadata":{"note":"login password=hunter2xyz"}}`, "metadata.note", "key_value"},
	{`{"body":{"message":"nats://u:PASSWORD@host:4222"}}`, "body.message", "url_userinfo"},
	{`{"h":{"Cookie":"sid=abc"}}`, "h.Cookie", "credential_key"},
	{`{"x":{"client_secret":"v"}}`, "x.client_secret", "credential_key"},
	{`{"x":{"api_key_ref":"vault://k","password_hint":"dog","max_tokens":"5"}}`, "", ""},
	{`{"k":"-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----"}`, "k", "private_key"},
	{`{"s":"\u0078oxb-123456789012-abcdefghij"}`, "s", "slack"},
	{`{"m":"mail a@example.com, 13912345678, 11010519491231002X, card 4111 1111 1111 1111, DE89370400440532013000, (415) 555-0132, zq_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"}`, "", ""},
	// provider tokens the first corpus did not have are credentials
	{`{"m":"npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"}`, "m", "vendor_token"},
	{`{"m":"bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"}`, "m", "vendor_token"},
	{`{"m":"SK0123456789abcdef0123456789abcdef"}`, "m", "vendor_token"},
	{`{"m":"run1_ghp_16C7e42F292c6912E7710c838347Ae178B4a"}`, "m", "ghp"},
	{`{"m":"q=password%3Dhunter2"}`, "m", "key_value"},
	// keys the reference sends (classified from a table made at start)
	{`{"auth":"opaque"}`, "auth", "credential_key"},
	{`{"auth":{"token":"t"}}`, "auth.token", "credential_key"},
	{`{"a\u0075th":"opaque"}`, "auth", "credential_key"},
	{`{"request_id":"q","user_id":"u-1","agent_ref":"a","workspace_key":"w","auth":null}`, "", ""},
	{`{"request\u005fid":"sk-12345678"}`, "request_id", "sk"},
	{`{"timestamp":"2026-03-29T12:00:00+00:00","converter":"m.n:f_g","note":"x:\/\/u:p@h"}`, "note", "url_userinfo"},
	{`{"t":"2026-03-29T12:00:00 password=hunter2xyz"}`, "t", "key_value"},
	{`{"m":"a@b.secretary_sig=v"}`, "m", "key_value"},
	{`{"m":"\u0061@b.secretary_sig=v"}`, "m", "key_value"},
	{`{"t":"\u4f60\u0041KIAIOSFODNN7EXAMPLE"}`, "t", "aws"},
	{`{"t":"\u4f60\u597d\u00e9sk-12345678\ud83d\ude00"}`, "t", "sk"},
	{`{"t":"\u4f60\u597d\n\u00e9\/\"\\\ud83d\ude00"}`, "", ""},
	{`{"a":"sk-123`, "", ""},
	{`{"a" "sk-12345678"}`, "", ""},
}

func secretCases() []string {
	var out []string
	for _, c := range secretTable {
		out = append(out, c.in)
	}
	return out
}

func TestScanSecrets(t *testing.T) {
	for _, c := range secretTable {
		path, kind, found := ScanSecrets([]byte(c.in))
		if path != c.path || kind != c.kind || found != (c.kind != "") {
			t.Errorf("ScanSecrets(%s) = %q %q %v, want %q %q", c.in, path, kind, found, c.path, c.kind)
		}
		checkScanSecrets(t, []byte(c.in))
	}
}

func TestScanSecretsVectors(t *testing.T) {
	hits := 0
	for _, l := range vectorLines(t) {
		checkScanSecrets(t, l)
		if _, _, ok := ScanSecrets(l); ok {
			hits++
		}
	}
	if hits == 0 {
		t.Errorf("no secret found in the vectors (secret_in_log_record has one)")
	}
}

func TestScanSecretsAllocs(t *testing.T) {
	in := []byte(`{"x":"Bearer no","api_key":"","y":"sk-1"}`)
	inputs := [][]byte{in}
	for _, rec := range benchRecords() {
		inputs = append(inputs, rec.data)
	}
	keyCacheFor(t, inputs...)
	for _, rec := range benchRecords() {
		if _, _, ok := ScanSecrets(rec.data); ok {
			t.Fatalf("%s: unexpected secret", rec.name)
		}
		if n := testing.AllocsPerRun(100, func() { ScanSecrets(rec.data) }); n != 0 {
			t.Errorf("%s: %v allocs", rec.name, n)
		}
	}
	// a walk that finds nothing (the pre-check lets it through) is free too
	if n := testing.AllocsPerRun(100, func() { ScanSecrets(in) }); n != 0 {
		t.Errorf("walk: %v allocs", n)
	}
}

// keyCacheFor gives the test a key cache of its own, under a seed that puts
// no more than two of the object keys of inputs in one set, and gives the
// process's back at the end. The tests that need every key of their
// records remembered (no walk for secrets, no allocation) then do not
// depend on the seed the process drew: under one in a few hundred seeds,
// three of the keys share a set and one is always evicted.
func keyCacheFor(t testing.TB, inputs ...[]byte) {
	t.Helper()
	keys := map[string]bool{}
	for _, in := range inputs {
		objectKeys(in, keys)
	}
	for range 1000 {
		c := &keyCache{seed: maphash.MakeSeed()}
		n := map[*[2]atomic.Pointer[keyEntry]]int{}
		fits := true
		for k := range keys {
			set, _ := c.set([]byte(k))
			if n[set]++; n[set] > 2 {
				fits = false
				break
			}
		}
		if fits {
			old := keyKinds
			keyKinds = c
			t.Cleanup(func() { keyKinds = old })
			return
		}
	}
	t.Fatalf("no seed of 1000 keeps %d keys at most two to a set", len(keys))
}

// objectKeys adds the object keys of the JSON text in, unescaped, to keys
// (those of a valid prefix, if in is not valid).
func objectKeys(in []byte, keys map[string]bool) {
	type level struct{ obj, key bool } // key: the object's next token is a key
	var st []level
	d := json.NewDecoder(bytes.NewReader(in))
	for {
		tok, err := d.Token()
		if err != nil {
			return
		}
		top := len(st) - 1
		if k, ok := tok.(string); ok && top >= 0 && st[top].obj && st[top].key {
			keys[k] = true
			st[top].key = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			st = append(st, level{obj: true, key: true})
		case json.Delim('['):
			st = append(st, level{})
		case json.Delim('}'), json.Delim(']'):
			st = st[:top]
			if top > 0 && st[top-1].obj {
				st[top-1].key = true
			}
		default:
			if top >= 0 && st[top].obj {
				st[top].key = true
			}
		}
	}
}

// TestObjectKeys checks the test helper itself.
func TestObjectKeys(t *testing.T) {
	keys := map[string]bool{}
	objectKeys([]byte(`{"a":1,"b":{"c":[{"d":"x"},"e",{"f":{}}],"g":"h"},"i\u00e9":[]}`), keys)
	var got []string
	for k := range keys {
		got = append(got, k)
	}
	slices.Sort(got)
	if want := []string{"a", "b", "c", "d", "f", "g", "ié"}; !slices.Equal(got, want) {
		t.Errorf("keys %q, want %q", got, want)
	}
}

// TestKeyCacheTwoWays: two keys of one set are both remembered (a
// direct-mapped cache evicted one at each store, and Scan then could not
// classify it: every record holding both was walked for secrets); a third
// replaces one of them and is remembered itself.
func TestKeyCacheTwoWays(t *testing.T) {
	c := &keyCache{seed: maphash.MakeSeed()}
	bySet := map[*[2]atomic.Pointer[keyEntry]][]string{}
	var same []string
	for i := 0; len(same) < 3; i++ {
		k := "meta_" + strconv.Itoa(i)
		set, _ := c.set([]byte(k))
		bySet[set] = append(bySet[set], k)
		if len(bySet[set]) == 3 {
			same = bySet[set]
		}
	}
	a, b, third := []byte(same[0]), []byte(same[1]), []byte(same[2])
	c.put(a, "")
	c.put(b, "password")
	for range 3 {
		if kind, ok := c.get(a); !ok || kind != "" {
			t.Fatalf("%s: %q %v after a store of %s in its set", a, kind, ok, b)
		}
		if kind, ok := c.get(b); !ok || kind != "password" {
			t.Fatalf("%s: %q %v", b, kind, ok)
		}
	}
	c.put(third, "")
	_, okA := c.get(a)
	_, okB := c.get(b)
	if _, ok := c.get(third); !ok || okA == okB {
		t.Errorf("after a third key in the set: %s %v, %s %v, %s not remembered or both kept", a, okA, b, okB, third)
	}
}

// refScanSecrets is the specification of ScanSecrets on valid JSON, built
// on encoding/json's token stream.
func refScanSecrets(data []byte) (string, string, bool) {
	type frame struct {
		obj     bool
		idx     int
		key     string
		wantKey bool
	}
	var st []frame
	path := func(keyHit bool) string {
		var b strings.Builder
		for n, f := range st {
			switch {
			case !f.obj:
				b.WriteString("[" + strconv.Itoa(f.idx) + "]")
			case keyHit && n == len(st)-1:
			case plainKey([]byte(f.key)):
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			default:
				b.WriteString("[" + strconv.Quote(f.key) + "]")
			}
		}
		if keyHit {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString("{key}")
		}
		if b.Len() == 0 {
			return "$"
		}
		return b.String()
	}
	done := func() {
		if len(st) > 0 {
			if f := &st[len(st)-1]; f.obj {
				f.wantKey = true
			} else {
				f.idx++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return "", "", false
		}
		if err != nil {
			panic(err)
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			st = st[:len(st)-1]
			done()
			continue
		}
		if len(st) > 0 && st[len(st)-1].wantKey {
			f := &st[len(st)-1]
			f.key, f.wantKey = tok.(string), false
			if _, _, kind, ok := FindCredential([]byte(f.key)); ok {
				return path(true), kind, true
			}
			continue
		}
		switch v := tok.(type) {
		case json.Delim:
			st = append(st, frame{obj: v == '{', wantKey: v == '{'})
			continue
		case string:
			if len(st) > 0 && st[len(st)-1].obj {
				// (Not another redactor's mark, "***", "{", "[REDACTED]",
				// nor a plain word under a key that only names a
				// credential: a62ffc0.)
				if k := SecretKeyKind([]byte(st[len(st)-1].key)); k != "" && v != "" && !strings.Contains(v, "******") &&
					!redactedMark([]byte(v)) && !(k == KeyCredential && plainWord([]byte(v))) {
					return path(false), k, true
				}
			}
			if _, _, kind, ok := FindCredential([]byte(v)); ok {
				return path(false), kind, true
			}
			if redact.HasASCIIEscape([]byte(v)) {
				if _, _, kind, ok := FindCredential(redact.UnescapeASCII(nil, []byte(v))); ok {
					return path(false), kind, true
				}
			}
		}
		done()
	}
}

// checkMayHoldSecret: a record Scan read without error and calls free of
// secrets is one in which ScanSecrets finds nothing; a record ScanStd
// filled says nothing.
func checkMayHoldSecret(t testing.TB, data []byte, r *Record, scanErr error) {
	t.Helper()
	if scanErr != nil && r.MayHoldSecret() == false {
		t.Fatalf("Scan(%q) failed (%v) but MayHoldSecret is false", data, scanErr)
	}
	if !r.MayHoldSecret() {
		if p, k, found := ScanSecrets(data); found {
			t.Fatalf("Scan(%q): MayHoldSecret false, ScanSecrets finds %s at %s", data, k, p)
		}
	}
}

func checkScanSecrets(t testing.TB, data []byte) {
	t.Helper()
	var r Record
	checkMayHoldSecret(t, data, &r, Scan(data, &r))
	// Again with a record reused across inputs, whose memos (Record.clean,
	// the key memos) came from earlier ones: it must be as sound, and it
	// may only know more. (Not the same answer: a key's class in the
	// process-wide keyKinds, evicted since a memo of the record took it,
	// makes a new record leave the key to ScanSecrets, true, where the
	// memo says false; both are right, and checkMayHoldSecret holds each
	// to ScanSecrets.) A reused record that says true where a new one
	// says false is a memo that lost what it knew.
	var fresh Record
	Scan(data, &fresh)
	warm.Lock()
	err := Scan(data, &warm.r)
	if warm.r.MayHoldSecret() && !fresh.MayHoldSecret() {
		warm.Unlock()
		t.Fatalf("Scan(%q): MayHoldSecret true with a reused record, false with a new one", data)
	}
	checkMayHoldSecret(t, data, &warm.r, err)
	warm.Unlock()
	p1, k1, ok1 := ScanSecrets(data)
	// The reference reads values through encoding/json, which turns each
	// invalid UTF-8 byte into U+FFFD (three bytes): a value's length, which
	// redactedMark's short-mask test reads, is not the raw one ScanSecrets
	// judges ({"auth":"\xce}"}: 2 bytes raw, a mask; 4 decoded, a
	// credential). Such input is compared with the reference no further.
	if !json.Valid(data) || !utf8.Valid(data) {
		return
	}
	p2, k2, ok2 := refScanSecrets(data)
	if p1 != p2 || k1 != k2 || ok1 != ok2 {
		t.Fatalf("ScanSecrets(%q) = %q %q %v, reference %q %q %v", data, p1, k1, ok1, p2, k2, ok2)
	}
}

// warm is the record checkScanSecrets reuses across inputs.
var warm struct {
	sync.Mutex
	r Record
}

func FuzzScanSecrets(f *testing.F) {
	for _, c := range secretTable {
		f.Add([]byte(c.in))
	}
	for _, rec := range benchRecords() {
		f.Add(rec.data)
	}
	for _, s := range scanCases {
		f.Add([]byte(s))
	}
	for _, s := range fuzzSeeds(f, "FuzzScan", "FuzzScanHead", "FuzzEnvelopeFromDict", "FuzzResponseFromDict") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkScanSecrets(t, data) })
}

// TestSecretKeyCache: a key's class is the same whether it is classified
// or looked up, and a key that is itself a credential is found every time
// (it is never cached as harmless).
func TestSecretKeyCache(t *testing.T) {
	rec := []byte(`{"password":"hunter2-not-empty","sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789":1}`)
	for i := 0; i < 3; i++ {
		path, kind, found := ScanSecrets(rec)
		if !found {
			t.Fatalf("round %d: no hit", i)
		}
		if i == 0 {
			t.Logf("hit %s (%s)", path, kind)
		}
	}
	// The credential-shaped key alone, after its record was scanned twice.
	if _, _, found := ScanSecrets([]byte(`{"sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789":1}`)); !found {
		t.Fatal("a credential used as a key was cached as harmless")
	}
	for _, k := range []string{"password", "api_key", "authorization", "request_id", "x-api-key"} {
		want := SecretKeyKind([]byte(k))
		keyKinds.put([]byte(k), want)
		if got, ok := keyKinds.get([]byte(k)); !ok || got != want {
			t.Errorf("cache of %q: %q %v, want %q", k, got, ok, want)
		}
	}
	long := []byte(strings.Repeat("k", keyCacheMaxLen+1))
	keyKinds.put(long, "")
	if _, ok := keyKinds.get(long); ok {
		t.Error("a key over the cache's length bound was cached")
	}
}

// TestScanSecretsSeeds holds ScanSecrets to its reference on every seed of
// the package's fuzz corpora (FuzzScanSecrets' own run as its seeds) and
// on the field scan's table cases.
func TestScanSecretsSeeds(t *testing.T) {
	seeds := fuzzSeeds(t, "FuzzScan", "FuzzScanHead", "FuzzEnvelopeFromDict", "FuzzResponseFromDict", "FuzzClassify")
	if len(seeds) < 100 {
		t.Fatalf("only %d seeds", len(seeds))
	}
	for _, s := range scanCases {
		seeds = append(seeds, []byte(s))
	}
	for _, s := range seeds {
		checkScanSecrets(t, s)
	}
}

// fuzzSeeds reads the []byte seeds of native fuzz corpora under
// testdata/fuzz.
func fuzzSeeds(t testing.TB, targets ...string) [][]byte {
	t.Helper()
	var out [][]byte
	for _, target := range targets {
		files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", target, "*"))
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(b), "\n")
			for _, l := range lines[1:] {
				l = strings.TrimSpace(l)
				if !strings.HasPrefix(l, "[]byte(") || !strings.HasSuffix(l, ")") {
					continue
				}
				v, err := strconv.Unquote(l[len("[]byte(") : len(l)-1])
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				out = append(out, []byte(v))
			}
		}
	}
	return out
}

// TestKnownKeys: the table of the reference's keys gives each key the
// class SecretKeyKind gives it, finds every key it holds, and holds no
// key that is a credential itself.
func TestKnownKeys(t *testing.T) {
	n := 0
	for _, k := range knownKeyNames {
		kind, ok := knownKeys.lookup([]byte(k))
		if _, _, _, cred := FindCredential([]byte(k)); cred {
			if ok {
				t.Errorf("credential-shaped key %q is in the table", k)
			}
			continue
		}
		if !ok || kind != SecretKeyKind([]byte(k)) {
			t.Errorf("knownKeys %q = %q %v, SecretKeyKind %q", k, kind, ok, SecretKeyKind([]byte(k)))
		}
		n++
	}
	if n*2 > knownKeySlots {
		t.Errorf("%d keys in %d slots: make the table larger", n, knownKeySlots)
	}
	for _, k := range []string{"", "password", "request_i", "request_idd", "Request_id", "api_key", "x", "id\x00", "auth\x00"} {
		if _, ok := knownKeys.lookup([]byte(k)); ok {
			t.Errorf("knownKeys holds %q", k)
		}
	}
}

// TestMayHoldSecretSkips: the records the reference sends are found free
// of secrets by Scan itself (so rule e2a.secret does not walk them again),
// once their keys are known; ScanStd's records are never.
func TestMayHoldSecretSkips(t *testing.T) {
	var r Record
	recs := append(benchRecords(), genRecords...)
	var inputs [][]byte
	for _, rec := range recs {
		inputs = append(inputs, rec.data)
	}
	keyCacheFor(t, inputs...)
	for _, rec := range recs {
		if rec.name == "request" {
			continue // a file:// URI: "://" is a candidate for the detector
		}
		if err := Scan(rec.data, &r); err != nil {
			t.Fatal(err)
		}
		ScanSecrets(rec.data) // classifies and caches keys the table does not hold
		if err := Scan(rec.data, &r); err != nil || r.MayHoldSecret() {
			t.Errorf("%s: MayHoldSecret true (%v)", rec.name, err)
		}
		if ScanStd(rec.data, &r); !r.MayHoldSecret() {
			t.Errorf("%s: MayHoldSecret false after ScanStd", rec.name)
		}
	}
	// ASCII-escaped text with a candidate byte is unescaped into the
	// record's scratch buffer: no allocation once it has grown.
	esc := []byte(`{"request_id":"q-1/\"\u00e9\"","body":{"delta":"\u4f60\u597d A-b_c: \u0041"}}`)
	if err := Scan(esc, &r); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = Scan(esc, &r) }); n != 0 {
		t.Errorf("Scan of escaped text: %v allocs", n)
	}
	for _, c := range secretTable {
		if c.kind == "" {
			continue
		}
		if err := Scan([]byte(c.in), &r); err == nil && !r.MayHoldSecret() {
			t.Errorf("%s holds %s, MayHoldSecret false", c.in, c.kind)
		}
	}
}

// TestCleanTextsRemembered: a record reused across Scan calls remembers
// texts that passed the credential pre-check, and answers as a new record
// does: for a text seen before, one of the same length that differs, one
// that holds a credential after its clean twin was remembered, more texts
// than it holds, and texts outside the lengths it keeps.
func TestCleanTextsRemembered(t *testing.T) {
	conv := "jiuwenswarm.common.e2a.gateway_normalize:e2a_response_from_agent_chunk"
	cred := "jiuwenswarm.common.e2a.gateway_normalize:sk-proj-AbCdEfGhIjKlMnOpQrSt"
	if len(cred) > len(conv) {
		cred = cred[:len(conv)]
	}
	cred += conv[len(cred):] // same length, one credential
	// (A text shaped as a date-time with a credential, after and before
	// a clean date-time: the last date-time that passed is kept apart.)
	texts := []string{conv, conv, cred, conv, "2026-03-29T12:00:00.003000+00:00", "2026-03-29T12:00:00.003000+00:00",
		"2026-03-29T12:password=hunter2", "2026-03-29T12:password=hunter2", "2026-03-29T12:00:00.003000+00:00",
		"password=hunter2-0123456789", strings.Repeat("a", cleanMax), strings.Repeat("a", cleanMax+1),
		"Bearer abc123def456ghi", "short", conv}
	for k := 0; k < 2*cleanSlots; k++ {
		texts = append(texts, fmt.Sprintf("the agent said line %04d", k), conv)
	}
	var r Record
	if err := Scan([]byte(`{"status": "`+cred+`"}`), &r); err != nil || !r.MayHoldSecret() {
		t.Fatalf("%q passes the pre-check (%v)", cred, err)
	}
	var reused Record
	for _, key := range []string{"converter", "note"} {
		for _, x := range texts {
			// Two spaces after each colon: a key memo keeps no value
			// there (keyMemo.v and lv, which would take the texts that
			// repeat before the clean texts do), so that every text is
			// pre-checked through them.
			data := []byte(`{"provenance": {"` + key + `":  "` + x + `"}, "status":  "` + x + `"}`)
			var fresh Record
			if err := Scan(data, &fresh); err != nil {
				t.Fatal(err)
			}
			if err := Scan(data, &reused); err != nil {
				t.Fatal(err)
			}
			if reused.MayHoldSecret() != fresh.MayHoldSecret() {
				t.Fatalf("%s: MayHoldSecret %v reused, %v new", data, reused.MayHoldSecret(), fresh.MayHoldSecret())
			}
			checkMayHoldSecret(t, data, &reused, nil)
		}
	}
	if !reused.clean.has([]byte(conv)) {
		t.Error("the converter's name is not remembered")
	}
	if reused.clean.has([]byte(cred)) {
		t.Error("a text with a credential is remembered as clean")
	}
	if dt := string(reused.clean.dt[:reused.clean.dtn]); dt != "2026-03-29T12:00:00.003000+00:00" {
		t.Errorf("the last clean date-time kept is %q", dt)
	}
	data := []byte(`{"provenance": {"converter": "` + conv + `"}}`)
	if n := testing.AllocsPerRun(100, func() { _ = Scan(data, &reused) }); n != 0 {
		t.Errorf("%v allocs", n)
	}
}

// checkPrintable fails when PrintableAfterUnescape(body) is false and the
// unescaped body has a printable ASCII byte (it may say true of more), or
// anchorAfterUnescape(body) false and it has a credential anchor byte.
func checkPrintable(t *testing.T, body string) {
	t.Helper()
	if !anchorAfterUnescape([]byte(body)) {
		// No ASCII anchor and no CJK label's separator (the only
		// characters above U+007F whose anchor bytes reveal one: the
		// others' are turned away), and so no credential.
		u := AppendUnquoted(nil, []byte(body))
		rs := []rune(string(u))
		for k, r := range rs {
			if r < 0x80 && redact.IsCredentialAnchor(byte(r)) || redact.IsCJKSeparator(r) && keyBefore(rs, k) {
				t.Fatalf("anchorAfterUnescape(%q) = false, unescaped it holds %q", body, r)
			}
		}
		if a, b, k, ok := FindCredential(u); ok {
			t.Fatalf("anchorAfterUnescape(%q) = false, unescaped it holds a credential (%s) %q", body, k, u[a:b])
		}
	}
	if PrintableAfterUnescape([]byte(body)) {
		return
	}
	for _, c := range AppendUnquoted(nil, []byte(body)) {
		if c >= 0x21 && c <= 0x7e {
			t.Fatalf("PrintableAfterUnescape(%q) = false, unescaped it holds %q", body, c)
		}
	}
}

// TestPrintableAfterUnescape: PrintableAfterUnescape and
// anchorAfterUnescape are exact on Python's escaped non-Latin text
// (false) and on every escape of a printable byte, or an anchor (true).
func TestPrintableAfterUnescape(t *testing.T) {
	for _, s := range []string{``, `\u4e00\u4e2a\u6d41\u5f0f\u3002`, `\ud83d\ude00 \n\t\r\b\f`, "\u4e00 \u00e9\u0080", `\u0020\u001f\u007f\u00ff\uFFFF`} {
		checkPrintable(t, s)
		if PrintableAfterUnescape([]byte(s)) {
			t.Errorf("PrintableAfterUnescape(%q) = true", s)
		}
		if !strings.Contains(s, `\u00`) && anchorAfterUnescape([]byte(s)) {
			t.Errorf("anchorAfterUnescape(%q) = true", s) // (true of any \u escape below U+0080)
		}
	}
	for c := 0x21; c <= 0x7e; c++ {
		for _, s := range []string{fmt.Sprintf(`\u4e00\u%04x`, c), fmt.Sprintf(`\u%04X\u4e00`, c), `\u4e00` + string(rune(c))} {
			if c == '\\' && !strings.HasPrefix(s, `\u`) {
				s += `\`
			}
			if c == '"' && !strings.HasPrefix(s, `\u`) {
				continue
			}
			if !PrintableAfterUnescape([]byte(s)) {
				t.Errorf("PrintableAfterUnescape(%q) = false", s)
			}
			if redact.IsCredentialAnchor(byte(c)) && !anchorAfterUnescape([]byte(s)) {
				t.Errorf("anchorAfterUnescape(%q) = false", s)
			}
		}
	}
	for _, s := range []string{`\"`, `\\`, `\/`, `\u4e00\\u4e00`} {
		if !PrintableAfterUnescape([]byte(s)) {
			t.Errorf("PrintableAfterUnescape(%q) = false", s)
		}
	}
	// A CJK label's separator escaped (ensure_ascii's "密码：…"): an anchor,
	// in either case of hex digit; its neighbours and U+FFFD (a lone
	// surrogate's, whose UTF-8 also starts with 0xEF) are not.
	for _, r := range []rune{'：', '＝', '是', '为', '為', 'は'} {
		for _, f := range []string{`\u5bc6\u7801\u%04x`, `\u5bc6\u7801\u%04X`} {
			if s := fmt.Sprintf(f, r); !anchorAfterUnescape([]byte(s)) {
				t.Errorf("anchorAfterUnescape(%q) = false", s)
			}
		}
	}
	for _, s := range []string{`\u5bc6\u7801\uff1b`, `\u5bc6\u7801\uff0a`, `\u5bc6\u7801\ufffd`, `\ud800`, `\u662e\u4e3b`, `\u8fd9\u662f\u4e00`, `\u6210\u4e3a`} {
		checkPrintable(t, s)
		if anchorAfterUnescape([]byte(s)) {
			t.Errorf("anchorAfterUnescape(%q) = true", s)
		}
	}
}

func FuzzPrintableAfterUnescape(f *testing.F) {
	for _, s := range []string{"一个流式回答", "sk-proj- 流", "\u00e9\n\t\"\\/", "😀x", "密码：Kqzmpxtrlv", "\xe4"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, ascii bool) {
		b, _ := json.Marshal(s)
		body := string(b[1 : len(b)-1])
		checkPrintable(t, body)
		if ascii {
			// ensure_ascii: every non-ASCII character escaped.
			var out strings.Builder
			for _, r := range body {
				if r < 0x80 {
					out.WriteRune(r)
					continue
				}
				r1, r2 := utf16.EncodeRune(r)
				if r1 == utf8.RuneError {
					fmt.Fprintf(&out, `\u%04x`, r)
				} else {
					fmt.Fprintf(&out, `\u%04x\u%04x`, r1, r2)
				}
			}
			checkPrintable(t, out.String())
		}
	})
}

func BenchmarkPrintableAfterUnescape(b *testing.B) {
	raw := []byte(`\u4e2a\u6d41\u5f0f\u56de\u7b54\u7684\u7247\u6bb5\u3002\u6a21\u578b\u6b63`)
	for b.Loop() {
		if PrintableAfterUnescape(raw) || anchorAfterUnescape(raw) {
			b.Fatal("printable")
		}
	}
}

// keyBefore reports whether rs[k-1], past up to three spaces and (before
// a full-width ':' or '=') a closing quote and its backslashes, may end a
// CJK label (also past a copula before a full-width one), or before a
// full-width one an ASCII key (as redact's cjkKey reads a key).
func keyBefore(rs []rune, k int) bool {
	fullWidth := rs[k] == '：' || rs[k] == '＝'
	j := k
	for n := 0; n < 3 && j > 0 && rs[j-1] == ' '; n++ {
		j--
	}
	if fullWidth && j > 0 && (rs[j-1] == '"' || rs[j-1] == '\'') {
		j--
		for n := 0; n < 7 && j > 0 && rs[j-1] == '\\'; n++ {
			j--
		}
	}
	if j == 0 {
		return false
	}
	if c := rs[j-1]; c < 0x80 {
		return fullWidth && (isAlnum(byte(c)) || c == '-' || c == '_' || c == '.')
	}
	if fullWidth && redact.IsCJKSeparator(rs[j-1]) && rs[j-1] != '：' && rs[j-1] != '＝' {
		j-- // a copula before the colon: "密码为：…", "Token为：…"
		for n := 0; n < 3 && j > 0 && rs[j-1] == ' '; n++ {
			j--
		}
		if j == 0 {
			return false
		}
		if c := rs[j-1]; c < 0x80 {
			return isAlnum(byte(c)) || c == '-' || c == '_' || c == '.'
		}
	}
	return redact.IsCJKLabelEnd(rs[j-1])
}

// TestCJKSepEscape: cjkSepEscape is redact.IsCJKSeparator on every \uXXXX
// escape after a label's last character (escaped, in UTF-8, past spaces,
// and for a full-width ':' or '=' past a closing quote), its hex digits
// in lower and in upper case; after an ASCII key only the full-width
// ones are; after anything else, none.
func TestCJKSepEscape(t *testing.T) {
	n := 0
	for r := 0; r <= 0xFFFF; r++ {
		fullWidth := r == '：' || r == '＝'
		for _, f := range []string{`\u%04x`, `\u%04X`} {
			esc := fmt.Sprintf(f, r)
			for _, c := range []struct {
				before string
				want   bool
			}{
				{`\u7801`, redact.IsCJKSeparator(rune(r))},
				{`\u5BC6\u7801  `, redact.IsCJKSeparator(rune(r))},
				{"密码", redact.IsCJKSeparator(rune(r))},
				{"パスワード ", redact.IsCJKSeparator(rune(r))},
				{`\"\u5bc6\u7801\"`, fullWidth},
				{"db_password", fullWidth},
				{"password ", fullWidth},
				{`\u5bc6\u7801\u4e3a`, fullWidth},
				{"密码为 ", fullWidth},
				{`\u5bc6\u7801 \u662F `, fullWidth},
				{`\u8fd9\u662f`, false},
				{"这是", false},
				{`Token\u4e3a`, fullWidth},
				{"api_key是 ", fullWidth},
				{`(\u662f`, false},
				{`\u4e00`, false},
				{"", false},
				{"一", false},
				{`\u7801    `, false},
				{"(", false},
			} {
				e := []byte(c.before + esc)
				if got := cjkSepEscape(e, len(c.before)); got != c.want {
					t.Errorf("cjkSepEscape(%s) = %v, want %v", e, got, c.want)
				}
			}
		}
		if redact.IsCJKSeparator(rune(r)) {
			n++
		}
	}
	if n != 6 {
		t.Errorf("%d separators, want 6", n)
	}
}

// TestScanSecretsPWDPath: a path under the key "PWD" (an environment's
// working directory) is no secret value; any other value under it, and a
// path under another password key, are.
func TestScanSecretsPWDPath(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{`{"params":{"env":{"PWD":"/srv/app","HOME":"/root"}}}`, false},
		{`{"params":{"env":{"pwd":"~/src","Pwd":"C:\\work"}}}`, false},
		{`{"params":{"env":{"PWD":"hunter22"}}}`, true},
		{`{"params":{"env":{"DB_PWD":"/x/y2"}}}`, true},
		{`{"params":{"env":{"PWD":"/srv/app","password":"hunter22"}}}`, true},
	} {
		if _, _, found := ScanSecrets([]byte(c.in)); found != c.want {
			t.Errorf("ScanSecrets(%s): found %v, want %v", c.in, found, c.want)
		}
	}
}

// TestMayHoldSecretURLEncodedEscape: a string without JSON escapes that
// spells a credential with URL-encoded ones ("ghp%5Cu005f…": a JSON escape
// of '_', URL-encoded; "%2522password%2522…": a quote encoded twice) is
// found by ScanSecrets, which decodes them, so Scan must not call its
// record free of secrets. It did, with every key of the record known: rule
// e2a.secret then skipped the record, and a replay of the record log (which
// said the credential was there) reported what the live run had not.
func TestMayHoldSecretURLEncodedEscape(t *testing.T) {
	for _, d := range []string{
		`{"request_id":"r","params":{"query":"state=token%20ghp%5Cu005fUtkD9bMbNon36ouKgiYIVraKA9OczXjH4XKO"}}`,
		`{"request_id":"r","body":{"delta":"see ghp%5Cu005fUtkD9bMbNon36ouKgiYIVraKA9OczXjH4XKO"}}`,
		`{"request_id":"r","body":{"delta":"q=%2522password%2522%253A%2522hunter2xyz%2522"}}`,
	} {
		if _, _, found := ScanSecrets([]byte(d)); !found {
			t.Fatalf("ScanSecrets finds nothing in %s", d)
		}
		var r Record
		checkScanSecrets(t, []byte(d))
		if err := Scan([]byte(d), &r); err != nil || !r.MayHoldSecret() {
			t.Errorf("%s: MayHoldSecret false (%v)", d, err)
		}
	}
}
