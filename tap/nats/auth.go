package natstap

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/tap/tlsfiles"
	"github.com/nats-io/nats.go"
)

// Auth is how the tap authenticates to a secured NATS server: at most one
// of user and password, a token, an nkey seed or a credentials (JWT) file.
// Secrets are only ever named by their files; each is read again at every
// connect and reconnect (a rotated Secret is picked up), never logged or
// put into an error. Credentials in the URL (nats://user:pass@host) work
// too, but not together with these.
type Auth struct {
	// User and PasswordFile: user/password authentication; the password is
	// the file's content without a trailing newline.
	User         string
	PasswordFile string
	// TokenFile holds a token (authorization { token: … }).
	TokenFile string
	// NKeyFile holds an nkey user seed ("SU…"); the server challenges, the
	// seed signs.
	NKeyFile string
	// CredsFile is a decorated credentials file (a user JWT and its seed,
	// as `nsc generate creds` writes it): decentralized JWT auth.
	CredsFile string
}

// set reports whether any auth key is set.
func (a Auth) set() bool { return a != Auth{} }

// Validate reports every problem of a (errors.Join), each naming its key
// and, for a file, the file: a missing or unreadable file is found at
// start. urls is the tap's URL (credentials in it and here conflict).
func (a Auth) Validate(urls string) error { return errors.Join(a.validate(urls)...) }

func (a Auth) validate(urls string) []error {
	var errs []error
	methods := 0
	for _, on := range []bool{a.User != "" || a.PasswordFile != "", a.TokenFile != "", a.NKeyFile != "", a.CredsFile != ""} {
		if on {
			methods++
		}
	}
	if methods > 1 {
		errs = append(errs, errors.New("auth: set one of user/password_file, token_file, nkey_file or creds_file"))
	}
	if (a.User == "") != (a.PasswordFile == "") {
		errs = append(errs, errors.New("auth: user and password_file go together"))
	}
	if methods > 0 && urlHasUserinfo(urls) {
		errs = append(errs, errors.New("auth: the url carries credentials too: keep them in one place"))
	}
	for _, f := range []struct{ key, path string }{{"password_file", a.PasswordFile}, {"token_file", a.TokenFile}} {
		if f.path == "" {
			continue
		}
		if _, err := tlsfiles.ReadSecret(f.path); err != nil {
			errs = append(errs, fmt.Errorf("auth: %s: %w", f.key, err))
		}
	}
	if a.NKeyFile != "" {
		if _, err := nats.NkeyOptionFromSeed(a.NKeyFile); err != nil {
			errs = append(errs, fmt.Errorf("auth: nkey_file: %s: %w", tlsfiles.ShownPath(a.NKeyFile), secretFree(err)))
		}
	}
	if a.CredsFile != "" {
		if err := checkCreds(a.CredsFile); err != nil {
			errs = append(errs, fmt.Errorf("auth: creds_file: %w", err))
		}
	}
	return errs
}

func urlHasUserinfo(urls string) bool {
	for _, u := range strings.Split(urls, ",") {
		if p, err := url.Parse(strings.TrimSpace(u)); err == nil && p.User != nil {
			return true
		}
	}
	return false
}

// secretFree is err with its text kept only when it cannot hold what the
// file holds: the nkeys library's errors name the problem, not the seed,
// but an unknown error's text is replaced by its kind.
func secretFree(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return errors.New(tap.RedactErr(err).Error())
}

// checkCreds checks that a credentials file is readable and holds a user
// JWT and a seed, as the client will read it at every connect.
func checkCreds(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return fmt.Errorf("%s: %w", tlsfiles.ShownPath(path), pe.Err)
		}
		return err
	}
	defer clear(b)
	if !bytes.Contains(b, []byte("BEGIN NATS USER JWT")) || !bytes.Contains(b, []byte("SEED-----")) {
		return fmt.Errorf("%s: not a NATS credentials file (a user JWT and its nkey seed)", tlsfiles.ShownPath(path))
	}
	return nil
}

// securityOptions turns the tap's TLS and Auth into client options. A
// config error here (Validate passed, the files changed since) is
// returned.
func (t *Tap) securityOptions() ([]nats.Option, error) {
	var opts []nats.Option
	if t.cfg.TLS.ClientEnabled() {
		cfg, err := tlsfiles.BrokerClient(t.cfg.TLS, t.log, "nats tap", "the server's certificate is")
		if err != nil {
			return nil, fmt.Errorf("tls: %w", err)
		}
		opts = append(opts, nats.Secure(cfg))
	}
	a := t.cfg.Auth
	switch {
	case a.User != "":
		pw, err := t.secret("password_file", a.PasswordFile)
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.UserInfoHandler(func() (string, string) { return a.User, pw.Get() }))
	case a.TokenFile != "":
		tok, err := t.secret("token_file", a.TokenFile)
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.TokenHandler(tok.Get))
	case a.NKeyFile != "":
		// The client reads the seed at every signature.
		o, err := nats.NkeyOptionFromSeed(a.NKeyFile)
		if err != nil {
			return nil, fmt.Errorf("auth: nkey_file: %s: %w", a.NKeyFile, secretFree(err))
		}
		opts = append(opts, o)
	case a.CredsFile != "":
		// The client reads the file at every connect.
		opts = append(opts, nats.UserCredentials(a.CredsFile))
	}
	if a.set() || urlHasUserinfo(t.cfg.URL) {
		// A rejected credential is retried like an unreachable server
		// (the Secret may be fixed or rotated), not given up after two.
		opts = append(opts, nats.IgnoreAuthErrorAbort())
	}
	return opts, nil
}

// connectErrorReason is the tap_errors reason of a failed connect: the
// server refused the credentials or the TLS handshake failed (handshake),
// or it could not be reached (dial).
func connectErrorReason(err error) uint8 {
	switch {
	case errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired), errors.Is(err, nats.ErrAuthRevoked),
		errors.Is(err, nats.ErrAccountAuthExpired), errors.Is(err, nats.ErrSecureConnRequired), errors.Is(err, nats.ErrSecureConnWanted):
		return tap.ErrHandshake
	}
	if tlsfiles.IsHandshakeError(err) {
		return tap.ErrHandshake
	}
	return tap.ErrDial
}

// secret reads a secret file now (an error is a configuration error) and
// again at every connect.
func (t *Tap) secret(key, path string) (*tlsfiles.Secret, error) {
	s, err := tlsfiles.NewSecret(path, func(err error) {
		t.log.Warn("nats auth: cannot read the secret file again: connecting with the last value read", "key", key, "err", err)
	}, func() {
		t.log.Info("nats auth: the secret file is readable again", "key", key, "file", tlsfiles.ShownPath(path))
	})
	if err != nil {
		return nil, fmt.Errorf("auth: %s: %w", key, err)
	}
	return s, nil
}
