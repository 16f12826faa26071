package jsonlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

type stringer string

func (s stringer) String() string { return string(s) }

type secretValue string

func (s secretValue) LogValue() slog.Value { return slog.StringValue("value " + string(s)) }

// TestLogHandlerRedacts: whatever carries text into a log line (message,
// string, error, Stringer, LogValuer, struct, group, bound attribute) is
// masked, with the record log's fingerprint; other kinds are kept.
func TestLogHandlerRedacts(t *testing.T) {
	const sk = "sk-proj-Zq7XAbCdEfGhIjKlMnOp"
	red := NewRedactor(ContentMask, 0, []byte("loghandler-test-key"))
	mark := string(red.MaskText(nil, []byte(sk)))
	var buf bytes.Buffer
	log := slog.New(NewLogHandler(slog.NewJSONHandler(&buf, nil), red)).With("bound", sk)
	log.WithGroup("g").Info("message "+sk,
		"s", sk, "err", fmt.Errorf("wrapped: %w", errors.New(sk)), "str", stringer(sk), "lv", secretValue(sk),
		"any", struct{ A string }{sk}, slog.Group("grp", "in", sk), "n", 42, "ok", true, "nil", nil)
	out := buf.String()
	if strings.Contains(out, sk) || strings.Contains(out, "Zq7XAbCdEfGhIjKlMnOp") {
		t.Fatalf("the secret is in the log line: %s", out)
	}
	if n := strings.Count(out, mark); n != 8 {
		t.Errorf("%d masks %s, want 8 (the message and 7 values): %s", n, mark, out)
	}
	for _, want := range []string{`"n":42`, `"ok":true`, `"nil":null`} {
		if !strings.Contains(out, want) {
			t.Errorf("%s lost: %s", want, out)
		}
	}
}

// TestMaskTextIsRedactTextUnescaped: the plain-text masking gives the
// findings log's masks and fingerprints, without JSON escaping.
func TestMaskTextIsRedactTextUnescaped(t *testing.T) {
	red := NewRedactor(ContentMask, 0, []byte("loghandler-test-key"))
	in := "status \"sk-proj-Zq7XAbCdEfGhIjKlMnOp\"\nmail alice@example.com\ttel +8613912345678 \\ ok"
	plain := string(red.MaskText(nil, []byte(in)))
	esc := string(red.RedactText(nil, []byte(in)))
	var unesc string
	if err := json.Unmarshal([]byte(`"`+esc+`"`), &unesc); err != nil {
		t.Fatal(err)
	}
	if plain != unesc {
		t.Errorf("MaskText %q, RedactText unescaped %q", plain, unesc)
	}
	if strings.Contains(plain, "Zq7X") || strings.Contains(plain, "alice") || strings.Contains(plain, "13912345678") || !strings.Contains(plain, "\n") {
		t.Errorf("MaskText %q", plain)
	}
}
