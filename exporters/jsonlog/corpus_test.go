package jsonlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// plant is one shape of issue 9: how it is written (text) and the values
// that must never reach the log (secrets).
type plant struct {
	name    string
	text    string
	secrets []string
}

const corpusPEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\naFDrBz9vFqU4yU0wL0fQ2Km0ZSy9Zk4eC2S0a8Qv\n-----END RSA PRIVATE KEY-----"

var pemSecrets = []string{"MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn", "aFDrBz9vFqU4yU0wL0fQ2Km0ZSy9Zk4eC2S0a8Qv"}

func corpus() []plant {
	one := func(name, text, secret string) plant { return plant{name, text, []string{secret}} }
	return []plant{
		one("aws_id", "key AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE"),
		one("aws_sts", "idASIAY34FZKBOKMUTVV7A", "ASIAY34FZKBOKMUTVV7A"),
		one("aws_secret", "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
		one("slack_bot", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
		one("slack_user", "t xoxp-123456789012-1234567890123-abcdef0123456789", "1234567890123-abcdef0123456789"),
		one("slack_app", "xapp-1-A0123456789-1234567890123-abcdef0123456789", "A0123456789-1234567890123"),
		one("stripe_live", "pay sk_live_51HxAbCdEfGhIjKlMnOpQrStUv", "51HxAbCdEfGhIjKlMnOpQrStUv"),
		one("stripe_test", "sk_test_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"),
		one("stripe_rk", "rk_live_51HxRestrictedKeyValue0001", "51HxRestrictedKeyValue0001"),
		one("google", "maps AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
		one("ghp", "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "16C7e42F292c6912E7710c838347Ae178B4a"),
		one("gho", "token gho_26C7e42F292c6912E7710c838347Ae178B4a", "26C7e42F292c6912E7710c838347Ae178B4a"),
		one("ghs", "ghs_36C7e42F292c6912E7710c838347Ae178B4a", "36C7e42F292c6912E7710c838347Ae178B4a"),
		one("ghu", "(ghu_46C7e42F292c6912E7710c838347Ae178B4a)", "46C7e42F292c6912E7710c838347Ae178B4a"),
		one("ghr", "ghr_56C7e42F292c6912E7710c838347Ae178B4a", "56C7e42F292c6912E7710c838347Ae178B4a"),
		one("github_pat", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEF", "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEF"),
		one("glpat", "glpat-xYz12AbCdEfGhIjKlMnOp", "xYz12AbCdEfGhIjKlMnOp"),
		one("openai", "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
		one("anthropic", "sk-ant-api03-ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210-AA", "ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210"),
		one("sk_glued", "idsk-sk-proj-GluedKeyValue0123456789", "GluedKeyValue0123456789"),
		one("sk_after_underscore", "x_sk-UnderscoreKey0123456789", "UnderscoreKey0123456789"),
		one("jwt", "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
		{"pem", "key: " + corpusPEM, pemSecrets},
		{"pem_escaped", "key: " + strings.ReplaceAll(corpusPEM, "\n", `\n`), pemSecrets},
		one("basic", "Authorization: Basic dXNlcjpodW50ZXIyaHVudGVy", "dXNlcjpodW50ZXIyaHVudGVy"),
		one("basic_bare", "sent Basic YWxhZGRpbjpvcGVuc2VzYW1l", "YWxhZGRpbjpvcGVuc2VzYW1l"),
		one("auth_digest", `Authorization: Digest username="bob", response="6629fae49393a05397450978507c4ef1"`, "6629fae49393a05397450978507c4ef1"),
		one("auth_token", "authorization=Token tokVal9876543", "tokVal9876543"),
		one("bearer", "Bearer abc123def456ghi789", "abc123def456ghi789"),
		one("bearer_colon", "Bearer: tok3nValu3Z", "tok3nValu3Z"),
		one("cookie", "Cookie: sid=31d4d96e407aad42; lang=en", "31d4d96e407aad42"),
		one("set_cookie", "Set-Cookie: session=SeSsIoN0123456; Path=/; HttpOnly", "SeSsIoN0123456"),
		one("private_key_field", `private_key: "PrivKeyMaterial0123456789"`, "PrivKeyMaterial0123456789"),
		one("url_token", "GET https://h.example/cb?token=UrlTok0123456&x=1", "UrlTok0123456"),
		one("url_access_token", "https://h.example/#access_token=AccTok0123456&state=1", "AccTok0123456"),
		one("url_api_key", "https://api.example/v1?api_key=ApiKey0123456", "ApiKey0123456"),
		one("url_secret", "https://h.example/?secret=SecVal0123456", "SecVal0123456"),
		one("url_password", "https://h.example/login?user=bob&password=PwVal0123456", "PwVal0123456"),
		one("text_password", "login failed for bob, password=hunter2xyz, retry", "hunter2xyz"),
		one("text_api_key", "config api_key: AbCdEf123456 loaded", "AbCdEf123456"),
		one("text_pwd_quoted", "pwd = 'p4ss w0rd!'", "p4ss w0rd!"),
		one("text_json_pair", `{"password": "jsonPairPw123"}`, "jsonPairPw123"),
		one("basic_url", "nats://u:PASSWORD123@bad host:4222", "PASSWORD123"),
		one("basic_url_https", "https://bob:s3cr3tPW@example.com/x", "s3cr3tPW"),
		one("email", "mail alice.liu@example.com now", "alice.liu@example.com"),
		one("cn_mobile", "call 13912345678", "13912345678"),
		one("cn_mobile_grouped", "call +86 139 1234 5678", "139 1234 5678"),
		one("cn_id", "id 11010519491231002X ok", "11010519491231002X"),
		one("user_id_pair", "user_id=u-secret-42", "u-secret-42"),
		// shapes the first corpus did not have
		one("sendgrid", "key 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 ok", "ngeVfQFYQlKU0ufo8x5d1A"),
		one("npm", "npm_abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz0123456789"),
		one("pypi", "pypi-AgEIcHlwaS5vcmcCJGE4YjQ1ZTI4LWI1ZjgtNDQ5Yy04YjRiLWE0ZmY3OTc0YjcxNQACKlszLCI5ZjQ2In1dAAAGIG9k", "CJGE4YjQ1ZTI4LWI1ZjgtNDQ5Yy04YjRi"),
		one("huggingface", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "abcdefghijklmnopqrstuvwxyzABCDEFGH"),
		one("twilio", "SK0123456789abcdef0123456789abcdef and AC1123456789abcdef0123456789abcdef", "123456789abcdef0123456789abcdef"),
		one("discord", "bot MTE4NDIzNjk0NTk2OTg1NDQwMA.GkXm2a.abcdefghijklmnopqrstuvwxyz012345678", "MTE4NDIzNjk0NTk2OTg1NDQwMA"),
		one("telegram", "https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0/getMe", "123456789:AA"),
		one("databricks", "dapi0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"),
		one("digitalocean", "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef0123456789abcdef"),
		one("shopify", "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", "fedcba9876543210fedcba9876543210"),
		one("square", "sq0atp-AbCdEfGhIjKlMnOpQrStUv", "AbCdEfGhIjKlMnOpQrStUv"),
		one("mailgun", "key-abcdef0123456789abcdef0123456789", "abcdef0123456789abcdef0123456789"),
		one("glued_token", "run1_ghp_66C7e42F292c6912E7710c838347Ae178B4a", "66C7e42F292c6912E7710c838347Ae178B4a"),
		one("url_encoded_pair", "q=password%3DEncPw0123%26x%3D1", "EncPw0123"),
		one("double_escaped_pair", `{\"api_key\":\"DblEscKey0123\"}`, "DblEscKey0123"),
		one("pgp_key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF0AAAABCADPmA2cMBQ1Qk0x\n=abcd\n-----END PGP PRIVATE KEY BLOCK-----", "lQOYBF0AAAABCADPmA2cMBQ1Qk0x"),
		one("card", "card 4111 1111 1111 1111 exp", "4111 1111 1111 1111"),
		one("cn_bank_card", "card 6222020000112233440 ok", "6222020000112233440"),
		one("iban", "iban DE89 3704 0044 0532 0130 00 ok", "DE89 3704 0044 0532 0130 00"),
		one("us_phone", "call (415) 555-0132 now", "555-0132"),
	}
}

// corpusPlaces are the places of requests and responses a value can be
// planted in: a record with %s where the JSON string goes.
var corpusPlaces = map[string]string{
	"params.text":        `{"protocol_version":"1.0","request_id":"req_1","session_id":"s1","method":"chat.send","params":{"text":%s}}`,
	"params.custom":      `{"protocol_version":"1.0","request_id":"req_1","method":"chat.send","params":{"mode":"agent","note":%s}}`,
	"params.files.uri":   `{"protocol_version":"1.0","request_id":"req_1","method":"chat.send","params":{"files":[{"uri":%s,"name":"a"}]}}`,
	"auth.extra_headers": `{"protocol_version":"1.0","request_id":"req_1","method":"chat.send","params":{},"auth":{"method_id":"oauth","extra_headers":{"X-Note":%s}}}`,
	"metadata":           `{"protocol_version":"1.0","request_id":"req_1","method":"chat.send","params":{},"metadata":{"note":%s}}`,
	"legacy_blob":        `{"protocol_version":"1.0","request_id":"req_1","method":"chat.send","params":{},"metadata":{"_e2a_wire_legacy_payload":%s}}`,
	"channel_context":    `{"protocol_version":"1.0","request_id":"req_1","method":"chat.send","params":{},"channel_context":{"note":%s}}`,
	"request_id":         `{"protocol_version":"1.0","request_id":%s,"method":"chat.send","params":{}}`,
	"session_id":         `{"protocol_version":"1.0","request_id":"req_1","session_id":%s,"method":"chat.send","params":{}}`,
	"body.delta":         `{"protocol_version":"1.0","response_id":"r1","request_id":"q1","sequence":0,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","timestamp":"2026-03-29T12:00:00+00:00","body":{"delta_kind":"text","delta":%s}}`,
	"body.result":        `{"protocol_version":"1.0","response_id":"r1","request_id":"q1","sequence":1,"is_final":true,"status":"succeeded","response_kind":"e2a.complete","timestamp":"2026-03-29T12:00:00+00:00","body":{"result":%s}}`,
	"body.message":       `{"protocol_version":"1.0","response_id":"r1","request_id":"q1","sequence":1,"is_final":true,"status":"failed","response_kind":"e2a.error","timestamp":"2026-03-29T12:00:00+00:00","body":{"code":"E2A.AGENT_ERROR","message":%s}}`,
	"body.code":          `{"protocol_version":"1.0","response_id":"r1","request_id":"q1","sequence":1,"is_final":true,"status":"failed","response_kind":"e2a.error","timestamp":"2026-03-29T12:00:00+00:00","body":{"code":%s}}`,
	"error.message":      `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":%s,"data":{"detail":%s}}}`,
	"status":             `{"protocol_version":"1.0","response_id":"r1","request_id":"q1","sequence":1,"is_final":true,"status":%s,"response_kind":"e2a.complete","timestamp":"2026-03-29T12:00:00+00:00","body":{}}`,
	"response_kind":      `{"protocol_version":"1.0","response_id":"r1","request_id":"q1","sequence":1,"is_final":true,"status":"succeeded","response_kind":%s,"timestamp":"2026-03-29T12:00:00+00:00","body":{}}`,
	"timestamp":          `{"protocol_version":"1.0","response_id":"r1","request_id":"q1","sequence":1,"is_final":true,"status":"succeeded","response_kind":"e2a.complete","timestamp":%s,"body":{}}`,
	"response_id":        `{"protocol_version":"1.0","response_id":%s,"request_id":"q1","sequence":1,"is_final":true,"status":"succeeded","response_kind":"e2a.complete","timestamp":"2026-03-29T12:00:00+00:00","body":{}}`,
	"cloudevent_data":    `{"specversion":"1.0","id":"e1","source":"s","type":"t","data":{"note":%s}}`,
}

// encodings of a planted string in the input JSON.
var corpusEncodings = map[string]func(string) string{
	"plain": func(s string) string { b, _ := json.Marshal(s); return string(b) },
	"u00XX": func(s string) string { // every ASCII letter as \u00XX
		var b strings.Builder
		b.WriteByte('"')
		for _, r := range s {
			switch {
			case r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				q, _ := json.Marshal(string(r))
				b.Write(q[1 : len(q)-1])
			}
		}
		b.WriteByte('"')
		return b.String()
	},
	"slash": func(s string) string {
		b, _ := json.Marshal(s)
		return strings.ReplaceAll(string(b), "/", `\/`)
	},
}

// forms of a secret searched in the output.
func secretForms(s string) []string {
	q, _ := json.Marshal(s)
	forms := []string{s, string(q[1 : len(q)-1]), strings.ReplaceAll(s, "/", `\/`), corpusEncodings["u00XX"](s)}
	return forms
}

var fpRe = regexp.MustCompile(`\(fp:([0-9a-f]{16})\)`)

// TestCorpus plants every shape in every place, in three encodings,
// through the real engine into the record log under the three content
// policies: no secret, in any of its JSON forms, reaches the log; every
// line is valid JSON; a shape gets the same fingerprints in every
// free-text place.
func TestCorpus(t *testing.T) {
	plants := corpus()
	for _, content := range []Content{ContentKeep, ContentMask, ContentDrop} {
		fps := map[string]map[string]string{} // shape -> place -> fingerprints
		for _, p := range plants {
			fps[p.name] = map[string]string{}
		}
		for place, tmpl := range corpusPlaces {
			for enc, encode := range corpusEncodings {
				// One engine and log for all shapes in this place; each
				// record its own stream, numbered by x_corpus.
				var recs [][]byte
				for n, p := range plants {
					rec := strings.ReplaceAll(tmpl, "%s", encode(p.text))
					rec = strings.ReplaceAll(rec, `"q1"`, fmt.Sprintf(`"q%d"`, n))
					rec = strings.ReplaceAll(rec, `"req_1"`, fmt.Sprintf(`"req_%d"`, n))
					rec = fmt.Sprintf(`{"x_corpus":%d,`, n) + rec[1:]
					if !json.Valid([]byte(rec)) {
						t.Fatalf("bad test record %s", rec)
					}
					recs = append(recs, []byte(rec))
				}
				var buf bytes.Buffer
				lines := runEngine(t, NewWriterTo(&buf, NewRedactor(content, 65536, testKey)), &buf, recs...)
				if len(lines) != len(plants) {
					t.Fatalf("%v %s %s: %d lines for %d records", content, place, enc, len(lines), len(plants))
				}
				for _, out := range lines {
					var v struct {
						N *int `json:"x_corpus"`
					}
					if err := json.Unmarshal([]byte(out), &v); err != nil || v.N == nil {
						t.Fatalf("%v %s %s: bad line %q: %v", content, place, enc, out, err)
					}
					p := plants[*v.N]
					for _, s := range p.secrets {
						for _, f := range secretForms(s) {
							if strings.Contains(out, f) {
								t.Errorf("%v: %s in %s (%s): %q found in\n%s", content, p.name, place, enc, f, out)
							}
						}
					}
					if enc == "plain" {
						var got []string
						for _, m := range fpRe.FindAllStringSubmatch(out, -1) {
							got = append(got, m[1])
						}
						fps[p.name][place] = strings.Join(got, ",")
					}
				}
			}
		}
		if content != ContentKeep {
			continue
		}
		// Equal secrets, equal fingerprints: the free-text places mask a
		// shape alike.
		for _, p := range plants {
			ref := fps[p.name]["params.custom"]
			switch p.name {
			case "email", "cn_mobile", "cn_mobile_grouped", "cn_id", "user_id_pair", "card", "cn_bank_card", "iban", "us_phone":
				continue // personal data: masked without a fingerprint outside ids
			}
			if ref == "" {
				t.Errorf("%s: no fingerprint in params.custom", p.name)
			}
			for _, place := range []string{"metadata", "channel_context", "body.delta", "body.message", "params.text", "cloudevent_data"} {
				if got := fps[p.name][place]; got != ref {
					t.Errorf("%s: fingerprints in %s %q, in params.custom %q", p.name, place, got, ref)
				}
			}
		}
	}
}

// TestCorpusKeys: a value with no shape at all under a credential-named
// key, at any depth, is masked.
func TestCorpusKeys(t *testing.T) {
	const v = "plainValueNoShape0042"
	keys := []string{"password", "db_password", "mysecretthing", "client_secret", "api_key", "x-api-key", "apiKey", "access_token",
		"refresh_token", "session_token", "Cookie", "Set-Cookie", "Authorization", "private_key", "privateKey", "credentials",
		"aws_secret_access_key", "AccountKey", "passphrase", "bearer", "sig", "x_auth_token", "signing_key"}
	for _, k := range keys {
		for _, tmpl := range []string{`{"request_id":"q","params":{%s:%s}}`, `{"request_id":"q","metadata":{"a":[{"b":{%s:%s}}]}}`, `{"request_id":"q","auth":{"z":{%s:%s}}}`} {
			kq, _ := json.Marshal(k)
			rec := fmt.Sprintf(tmpl, kq, `"`+v+`"`)
			for _, c := range []Content{ContentKeep, ContentMask} {
				out, _, err := NewRedactor(c, 65536, testKey).Redact(nil, []byte(rec))
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(string(out), v) {
					t.Errorf("%v: %s: %s", c, k, out)
				}
			}
		}
	}
}

// TestCorpusUnseen tries shapes the project has never seen, in free text
// (no credential-named key around them), and reports what the generic
// rules catch; those a generic rule must catch are asserted.
func TestCorpusUnseen(t *testing.T) {
	cases := []struct {
		name, text, secret string
		must               bool
	}{
		{"azure_storage", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFy==;EndpointSuffix=core.windows.net", "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFy", true},
		{"azure_sas", "https://acct.blob.core.windows.net/c?sv=2020-08-04&sig=SaSsIgNaTuRe0123456789%3D", "SaSsIgNaTuRe0123456789", true},
		{"azure_servicebus", "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=SbKeyValue0123456789=", "SbKeyValue0123456789", true},
		{"twilio_pair", "twilio auth_token: 0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef", true},
		{"postgres_url", "postgres://admin:PgPassw0rd@db:5432/app", "PgPassw0rd", true},
		{"redis_url_pw_only", "redis://:RedisPw0123@cache:6379/0", "RedisPw0123", true},
		{"x_api_key_header", "X-Api-Key: HdrKey0123456789", "HdrKey0123456789", true},
		{"client_secret_pair", "client_secret=CliSec0123456789", "CliSec0123456789", true},
		{"twilio_sid_bare", "SK0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef", true},
		{"sendgrid_bare", "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", "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc", true},
		{"npm_bare", "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", true},
		{"huggingface_bare", "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", true},
		{"telegram_bot", "123456789:AAEhBOweik9ai2o4oWuDcMHPxN4ZZ7G8aDc", "AAEhBOweik9ai2o4oWuDcMHPxN4ZZ7G8aDc", true},
	}
	r := NewRedactor(ContentKeep, 65536, testKey)
	for _, c := range cases {
		q, _ := json.Marshal(c.text)
		out, _, err := r.Redact(nil, []byte(`{"request_id":"q","metadata":{"note":`+string(q)+`}}`))
		if err != nil {
			t.Fatal(err)
		}
		caught := !strings.Contains(string(out), c.secret)
		t.Logf("unseen %-20s caught=%v", c.name, caught)
		if c.must && !caught {
			t.Errorf("%s not caught: %s", c.name, out)
		}
	}
}

// TestCorpusNumbers: personal data typed as a JSON number under a key that
// says nothing (a phone number with its country code, a card number) is
// masked like the same digits in a string; counts, ids and millisecond
// timestamps stay numbers.
func TestCorpusNumbers(t *testing.T) {
	r := NewRedactor(ContentKeep, 65536, testKey)
	for _, c := range []struct{ rec, secret string }{
		{`{"request_id":"q","metadata":{"contact":8613912345678}}`, "13912345678"},
		{`{"request_id":"q","metadata":{"contact":13912345678}}`, "13912345678"},
		{`{"request_id":"q","params":{"card":4111111111111111}}`, "4111111111111111"},
		{`{"request_id":"q","params":{"x":[6222020000112233440]}}`, "6222020000112233440"},
	} {
		out, _, err := r.Redact(nil, []byte(c.rec))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), c.secret) || !json.Valid(out) {
			t.Errorf("%s -> %s", c.rec, out)
		}
	}
	for _, rec := range []string{`{"request_id":"q","metadata":{"ts":1717171717171,"n":12,"id":4111111111111112,"f":-13912345678.5,"e":1e20}}`} {
		out, _, err := r.Redact(nil, []byte(rec))
		if err != nil || string(out) != rec {
			t.Errorf("%s -> %s (%v)", rec, out, err)
		}
	}
}

// TestCorpusNameValue: a credential named in a "name" (or "key") field and
// held in the "value" field after it, as Kubernetes env lists and HAR
// headers write them.
func TestCorpusNameValue(t *testing.T) {
	r := NewRedactor(ContentKeep, 65536, testKey)
	for _, rec := range []string{
		`{"request_id":"q","metadata":{"env":[{"name":"DB_PASSWORD","value":"NvPw0123456"}]}}`,
		`{"request_id":"q","metadata":{"headers":[{"name":"Authorization","value":"Bearer NvPw0123456"}]}}`,
		`{"request_id":"q","metadata":{"kv":{"key":"api_key","value":"NvPw0123456"}}}`,
		`{"request_id":"q","metadata":{"kv":{"key":"\u0061pi_key","value":"NvPw0123456"}}}`,
	} {
		out, _, err := r.Redact(nil, []byte(rec))
		if err != nil || strings.Contains(string(out), "NvPw0123456") || !json.Valid(out) {
			t.Errorf("%s -> %s (%v)", rec, out, err)
		}
	}
	plain := `{"request_id":"q","metadata":{"env":[{"name":"LOG_LEVEL","value":"debug"},{"name":"tokens","value":"5"}]}}`
	if out, _, err := r.Redact(nil, []byte(plain)); err != nil || string(out) != plain {
		t.Errorf("%s -> %s (%v)", plain, out, err)
	}
}
