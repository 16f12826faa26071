package tlsfiles

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// Files names a certificate, its key and, optionally, the CAs that client
// certificates must chain to (mutual TLS). The same block configures a
// client (a tap dialing a broker, see Client): there CAFile holds the CAs
// the server must chain to (default: the system's), CertFile and KeyFile
// the client certificate for mutual TLS (optional), ServerName the name
// checked in the server's certificate (default: the host dialed), and
// InsecureSkipVerify turns the check off (tests only). ClientCAFile is
// for a server only; CAFile, ServerName and InsecureSkipVerify for a
// client only (ServerOnly, ClientOnly).
type Files struct {
	CertFile     string `yaml:"cert_file"`
	KeyFile      string `yaml:"key_file"`
	ClientCAFile string `yaml:"client_ca_file"`

	CAFile             string `yaml:"ca_file"`
	ServerName         string `yaml:"server_name"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// ClientEnabled reports whether a client TLS block is set at all (any key:
// "tls: {ca_file: …}" and "tls: {server_name: …}" both turn TLS on).
func (f Files) ClientEnabled() bool { return f != Files{} }

// ServerOnly lists the keys set that only a server takes.
func (f Files) ServerOnly() []string {
	if f.ClientCAFile != "" {
		return []string{"client_ca_file"}
	}
	return nil
}

// ClientOnly lists the keys set that only a client takes.
func (f Files) ClientOnly() []string {
	var out []string
	if f.CAFile != "" {
		out = append(out, "ca_file")
	}
	if f.ServerName != "" {
		out = append(out, "server_name")
	}
	if f.InsecureSkipVerify {
		out = append(out, "insecure_skip_verify")
	}
	return out
}

// ValidateClient checks a client block: a certificate and its key come
// together, every file named is readable, the CA file holds a
// certificate and the pair matches. Each problem names its key and file.
func (f Files) ValidateClient() error {
	var errs []error
	if (f.CertFile == "") != (f.KeyFile == "") {
		errs = append(errs, errors.New("cert_file and key_file go together (a client certificate for mutual TLS)"))
	}
	for _, k := range []struct{ key, path string }{{"ca_file", f.CAFile}, {"cert_file", f.CertFile}, {"key_file", f.KeyFile}} {
		if k.path == "" {
			continue
		}
		if err := readable(k.path); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k.key, err))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if f.CAFile != "" {
		if _, err := certPool(f.CAFile); err != nil {
			errs = append(errs, fmt.Errorf("ca_file: %w", err))
		}
	}
	if f.CertFile != "" {
		if _, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile); err != nil {
			errs = append(errs, fmt.Errorf("cert_file, key_file: %s, %s: %w", ShownPath(f.CertFile), ShownPath(f.KeyFile), err))
		}
	}
	return errors.Join(errs...)
}

// readable opens and closes path: a missing file and one the process may
// not read are both found before anything starts. The error names the
// path and never quotes the contents.
func readable(path string) error {
	fh, err := os.Open(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return fmt.Errorf("%s %s: %w", pe.Op, ShownPath(path), pe.Err) // (as os.Open says it, the path as ShownPath prints it)
		}
		return err
	}
	fi, err := fh.Stat()
	fh.Close()
	if err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory", ShownPath(path))
	}
	return err
}

func certPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", file)
	}
	return pool, nil
}

// BrokerClient is Client for a broker tap (who: "nats tap", "kafka tap";
// peer: what insecure_skip_verify leaves unchecked): it warns that
// insecure_skip_verify is set, and logs a client certificate's reload that
// failed.
func BrokerClient(f Files, log *slog.Logger, who, peer string) (*tls.Config, error) {
	if f.InsecureSkipVerify {
		log.Warn(who + ": tls.insecure_skip_verify is set: " + peer + " NOT checked, anyone on the path can read and change the traffic (tests only, never production)")
	}
	return Client(f, func(err error) {
		log.Warn(who+": reloading the client certificate failed: the previous one is presented", "err", err)
	})
}

// Client returns a client tls.Config for the block (f.ClientEnabled()).
// The client certificate, if any, is read again when its files changed
// (looked at once a second at most, on a handshake): a reconnect after
// cert-manager renewed it presents the new one; a reload that fails keeps
// the previous one and calls onError (may be nil). The CAs are read once.
func Client(f Files, onError func(error)) (*tls.Config, error) {
	if err := f.ValidateClient(); err != nil {
		return nil, err
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: f.ServerName, InsecureSkipVerify: f.InsecureSkipVerify}
	if f.CAFile != "" {
		pool, err := certPool(f.CAFile)
		if err != nil {
			return nil, fmt.Errorf("ca_file: %w", err)
		}
		c.RootCAs = pool
	}
	if f.CertFile != "" {
		r, err := New(Files{CertFile: f.CertFile, KeyFile: f.KeyFile})
		if err != nil {
			return nil, fmt.Errorf("cert_file, key_file: %w", err)
		}
		r.OnError = onError
		c.GetClientCertificate = r.GetClientCertificate
	}
	return c, nil
}

// Enabled reports whether TLS is configured.
func (f Files) Enabled() bool { return f.CertFile != "" || f.KeyFile != "" }

// Validate checks that both halves are named and readable.
func (f Files) Validate() error {
	var errs []error
	if f.CertFile == "" || f.KeyFile == "" {
		errs = append(errs, errors.New("cert_file and key_file are both required"))
	}
	for _, p := range []string{f.CertFile, f.KeyFile, f.ClientCAFile} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		if _, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile); err != nil {
			errs = append(errs, fmt.Errorf("%s, %s: %w", f.CertFile, f.KeyFile, err))
		}
	}
	return errors.Join(errs...)
}

// Reloader holds the current certificate and reloads it when its files
// change.
type Reloader struct {
	files Files
	// OnError is called when a reload fails (the old certificate stays);
	// OnReload when a new one was loaded. Both may be nil.
	OnError  func(error)
	OnReload func()
	// CheckEvery bounds how often the files are looked at.
	CheckEvery time.Duration
	now        func() time.Time

	mu      sync.Mutex
	cert    *tls.Certificate
	sum     [32]byte // of the cert and key files' contents
	checked time.Time
}

// New loads the files; an error here is a configuration error.
func New(f Files) (*Reloader, error) {
	r := &Reloader{files: f, CheckEvery: time.Second, now: time.Now}
	if err := r.load(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Reloader) load() error {
	certPEM, err := os.ReadFile(r.files.CertFile)
	if err != nil {
		return err
	}
	keyPEM, err := os.ReadFile(r.files.KeyFile)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(append(append([]byte(nil), certPEM...), keyPEM...))
	r.mu.Lock()
	same := r.cert != nil && bytes.Equal(sum[:], r.sum[:])
	r.mu.Unlock()
	if same {
		return nil
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("%s, %s: %w", r.files.CertFile, r.files.KeyFile, err)
	}
	r.mu.Lock()
	first := r.cert == nil
	r.cert, r.sum = &cert, sum
	r.mu.Unlock()
	if !first && r.OnReload != nil {
		r.OnReload()
	}
	return nil
}

// GetCertificate is tls.Config.GetCertificate: the current certificate,
// after a reload if the files changed since the last look (at most once
// per CheckEvery).
func (r *Reloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	due := r.now().Sub(r.checked) >= r.CheckEvery
	if due {
		r.checked = r.now()
	}
	r.mu.Unlock()
	if due {
		if err := r.load(); err != nil && r.OnError != nil {
			r.OnError(err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cert, nil
}

// GetClientCertificate is tls.Config.GetClientCertificate: the current
// certificate, reloaded as GetCertificate does.
func (r *Reloader) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return r.GetCertificate(nil)
}

// Config is a server tls.Config that serves the reloaded certificate and,
// with a ClientCAFile, requires client certificates that chain to it.
func (r *Reloader) Config() (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.GetCertificate}
	if r.files.ClientCAFile != "" {
		pool, err := certPool(r.files.ClientCAFile)
		if err != nil {
			return nil, err
		}
		c.ClientCAs, c.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return c, nil
}

// IsHandshakeError reports a TLS handshake failure (a certificate not
// trusted, a name that does not match, an alert from the peer, a peer
// that does not speak TLS), as opposed to a peer that cannot be reached.
func IsHandshakeError(err error) bool {
	var (
		cv *tls.CertificateVerificationError
		ua x509.UnknownAuthorityError
		hn x509.HostnameError
		ci x509.CertificateInvalidError
		al tls.AlertError
		rh tls.RecordHeaderError
	)
	return errors.As(err, &cv) || errors.As(err, &ua) || errors.As(err, &hn) || errors.As(err, &ci) ||
		errors.As(err, &al) || errors.As(err, &rh)
}
