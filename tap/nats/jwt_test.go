package natstap

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// jwtRealm is an operator, one account it signed, and what a real
// operator-mode nats-server needs to trust them (a memory resolver holds
// the account's JWT, as nsc push would put it in a full resolver).
type jwtRealm struct {
	operator *jwt.OperatorClaims
	account  nkeys.KeyPair
	accPub   string
	resolver *server.MemAccResolver
}

func newJWTRealm(t *testing.T) *jwtRealm {
	t.Helper()
	okp, err := nkeys.CreateOperator()
	if err != nil {
		t.Fatal(err)
	}
	opub, _ := okp.PublicKey()
	oc := jwt.NewOperatorClaims(opub)
	oc.Name = "e2atap-test"
	ojwt, err := oc.Encode(okp)
	if err != nil {
		t.Fatal(err)
	}
	if oc, err = jwt.DecodeOperatorClaims(ojwt); err != nil {
		t.Fatal(err)
	}
	akp, err := nkeys.CreateAccount()
	if err != nil {
		t.Fatal(err)
	}
	apub, _ := akp.PublicKey()
	ac := jwt.NewAccountClaims(apub)
	ac.Name = "agents"
	ajwt, err := ac.Encode(okp)
	if err != nil {
		t.Fatal(err)
	}
	r := &jwtRealm{operator: oc, account: akp, accPub: apub, resolver: &server.MemAccResolver{}}
	if err := r.resolver.Store(apub, ajwt); err != nil {
		t.Fatal(err)
	}
	return r
}

// creds is a credentials file's text (`nsc generate creds`): a user JWT
// the account signed, expiring at expires (none if zero), and its seed.
func (r *jwtRealm) creds(t *testing.T, expires time.Time) (text, seed string) {
	t.Helper()
	ukp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	upub, _ := ukp.PublicKey()
	s, _ := ukp.Seed()
	uc := jwt.NewUserClaims(upub)
	uc.Name = "e2atap"
	if !expires.IsZero() {
		uc.Expires = expires.Unix()
	}
	ujwt, err := uc.Encode(r.account)
	if err != nil {
		t.Fatal(err)
	}
	b, err := jwt.FormatUserConfig(ujwt, s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), string(s)
}

// TestCredsFileAgainstOperatorServer: creds_file against a real
// nats-server in operator mode (decentralized JWT auth, as NGS and nsc
// set up). A user JWT that expired is refused: a handshake error counted
// and logged once, no crash, no Run error, and neither the seed nor the
// JWT in any log line. The Secret is replaced with a valid file: the next
// attempt reads it (the client reads the file at every connect) and what
// a publisher sends reaches the tap.
func TestCredsFileAgainstOperatorServer(t *testing.T) {
	dir := t.TempDir()
	realm := newJWTRealm(t)
	s := startSecureServer(t, func(o *server.Options) {
		o.TrustedOperators = []*jwt.OperatorClaims{realm.operator}
		o.AccountResolver = realm.resolver
	})

	expired, expiredSeed := realm.creds(t, time.Now().Add(-time.Hour))
	credsPath := writeFile(t, dir, "e2atap.creds", expired)
	var logs syncBuffer
	stats, c := new(tap.Stats), &collector{}
	runTap(t, Config{Name: "ngs", URL: s.ClientURL(), Subjects: []string{"agent.>"}, ReconnectWait: 20 * time.Millisecond, ReconnectMaxWait: 100 * time.Millisecond,
		Auth: Auth{CredsFile: credsPath}}, stats, slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), c)
	waitFor(t, "the expired user JWT refused and counted", func() bool { return stats.Errors[tap.ErrHandshake].Load() >= 1 })
	if stats.UpstreamUp.Load() || stats.Errors[tap.ErrDial].Load() != 0 {
		t.Errorf("up %v, dial errors %d: an expired user JWT is a handshake error", stats.UpstreamUp.Load(), stats.Errors[tap.ErrDial].Load())
	}
	waitFor(t, "the refusal logged", func() bool { return strings.Contains(logs.String(), "nats server refused the connection") })

	valid, validSeed := realm.creds(t, time.Time{})
	writeFile(t, dir, "e2atap.creds", valid)
	waitFor(t, "up after the credentials file was replaced", stats.UpstreamUp.Load)
	pubPath := writeFile(t, dir, "publisher.creds", valid)
	pub, err := nats.Connect(s.ClientURL(), nats.UserCredentials(pubPath))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pub.Close)
	receives(t, pub, "agent.jwt", c)

	out := logs.String()
	if n := strings.Count(out, "nats server refused the connection"); n != 1 {
		t.Errorf("the refusal logged %d times: want once for the outage", n)
	}
	for what, secret := range map[string]string{
		"the expired file's seed": expiredSeed, "the valid file's seed": validSeed,
		"a user JWT": jwtOf(expired), "the valid user JWT": jwtOf(valid),
	} {
		if strings.Contains(out, secret) {
			t.Errorf("%s is in the tap's log", what)
		}
	}
}

// jwtOf is the user JWT of a credentials file's text.
func jwtOf(creds string) string {
	u, err := jwt.ParseDecoratedJWT([]byte(creds))
	if err != nil || u == "" {
		return creds
	}
	return u
}
