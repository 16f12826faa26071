package jsonlog

import (
	"errors"
	"fmt"
	"log/slog"
)

// Config is outputs.log of the e2atap configuration.
type Config struct {
	// Path of the log file; "-" is standard output (never rotated).
	Path string `yaml:"path"`
	// Content is the policy for model output and user text: mask, keep or
	// drop.
	Content string `yaml:"content"`
	// MaxRecordBytes caps one record's redacted JSON (its _e2atap object
	// aside); larger records have their largest values masked.
	MaxRecordBytes int64 `yaml:"max_record_bytes"`
	// RotateBytes rotates the file when a line would take it past this
	// size; 0 never rotates.
	RotateBytes int64 `yaml:"rotate_bytes"`
	// Keep is how many rotated files (Path.1 ... Path.Keep) are kept.
	Keep int `yaml:"keep"`
	// FingerprintKey keys the HMAC of credential fingerprints. Empty: a
	// random key made once per process (fingerprints then join within one
	// run only).
	FingerprintKey []byte `yaml:"fingerprint_key"`
}

// DefaultConfig is the configuration with every default filled in.
func DefaultConfig() Config {
	return Config{
		Path:           "-",
		Content:        "mask",
		MaxRecordBytes: 65536,
		RotateBytes:    100 << 20,
		Keep:           5,
	}
}

// Validate reports every problem of the configuration at once.
func (c *Config) Validate() error {
	var errs []error
	if c.Path == "" {
		errs = append(errs, errors.New("log.path: empty"))
	}
	if _, ok := ParseContent(c.Content); !ok {
		errs = append(errs, fmt.Errorf("log.content: %q is not mask, keep or drop", c.Content))
	}
	if c.MaxRecordBytes < 1024 {
		errs = append(errs, fmt.Errorf("log.max_record_bytes: %d is under 1024", c.MaxRecordBytes))
	}
	if c.RotateBytes < 0 {
		errs = append(errs, fmt.Errorf("log.rotate_bytes: %d is negative", c.RotateBytes))
	}
	if c.Keep < 0 {
		errs = append(errs, fmt.Errorf("log.keep: %d is negative", c.Keep))
	}
	if n := len(c.FingerprintKey); n > 0 && n < 16 {
		errs = append(errs, fmt.Errorf("log.fingerprint_key: %d bytes, want at least 16", n))
	}
	return errors.Join(errs...)
}

// LogValue keeps the fingerprint key out of logs.
func (c Config) LogValue() slog.Value {
	key := "random per process"
	if len(c.FingerprintKey) > 0 {
		key = "******"
	}
	return slog.GroupValue(
		slog.String("path", c.Path),
		slog.String("content", c.Content),
		slog.Int64("max_record_bytes", c.MaxRecordBytes),
		slog.Int64("rotate_bytes", c.RotateBytes),
		slog.Int("keep", c.Keep),
		slog.String("fingerprint_key", key),
	)
}

// Redactor makes the Redactor of a valid configuration.
func (c *Config) Redactor() *Redactor {
	content, _ := ParseContent(c.Content)
	return NewRedactor(content, int(c.MaxRecordBytes), c.FingerprintKey)
}
