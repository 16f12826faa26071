package redact

import (
	"strings"
	"testing"
)

// TestSweep14PctFlags: a command line's password flag URL-encoded with
// "%20" for a space (encodeURIComponent, Python's quote): with '+' the
// flag follows a "space" shortFlag and flagValue read, with "%20" none,
// and a value with no digit was printed with no finding.
func TestSweep14PctFlags(t *testing.T) {
	const pw = "HunterTwoBlue"
	checkSweep7(t, []sweep7Form{
		{"GET /run?cmd=mysql%20-u%20root%20-p" + pw + "%20-h%20db HTTP/1.1", pw, false},
		{"q=sshpass%20-p%20" + pw + "%20ssh%20deploy%40web1", pw, false},
		{"q=docker%20login%20-u%20bob%20-p%20" + pw + "%20ghcr.io", pw, false},
		{"q=htpasswd%20-b%20.htpasswd%20bob%20" + pw, pw, false},
		{"q=redis-cli%20-a%20" + pw + "%20ping", pw, false},
		{"q=mysql%20--user%3Droot%20--password%20" + pw + "%20orders", pw, false},
		{"q=curl%20-u%20bob%3A" + pw + "%20https%3A%2F%2Fapi.example.com", pw, false},
		{"q=mysql%20-uroot%20-p%27" + pw + "%27%20orders", pw, false},
		{"redis-cli -h cache --pass " + pw + " info", pw, false},
	}, false, []string{
		"q=docker%20run%20-p%208080%3A80%20nginx",
		"q=mkdir%20-p%20builddir%20%26%26%20cp%20-p%20a%20b",
		"q=ssh%20-p%2022%20deploy%40web1",
		"q=sshpass%20-p%20%24PASS%20ssh%20host",
		"q=mysql%20-u%20root%20-p%20orders",
		"q=sshpass%20-p%20%3Cpassword%3E%20ssh%20host",
		"title=Release%20-%20notes%20for%20v2",
		"redis-cli --pass $REDIS_PASSWORD info",
		"rsync --pass hunter-two-blue",
	})
}

// TestSweep14Passwd: passwords given to the commands that set or hash
// one — passwd on its standard input, usermod/useradd -p's crypt hash,
// openssl passwd, mkpasswd — and Argo CD's initial password printed on
// the line after its command: each was printed, with no finding.
func TestSweep14Passwd(t *testing.T) {
	const pw = "SunnyMeadowBrook"
	const hash = "$6$rounds=5000$Xq3v9LmT$Zq1kLmNoPqRsTuVwXyZ0123456789abcdefghijABCDEFGHIJklmnopqrstuvwxYZ./"
	const argo = "xK3mPq7RtZ9sVw2Y"
	checkSweep7(t, []sweep7Form{
		{"echo -e '" + pw + `\n` + pw + "' | passwd bob", pw, false},
		{`printf "` + pw + `\n` + pw + `\n" | sudo passwd deploy`, pw, false},
		{"echo " + pw + " | passwd --stdin bob", pw, false},
		{`{"cmd": "echo -e \"` + pw + `\\n` + pw + `\" | passwd bob"}`, pw, false},
		{"usermod -p '" + hash + "' bob", hash, false},
		{"sudo useradd -m -s /bin/bash -p \"" + hash + "\" deploy", hash, false},
		{`{"note": "useradd -m -p \"` + hash + `\" deploy"}`, hash, false},
		{"openssl passwd -6 " + pw, pw, false},
		{"openssl passwd -1 -salt xyz '" + pw + "'", pw, false},
		{"mkpasswd -m sha-512 " + pw, pw, false},
		{"mkpasswd --method=sha-512 " + pw + " Xq3v9LmT", pw, false},
		{"$ argocd admin initial-password -n argocd\n" + argo + "\n\n This password must be only used for first time login.", argo, false},
		{"$ kubectl -n argocd get secret argocd-initial-admin-secret -o jsonpath=\"{.data.password}\" | base64 -d\n" + argo + "\n", argo, false},
		{"spawn ssh bob@host; expect \"password:\"; send \"" + pw + "\\r\"; interact", pw, false},
	}, true, []string{
		"echo 'done' | passwd bob",
		"echo $PW | passwd --stdin bob",
		`printf '%s\n%s\n' "$PW" "$PW" | passwd bob`,
		"echo \"$(cat /run/secrets/pw)\" | passwd --stdin bob",
		"cat pw.txt | passwd --stdin bob",
		"usermod -p \"$HASH\" bob",
		"usermod -p '*' bob",
		"usermod -L bob",
		"openssl passwd -6 -stdin < pw.txt",
		"openssl passwd -6 $PW",
		"mkpasswd -m help",
		"mkpasswd -s < pw.txt",
		"$ argocd admin initial-password -n argocd\nFATA[0000] secrets \"argocd-initial-admin-secret\" not found",
		"kubectl get secret argocd-initial-admin-secret -o yaml\napiVersion: v1",
		"ls -l /etc/passwd | head",
	})
}

// TestSweep14ExpectGlob: what an expect script sends after a prompt given
// as a glob ("*assword*") is masked (as prose is: revealed at Find's 'w'
// anchor, no credential).
func TestSweep14ExpectGlob(t *testing.T) {
	const pw = "SunnyMeadowBrook"
	for _, s := range []string{
		"spawn passwd bob\nexpect \"*assword*\"\nsend \"" + pw + "\\r\"\nexpect eof",
		"expect \"Password*\"\nsend -- \"" + pw + "\\r\"",
		"expect -re \"assword\"\nsend \"" + pw + "\\r\"",
	} {
		if out := MaskText(s); strings.Contains(out, pw[:10]) {
			t.Errorf("not masked: %s", mask6(out, pw))
		}
	}
	for _, s := range []string{
		"expect \"*assword*\"\nsend \"$pw\\r\"",
		"expect \"*assword*\"\ninteract",
	} {
		if out := MaskText(s); out != s {
			t.Errorf("masked: %s", out)
		}
	}
}

// TestSweep14Twilio: an account SID and its auth token (or an API key SID
// and its secret) as a client's constructor takes them: the SID was
// masked, the token printed.
func TestSweep14Twilio(t *testing.T) {
	const sid = "AC3f9a8c7e5b2d4a1c9e8f7a6b5c4d3e2f"
	const tok = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
	const sk = "SK0123456789abcdef0123456789abcdef"
	const sec = "Ab3dEf5hIj7lMn9pQr1tUv3xYz5bCd7f"
	checkSweep7(t, []sweep7Form{
		{"client = Client('" + sid + "', '" + tok + "')", tok, false},
		{`const client = new Twilio("` + sid + `", "` + tok + `");`, tok, false},
		{`const client = require('twilio')("` + sid + `", "` + tok + `");`, tok, false},
		{`{"code": "client = Client(\"` + sid + `\", \"` + tok + `\")"}`, tok, false},
		{"client = Client(\"" + sk + "\", \"" + sec + "\", \"" + sid + "\")", sec, false},
	}, true, nil)
	for _, s := range []string{
		"sid = '" + sid + "', 'orders-prod'",
		sid + ", " + tok + "ab",
	} {
		out := MaskText(s)
		if strings.Contains(out, sid[:12]) {
			t.Errorf("the SID is not masked: %s", out)
		}
		if strings.Contains(s, "orders-prod") && !strings.Contains(out, "orders-prod") {
			t.Errorf("more than the SID is masked: %s", out)
		}
	}
}

// TestSweep14EncodedLabels: "the password for <e-mail> is <pw>" with the
// address URL-encoded ("bob%40example.com"), prose URL-encoded with '+'
// in a request line (after a raw space: "GET /s?q=the+password+is+…"),
// and CJK labels URL-encoded (密码, パスワード, 비밀번호 as %XX escapes)
// before a separator: printed.
func TestSweep14EncodedLabels(t *testing.T) {
	const pw = "Xk9#mP2qLs"
	const v = "SunnyMeadow7x"
	checkSweep7(t, []sweep7Form{
		{"q=the+password+for+bob%40example.com+is+Xk9%23mP2qLs", "Xk9%23mP2qLs", false},
		{"q=Temporary+password+for+alice.smith%40corp.example.org+was+Xk9%23mP2qLs.", "Xk9%23mP2qLs", false},
		{"GET /search?q=the+password+for+ops%40example.com+is+Xk9%23mP2qLs&lang=en HTTP/1.1", "Xk9%23mP2qLs", false},
		{"GET /s?q=the+password+is+Xk9mP2qLs7 HTTP/1.1", "Xk9mP2qLs7", false},
		{"q=%E5%AF%86%E7%A0%81%3A" + v, v, false},
		{"q=%E5%AF%86%E7%A0%81%EF%BC%9A" + v + "&x=1", v, false},
		{"q=%E6%95%B0%E6%8D%AE%E5%BA%93%E5%AF%86%E7%A0%81%3A+" + v, v, false},
		{"q=%E3%83%91%E3%82%B9%E3%83%AF%E3%83%BC%E3%83%89%3D" + v, v, false},
		{"q=%EB%B9%84%EB%B0%80%EB%B2%88%ED%98%B8%3A%20" + v, v, false},
		{"q=%E5%AF%86%E7%A0%81%E6%98%AF+" + v, v, false},
	}, false, []string{
		"q=the+password+for+bob%40example.com+is+expired.",
		"q=the+address+for+bob%40example.com+is+" + pw,
		"q=%E5%AF%86%E7%A0%81%E5%AD%A6%3A" + v,
		"q=%E5%AF%86%E7%A0%81%E9%95%BF%E5%BA%A6%3A12",
		"q=%E5%AF%86%E7%A0%81%3A%E8%AF%B7%E8%BE%93%E5%85%A5",
		"q=%E5%90%8D%E5%AD%97%3A" + v,
	})
}

// TestSweep14CodeValue: a call or an index of a name after a credential
// key's "=" or ":=" is code, not its value: "creds :=
// credentials.NewStaticCredentials(" was masked as creds' value (a
// false positive; the rule e2a.secret judged it code already). A string
// literal is still masked, and so is a value that only looks like a call.
func TestSweep14CodeValue(t *testing.T) {
	for _, s := range []string{
		`creds := credentials.NewStaticCredentials(id, secret, "")`,
		"creds = get_credentials(profile)",
		"password = getpass.getpass()",
		`password = getpass("Password: ")`,
		"token := auth.NewToken(ctx)",
		`secret = os.environ["APP_SECRET"]`,
		"credentials = service_account.Credentials.from_service_account_file(path)",
		"const creds = new AWS.Credentials(a, b);",
		"api_key = load_key(cfg)",
		"token = await fetchToken(client)",
	} {
		if out := MaskText(s); out != s {
			t.Errorf("code masked: %s", out)
		}
	}
	const v = "Xk9mP2qLs7Tw"
	for _, s := range []string{
		`creds = "` + v + `"`,
		`creds := "` + v + `"`,
		"password = " + v,
		"password=" + v + "(2024)",
	} {
		if out := MaskText(s); strings.Contains(out, v) {
			t.Errorf("not masked: %s", mask6(out, v))
		}
	}
	const k = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9Lm2Kq3x"
	s := `creds := credentials.NewStaticCredentials("AKIAIOSFODNN7EXAMPLE", "` + k + `", "")`
	if out := MaskText(s); strings.Contains(out, k[:10]) || !strings.HasPrefix(out, "creds := credentials.NewStaticCredentials(") {
		t.Errorf("the pair: %s", mask6(out, k))
	}
}

// TestSweep14Tails: a delta that ends where one of this audit's shapes
// takes its value, or inside it, is kept (MayStartCredential) so that the
// next delta is judged joined to it: otherwise a delta that starts with
// the value was printed (observe --records) with no finding.
func TestSweep14Tails(t *testing.T) {
	for _, tail := range []string{
		"sudo usermod -p '",
		`useradd -m -p "`,
		"$ argocd admin initial-password -n argocd\n",
		`{"out": "$ argocd admin initial-password -n argocd\n`,
		"$ kubectl -n argocd get secret argocd-initial-admin-secret -o jsonpath=\"{.data.password}\" | base64 -d; echo\n",
		`printf "`,
		`printf "Vn3l1Ps!V`,
		"echo -e 'Sunny",
		"echo ",
		`expect -c 'spawn ssh bob@web1; expect "password:"; send "`,
		`expect "password:"; send "1msb`,
		"client = Client('AC3f9a8c7e5b2d4a1c9e8f7a6b5c4d3e2f', '",
		`client = Client("AC3f9a8c7e5b2d4a1c9e8f7a6b5c4d3e2f", "9f8e7d`,
		"q=%EB%B9%84%EB%B0%80%EB%B2%88%ED%98%B8%3D",
		"q=%EB%B9%84%EB%B0%80%EB%B2%88%ED%98%B8%3DKWP8",
		"body=%E3%83%91%E3%82%B9%E3%83%AF%E3%83%BC%E3%83%89%EF%BC%9A",
		"q=%E5%AF%86%E7%A0%81%3A+",
		"az keyvault secret set --vault-name kv --name db --value ",
		"az keyvault secret set --vault-name kv --name db --value Sunny",
	} {
		if !MayStartCredential(tail) {
			t.Errorf("not kept: %q", tail)
		}
	}
	for _, tail := range []string{
		"$ argocd app list\n",
		"$ kubectl get pods\n",
		"sid = 'AC3f9a8c7e5b2d4a1c9e8f7a6b5c4d3e2f'",
		"the build finished in 42 s.",
	} {
		if MayStartCredential(tail) {
			t.Errorf("kept: %q", tail)
		}
	}
}

// TestSweep14Audit: the fresh-eyes audit's leaks (JDBC/ODBC, PGPASSWORD,
// helm --set, vault login, rabbitmqctl, az, gcloud, Ansible and .pgpass
// were masked and found already): MongoDB's shells' "-p <pw>" (also after
// a quoted URL), Azure Key Vault's "secret set … --value <secret>", and a
// bare "pass" key of kubectl's --from-literal with a value that reads as
// a word.
func TestSweep14Audit(t *testing.T) {
	const pw = "SunnyMeadowBrook"
	checkSweep7(t, []sweep7Form{
		{"mongosh --host db -u admin -p " + pw + " --authenticationDatabase admin", pw, false},
		{`mongosh "mongodb://db:27017" -u admin -p ` + pw, pw, false},
		{"mongodump --uri mongodb://db:27017 -u backup -p '" + pw + "' --out /srv/dump", pw, false},
		{"az keyvault secret set --vault-name kv-prod --name db-password --value " + pw, pw, false},
		{"kubectl create secret generic db --from-literal=username=app --from-literal=pass=" + pw, pw, false},
	}, true, []string{
		"mongodump -p 27017",
		"mongosh -p --port 27017",
		`mongosh -u admin -p "$MONGO_PW"`,
		"az keyvault secret set --vault-name kv --name db --value $VAL",
		"az keyvault secret show --vault-name kv --name db --query value",
		"kubectl create secret generic db --from-literal=pass=$P",
		"ssh -p 22 deploy@web1",
	})
}
