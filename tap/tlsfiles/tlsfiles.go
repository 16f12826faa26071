package tlsfiles

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// Files names a certificate, its key and, optionally, the CAs that client
// certificates must chain to (mutual TLS).
type Files struct {
	CertFile     string `yaml:"cert_file"`
	KeyFile      string `yaml:"key_file"`
	ClientCAFile string `yaml:"client_ca_file"`
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

// Config is a server tls.Config that serves the reloaded certificate and,
// with a ClientCAFile, requires client certificates that chain to it.
func (r *Reloader) Config() (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.GetCertificate}
	if r.files.ClientCAFile != "" {
		pem, err := os.ReadFile(r.files.ClientCAFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificate in it", r.files.ClientCAFile)
		}
		c.ClientCAs, c.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return c, nil
}
