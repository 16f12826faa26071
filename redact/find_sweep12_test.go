package redact

import (
	"net/url"
	"strings"
	"testing"
)

// TestSweep12UserURL: a URL given as the user of -u ("az login
// --service-principal -u http://app -p <pw>", the service principal's
// name as the Azure CLI's older docs print it) is no curl user:password:
// "//app" was masked as the password, and the real password after -p was
// printed with no finding (the search went on after "//app").
func TestSweep12UserURL(t *testing.T) {
	const pw = "Kqz9pw!mvtlrbx"
	checkSweep7(t, []sweep7Form{
		{"az login --service-principal -u http://app -p " + pw + " --tenant t1", pw, false},
		{"az login --service-principal -u https://contoso.onmicrosoft.com/app -p '" + pw + "' --tenant t1", pw, false},
		{"az login --service-principal --username http://app --password " + pw + " --tenant t1", pw, false},
		{"curl -u bob:" + pw + " https://api.example.com", pw, false},
	}, true, []string{
		"az login --service-principal -u http://app -p $AZ_PASSWORD --tenant t1",
		"curl -u http://proxy:8080 https://example.com",
		"wget -u https://mirror.example.com/pkg",
	})
	checkSweep7(t, []sweep7Form{
		{`{"command":"az login --service-principal -u http://app -p ` + pw + ` --tenant t1"}`, pw, false},
	}, false, []string{
		`az login --service-principal -u http://app -p "$AZ_PASSWORD" --tenant t1`,
		"docker login -u bob -p $DOCKER_PASSWORD ghcr.io",
		"sshpass -p $SSHPASS ssh root@host",
	})
	// In single quotes a '$' is a literal: a password.
	if _, ok := credentialKind("sshpass -p '$ecretPa55Zq' ssh root@host"); !ok {
		t.Error("a single-quoted password that starts with '$' is none")
	}
	// The URL is no password: nothing of it is masked.
	if out := MaskText("curl -u http://proxy.internal:8080 https://example.com"); strings.Contains(out, Mask) {
		t.Errorf("a URL after -u masked: %s", out)
	}
}

// TestSweep12VendorAfterEscape: a provider's prefixed token after a
// URL-encoded separator ("%20", "%3D", "%22", encoded twice "%2520"): the
// escape's hex digits were read as the start of the word, so that
// "20shpat_…" began no token, and the Shopify, Postman, New Relic,
// Pulumi tokens in a URL-encoded text were printed.
func TestSweep12VendorAfterEscape(t *testing.T) {
	const shp = "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"
	const pm = "PMAK-0123456789abcdef01234567-0123456789abcdef0123456789abcdef01"
	const nr = "NRAK-ABCDEFGHIJ0123456789KLMNOPQ"
	const pul = "pul-0123456789abcdef0123456789abcdef01234567"
	var forms []sweep7Form
	for _, tok := range []string{shp, pm, nr, pul} {
		for _, pre := range []string{"q=token%20", "q=key%3D", "body=%7B%22token%22%3A%22", "m=run%2520", "x%0A"} {
			forms = append(forms, sweep7Form{"GET /log?" + pre + tok + "%22&y=1", tok, false})
		}
	}
	checkSweep7(t, forms, false, []string{
		"GET /log?q=%41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", // "%41" is 'A': "Ashpat_…" starts no token
		"GET /img?src=icon%2Fpul-small.png",
		"GET /log?q=token%20shpat_short",
		"q=%20NRAK-short",
	})
}

// TestSweep12DigestInJSONText: an Authorization header whose scheme takes
// quoted parameters (Digest), in JSON text held in a string (its quotes
// escaped, once or twice): the value ended at the first escaped quote,
// "username=\"", and the response, nonce and the rest were printed.
func TestSweep12DigestInJSONText(t *testing.T) {
	const resp = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
	const h = `Authorization: Digest username=\"bob\", realm=\"api\", nonce=\"dcd98b7102dd2f0e8b11d0f600bfb0c093\", uri=\"/v1\", response=\"` + resp + `\"`
	checkSweep7(t, []sweep7Form{
		{`{"headers": "` + h + `"}`, resp, false},
		{`{"out": "{\"h\": \"` + strings.ReplaceAll(h, `\"`, `\\\"`) + `\"}"}`, resp, false},
		{`{"h": "Authorization: Digest username=\"bob\", response=\"` + resp + `\", qop=auth"}`, resp, false},
	}, true, nil)
	// A token that ends in base64's '=' before the closing escaped quote
	// opens no parameter: the next pair is not masked with it.
	s := `{"h": "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9Kqz9pwmvtlrbx=", "path": "/v1/models"}`
	s = strings.ReplaceAll(s, `"`, `\"`)
	if out := MaskText(s); !strings.Contains(out, `/v1/models`) || strings.Contains(out, "Kqz9pwmvtlrbx") {
		t.Errorf("a bearer token in JSON text: %s", out)
	}
}

// TestSweep12NetrcDigitless: a .netrc password with no digit (on one line
// or on several, also in JSON text at any depth) was printed: neither a
// key=value check nor proseValue (at a digit) sees it. It is masked as
// prose passwords are, never a credential (words may be prose).
func TestSweep12NetrcDigitless(t *testing.T) {
	const pw = "korvelstabumix"
	for _, s := range []string{
		"machine api.example.com login bob password " + pw,
		"machine api.example.com login bob password " + pw + "\n",
		"machine api.example.com\n  login deploy\n  password " + pw + "\n",
		"default login anonymous password " + pw,
		`{"stdout":"machine git.example.com\n\tlogin bob\n\tpassword ` + pw + `\n"}`,
		`{"out":"{\"stdout\":\"machine h\\n  login bob\\n  password ` + pw + `\\n\"}"}`,
		"cat ~/.netrc\nmachine h login u password " + pw,
		"(machine api.example.com\n  login deploy\n  password " + pw + "\n),",
	} {
		out := MaskText(s)
		if strings.Contains(out, pw[:10]) || !strings.Contains(out, Mask) {
			t.Errorf("not masked: %s", mask6(out, pw))
		}
		if k, ok := credentialKind(s); ok {
			t.Errorf("a credential (%v), words may be prose: %s", k, mask6(s, pw))
		}
	}
	for _, s := range []string{
		"machine api.example.com login bob password $NETRC_PASSWORD",
		"machine api.example.com login bob password ${NETRC_PW}",
		"machine api.example.com login bob password <password>",
		"machine api.example.com login bob password ********",
		"machine api.example.com login bob password incorrect",
		"Please enter your login and password korvelstabumix",
		"the machine login password korvelstabumix",
		"machine h login bob\npassword reset requested",
	} {
		if out := MaskText(s); out != s {
			t.Errorf("a near-miss masked: %s", out)
		}
	}
}

// TestSweep12SpacedKeyLabel: "key" after a word that makes it a secret's
// label ("API key: …", "Secret key: …", "Secret access key: …", as
// consoles, CLIs and people print them) was no key: "key" alone names
// anything. Its value was printed with no finding.
func TestSweep12SpacedKeyLabel(t *testing.T) {
	const pw = "Kqz9pwm!vtlrbx"
	const aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9Lm2Kq3x"
	checkSweep7(t, []sweep7Form{
		{"API key: " + pw, pw, true},
		{"Your API Key: " + pw + "\n", pw, true},
		{"Secret key: " + pw, pw, true},
		{"Access key ID: AKIAZQ9LM2KQZ9PWMVTL\nSecret access key: " + aws, aws, true},
		{"Subscription key: " + pw, pw, true},
		{"  Private key:   " + pw, pw, true},
		{`{"out":"Name: app\nAPI key: ` + pw + `\n"}`, pw, true},
		{`{"msg": "API key: ` + pw + `"}`, pw, true},
	}, true, []string{
		"Primary key: user_id",
		"Sort key: ts",
		"Public key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
		"API key: <your-api-key>",
		"API key: ********",
		"monkey: Kqz9pwm!vtlrbx",
		"turnkey: Kqz9pwm!vtlrbx",
		"the door key: Kqz9pwm!vtlrbx",
	})
}

// TestSweep12GeneratedPasswords: the passwords servers print once when
// they make one, read back from their logs (docker logs, kubectl logs):
// MySQL's temporary root password, elasticsearch-reset-password's new
// value, Jenkins' initial admin password on a line of its own. Each was
// printed with no finding.
func TestSweep12GeneratedPasswords(t *testing.T) {
	const pw = "Kqz9pwm!vtlr"
	const hex = "1c4a1d34a0ae4c56a1f5e3b0c2d6b8e9"
	jenkins := "*************************************************************\n\nJenkins initial setup is required. An admin user has been created and a password generated.\nPlease use the following password to proceed to installation:\n\n" + hex + "\n\nThis may also be found at: /var/jenkins_home/secrets/initialAdminPassword\n"
	checkSweep7(t, []sweep7Form{
		{"2026-12-07T08:00:00.123456Z 6 [Note] [MY-010454] [Server] A temporary password is generated for root@localhost: " + pw, pw, false},
		{"[Note] A temporary password is generated for root@localhost: " + pw + "\n[Note] next", pw, false},
		{`{"log":"2026-12-07 [Note] A temporary password is generated for root@localhost: ` + pw + `\n","stream":"stderr"}`, pw, false},
		{"Password for the [elastic] user successfully reset.\nNew value: " + pw + "\n", pw, false},
		{"This tool will reset the password of the [kibana_system] user to an autogenerated value.\nPassword for the [kibana_system] user successfully reset.\nNew value: " + pw, pw, false},
		{`{"r": "{\"log\": \"Password for the [elastic] user successfully reset.\\nNew value: ` + pw + `\\n\"}"}`, pw, false},
		{jenkins, hex, false},
		{"fully reset.\nNew value: " + pw + "\n", pw, false}, // a delta that starts inside the line before
	}, false, []string{
		"A temporary password is generated for root@localhost: $MYSQL_ROOT_PASSWORD",
		"A temporary password is generated for root@localhost: <password>",
		"[Note] A temporary password is generated for root@localhost; see the log",
		"New value: true",
		"Setting updated.\nNew value: 3600",
		"Password for the [elastic] user successfully reset.\nNew value: ********",
	})
}

// TestSweep12EscapedCJKLabels: a CJK label spelled with JSON \uXXXX
// escapes (Python's json.dumps by default), in JSON text held in a string
// (a tool's result), once or twice escaped, lower- or upper-case hex: the
// escapes held no label cjkPair sees, and the value was printed with no
// finding.
func TestSweep12EscapedCJKLabels(t *testing.T) {
	const pw = "Kqz9pwm!vtlr"
	const strong = "Kqz9pwmAvtlr9Q"
	checkSweep7(t, []sweep7Form{
		{`{"stdout": "\u6570\u636e\u5e93\u5bc6\u7801\uff1a` + pw + `"}`, pw, false},
		{`{"r": "{\"stdout\": \"\\u6570\\u636e\\u5e93\\u5bc6\\u7801\\uff1a` + pw + `\"}"}`, pw, false},
		{`{"stdout": "\u30d1\u30b9\u30ef\u30fc\u30c9: ` + pw + `"}`, pw, false},
		{`{"stdout": "\uBE44\uBC00\uBC88\uD638 = ` + pw + `"}`, pw, false},
		{`{"stdout": "\u5bc6\u7801\u662f` + strong + `"}`, strong, false},
		{`{"stdout": "API\u5bc6\u94a5\uff1d` + pw + `"}`, pw, false},
		{`{"\u6570\u636e\u5e93\u5bc6\u7801": "` + pw + `"}`, pw, false},
		{`{"r": "{\"\\u5bc6\\u7801\": \"` + pw + `\"}"}`, pw, false},
	}, true, []string{
		`{"stdout": "\u5bc6\u7801\u5b66\uff1a` + pw + `"}`,       // 密码学：(cryptography)
		`{"stdout": "\u5bc6\u7801\u957f\u5ea6\uff1a12"}`,         // 密码长度：12
		`{"stdout": "\u5bc6\u7801\uff1a\u8bf7\u8f93\u5165"}`,     // 密码：请输入
		`{"stdout": "\u5bc6\u7801\uff1a<\u8bf7\u8f93\u5165>"}`,   // 密码：<请输入>
		`{"stdout": "\u5bc6\u7801\uff1a******"}`,                 // a mask
		`{"stdout": "\u6570\u636e\u5e93\uff1a` + pw + `"}`,       // 数据库：(no label)
		`{"stdout": "\u5bc6\u7801\u662fcorrecthorsebattery"}`,    // after a copula, a word: masked, no credential
		`{"path": "C:\\u5bc6\\u7801\\notes.txt", "id": "u7801"}`, // no escape
	})
	// After a copula, a word is masked as prose passwords are.
	if out := MaskText(`{"stdout": "\u5bc6\u7801\u662fkorvelstabumix"}`); strings.Contains(out, "korvelstab") {
		t.Errorf("not masked: %s", out)
	}
	// The raw record's pre-check passes the escapes (once and twice).
	for _, raw := range []string{`{"delta":"{\"stdout\": \"\\u5bc6\\u7801\\uff1a` + pw + `\"}"}`, `{"delta":"\u5BC6\u7801: ` + pw + `"}`} {
		if !MayHoldCredential(raw) {
			t.Errorf("MayHoldCredential passes over %s", mask6(raw, pw))
		}
	}
}

// TestSweep12TableCells: a credential in the cell after the one that names
// it: a Markdown table in a model's answer (also with emphasis and in JSON
// text), the AWS CLI's --output table. Each was printed with no finding.
func TestSweep12TableCells(t *testing.T) {
	const pw = "Kqz9pwm!vtlr"
	const aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9Lm2Kq3x"
	checkSweep7(t, []sweep7Form{
		{"| Field | Value |\n|---|---|\n| Username | admin |\n| Password | " + pw + " |\n", pw, false},
		{"| **Password** | `" + pw + "` |", pw, false},
		{"| DB_PASSWORD | " + pw + " |", pw, false},
		{"| API key | Kqz9pwmAvtlrbx |", "Kqz9pwmAvtlrbx", false},
		{"|  AccessKeyId     |  AKIAZQ9LM2KQZ9PWMVTL                       |\n|  SecretAccessKey |  " + aws + "  |\n", aws, false},
		{`{"answer":"| Setting | Value |\n|---|---|\n| Admin password | ` + pw + ` |\n"}`, pw, false},
	}, true, []string{
		"| Password | <your password> |",
		"| Password | `$DB_PASSWORD` |",
		"| Password | ******** |",
		"| Password | - |",
		"| Password | required |",
		"| Password policy | 12 chars |",
		"| Name | " + pw + " |",
		"| password_hash | " + pw + " |",
		"echo " + pw + " | grep b | wc -l",
		"a || b | c",
	})
	// A word with no digit is masked, no finding (as in prose).
	s := "| Root password | korvelstabumix |"
	if out := MaskText(s); strings.Contains(out, "korvelstab") {
		t.Errorf("not masked: %s", out)
	}
	if k, ok := credentialKind(s); ok {
		t.Errorf("a word is a credential (%v)", k)
	}
}

// TestSweep12Tails: a stream's delta that ends where one of these shapes
// takes its value, or inside it, is kept for the next (MayStartCredential,
// shapeTailStart): otherwise a delta that starts with the value is shown
// as it is (observe --records) and no split finding is given.
func TestSweep12Tails(t *testing.T) {
	const pw = "Kqz9pwm!vtlr"
	for _, c := range []struct{ s, secret string }{
		{"Password for the [elastic] user successfully reset.\nNew value: " + pw + "\n", pw},
		{"Please use the following password to proceed to installation:\n\n1c4a1d34a0ae4c56a1f5e3b0c2d6b8e9\n", "1c4a1d34a0ae4c56a1f5e3b0c2d6b8e9"},
		{`{"log":"Please use the following password to proceed to installation:\n\n1c4a1d34a0ae4c56a1f5e3b0c2d6b8e9\n"}`, "1c4a1d34a0ae4c56a1f5e3b0c2d6b8e9"},
		{"| Username | admin |\n| Password | " + pw + " |\n", pw},
		{"| **API key** | `" + pw + "` |", pw},
		{`{"stdout": "\u30d1\u30b9\u30ef\u30fc\u30c9: ` + pw + `"}`, pw},
		{`{"\u5bc6\u7801": "` + pw + `"}`, pw},
		{`{"stdout": "\u5bc6\u7801\uff1a ` + pw + `"}`, pw},
		{`{"h": "Authorization: Digest username=\"bob\", realm=\"api\", nonce=\"dcd98b7102dd2f0e8b11d0f600bfb0c093\", uri=\"/v1\", response=\"` + pw + `\""}`, pw},
	} {
		i := strings.Index(c.s, c.secret)
		for _, cut := range []int{i, i + len(c.secret)/3, i + 2*len(c.secret)/3} {
			if !MayStartCredential(c.s[:cut]) {
				t.Errorf("a tail not kept (%d bytes of the secret): %s|", cut-i, c.s[:i])
			}
		}
	}
	for _, s := range []string{
		"| Name | ",
		"| Password policy | ",
		"Setting updated.\nNew value: ",
		"the new value: ",
		"Installation:\n\n",
		`{"stdout": "\u6570\u636e\u5e93: `,
		`{"h": "Digest of the week: x=\"`,
		"a plain sentence that ends in prose",
	} {
		if MayStartCredential(s) {
			t.Errorf("a tail kept: %q", s)
		}
	}
}

// TestSweep12AWSPair: an AWS secret access key right after its access key
// ID, as SDK constructors, CSV lines and commands take the pair, named by
// nothing of its own: it was printed (a '/' or '+' in it leaves no word
// long enough to read as random). It is masked with the ID.
func TestSweep12AWSPair(t *testing.T) {
	const sk = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9Lm2Kq3x"
	checkSweep7(t, []sweep7Form{
		{`creds := credentials.NewStaticCredentials("AKIAZQ9LM2KQZ9PWMVTL", "` + sk + `", "")`, sk, false},
		{`const c = new AWS.Credentials('AKIAZQ9LM2KQZ9PWMVTL', '` + sk + `');`, sk, false},
		{`new BasicAWSCredentials("AKIAZQ9LM2KQZ9PWMVTL", "` + sk + `")`, sk, false},
		{`{"code":"c := credentials.NewStaticCredentials(\"ASIAZQ9LM2KQZ9PWMVTL\", \"` + sk + `\", token)"}`, sk, false},
		{"User name,Password,Access key ID,Secret access key\nbob,,AKIAZQ9LM2KQZ9PWMVTL," + sk + "\n", sk, false},
		{"mc alias set s3 https://s3.amazonaws.com AKIAZQ9LM2KQZ9PWMVTL " + sk + " --api S3v4", sk, false},
	}, true, nil)
	// Nothing after the ID but prose, or a run that is no secret, is left.
	for _, s := range []string{
		"AKIAZQ9LM2KQZ9PWMVTL, the key of user bob, was rotated",
		"AKIAZQ9LM2KQZ9PWMVTL 0123456789012345678901234567890123456789",
		"AKIAZQ9LM2KQZ9PWMVTL abcdefghijklmnopqrstuvwxyzabcdefghijklmn",
	} {
		if out := MaskText(s); !strings.Contains(out, s[20:]) {
			t.Errorf("masked past the ID: %s", out)
		}
	}
}

// TestSweep12EncodedCommandsPct20: echo <pw> | sudo -S and SET PASSWORD
// FOR … = '<pw>' URL-encoded with "%20" for a space (encodeURIComponent,
// Python's quote), once or twice: only '+' was read as a space there.
func TestSweep12EncodedCommandsPct20(t *testing.T) {
	const pw = "Kqz9pwm!vtlr"
	for _, c := range []string{"echo '" + pw + "' | sudo -S apt update", "SET PASSWORD FOR 'app'@'%' = '" + pw + "';"} {
		once := url.PathEscape(c)
		once = strings.ReplaceAll(strings.ReplaceAll(once, "'", "%27"), "=", "%3D")
		for _, s := range []string{"GET /run?cmd=" + once, "GET /run?cmd=" + strings.ReplaceAll(once, "%", "%25"), "state=" + url.QueryEscape("GET /run?cmd="+once)} {
			out := MaskText(s)
			if strings.Contains(out, "Kqz9pwm") || !strings.Contains(out, Mask) {
				t.Errorf("not masked: %s", out)
			}
			if _, ok := credentialKind(string(unescapeASCII(nil, []byte(s)))); !ok {
				t.Errorf("no credential: %s", s)
			}
		}
	}
	for _, tail := range []string{"GET /run?cmd=echo%20%27", "GET /run?cmd=echo%20%27Kqz9", "q=echo+", "q=echo+%22Kqz9pw"} {
		if !MayStartCredential(tail) {
			t.Errorf("a tail not kept: %s", tail)
		}
	}
	if out := MaskText("GET /run?cmd=echo%20%24SUDO_PW%20%7C%20sudo%20-S%20whoami"); strings.Contains(out, Mask) {
		t.Errorf("a variable masked: %s", out)
	}
}

// TestSweep12PasswordFor: "the password for <who> is <pw>" ("for" or
// "of", one to three words for who): only "the password is <pw>" was read,
// and the value was printed. A value is judged as proseValue judges one
// after "the password is".
func TestSweep12PasswordFor(t *testing.T) {
	const pw = "Kqz9pwm!vtlr"
	checkSweep7(t, []sweep7Form{
		{"The password for admin is " + pw, pw, false},
		{"The password for user admin is " + pw + ".", pw, false},
		{"The password of the admin account is " + pw + "\n", pw, false},
		{"the passphrase for the key was '" + pw + "'", pw, false},
		{`{"answer":"Done. The password for deploy is ` + pw + `\nKeep it safe."}`, pw, false},
	}, true, []string{
		"the password for admin is 12 characters",
		"the password for the database is stored in vault",
		"The password for admin was reset 3 times",
		"password of type string is 64 bytes",
		"the password for admin is $ADMIN_PASSWORD",
		"the password for admin is <password>",
		"the password for admin is ********",
	})
	for _, tail := range []string{"The password for admin is ", "The password for admin is Kqz9", "the password of the admin account was "} {
		if !MayStartCredential(tail) {
			t.Errorf("a tail not kept: %s", tail)
		}
	}
	// A weak value with a digit is masked, not reported.
	s := "The password for admin is abc123def"
	if out := MaskText(s); strings.Contains(out, "abc123def") {
		t.Errorf("not masked: %s", out)
	}
	if k, ok := credentialKind(s); ok {
		t.Errorf("a credential (%v): %s", k, s)
	}
}
