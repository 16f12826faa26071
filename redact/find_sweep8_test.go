package redact

import (
	"net/url"
	"strings"
	"testing"
)

// TestValueListSeparators: an unquoted value holding ',', ';' or '&' is
// masked whole where nothing after the separator reads as the next pair
// of a list or a shell operator (an env assignment, a flag's value, a
// line of prose: "PGPASSWORD=ab,cd" printed ",cd"); in a list of pairs
// (a URL's query, a form, a DSN's "k=v;", "k=v,k=v") and before a shell
// operator the value ends at it, and the text after it is kept.
func TestValueListSeparators(t *testing.T) {
	checkSweep7(t, []sweep7Form{
		{"export PGPASSWORD=Tr9x,Kq4mZ7vL2wQ && psql -h db", "Tr9x,Kq4mZ7vL2wQ", true},
		{"mysql --password=Zq9x&Kp2mLmN4vB -h db", "Zq9x&Kp2mLmN4vB", true},
		{"password=ab7Kq2;cdXp9Lm4vB8", "ab7Kq2;cdXp9Lm4vB8", true},
		{"DB_PASSWORD=hunter2,correct9horse ./run.sh", "hunter2,correct9horse", true},
		{"connect with password: Ab3;Cd5Ef7Gh9xx now", "Ab3;Cd5Ef7Gh9xx", true},
		{"sshpass -p Ab3,Cd5Ef7Gh9xx ssh host", "Ab3,Cd5Ef7Gh9xx", false},
		{"PGPASSWORD=Tr9x;Kq4mZ7vL2xx; psql", "Tr9x;Kq4mZ7vL2xx", true},
		{`{"cmd":"PGPASSWORD=Tr9x,Kq4mZ7vL2wQ psql"}`, "Tr9x,Kq4mZ7vL2wQ", true},
	}, true, []string{
		"password=,user=app",
		"password=;",
		"https://example.com/login?password=&next=/home",
		"Password=;Encrypt=True",
	})
	for _, c := range []struct{ s, kept string }{
		{"https://x.example/login?user=bob&password=Zq9xKp2mLm&next=/home", "&next=/home"},
		{"user=bob&password=Zq9xKp2mLm&remember=1", "&remember=1"},
		{"password=Zq9xKp2mLm&remember=1", "&remember=1"},
		{"Server=db;Password=Zq9xKp2mLm;Encrypt=True", ";Encrypt=True"},
		{"Password=Zq9xKp2mLm;User ID=sa;", ";User ID=sa;"},
		{"user=app,password=Zq9xKp2mLm,host=db", ",host=db"},
		{"{user:app,password:Zq9xKp2mLm,host:db}", ",host:db}"},
		{"export PGPASSWORD=Zq9xKp2mLm; psql", "; psql"},
		{"mysql --password=Zq9xKp2mLm && echo ok", " && echo ok"},
		{"sshpass -p Zq9xKp2mLm; ssh host", " ssh host"},
		{"a.php?password=Zq9xKp2mLm&amp;next=1", "&amp;next=1"},
		{"DataSourceConfig{password=Zq9xKp2mLm, poolSize=10}", ", poolSize=10}"},
	} {
		for _, s := range []string{c.s, "q=" + url.QueryEscape(c.s)} {
			kept := c.kept
			if s != c.s {
				kept = url.QueryEscape(kept)
			}
			out := MaskText(s)
			if strings.Contains(out, "Zq9xKp2mLm") || !strings.HasSuffix(out, kept) {
				t.Errorf("%q masked as %q: want the password masked and %q kept", s, out, kept)
			}
		}
	}
}

// TestNetUseDomainUser: "net use … /user:DOMAIN\user <pw>" whose user
// starts with b, f, n, r or t (a JSON escape's letter after the
// backslash, read as one: the user ended there and its password was
// printed), plain and in JSON text.
func TestNetUseDomainUser(t *testing.T) {
	const pw = "Pa55w0rdXyz!q"
	var forms []sweep7Form
	for _, u := range []string{"bob", "frank", "tom", "nancy", "rachel", "svc"} {
		forms = append(forms,
			sweep7Form{`net use \\fs01\share /user:CORP\` + u + " " + pw, pw, false},
			sweep7Form{`{"cmd":"net use Z: \\\\fs01\\share /user:CORP\\` + u + " " + pw + ` /persistent:no"}`, pw, false})
	}
	checkSweep7(t, forms, false, []string{
		`net use \\fs01\share /user:CORP\bob`,
		`net use \\fs01\share /user:CORP\bob *`,
		`net use \\fs01\share /user:CORP\bob /persistent:no`,
	})
}

// TestSweep8Forms: producers' shapes the earlier sweeps lacked (sweep8 of
// cmd/e2atap): a password key named for what it unlocks (Ansible's
// ansible_become_pass, RabbitMQ's RABBITMQ_DEFAULT_PASS, an LDAP client's
// BIND_PW, a bare "pass" whose value reads as generated), PowerShell's
// ConvertTo-SecureString '<pw>' -AsPlainText, Go's MySQL DSN
// "user:<pw>@tcp(host:port)/db", ssh-keygen's -N/-P and az login's -p.
func TestSweep8Forms(t *testing.T) {
	const pw = "Tr9x!Kq4mZ7vL2"
	checkSweep7(t, []sweep7Form{
		{"web1 ansible_host=10.0.0.5 ansible_become_pass=" + pw, pw, true},
		{"ansible_become_pass: " + pw, pw, true},
		{"RABBITMQ_DEFAULT_PASS=" + pw, pw, true},
		{"LDAP_BIND_PW=" + pw, pw, true},
		{`{"env":{"VAULT_PASS":"` + pw + `"}}`, pw, true},
		{"$pw = ConvertTo-SecureString '" + pw + "' -AsPlainText -Force", pw, true},
		{`$pw = ConvertTo-SecureString -String "` + pw + `" -AsPlainText -Force`, pw, true},
		{"$cred = New-Object PSCredential('CORP\\svc', (convertto-securestring " + pw + " -asplaintext -force))", pw, true},
		{`{"script":"$s = ConvertTo-SecureString \"` + pw + `\" -AsPlainText -Force"}`, pw, true},
		{`{"host": "files", "user": "bob", "pass": "` + pw + `"}`, pw, true},
		{"[remote]\ntype = sftp\npass = gQ7xN2pLm4Rt8vBwZk3", "gQ7xN2pLm4Rt8vBwZk3", true},
		{"ssh-keygen -t ed25519 -N '" + pw + "' -f ~/.ssh/id_ed25519", pw, false},
		{"ssh-keygen -p -P '" + pw + "' -N 'x' -f key", pw, false},
		{"az login --service-principal -u 1b2c3d4e-0000-1111-2222-333344445555 -p " + pw + " --tenant contoso", pw, false},
	}, true, []string{
		`{"pass": true, "fail": 0}`,
		`{"pass": 12, "skip": 1}`,
		"pass: yes",
		"pass = first-pass-only",
		`sql.Open("mysql", dsn)`,
		"git@github.com:org/repo.git",
		"ssh-keygen -t ed25519 -N '' -f key",
		"az storage blob upload -c data -f report.pdf -n report.pdf",
		"az login --service-principal -u app -p",
		"$pw = ConvertTo-SecureString $plain -AsPlainText -Force",
		"$pw = Read-Host -AsSecureString | ConvertTo-SecureString",
		"ConvertTo-SecureString -AsPlainText -Force",
		"use ConvertTo-SecureString to convert it",
		"first_pass=abc123xyz9 second_pass=def456",
	})
	checkSweep7(t, []sweep7Form{
		{`db, err := sql.Open("mysql", "app:` + pw + `@tcp(db:3306)/orders?parseTime=true")`, pw, true},
		{`dsn := "root:` + pw + `@unix(/var/run/mysqld/mysqld.sock)/app"`, pw, true},
	}, true, []string{"q=" + url.QueryEscape("see app:docs@tcp for it"), "q=" + url.QueryEscape(`sql.Open("mysql", dsn)`)})
}

// TestNetUseEncoded: net use's password URL-encoded (a form's or a
// query's value: '+' or "%20" a space, "%5C" a backslash), after the user
// and before "/user:".
func TestNetUseEncoded(t *testing.T) {
	const pw = "Pa55w0rd!Xyz9"
	var forms []sweep7Form
	for _, s := range []string{
		`net use \\fs01\share /user:CORP\bob ` + pw,
		`net use Z: \\fs01\share /user:CORP\bob ` + pw + ` /persistent:no`,
		`net use \\fs01\share ` + pw + ` /user:CORP\svc`,
	} {
		forms = append(forms, sweep7Form{"cmd=" + url.QueryEscape(s) + "&x=1", pw, false},
			sweep7Form{"https://h.example/run?c=" + strings.ReplaceAll(url.QueryEscape(s), "+", "%20"), pw, false})
	}
	checkSweep7(t, forms, false, []string{
		"cmd=" + url.QueryEscape(`net use \\fs01\share /user:CORP\bob *`),
		"cmd=" + url.QueryEscape(`net use \\fs01\share /user:CORP\bob /persistent:no`),
		"cmd=" + url.QueryEscape(`net use \\fs01\share /user:CORP\bob`),
		"q=" + url.QueryEscape(`see /user:bob in the docs`),
	})
}

// TestCredPair: a user and a password as a pair under a credential key
// (Python's requests/httpx auth=(…), a client's credentials=[…]).
func TestCredPair(t *testing.T) {
	const pw = "Tr9x!Kq4mZ7vL2"
	checkSweep7(t, []sweep7Form{
		{"requests.get(url, auth=('admin', '" + pw + "'))", pw, false},
		{`r = httpx.post(u, auth=("svc-bot", "` + pw + `"), timeout=5)`, pw, false},
		{"auth = (user, '" + pw + "')", pw, false},
		{`{"credentials": ["ci", "` + pw + `"]}`, pw, false},
	}, false, []string{
		"requests.get(url, auth=(user, password))",
		"auth=('admin', password)",
		"auth=()",
		"auth = (None, None)",
	})
}

// TestPHPVarDumpJSONEncoded: PHP's var_dump of a credential in JSON text
// then URL-encoded (its line ends "%5Cn", its quotes "%5C%22"), as a log
// shipper's form body or a query carries a tool's output.
func TestPHPVarDumpJSONEncoded(t *testing.T) {
	const pw = "Zq9xKp2!LmN4vB"
	checkSweep7(t, []sweep7Form{
		{`{"out":"[\"password\"]=>\n  string(14) \"` + pw + `\"\n"}`, pw, false},
		{`{"out":"array(2) {\n  [\"user\"]=>\n  string(3) \"app\"\n  [\"api_key\"]=>\n  string(14) \"` + pw + `\"\n}"}`, pw, false},
	}, true, []string{
		`{"out":"[\"username\"]=>\n  string(5) \"alice\""}`,
		`{"out":"[\"password\"]=>\n  NULL"}`,
	})
}
