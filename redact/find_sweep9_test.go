package redact

import (
	"strings"
	"testing"
)

// TestSweep9Commands: command lines and client calls that hand a secret
// over with no credential-named key=value pair (each was printed, or
// masked with no finding): 7-Zip's "7z a -p<pw>", "gh secret set NAME
// --body <secret>", "aws configure set aws_secret_access_key <key>",
// "ngrok config add-authtoken <token>" and requests' and httpx's
// auth=HTTPBasicAuth('user', '<pw>').
func TestSweep9Commands(t *testing.T) {
	const pw = "Kqz9pwmvtlrbx"
	checkSweep7(t, []sweep7Form{
		{"7z a -p" + pw + " backup.7z data/", pw, false},
		{"7za x -p'" + pw + "' -o/tmp/out backup.7z", pw, false},
		{"aws configure set aws_secret_access_key " + pw, pw, false},
		{"aws configure set aws_session_token '" + pw + "' --profile ci", pw, false},
		{"aws configure set profile.ci.aws_secret_access_key " + pw, pw, false},
	}, true, []string{
		"7z a -p backup.7z data/",
		"aws configure set region us-east-1",
		"aws configure get aws_secret_access_key",
		"aws configure set aws_secret_access_key",
		"aws configure set aws_secret_access_key --profile ci",
	})
	checkSweep7(t, []sweep7Form{
		{"gh secret set DEPLOY_KEY --body " + pw, pw, false},
		{`{"cmd":"7z a -mhe=on -p` + pw + ` s.7z f"}`, pw, false},
		{"s = requests.Session()\ns.auth = ('bob', '" + pw + "')", pw, false},
		{`gh secret set NPM_TOKEN --repo org/app --body "` + pw + `"`, pw, false},
		{`{"cmd":"gh secret set DEPLOY_KEY --body ` + pw + `"}`, pw, false},
		{"ngrok config add-authtoken 2AbCdEfGhIjKlMnOpQrStUvWxYz_1a2B3c4D5e6F7g8H9i", "2AbCdEfGhIjKlMnOpQrStUvWxYz_1a2B3c4D5e6F7g8H9i", false},
		{"requests.get(url, auth=HTTPBasicAuth('bob', '" + pw + "'))", pw, false},
		{`client = httpx.Client(auth=httpx.DigestAuth("bob", "` + pw + `"))`, pw, false},
		{`session.auth = requests.auth.HTTPProxyAuth('bob', '` + pw + `')`, pw, false},
	}, false, []string{
		"gh pr create --title fix --body Closes-the-issue-in-full",
		"gh secret set DEPLOY_KEY --body \"$DEPLOY_KEY\"",
		"gh secret set DEPLOY_KEY < key.txt",
		"ngrok config add-authtoken $NGROK_AUTHTOKEN",
		"ngrok config add-authtoken <token>",
		"requests.get(url, auth=HTTPBasicAuth(user, password))",
		"requests.get(url, auth=HTTPBasicAuth('bob', password))",
		"session.auth = None",
		"self.auth = auth",
		"app.auth = 'enabled-for-all-routes-v2'",
	})
	for _, c := range []struct{ s, kept string }{
		{"requests.get(url, auth=HTTPBasicAuth('bob', '" + pw + "'))", "auth=HTTPBasicAuth('bob', '"},
		{"aws configure set aws_secret_access_key " + pw + " --profile ci", "aws_secret_access_key "},
	} {
		if out := MaskText(c.s); !strings.Contains(out, c.kept) {
			t.Errorf("%q masked as %q: want %q kept", c.s, out, c.kept)
		}
	}
}

// TestSweep9Shapes: values whose place, not their key's separator, names
// them: the lines after the first of a YAML block scalar under a
// credential key (a private key's base64 in Helm values), the string an
// expect script sends after its password prompt (Tcl's send, pexpect's
// sendline), Spring Boot's /actuator/env entry under a credential key
// ({"value": …}), and ODBC's braced value (Pwd={a;b}}c}); an object or
// a list under a credential key is no value of its own (its '{' was
// masked, the value inside it printed).
func TestSweep9Shapes(t *testing.T) {
	const pw, line2 = "Kqw8pwmvtlrbxQ2", "Zr4TnWq7LmXc2VbKp9"
	checkSweep7(t, []sweep7Form{
		{"private_key: |\n  MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n  " + line2 + "\n  Ab3dEf\nnext: 1\n", line2, false},
		{`{"values":"tls:\n  private_key: |-\n    MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n    ` + line2 + `\n  cert: x"}`, line2, false},
		{"spawn ssh bob@host\nexpect \"password:\"\nsend \"" + pw + "\\r\"", pw, false},
		{"expect \"Password: \" {\n  send -- \"" + pw + "\\r\"\n}", pw, false},
		{"child.expect('Password:')\nchild.sendline('" + pw + "')", pw, false},
		{`{"script":"expect \"password:\"\nsend \"` + pw + `\\r\"\n"}`, pw, false},
		{`{"name":"applicationConfig","properties":{"spring.datasource.password":{"value":"` + pw + `","origin":"application.yml - 7:17"}}}`, pw, false},
		{`{"db.password": {"value": "Kqwpwmvtlrbx", "origin": "env"}}`, "Kqwpwmvtlrbx", false},
		{"Driver={ODBC Driver 18};Server=db;Uid=sa;Pwd={Kqv8pw;mvtlrbxQ2};", "mvtlrbxQ2", false},
		{"Pwd={ab}}cd" + pw + "};Encrypt=yes", pw, false},
	}, false, []string{
		"expect \"password:\"\nsend \"$pass\\r\"",
		"prompt = 'password:' # then type",
		`{"spring.datasource.password":{"value":"******","origin":"env"}}`,
		`{"spring.datasource.url":{"value":"jdbc:postgresql://db/app","origin":"env"}}`,
		`{"password": {"required": true, "minLength": 12}}`,
	})
	for _, c := range []struct{ s, kept string }{
		{"private_key: |\n  MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n  " + line2 + "\nnext: 1\n", "\nnext: 1\n"},
		{`{"password": {"value": "` + pw + `", "origin": "env"}}`, `, "origin": "env"}}`},
		{"Pwd={ab}}cd" + pw + "};Encrypt=yes", "};Encrypt=yes"},
	} {
		if out := MaskText(c.s); !strings.Contains(out, c.kept) {
			t.Errorf("%q masked as %q: want %q kept", c.s, out, c.kept)
		}
	}
}

// TestSweep9Quotes: a quote doubled inside a value quoted with it is one
// of its bytes, as ADO.NET's connection strings (Password="ab"";cd":
// the value ab";cd), YAML's single-quoted strings spell it
// (the value ended at the first quote and the rest was printed); and
// SQL*Plus's CONN[ECT] user/<pw>@alias at its "SQL> " prompt (printed).
func TestSweep9Quotes(t *testing.T) {
	checkSweep7(t, []sweep7Form{
		{`Server=db;User Id=app;Password="ab"";cdKqz9pwXq";Encrypt=True`, "cdKqz9pwXq", false},
		{"Server=db;Password='ab'';cdKqz7pwXq';Encrypt=True", "cdKqz7pwXq", false},
		{`{"ConnectionStrings":{"Db":"Server=db;Password=\"ab\"\";cdKqz5pwXq\";"}}`, "cdKqz5pwXq", false},
		{"db:\n  password: 'it''s9Kqz4pwXqLm'\n", "s9Kqz4pwXqLm", false},
		{"SQL> conn scott/Kqz4pwmvtlrbx@orcl\nConnected.", "Kqz4pwmvtlrbx", false},
		{"SQL> CONNECT system/Kqz3pwmvtlrbx@prod", "Kqz3pwmvtlrbx", false},
	}, false, []string{
		`{"password": "", "user": ""}`,
		"password = ''",
		"conn scott/tiger@orcl is the classic demo login", // no prompt: a sentence
		"SQL> connect / as sysdba",
	})
	for _, c := range []struct{ s, kept string }{
		{`Server=db;Password="ab"";cdKqz9pwXq";Encrypt=True`, `";Encrypt=True`},
		{`{"password":"abc9Xyzq1","u":""}`, `","u":""}`},
	} {
		if out := MaskText(c.s); !strings.Contains(out, c.kept) {
			t.Errorf("%q masked as %q: want %q kept", c.s, out, c.kept)
		}
	}
}

// TestSweep9Outputs: what tools print of their state with a secret in a
// place no key=value pair names: Terraform's output -json (the "value"
// of an object under a credential key, after "sensitive" and "type"),
// GitHub Actions' "::add-mask::<secret>" echoed by a step.
func TestSweep9Outputs(t *testing.T) {
	const pw = "Kqv1pwmvtlrbxQ2"
	checkSweep7(t, []sweep7Form{
		{"{\n  \"db_password\": {\n    \"sensitive\": true,\n    \"type\": \"string\",\n    \"value\": \"" + pw + "\"\n  }\n}", pw, false},
		{`{"out":"{\"api_token\": {\"sensitive\": true, \"value\": \"` + pw + `\"}}"}`, pw, false},
		{"::add-mask::" + pw + "\n::group::deploy", pw, false},
		{`{"log":"2026-12-07T01:02:03Z ::add-mask::` + pw + `\n"}`, pw, false},
	}, false, []string{
		`{"db_host": {"sensitive": false, "type": "string", "value": "db.internal"}}`,
		`{"headers": {"name": "Accept", "value": "application/json"}}`,
		"::add-mask::$TOKEN",
		"echo \"::add-mask::${{ secrets.TOKEN }}\"",
	})
}

// TestSweep9PasswordStdin: the password echoed into a registry client's
// --password-stdin on the same line (docker, podman, helm registry
// login) was printed; a variable, a file or a sentence is none.
func TestSweep9PasswordStdin(t *testing.T) {
	const pw = "Kqz9pwmvtlrbx"
	checkSweep7(t, []sweep7Form{
		{"echo " + pw + " | docker login --username bob --password-stdin", pw, false},
		{`echo "` + pw + `" | docker login -u bob --password-stdin registry.example.com`, pw, false},
		{"echo -n '" + pw + "' | helm registry login ghcr.io -u bob --password-stdin", pw, false},
		{`{"cmd":"echo \"` + pw + `\" | docker login -u bob --password-stdin"}`, pw, false},
		{`{"cmd":"echo ` + pw + ` | podman login -u bob --password-stdin quay.io\n"}`, pw, false},
	}, false, []string{
		"echo $CR_PAT | docker login ghcr.io -u bob --password-stdin",
		`echo "$TOKEN" | docker login -u bob --password-stdin`,
		`{"cmd":"echo \"$CR_PAT\" | docker login ghcr.io -u USERNAME --password-stdin"}`,
		"cat ~/pw.txt | docker login --password-stdin",
		"echo logging in | docker login --password-stdin",
		"docker login --password-stdin < ~/.pw",
	})
}
