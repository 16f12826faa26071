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
