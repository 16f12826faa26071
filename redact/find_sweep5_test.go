package redact

import (
	"strings"
	"testing"
)

// leftRun reports a run of 10 characters of secret left in masked: half a
// token or the start of a password is a leak as much as the whole.
func leftRun(masked, secret string) bool {
	for i := 0; i+10 <= len(secret); i++ {
		if strings.Contains(masked, secret[i:i+10]) {
			return true
		}
	}
	return false
}

// TestFindSweep5Forms: the token formats and forms of the sweep5 corpus
// (cmd/e2atap/testdata/sweep5) are masked, no run of 10 characters of
// their secret left, and are credentials (rule e2a.secret) unless cred is
// false; MayHoldCredentialText passes each; masking twice changes nothing.
// Their near-misses stay as they are. A failure names the case, never the
// value.
func TestFindSweep5Forms(t *testing.T) {
	for _, c := range []struct {
		name, text, secret string // secret: "" for a near-miss (nothing masked)
		cred               bool
	}{
		// Vendor formats.
		{"duffel", "duffel_live_Qx8vK2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0AbCdEfGhIjK_-aZ", "Qx8vK2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0AbCdEfGhIjK_-aZ", true},
		{"frame.io", "fio-u-Qx8vK2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0AbCdEfGhIjKQx8vK2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0Ab", "Qx8vK2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0AbCdEfGhIjKQx8vK2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0Ab", true},
		{"infracost", "INFRACOST_API_KEY ico-Qx8vK2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0A", "Qx8vK2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0A", true},
		{"scalingo", "tk-us-qx8vk2mz7wlp9tn4rb6yc1hd3fg5js0abcdefghijk_mnopq", "qx8vk2mz7wlp9tn4rb6yc1hd3fg5js0abcdefghijk_mnopq", true},
		{"typeform", "tfp_Qx8vK2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0AbCdEfGhIjKQx8vK2mZ7wLp9Tn4Rb", "Qx8vK2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0AbCdEfGhIjKQx8vK2mZ7wLp9Tn4Rb", true},
		{"settlemint", "sm_pat_Qx8vK2mZ7wLp9Tn4", "Qx8vK2mZ7wLp9Tn4", true},
		{"readme", "rdme_qx8vk2mz7wlp9tn4rb6yc1hd3fg5js0abcdefghijqx8vk2mz7wlp9tn4rb6yc1hd3fg5js", "qx8vk2mz7wlp9tn4rb6yc1hd3fg5js0abcdefghijqx8vk2mz7wlp9tn4rb6yc1hd3fg5js", true},
		{"defined networking", "dnkey-qxvkmzwlptnrbychdfgjsabcde-qxvkmzwlptnrbychdfgjsabcdeqxvkmzwlptnrbychdfgjsabcdef", "qxvkmzwlptnrbychdfgjsabcdeqxvkmzwlptnrbychdfgjsabcdef", true},
		{"octopus", "deploy with API-QX8VK2MZ7WLP9TN4RB6YC1HD3F now", "QX8VK2MZ7WLP9TN4RB6YC1HD3F", true},
		{"easypost", "EZAKQx8vK2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0AbCdEfGhIjKQx8vK2mZ7wLp", "Qx8vK2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0AbCdEfGhIjKQx8vK2mZ7wLp", true},
		{"clickhouse", "key 4b1dQx8vK2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0AbCdEf9", "Qx8vK2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0AbCdEf9", true},
		{"jfrog reference", "cmVmdQx8vK2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0AbCdEfGhIjKQx8vK2mZ7wLp9Tn4R", "Qx8vK2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0AbCdEfGhIjKQx8vK2mZ7wLp9Tn4R", true},
		{"maxmind", "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", "mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0Ab12", true},
		{"teams webhook", "https://contoso.webhook.office.com/webhookb2/3f2a1b4c-1111-4222-8333-944455556666@7e3f795e-69df-4f5a-bcc9-aaa8b34ebd4e/IncomingWebhook/0123456789abcdef0123456789abcdef/3f2a1b4c-1111-4222-8333-944455556666", "0123456789abcdef0123456789abcdef", true},
		{"teams webhook encoded", "u=https%3A%2F%2Fcontoso.webhook.office.com%2Fwebhookb2%2F3f2a1b4c-1111-4222-8333-944455556666%407e3f795e-69df-4f5a-bcc9-aaa8b34ebd4e%2FIncomingWebhook%2F0123456789abcdef0123456789abcdef%2Fx", "0123456789abcdef0123456789abcdef", true},
		{"honeycomb header", "X-Honeycomb-Team: Qx8vK2mZ7wLp9Tn4Rb6Yc1", "Qx8vK2mZ7wLp9Tn4Rb6Yc1", true},
		{"honeycomb otel headers", "OTEL_EXPORTER_OTLP_HEADERS=x-honeycomb-team=Qx8vK2mZ7wLp9Tn4Rb6Yc1,x-honeycomb-dataset=prod", "Qx8vK2mZ7wLp9Tn4Rb6Yc1", true},
		{"docker identitytoken", `{"auths":{"r.example.com":{"identitytoken":"Qx8vK2mZ7wLp9Tn4Rb6Yc1Hd3Fg5"}}}`, "Qx8vK2mZ7wLp9Tn4Rb6Yc1Hd3Fg5", true},
		// Forms.
		{"yaml block scalar", "database:\n  password: |\n    Qx8vK2!mZ7wLp9\n  user: app\n", "Qx8vK2!mZ7wLp9", true},
		{"yaml block scalar in JSON text", `database:\n  password: >-\n    Qx8vK2!mZ7wLp9\n`, "Qx8vK2!mZ7wLp9", true},
		{"yaml block scalar encoded", "s=database%3A%0A++password%3A+%7C%0A++++Qx8vK2mZ7wLp9a%0A", "Qx8vK2mZ7wLp9a", true},
		{"toml multi-line", `password = """Qx8vK2!mZ7wLp9"""`, "Qx8vK2!mZ7wLp9", true},
		{"toml multi-line in JSON text", `password = \"\"\"Qx8vK2!mZ7wLp9\"\"\"`, "Qx8vK2!mZ7wLp9", true},
		{"toml multi-line encoded", "s=password+%3D+%22%22%22Qx8vK2mZ7wLp9a%22%22%22", "Qx8vK2mZ7wLp9a", true},
		{"openvpn static key", "<tls-auth>\n-----BEGIN OpenVPN Static key V1-----\n0123456789abcdef0123456789abcdef\nfedcba9876543210fedcba9876543210\n-----END OpenVPN Static key V1-----\n</tls-auth>", "fedcba9876543210fedcba9876543210", true},
		{"base64 key run", "untrusted comment: minisign encrypted secret key\nRWQNoAp1t5HFMgoEOuyeihlgl0rt7JQjFiNuoXlRNUKVAx+cIcHNzjDULCD4Uj9dpn+CfqeIUEzRQAJypevfzRJrbxhHe/P2hqoTEO05E1AlAq3gF8==\n", "cIcHNzjDULCD4Uj9dpn", false},
		{"base64 key run encoded", "s=key%0ARWQNoAp1t5HFMgoEOuyeihlgl0rt7JQjFiNuoXlRNUKVAx%2BcIcHNzjDULCD4Uj9dpn%2BCfqeIUEzRQAJypevfzRJrbxhHe%2FP2hqoTEO05E1", "cIcHNzjDULCD4Uj9dpn", false},
		{"token after a random word and '+'", "q=sig+Xy9kQ2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0AbCdEfGhIj+ghp_2sTVPHQ8emEeJ0Xf5VS5hBgtEzCyUlb1bjKb+end", "2sTVPHQ8emEeJ0Xf5VS5hBgtEzCyUlb1bjKb", true},
		{"aws key id after a random word and '+'", "Xy9kQ2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0AbCdEfGhIj+AKIAERUWYPB5TD57UJZT+x", "ERUWYPB5TD57UJZT", true},
		{"pgpass in JSON text in JSON text", `{"note":"{\\\"line\\\":\\\"db.example.com:6432:*:app:u9xcHg^Qi3Lfo0\\\"}"}`, "u9xcHg^Qi3Lfo0", true},
		{"httpie", "http -a admin:Zq8pLm2Nw7x GET https://api.example.com/users", "Zq8pLm2Nw7x", true},
		{"httpie encoded", "q=http+-a+admin%3AZq8pLm2Nw7x+GET+api.example.com", "Zq8pLm2Nw7x", true},
		{"smbclient", `smbclient //fs01/share -U 'corp\backup%Zq8pLm2Nw7x' -c ls`, "Zq8pLm2Nw7x", true},
		{"smbclient encoded", "q=smbclient+%2F%2Ffs01%2Fshare+-U+corp%5Cbackup%25Zq8pLm2Nw7x+-c+ls", "Zq8pLm2Nw7x", true},
		{"htpasswd", "htpasswd -b -c /etc/nginx/.htpasswd admin Zq8pLm2Nw7x", "Zq8pLm2Nw7x", true},
		{"htpasswd -nb", "htpasswd -nb admin Zq8pLm2Nw7x", "Zq8pLm2Nw7x", true},
		{"htpasswd in JSON text", `htpasswd -bc \/etc\/nginx\/.htpasswd admin Zq8pLm2Nw7x`, "Zq8pLm2Nw7x", true},
		{"key escaped then URL-encoded", "state=p%5Cu0061ssword%3A+WfX7Cm-kpEw0ee", "WfX7Cm-kpEw0ee", true},
		{"aws key escaped then URL-encoded", "q=aws+key+%5Cu0041KIAERUWYPB5TD57UJZT", "ERUWYPB5TD57UJZT", true},
		{"aws key escaped then URL-encoded twice", "q%3Daws%2520key%2520%255Cu0041KIAERUWYPB5TD57UJZT", "ERUWYPB5TD57UJZT", true},
		// Near-misses.
		{"favicon hash", "http://assets.example.com/favicon.ico-7a388b69018576d24b59331fd60aab0c.png", "", false},
		{"gssapi word", `msgstr "GSSAPI-VIRHEKAPSELOINTIMERKKIJONO."`, "", false},
		{"api version", "API-VERSION: 2026-12-01", "", false},
		{"tk-us regions", "cluster tk-us-east-1 and tk-us-west-2", "", false},
		{"cookie cleared", "Set-Cookie: session=; Path=/; Max-Age=0", "", false},
		{"cookie attributes", "Set-Cookie: HttpOnly; Secure", "", false},
		{"honeycomb dataset", "x-honeycomb-dataset=prod and honeycomb team: platform", "", false},
		{"yaml block of a plain key", "script: |\n  make test\n", "", false},
		{"htpasswd asks", "htpasswd -c /etc/nginx/.htpasswd admin", "", false},
		{"git checkout -b", "git checkout -b feature/login origin/main", "", false},
		{"httpie no password", "http -a admin GET https://api.example.com", "", false},
		{"path", "/usr/lib/x86_64-linux-gnu/libQt5Core.so.5 and /nix/store/0c9qi6y5g8qw1vmwq2ybp8n4jz0w7b9b-glibc-2.39/lib", "", false},
		{"webhook office other", "https://outlook.office.com/mail/inbox and https://contoso.webhook.office.com/", "", false},
	} {
		masked := MaskText(c.text)
		var kinds []Kind
		for from := 0; ; {
			m, ok := Find(c.text, from)
			if !ok {
				break
			}
			kinds = append(kinds, m.Kind)
			from = m.End
		}
		if c.secret == "" {
			if masked != c.text {
				t.Errorf("%s: a near-miss is masked (%v)", c.name, kinds)
			}
			continue
		}
		if leftRun(masked, c.secret) {
			t.Errorf("%s: 10 characters or more of it are left (kinds %v)", c.name, kinds)
		}
		cred := false
		for _, k := range kinds {
			cred = cred || k.Credential()
		}
		u := c.text
		if HasASCIIEscape([]byte(u)) {
			u = string(UnescapeASCII(nil, []byte(u)))
			for from := 0; ; {
				m, ok := Find(u, from)
				if !ok {
					break
				}
				cred = cred || m.Kind.Credential()
				from = m.End
			}
		}
		if cred != c.cred {
			t.Errorf("%s: a credential is %v, want %v (kinds %v)", c.name, cred, c.cred, kinds)
		}
		if c.cred && !MayHoldCredentialText(u) {
			t.Errorf("%s: MayHoldCredentialText = false for a credential", c.name)
		}
		if again := MaskText(masked); again != masked {
			t.Errorf("%s: masking twice changes the text", c.name)
		}
	}
}
