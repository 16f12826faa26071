package redact

import (
	"net/url"
	"testing"
)

// cmdArgAt0 reports whether cmdArg takes a value at a digit of s, from 0
// or from the digit.
func cmdArgAt0(s []byte) bool {
	for i, c := range s {
		if c < '0' || c > '9' {
			continue
		}
		if _, ok, _ := cmdArg(s, 0, i); ok {
			return true
		}
		if _, ok, _ := cmdArg(s, i, i); ok {
			return true
		}
	}
	return false
}

// cmdForms are the commands and calls cmdArg takes a value of, and the
// colon forms it finds in URL-encoded text (TestSweep11Commands,
// TestSweep11Calls, TestSweep11Colon).
var cmdForms = []string{
	"127.0.0.1:6379> auth Kqz9pwmvtlrbx", "redis-cli\n> auth default Kqz9pwmvtlrbx", "AUTH Kqz9pwmvtlrbx\r\n",
	"bindpw Kqz9pwmvtlrbx", "wandb login a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", "wandb login --relogin a1b2c3d4e5f6071829",
	"cargo login cioKqz9pwmvtlrbx", "vault login s.Abc1Def2Ghi3Jkl4Mno5Pqr6", "nmcli con modify home wifi-sec.PSK Kqz9pwmvtlrbx",
	"nmcli dev wifi connect HomeNet password Kqz9pwmvtlrbx", "SETX DB_PASSWORD Kqz9pwmvtlrbx", "set -gx DB_PASSWORD Kqz9pwmvtlrbx",
	`dotnet user-secrets SET "Stripe:SecretKey" "Kqz9pwmvtlrbx"`, "mc alias set local http://127.0.0.1:9000 minioadmin Kqz9pwmvtlrbx",
	"mc config host add s3 https://s3.amazonaws.com admin Kqz9pwmvtlrbx",
	"server.login('bob@example.com', 'Kqz9pwmvtlrbx')", "$pdo = new PDO($dsn, 'app', 'Kqz9pwmvtlrbx');",
	`c = DriverManager.getConnection(url, "app", "Kqz9pwmvtlrbx");`, `auth := smtp.PlainAuth("", "bob", "Kqz9pwmvtlrbx", "h")`,
	"define('DB_PASSWORD', 'Kqz9pwmvtlrbx');", `$conn = mysqli_connect("db", "app", "Kqz9pwmvtlrbx", "shop");`,
	// A setter's or a builder's one argument (setterCall).
	`b.password("Kqz9pwmvtlrbx")`, `c.setToken("Kqz9pwmvtlrbx")`, `c.setApiKey("Kqz9pwmvtlrbx")`, `builder.apiKey("Kqz9pwmvtlrbx")`,
	`cfg.set_api_key("Kqz9pwmvtlrbx")`,
	// A user and its password (callArg).
	`auth = HTTPBasicAuth("admin", "Kqz9pwmvtlrbx")`, `var c = new NetworkCredential("admin", "Kqz9pwmvtlrbx", "CORP");`,
	`new UsernamePasswordCredentials("admin", "Kqz9pwmvtlrbx")`,
	// URL-encoded ('+' for a space, no '%'): read decoded, colonArg's too.
	"q=bindpw+Kqz9pwmvtlrbx&x=1", "q=xfreerdp+/p:Kqz9pwmvtlrbx&x=1", "q=Key+Content+:+Kqz9pwmvtlrbx&x=1",
	"q=echo+bob:Kqz9pwmvtlrbx+|+chpasswd&x=1", "q=Private-Lines:+1&AAAAB3NzaC1yc2EAAAADAQAB&x=1",
	"q=" + url.QueryEscape("127.0.0.1:6379> auth Kqz9pwmvtlrbx") + "&x=1",
	// A word's byte URL-encoded.
	"q=%61uth+Kqz9pwmvtlrbx&x=1", "q=bindp%77+Kqz9pwmvtlrbx&x=1", "q=wifi%2Dsec%2Epsk+Kqz9pwmvtlrbx&x=1", "q=echo+bob:Kqz9pwmvtlrbx+|+chpass%77d&x=1",
	// formShapes and generatedPassword in URL-encoded text, where it holds
	// no command's word: a "%XX" of '|', '\\', ':' or '@' (sweep12).
	"q=" + url.QueryEscape("A temporary password is generated for root@localhost: 15AYKo6!8yVDgW") + "&x=1",
	"q=" + url.QueryEscape(`{"\\u7528\\u6237": "app", "\\u5bc6\\u7801": "VS35lNj!0VY9Xd"}`) + "&x=1",
	"q=" + url.QueryEscape("| Username | admin |\n| Password | VPi1DYP#VqfgW7 |\n") + "&x=1",
	"q=" + url.QueryEscape("| **API key** | `a2JdtQr*6Kj5ci` |") + "&x=1",
	"GET /api/exec?cmd=echo%20%27DaVhH9fitfGabS%27%20%7C%20sudo%20-S%20systemctl%20restart%20nginx HTTP/1.1",
}

// TestCmdMay: cmdMay holds for every text in which cmdArg takes a value
// (the scans call cmdArg only where it does): a command added to cmdArg
// or colonArg without its word in cmdFolded or cmdExact fails here.
func TestCmdMay(t *testing.T) {
	for _, s := range cmdForms {
		if !cmdArgAt0([]byte(s)) {
			t.Errorf("cmdArg takes no value in %q (not an example, or cmdMay held its decoded text to be none)", s)
			continue
		}
		if !cmdMay([]byte(s)) {
			t.Errorf("cmdMay(%q) is false: cmdArg takes a value there", s)
		}
	}
	for _, s := range []string{
		"2026-03-29 12:00:00,005 INFO [worker-0] request_id=ef2d127d-e37b user=u-5 latency_ms=155 status=200",
		"data:image/png;base64,VqLuHBHTN6c3CJAefxAN07UWMZkPM0eIno1L1IL8JImuXdDI9Xacxbso+AW14iRTtfjLfQkF7ybM25=",
		`{"path": "/srv/app/mod5.py", "size": 39595, "sha256": "56a2ee1c11d337a73708901e7f100dd3b5"}`,
		"n9nHVQRDHcRLS0zhkAwPatWfn7pbbVAL+mviceZArINwXRulvNZY31xi/5MGSl5L%3DAbCdEfGhIjKlMnOpQrStUv",
		// (An encoded ':' may make a generatedPassword's value: a
		// query holding one is looked at.)
		"q=%7B%22a%22%2C+%22b%22%2C+%5B2%5D%7D&page=2",
	} {
		if cmdMay([]byte(s)) {
			t.Errorf("cmdMay(%q) is true: it holds no command's word", s)
		}
	}
}

// FuzzCmdMay: wherever cmdArg takes a value, cmdMay holds.
func FuzzCmdMay(f *testing.F) {
	for _, s := range cmdForms {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if b := []byte(s); cmdArgAt0(b) && !cmdMay(b) {
			t.Fatalf("cmdArg takes a value in %q, cmdMay is false", s)
		}
	})
}
