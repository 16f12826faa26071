package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedactFlagErrors: the errors every command prints about its flags and
// arguments, before any configuration is read, pass the redaction policy: a
// credential given as a flag value or a file name is not printed.
func TestRedactFlagErrors(t *testing.T) {
	const pass = "CRPSflagPassw0rd"
	const sk = "sk-proj-CRPSflag0123456789abcd"
	url := "nats://u:" + pass + "@h:4222"
	missing := filepath.Join(t.TempDir(), sk, "x.jsonl")
	for _, args := range [][]string{
		{"run", "--log-level", url, "--config", "x.yaml"},
		{"run", "--reload-interval", url, "--config", "x.yaml"},
		{"run", "--config", "x.yaml", url},
		{"run", "--upstream", url},
		{"run", "--config", missing},
		{"observe", "--addr", "http://u:" + pass + "@h:1/x y"},
		{"observe", "--output", sk},
		{"observe", "--since", url},
		{"observe", url},
		{"validate", "--profile", sk, "x.jsonl"},
		{"validate", "--fail-on", url, "x.jsonl"},
		{"validate", "--output", "postgres://u:Zq9#" + pass + "@db/x", "x.jsonl"}, // a '#' in the password
		{"validate", missing},
		{"decode", "--format", url, "x"},
		{"decode", missing},
		{"gen", "--size", url},
		{"gen", "--faults", sk},
		{"demo", "--faults", sk},
		{"completion", sk},
		{"help", sk},
		{sk},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if code == exitOK {
			t.Errorf("%v: exit 0: %s", args, out)
		}
		if stderr.Len() == 0 {
			t.Errorf("%v: no error printed", args)
		}
		for _, leak := range []string{pass, strings.TrimPrefix(sk, "sk-proj-")} {
			if strings.Contains(out, leak) {
				t.Errorf("%v prints %q: %s", args, leak, out)
			}
		}
	}
}
