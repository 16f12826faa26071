package kafkatap

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/tap/tlsfiles"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// SASL is how the tap authenticates to the brokers: a mechanism (PLAIN,
// SCRAM-SHA-256 or SCRAM-SHA-512), a username and the file holding the
// password (its content without a trailing newline). The password is read
// again at every authentication (a rotated Secret is picked up) and never
// logged or put into an error. PLAIN sends the password as it is: use it
// only over TLS.
type SASL struct {
	Mechanism    string
	Username     string
	PasswordFile string
}

// The SASL mechanisms the tap speaks.
const (
	SASLPlain       = "PLAIN"
	SASLScramSHA256 = "SCRAM-SHA-256"
	SASLScramSHA512 = "SCRAM-SHA-512"
)

func (s SASL) set() bool { return s != SASL{} }

// mechanism is Mechanism in its canonical spelling ("" if unknown).
func (s SASL) mechanism() string {
	switch m := strings.ToUpper(strings.TrimSpace(s.Mechanism)); m {
	case SASLPlain, SASLScramSHA256, SASLScramSHA512:
		return m
	}
	return ""
}

// Validate reports every problem of s (errors.Join), each naming its key
// and, for the password, the file: a missing or unreadable file is found
// at start.
func (s SASL) Validate() error { return errors.Join(s.validate()...) }

func (s SASL) validate() []error {
	if !s.set() {
		return nil
	}
	var errs []error
	if s.mechanism() == "" {
		errs = append(errs, fmt.Errorf("sasl.mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", s.Mechanism))
	}
	if s.Username == "" {
		errs = append(errs, errors.New("sasl.username is missing"))
	}
	if s.PasswordFile == "" {
		errs = append(errs, errors.New("sasl.password_file is missing"))
	} else if _, err := tlsfiles.ReadSecret(s.PasswordFile); err != nil {
		errs = append(errs, fmt.Errorf("sasl.password_file: %w", err))
	}
	return errs
}

// securityOptions turns the tap's TLS and SASL into client options.
func (t *Tap) securityOptions() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if t.cfg.TLS.ClientEnabled() {
		cfg, err := tlsfiles.BrokerClient(t.cfg.TLS, t.log, "kafka tap", "the brokers' certificates are")
		if err != nil {
			return nil, fmt.Errorf("tls: %w", err)
		}
		// The client clones it at every dial and sets ServerName to the
		// broker's host unless server_name is set.
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	s := t.cfg.SASL
	if !s.set() {
		return opts, nil
	}
	if s.mechanism() == SASLPlain && !t.cfg.TLS.ClientEnabled() {
		t.log.Warn("kafka tap: sasl PLAIN without tls: the password crosses the network in clear")
	}
	pw, err := tlsfiles.NewSecret(s.PasswordFile, func(err error) {
		t.log.Warn("kafka sasl: cannot read the password file again: authenticating with the last value read", "err", err)
	}, func() {
		t.log.Info("kafka sasl: the password file is readable again", "file", tlsfiles.ShownPath(s.PasswordFile))
	})
	if err != nil {
		return nil, fmt.Errorf("sasl.password_file: %w", err)
	}
	user := s.Username
	switch s.mechanism() {
	case SASLPlain:
		opts = append(opts, kgo.SASL(plain.Plain(func(context.Context) (plain.Auth, error) {
			return plain.Auth{User: user, Pass: pw.Get()}, nil
		})))
	case SASLScramSHA256, SASLScramSHA512:
		fn := func(context.Context) (scram.Auth, error) { return scram.Auth{User: user, Pass: pw.Get()}, nil }
		if s.mechanism() == SASLScramSHA256 {
			opts = append(opts, kgo.SASL(scram.Sha256(fn)))
		} else {
			opts = append(opts, kgo.SASL(scram.Sha512(fn)))
		}
	}
	return opts, nil
}

// connectErrorReason is the tap_errors reason of a failed broker
// connection: refused credentials or a failed TLS handshake (handshake),
// else the broker could not be reached (dial).
func connectErrorReason(err error) uint8 {
	if errors.Is(err, kerr.SaslAuthenticationFailed) || errors.Is(err, kerr.UnsupportedSaslMechanism) ||
		errors.Is(err, kerr.IllegalSaslState) || tlsfiles.IsHandshakeError(err) || isSASLError(err) {
		return tap.ErrHandshake
	}
	return tap.ErrDial
}

// isSASLError: the client's own SASL errors (a SCRAM exchange that does
// not verify) carry no kerr code.
func isSASLError(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "sasl") || strings.Contains(s, "scram")
}
