package main

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/validate"
)

// TestPolicy: the masker's masks, then any URL userinfo the masker left;
// a userinfo it already masked keeps its fingerprint.
func TestPolicy(t *testing.T) {
	p := newPolicy([]byte("policy-test-key-0123456789"))
	for _, c := range []struct{ in, notWant, want string }{
		{"status sk-proj-Zq7XAbCdEfGhIjKlMnOp", "Zq7XAbCdEfGhIjKlMnOp", "******(fp:"},
		{`url: "nats://u:PASSW0RDx@bad host:4222" is not a URL`, "PASSW0RDx", "nats://******"},
		{"c0-q1", "", "c0-q1"},
		{"line\nwith \"quotes\" stays plain", "", "line\nwith \"quotes\" stays plain"},
	} {
		got := p.String(c.in)
		if c.notWant != "" && strings.Contains(got, c.notWant) {
			t.Errorf("%q → %q keeps %q", c.in, got, c.notWant)
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("%q → %q, want it to contain %q", c.in, got, c.want)
		}
	}
	if a, b := p.String("id sk-proj-Zq7XAbCdEfGhIjKlMnOp"), newPolicy([]byte("policy-test-key-0123456789")).String("id sk-proj-Zq7XAbCdEfGhIjKlMnOp"); a != b {
		t.Errorf("equal key, equal value, different marks: %q %q", a, b)
	}
}

func BenchmarkPolicy(b *testing.B) {
	p := newPolicy([]byte("policy-test-key-0123456789"))
	for _, c := range []struct{ name, s string }{
		{"clean-id", "c0-q1-8f3a2b"},
		{"clean-message", "sequence 5 after 3: 1 missing"},
		{"secret-id", "id/sk-proj-Zq7XAbCdEfGhIjKlMnOp"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = p.String(c.s)
			}
		})
	}
}

// TestFindingPrinterSourceNum: validate's findings (text and JSON) print
// the number at a source's end (a Kafka offset, a line) as it is, and
// redact the text before it; redacted whole, an eleven-digit offset was
// masked as a phone number.
func TestFindingPrinterSourceNum(t *testing.T) {
	for _, output := range []string{"text", "json"} {
		var b bytes.Buffer
		w := bufio.NewWriter(&b)
		p := newFindingPrinter(w, output, false, newPolicy([]byte("policy-test-key-0123456789")))
		p.print(&validate.Finding{Rule: "e2a.seq_gap", Severity: validate.Error, Stream: "q1", Source: "agent.out/3/13800138000", SourceNum: 11, Message: "m"})
		p.print(&validate.Finding{Rule: "e2a.seq_gap", Severity: validate.Error, Stream: "q1", Source: "u-13912345678/3/7", SourceNum: 1, Message: "m"})
		w.Flush()
		out := b.String()
		if !strings.Contains(out, "agent.out/3/13800138000") {
			t.Errorf("%s: the offset is not printed as it is:\n%s", output, out)
		}
		if strings.Contains(out, "13912345678") || !strings.Contains(out, "/3/7") {
			t.Errorf("%s: the text before the number is not redacted:\n%s", output, out)
		}
	}
}
