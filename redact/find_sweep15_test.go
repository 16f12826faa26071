package redact

import "testing"

// TestSweep15PctProse: prose URL-encoded with "%20" for a space
// (encodeURIComponent, Python's quote), a key before an encoded ':' with
// "%20" around it, and '+'-encoded prose encoded again ("%2B" for its
// spaces, a state= parameter's): printed, no finding.
func TestSweep15PctProse(t *testing.T) {
	const pw = "Xk9mP2qLs7"
	checkSweep7(t, []sweep7Form{
		{"the%20password%20is%20" + pw, pw, false},
		{"GET /notes?text=my%20password%20was%20" + pw + "&lang=en HTTP/1.1", pw, false},
		{"q=the%20password%20for%20bob%40example.com%20is%20" + pw, pw, false},
		{"q=api%20key%3A%20" + pw + "Tw", pw + "Tw", false},
		{"q=API%20key%20%3D%20" + pw + "Tw&x=1", pw + "Tw", false},
		{"state=q%3Dthe%2Bpassword%2Bis%2B" + pw + "&x=1", pw, false},
		{"state=q%3Dthe%2Bpassword%2Bfor%2Bbob%2540example.com%2Bis%2BXk9%2523mP2qLs&x=1", "Xk9%2523mP2qLs", false},
	}, false, []string{
		"the%20password%20is%20expired",
		"the%20password%20is%2012%20characters",
		"the%20address%20is%20" + pw,
		"q=the%20build%20is%20v2.3.1",
		"q=api%20keys%3A%2012",
		"q=monkey%3A%20" + pw,
		"state=q%3Dthe%2Bbuild%2Bis%2B" + pw + "&x=1",
		"state=q%3Dthe%2Bpassword%2Bis%2Bexpired&x=1",
	})
}

// TestSweep15PasswdNoFlag: "openssl passwd <pw>" and "mkpasswd <pw>" with
// no flag before the password, and "useradd -p <pw>" / "usermod -p <pw>"
// with a password given as it is (no crypt hash): printed, or masked
// with no finding where nothing else in the record passed the pre-check.
func TestSweep15PasswdNoFlag(t *testing.T) {
	const pw = "SunnyMeadowBrook"
	checkSweep7(t, []sweep7Form{
		{"openssl passwd " + pw, pw, false},
		{"$ openssl passwd '" + pw + "'\n$1$abc", pw, false},
		{"mkpasswd " + pw, pw, false},
		{"mkpasswd '" + pw + "' Xq3v9LmT", pw, false},
		{"sudo useradd -m -p " + pw + " deploy", pw, false},
		{"usermod -p '" + pw + "' bob", pw, false},
		{`{"cmd": "useradd -p \"` + pw + `\" ci"}`, pw, false},
		{"$ uptime\nmkpasswd " + pw, pw, false},
		{"$ id\nopenssl passwd " + pw, pw, false},
		{"GET /api/exec?cmd=sudo+usermod+-p+%27" + pw + "%27+bob HTTP/1.1", pw, false},
	}, true, []string{
		"openssl passwd",
		"openssl passwd $PW",
		"mkpasswd $PW",
		"openssl passwd < pw.txt",
		"mkpasswd | tee out",
		"usermod -p \"$HASH\" bob",
		"usermod -p '!' bob",
		"usermod -p '*' bob",
		"useradd -p x bob",
		"man mkpasswd",
		"openssl passwd -help",
	})
}

// TestSweep15ExpectGlob: what an expect script sends after a prompt
// given as a glob ("*assword*") was masked with no finding (Find's 'w'
// anchor only; the pre-check has it now), and in expect's brace form
// (`expect { "*assword*" { send "<pw>\r" } }`, on one line or several)
// it was printed.
func TestSweep15ExpectGlob(t *testing.T) {
	const pw = "SunnyMeadowBrook"
	checkSweep7(t, []sweep7Form{
		{"spawn passwd bob\nexpect \"*assword*\"\nsend \"" + pw + "\\r\"\nexpect eof", pw, false},
		{"expect \"Password*\"\nsend -- \"" + pw + "\\r\"", pw, false},
		{"expect -re \"assword\"\nsend \"" + pw + "\\r\"", pw, false},
		{`{"script": "spawn ssh bob@web1\nexpect \"*assword*\"\nsend \"` + pw + `\\r\"\ninteract"}`, pw, false},
		{"expect { \"*assword*\" { send \"" + pw + "\\r\" } }", pw, false},
		{"spawn ssh bob@web1\nexpect {\n    \"*assword*\" { send \"" + pw + "\\r\"; exp_continue }\n    eof\n}", pw, false},
		{"expect {\n  -re \"assword\" {\n    send \"" + pw + "\\r\"\n  }\n}", pw, false},
	}, true, []string{
		"expect \"*assword*\"\nsend \"$pw\\r\"",
		"expect \"*assword*\"\ninteract",
		"expect { \"*assword*\" { send \"$env(PW)\\r\" } }",
		"expect { \"*assword*\" { exit 1 } }",
		"expect { \"*assword*\" { send \"\\r\" } }",
		"the password was sent as \"*assword*\" in the log",
	})
}

// TestSweep15MongoshJSON: MongoDB's shells' "-p <pw>" after a quoted URL
// in JSON text ("mongosh \"mongodb://…\" -u admin -p <pw>"), and in JSON
// text held in a string: the walk back to the command stopped at the
// escaped quote, and the password was printed.
func TestSweep15MongoshJSON(t *testing.T) {
	const pw = "SunnyMeadowBrook"
	checkSweep7(t, []sweep7Form{
		{`{"cmd":"mongosh \"mongodb://db:27017\" -u admin -p ` + pw + `"}`, pw, false},
		{`{"out":"{\"cmd\":\"mongosh \\\"mongodb://db:27017/app\\\" -u admin -p ` + pw + `\"}"}`, pw, false},
		{`{"cmd":"mongodump --uri \"mongodb://db:27017\" --out \"/srv/dump\" -u backup -p '` + pw + `'"}`, pw, false},
	}, false, []string{
		`{"cmd":"mongosh \"mongodb://db:27017\" -p 27017"}`,
		`{"cmd":"mongosh \"mongodb://db:27017\" -u admin -p \"$MONGO_PW\""}`,
		`{"cmd":"echo \"mongodb://db\" && docker run -p 8080:80 nginx"}`,
		`{"msg":"run \"mongosh\" then -p ` + pw + `"}`,
		`{"cmd":"ssh \"deploy@web1\" -p 2222"}`,
	})
}

// TestSweep15Tails: a delta that ends after usermod's "-p" URL-encoded
// and an encoded quote (also encoded twice), or inside the value after
// it, is kept (MayStartCredential): the next delta, the password, was
// printed with no finding.
func TestSweep15Tails(t *testing.T) {
	for _, tail := range []string{
		"GET /api/exec?cmd=sudo+usermod+-p+%27",
		"GET /api/exec?cmd=sudo+usermod+-p+%27VerNe",
		"state=cmd%3Dsudo%2Busermod%2B-p%2B%2527",
		"state=cmd%3Dsudo%2Buseradd%2B-p%2B%2527VerNeRi",
	} {
		if !MayStartCredential(tail) {
			t.Errorf("not kept: %q", tail)
		}
	}
	for _, tail := range []string{
		"GET /api/exec?cmd=ssh+-p+%27",
		"GET /api/exec?cmd=sudo+usermod+-p+%27VerNe%27+bob",
		"q=usermod+-L+bob",
	} {
		if MayStartCredential(tail) {
			t.Errorf("kept: %q", tail)
		}
	}
}
