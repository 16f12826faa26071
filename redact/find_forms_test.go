package redact

import (
	"strings"
	"testing"
)

// TestFindUnkeyedForms: credentials written with no separator a key=value
// check sees (a command's short flag, prose, netrc, XML) and a bare key=
// are masked, and a credential (rule e2a.secret) where they read as one;
// the near-misses of each form stay as they are. A failure names the case,
// never the value.
func TestFindUnkeyedForms(t *testing.T) {
	for _, c := range []struct {
		name, text, secret string // secret: "" for a near-miss (nothing masked)
		cred               bool
	}{
		{"mysql glued", "mysql -uroot -pQx8vK2mZ7w prod", "Qx8vK2mZ7w", true},
		{"mysqldump quoted", "/usr/bin/mysqldump -h db -p'Qz8 x!pw' --all-databases", "Qz8 x!pw", true},
		{"mysql URL-encoded", "mysqladmin+-uroot+-pFormPw123x+status", "FormPw123x", true},
		{"sshpass", "sshpass -p 'yzdaeA6AOSRwLq' ssh root@host", "yzdaeA6AOSRwLq", true},
		{"sshpass glued", "sshpass -pyzdaeA6AOSRwLq ssh root@host", "yzdaeA6AOSRwLq", true},
		{"docker login", "cd /app && docker login -u bob -p JPiX1EwY2orTyR registry.io", "JPiX1EwY2orTyR", true},
		{"redis-cli", "redis-cli -h cache -a 09jwQO10Y0ADsW ping", "09jwQO10Y0ADsW", true},
		{"bare key", "key=ydf0K5uY8iH1wOLaQan8", "ydf0K5uY8iH1wOLaQan8", true},
		{"bare key quoted", `export KEY="ydf0K5uY8iH1wOLaQan8"`, "ydf0K5uY8iH1wOLaQan8", true},
		{"password is", "the password is qB8lEaZUZrwpPt", "qB8lEaZUZrwpPt", true},
		{"password was quoted", "Your password was 'Xk29mPq4Lz'.", "Xk29mPq4Lz", true},
		{"netrc", "machine api.example.com login alice password DInTEG4OY1xHvAV8", "DInTEG4OY1xHvAV8", true},
		{"xml element", "<password>SsxKKwzXH2jpc7Fx3gxODYfj</password>", "SsxKKwzXH2jpc7Fx3gxODYfj", true},
		{"xml camel", "<config><apiKey>uMbw4HMbgcn33KFLKnq7XrBg</apiKey></config>", "uMbw4HMbgcn33KFLKnq7XrBg", true},
		{"appSettings", `<add key="ApiKey" value="uMbwrHMbgcn33KFLKnq7XrBg"/>`, "uMbwrHMbgcn33KFLKnq7XrBg", true},
		{"k8s env", "env:\n- name: DB_PASSWORD\n  value: s3cr3tP4ssw0rd\n", "s3cr3tP4ssw0rd", true},
		{"env json", `[{"name": "API_TOKEN", "value": "tokvalQ9xZ8w"}]`, "tokvalQ9xZ8w", true},
		{"wpa psk", "network={\n ssid=\"home\"\n psk=\"sA5kd1UsjObCZGvGiCaY18Hs\"\n}", "sA5kd1UsjObCZGvGiCaY18Hs", true},
		{"xml escaped", `{"note":"\u003cpassword\u003ePIirfKBBQcngMR8SpHuiVoow\u003c/password\u003e"}`, "PIirfKBBQcngMR8SpHuiVoow", true},
		{"xml url-encoded", "cb?state=%3Cpassword%3EPIirfKBBQcngMR8SpHuiVoow%3C%2Fpassword%3E&x=1", "PIirfKBBQcngMR8SpHuiVoow", true},
		{"appSettings url-encoded", "key%3D%22ApiKey%22+value%3D%22K9vyvnAwAkKkTi5ysBgKypxh%22", "K9vyvnAwAkKkTi5ysBgKypxh", true},
		{"k8s env in JSON text", `env:\n- name: DB_PASSWORD\n  value: xcrqc8sC42c02EBr3PQu\n`, "xcrqc8sC42c02EBr3PQu", true},
		{"k8s env url-encoded", "state=env%3A%0A-+name%3A+DB_PASSWORD%0A++value%3A+xcrqc8sC42c02EBr3PQu%0A&x=1", "xcrqc8sC42c02EBr3PQu", true},
		{"password is url-encoded", "state=the+password+is+vpSvmXbLU23STO&x=1", "vpSvmXbLU23STO", true},
		// A Mapbox secret token: "sk." and two base64url segments.
		{"mapbox sk", "sk.eyJ1IjoiZXhhbXBsZSIsImEiOiJja2x4.ud9vbfPBC5llJr9GYMks72", "ud9vbfPBC5llJr9GYMks72", true},
		// .pgpass lines, Oracle connect strings, a Fly.io token.
		{"pgpass", "db.example.com:5432:appdb:appuser:s3cretPassw0rd", "s3cretPassw0rd", true},
		{"pgpass wildcard", "cat ~/.pgpass\nlocalhost:*:*:postgres:hunterTwoX", "hunterTwoX", true},
		{"pgpass in a frame attribute", "cp#db.corpus.example:5432:orders:app:Zq8pLm2Nw", "Zq8pLm2Nw", true},
		{"pgpass in JSON text", `{\"out\":\"*:6432:*:app:Zq8pLm2Nw\"}`, "Zq8pLm2Nw", true},
		{"oracle ezconnect", "conn scott/Tig3rPass@//db.example.com:1521/ORCLPDB1", "Tig3rPass", true},
		{"oracle escaped", `{"dsn":"scott\/Tig3rPass@\/\/db:1521\/svc"}`, "Tig3rPass", true},
		{"oracle sqlplus", "sqlplus -s system/Welc0me123@orcl @run.sql", "Welc0me123", true},
		{"oracle path", "/u01/app/oracle/bin/sqlplus system/Welc0me123@orcl", "Welc0me123", true},
		{"oracle jdbc thin", "jdbc:oracle:thin:scott/Tig3rPass@db:1521:ORCL", "Tig3rPass", true},
		{"fly", "FlyV1 fm2_lJPECAAAAAAAAMmhxBCw0ZAhQW3lz+Y0NbJEjelMSA9lpER2YaXWwAPXPnVFmBLNIjvj0xCi01D29FM1JkQx1d==,fm2_lJPETkJ4YAo9mCwRfTg", "lJPECAAAAAAAAMmhxBCw0ZAhQW3lz", true},
		// Admin tools' flags (toolFlag).
		{"ldapsearch -w", "ldapsearch -x -D cn=admin,dc=example,dc=org -w Zq8#pLm2Nw -b dc=example,dc=org", "Zq8#pLm2Nw", true},
		{"sqlcmd -P", "sqlcmd -S db -U sa -P 'Zq8 pLm2Nw' -Q 'SELECT 1'", "Zq8 pLm2Nw", true},
		{"zip -P", "zip -r -P Zq8pLm2Nw backup.zip ./data", "Zq8pLm2Nw", true},
		{"openssl pass", "openssl enc -aes-256-cbc -pass pass:Zq8pLm2Nw -in a -out b", "Zq8pLm2Nw", true},
		{"openssl pass url-encoded", "q=openssl+enc+-pass+pass%3AZq8pLm2Nw+-in+a", "Zq8pLm2Nw", true},
		{"keytool", "keytool -importkeystore -srcstorepass Zq8pLm2Nw -destkeystore b.jks", "Zq8pLm2Nw", true},
		// Masked, no finding: it may be a password, or prose.
		{"password is words", "The password is 2FA-protected.", "2FA-protected", false},
		{"password is short", "the password is hunter2", "hunter2", false},
		{"password is words", "The password is correcthorsebattery.", "correcthorsebattery", false},
		{"password was quoted words", "my password was 'swordfishes', don't tell", "swordfishes", false},
		{"password is words JSON", `{\"note\":\"the password is supersecretvalue\nnext\"}`, "supersecretvalue", false},
		// Near-misses.
		{"mysql prompt", "mysql -u root -p prod", "", false},
		{"mysql prompt alone", "mysql -p", "", false},
		{"docker port", "docker run -p 8080:80 nginx", "", false},
		{"gcc pthread", "gcc -pthread -o x x.c", "", false},
		{"ls all", "ls -a /tmp", "", false},
		{"git all", "git commit -a -m fix", "", false},
		{"redis-cli no value", "redis-cli -a", "", false},
		{"key value", "key=value", "", false},
		{"key id", "the key=user_id_12345678", "", false},
		{"monkey", "monkey=ydf0K5uY8iH1wOLaQan8", "", false},
		{"password length", "the password is 8 characters long", "", false},
		{"password policy", "password policy v2 requires 12 characters", "", false},
		{"password hours", "reset your password in 24 hours", "", false},
		{"passwords are", "the passwords are stored in vault-01", "", false},
		{"appSettings plain", `<add key="Theme" value="dark"/>`, "", false},
		{"k8s env plain", "- name: LOG_LEVEL\n  value: debug", "", false},
		{"named policy", "name: password_policy value=strong", "", false},
		{"psk word", "the PSK mode is wpa2-psk", "", false},
		{"xml escaped closing", `\u003c/password\u003e and 12 more`, "", false},
		{"mapbox public", "pk.eyJ1IjoiZXhhbXBsZSJ9.ud9vbfPBC5llJr9GYMks72", "", false},
		{"token count", "token 0 of 12, step 3", "", false},
		{"xml version", "<version>1.2.3</version>", "", false},
		{"grep -w", "grep -w word notes.txt | zip -r out.zip -", "", false},
		{"zip -P no value", "zip -P -r out.zip .", "", false},
		{"openssl pass env", "openssl enc -pass env:PW -in a -out b", "", false},
		{"keytool no value", "keytool -list -storepass", "", false},
		{"psql -d", "psql -d mydb -s", "", false},
		{"password incorrect", "the password is incorrect.", "", false},
		{"password required", "The password is required", "", false},
		{"password stored", "the password is stored in the vault", "", false},
		{"password case", "the password is case-sensitive.", "", false},
		{"password confidential", "the password is confidential", "", false},
		{"password whatever", "the password is whatever", "", false},
		{"password mandatory", "a password is mandatory;", "", false},
		{"passwords are", "passwords is correcthorsebattery", "", false},
		{"password path", "the password is /etc/secret/path", "", false},
		{"xml max tokens", "<maxTokens>1024</maxTokens>", "", false},
		{"pg address", "connect to db.example.com:5432 as app", "", false},
		{"pg 3 fields", "db.example.com:5432:appdb", "", false},
		{"cache key", "orders:5432:summary:2024:total", "", false},
		{"pgpass six fields", "a.b:5432:c:d:e:f", "", false},
		{"go module", "go get github.com/x/y@v1.2.3 and npm i @scope/pkg@1.0.0", "", false},
		{"repo branch", "checkout user/repo@main then scott/tiger@orcl", "", false},
		{"docker digest", "image repo/name@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "", false},
		{"fly short", "fm2_token and FlyV1 auth", "", false},
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
		cred := false
		for _, k := range kinds {
			cred = cred || k.Credential()
		}
		if c.secret == "" {
			if masked != c.text {
				t.Errorf("%s: a near-miss is masked (%v)", c.name, kinds)
			}
			continue
		}
		if strings.Contains(masked, c.secret) {
			t.Errorf("%s: not masked (kinds %v)", c.name, kinds)
		}
		if !strings.Contains(masked, "******") || len(kinds) != 1 {
			t.Errorf("%s: %d matches (%v), want one", c.name, len(kinds), kinds)
		}
		if cred != c.cred {
			t.Errorf("%s: credential = %v (%v), want %v", c.name, cred, kinds, c.cred)
		}
		if pre := MayHoldCredentialText(c.text); cred && !pre {
			t.Errorf("%s: MayHoldCredentialText = false for a credential", c.name)
		}
	}
}

// TestFindDottedTokens: the provider tokens with a dotted or a short glued
// prefix (dottedToken) are vendor tokens, and so credentials for rule
// e2a.secret, masked whole; they were masked as high_entropy with no
// finding, or (Dynatrace: no lower case) not at all. The near-misses of
// each prefix stay as they are. A failure names the case, never the value.
func TestFindDottedTokens(t *testing.T) {
	for _, c := range []struct{ name, text, token string }{
		{"doppler personal", "set in CI: dp.pt.XykWZeiNNCiia3anXn9k3ksu9mI4ROnl89Sm995ytbx", "dp.pt.XykWZeiNNCiia3anXn9k3ksu9mI4ROnl89Sm995ytbx"},
		{"doppler service", "use dp.st.dev.NqVwYS81VP7Hb1DX8pPd5khxE3pyIgKpaUnArl63 now", "dp.st.dev.NqVwYS81VP7Hb1DX8pPd5khxE3pyIgKpaUnArl63"},
		{"doppler service config", "dp.st.prd_eu-1.NqVwYS81VP7Hb1DX8pPd5khxE3pyIgKpaUnArl63", "dp.st.prd_eu-1.NqVwYS81VP7Hb1DX8pPd5khxE3pyIgKpaUnArl63"},
		{"doppler scim", "(dp.scim.NqVwYS81VP7Hb1DX8pPd5khxE3pyIgKpaUnArl63)", "dp.scim.NqVwYS81VP7Hb1DX8pPd5khxE3pyIgKpaUnArl63"},
		{"dropbox", "token sl.1vsHiQMaRiNTN9Ox98whGcTZc1UWb5fxzpF7STG7nVLe3lARUsRJlNONwktN9ugkZeESG61she_QAqq0", "sl.1vsHiQMaRiNTN9Ox98whGcTZc1UWb5fxzpF7STG7nVLe3lARUsRJlNONwktN9ugkZeESG61she_QAqq0"},
		{"dropbox sl.u", "sl.u.AFvsHiQMaRiNTN9Ox98whGcTZc1UWb5fxzpF7STG7nVLe3lARUsRJlNONwktN9ug", "sl.u.AFvsHiQMaRiNTN9Ox98whGcTZc1UWb5fxzpF7STG7nVLe3lARUsRJlNONwktN9ug"},
		{"dynatrace", "Api-Token dt0c01.RW0WL2XV7J7KMX4SF0K70T9R.BMK2LOLC4OKDIHUL4M9C03WYENPXAWZR0H9XC9TGS86VSWI008X3JKY4MIFWAYGU", "dt0c01.RW0WL2XV7J7KMX4SF0K70T9R.BMK2LOLC4OKDIHUL4M9C03WYENPXAWZR0H9XC9TGS86VSWI008X3JKY4MIFWAYGU"},
		{"dynatrace no digit in id", "x dt0c01.RWAWLXXVJKMXSFKTRQWERTYU.BMK2LOLC4OKDIHUL4M9C03WYENPXAWZR0H9XC9TGS86VSWI008X3JKY4MIFWAYGU", "dt0c01.RWAWLXXVJKMXSFKTRQWERTYU.BMK2LOLC4OKDIHUL4M9C03WYENPXAWZR0H9XC9TGS86VSWI008X3JKY4MIFWAYGU"},
		{"terraform", "app.terraform.io: K6NIjuO45KyBBo.atlasv1.FsETyy926kMMqVtFqAbu8tF7sjEbhQN9CpscYi0zaEIJrp7EYcpFr2jUssFMEHP3M4V", "K6NIjuO45KyBBo.atlasv1.FsETyy926kMMqVtFqAbu8tF7sjEbhQN9CpscYi0zaEIJrp7EYcpFr2jUssFMEHP3M4V"},
		{"bitbucket", "git remote add x https://x-token-auth ATBB5hbWitsITvNsUHbDwxRV0LicaqJDR6g4", "ATBB5hbWitsITvNsUHbDwxRV0LicaqJDR6g4"},
		{"okta", "okta token 00CorL4txx0uiBfnWjJhpZrb3lO--TVhrLtLCHiEGK", "00CorL4txx0uiBfnWjJhpZrb3lO--TVhrLtLCHiEGK"},
		{"meta", "EAACEdEose0cBAz6TxRtlDxseUTDkXplRn8cPMBUraDdCXRAkccJ11HKw8gTep5ZFf7EdRpPdFzYddq1ACtOd4c8mlSGOzmIof7uYg", "EAACEdEose0cBAz6TxRtlDxseUTDkXplRn8cPMBUraDdCXRAkccJ11HKw8gTep5ZFf7EdRpPdFzYddq1ACtOd4c8mlSGOzmIof7uYg"},
		{"square", "EAAAEOuLQObrVwJvCvoio3kZiMSS0ANHWxY4wJ5VvaIxhmlq0hCpmG0ExSn9mVdJa", "EAAAEOuLQObrVwJvCvoio3kZiMSS0ANHWxY4wJ5VvaIxhmlq0hCpmG0ExSn9mVdJa"},
		{"fcm server key", "key=AAAAFgzKVmj:APA91b1OWaKqd4scg2InWqPiNvrH_PKeiddpgqT3HcD2qUzQTbuumIvs532pQO5D73v4gu8-anq1gAaeE9TY7BzJzMTEUTFh_ZSssE-We", "AAAAFgzKVmj:APA91b1OWaKqd4scg2InWqPiNvrH_PKeiddpgqT3HcD2qUzQTbuumIvs532pQO5D73v4gu8-anq1gAaeE9TY7BzJzMTEUTFh_ZSssE-We"},
		{"fcm escaped", `{\"to\":\"APA91b1OWaKqd4scg2InWqPiNvrH_PKeiddpgqT3HcD2qUzQTbuumIvs532pQO5D73v4gu8-anq1gAaeE9TY7BzJzMTEUTFh_ZSssE-We\"}`, "APA91b1OWaKqd4scg2InWqPiNvrH_PKeiddpgqT3HcD2qUzQTbuumIvs532pQO5D73v4gu8-anq1gAaeE9TY7BzJzMTEUTFh_ZSssE-We"},
		{"render", "RENDER rnd_Kx8vQ2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0A", "rnd_Kx8vQ2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0A"},
		{"netlify", "nfp_Kx8vQ2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0AbCdE", "nfp_Kx8vQ2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0AbCdE"},
		{"sourcegraph", "sgp_0123456789abcdef0123456789abcdef01234567", "sgp_0123456789abcdef0123456789abcdef01234567"},
		{"shippo", "shippo_live_0123456789abcdef0123456789abcdef01234567", "shippo_live_0123456789abcdef0123456789abcdef01234567"},
		{"brevo", "xkeysib-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef-Kx8vQ2mZ7wLp9Tn4", "xkeysib-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef-Kx8vQ2mZ7wLp9Tn4"},
		{"adafruit", "aio_Kx8vQ2mZ7wLp9Tn4Rb6Yc1Hd3Fg5", "aio_Kx8vQ2mZ7wLp9Tn4Rb6Yc1Hd3Fg5"},
		{"prefect", "pnu_Kx8vQ2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0AbCdE", "pnu_Kx8vQ2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0AbCdE"},
		{"clojars", "CLOJARS_" + strings.Repeat("0123456789abcdef", 4), "CLOJARS_" + strings.Repeat("0123456789abcdef", 4)},
		{"jfrog", "AKCpKx8vQ2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0AbCdKx8vQ2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0AbCdQq", "AKCpKx8vQ2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0AbCdKx8vQ2mZ7wLp9Tn4Rb6Yc1Hd3Fg5Js0AbCdQq"},
		{"airtable", "AIRTABLE patK8vQ2mZ7wLp9Tn.0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef ok", "patK8vQ2mZ7wLp9Tn.0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
		{"mailchimp", "apikey 0123456789abcdef0123456789abcdef-us21", "0123456789abcdef0123456789abcdef-us21"},
		{"cloudflare origin ca", "v1.0-0123456789abcdef01234567-" + strings.Repeat("0123456789abcdef", 9) + "01", "v1.0-0123456789abcdef01234567-" + strings.Repeat("0123456789abcdef", 9) + "01"},
		// Near-misses.
		{"airtable like", "spatK8vQ2mZ7wLp9Tn.0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef and path.0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", ""},
		{"mailchimp user", "0123456789abcdef0123456789abcdef-user and 0123456789abcdef0123456789abcdef-us", ""},
		{"prefix words", "rnd_seed aio_read pnu_x CLOJARS_USERNAME sgp_config shippo_live_mode xkeysib-doc AKCpath", ""},
		{"doppler short", "dp.st.dev and dp.pt.example are Doppler's prefixes", ""},
		{"sl host", "see sl.example.com/v2/docs_and_more_pages_2024_edition_final_version", ""},
		{"dynatrace doc", "a token starts dt0c01.ABC and has three parts", ""},
		{"atlasv1 doc", "app.atlasv1.example is not a token", ""},
		{"ATBB word", "ATBB-config and ATBBRoutingTableVersion2024ForTheWorld", ""},
		{"okta hex", "id 00f067aa0ba902b74bf92f3577b34da6a3ce929d0e trace", ""},
		{"okta uuid", "00000000-0000-0000-0000-000000000000 and 00112233-4455-6677-8899-aabbccddeeff", ""},
		{"EAA identifier", "EAAccessTokenManagerFactoryForTheWorld2024InstanceProviderBuilderConfigurationHandlerAndSomething", ""},
		{"APA91b short", "registration ids start APA91b", ""},
	} {
		masked := MaskText(c.text)
		var kinds []Kind
		for from := 0; ; {
			m, ok := Find(c.text, from)
			if !ok {
				break
			}
			kinds = append(kinds, m.Kind)
			if c.token != "" && m.Kind == KindVendorToken && c.text[m.Start:m.End] != c.token {
				t.Errorf("%s: the match is %d bytes, want the %d of the token", c.name, m.End-m.Start, len(c.token))
			}
			from = m.End
		}
		if c.token == "" {
			if masked != c.text {
				t.Errorf("%s: a near-miss is masked (%v)", c.name, kinds)
			}
			continue
		}
		if strings.Contains(masked, c.token[len(c.token)-20:]) {
			t.Errorf("%s: not masked (kinds %v)", c.name, kinds)
		}
		if len(kinds) == 0 || kinds[len(kinds)-1] != KindVendorToken {
			t.Errorf("%s: kinds %v, want a vendor token", c.name, kinds)
		}
		if !MayHoldCredentialText(c.text) || !MayHoldCredential(c.text) {
			t.Errorf("%s: a pre-check is false for a credential", c.name)
		}
	}
}
