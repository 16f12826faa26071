package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap/tlsfiles"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Broker secrets of TestBrokerCredentialsNeverPrinted: none may show in
// any output of the process.
const (
	authNATSPass   = "CRPSauthNatsPassw0rd"
	authNATSWrong  = "CRPSauthNatsWr0ngPass"
	authKafkaPass  = "CRPSauthKafkaPassw0rd"
	authKafkaWrong = "CRPSauthKafkaWr0ngPass"
)

// TestBrokerCredentialsNeverPrinted: the real binary with a nats tap over
// mutual TLS with a password file and a kafka tap with SCRAM over TLS,
// both reading records, and one of each with a wrong password. The good
// ones read; the refused ones are handshake errors in
// e2atap_tap_errors_total and logged outages, the process and the other
// taps go on; no password shows in stderr, /metrics, /healthz or the
// record log. `run --check` with a password file missing names the key and
// the file.
func TestBrokerCredentialsNeverPrinted(t *testing.T) {
	t.Parallel() // waits more than it computes: main_test.go
	dir := t.TempDir()
	pki, err := tlsfiles.WriteTestPKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	secret := func(name, v string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	natsPW, natsWrong, kafkaPW, kafkaWrong := secret("nats-pw", authNATSPass), secret("nats-wrong", authNATSWrong), secret("kafka-pw", authKafkaPass), secret("kafka-wrong", authKafkaWrong)

	srvTLS, err := pki.ServerConfig(true)
	if err != nil {
		t.Fatal(err)
	}
	ns := startNATSWith(t, &server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true,
		TLSConfig: srvTLS, TLS: true, TLSVerify: true, Username: "e2atap", Password: authNATSPass})
	nc, err := nats.Connect(ns.ClientURL(), nats.RootCAs(pki.CAFile), nats.ClientCert(pki.ClientCert, pki.ClientKey), nats.UserInfo("e2atap", authNATSPass))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)

	kTLS, err := pki.ServerConfig(false)
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "agent.events"), kfake.EnableSASL(),
		kfake.Superuser("SCRAM-SHA-256", "e2atap", authKafkaPass), kfake.TLS(kTLS))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	ctls, err := tlsfiles.Client(tlsfiles.Files{CAFile: pki.CAFile}, nil)
	if err != nil {
		t.Fatal(err)
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.DialTLSConfig(ctls),
		kgo.SASL(scram.Auth{User: "e2atap", Pass: authKafkaPass}.AsSha256Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)

	listen := freeAddr(t)
	records := filepath.Join(dir, "records.jsonl")
	cfgText := fmt.Sprintf(`listen: %[1]s
streams: {join_window: 0s}
taps:
  - name: mesh
    type: nats
    url: %[2]q
    subjects: ["agent.>"]
    tls: {ca_file: %[3]q, cert_file: %[4]q, key_file: %[5]q}
    auth: {user: e2atap, password_file: %[6]q}
  - name: mesh-bad
    type: nats
    url: %[2]q
    subjects: ["agent.>"]
    tls: {ca_file: %[3]q, cert_file: %[4]q, key_file: %[5]q}
    auth: {user: e2atap, password_file: %[7]q}
  - name: bus
    type: kafka
    brokers: [%[8]q]
    topics: [agent.events]
    start: earliest
    tls: {ca_file: %[3]q}
    sasl: {mechanism: SCRAM-SHA-256, username: e2atap, password_file: %[9]q}
  - name: bus-bad
    type: kafka
    brokers: [%[8]q]
    topics: [agent.events]
    group: e2atap-bad
    tls: {ca_file: %[3]q}
    sasl: {mechanism: SCRAM-SHA-256, username: e2atap, password_file: %[10]q}
outputs:
  findings: {path: "-"}
  log: {path: %[11]q}
`, listen, ns.ClientURL(), pki.CAFile, pki.ClientCert, pki.ClientKey, natsPW, natsWrong, cluster.ListenAddrs()[0], kafkaPW, kafkaWrong, records)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfgText), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, stderr := startE2atap(t, nil, "run", "--log-level", "debug", "--config", cfgPath)
	waitReady(t, listen)
	pollUntil(t, "the nats subscription", 20*time.Second, func() bool { return subscribed(ns, "agent.>") })

	rec := `{"jsonrpc":"2.0","id":"r1","method":"chat.send","params":{"session_id":"s1","text":"hi"}}`
	if err := nc.Publish("agent.a", []byte(rec)); err != nil {
		t.Fatal(err)
	}
	nc.Flush()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "agent.events", Value: []byte(rec)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, "a record of each good tap in the record log", 30*time.Second, func() bool {
		b, _ := os.ReadFile(records)
		return strings.Contains(string(b), `"tap":"mesh"`) && strings.Contains(string(b), `"tap":"bus"`)
	})
	var metrics []byte
	pollUntil(t, "handshake errors of both refused taps", 30*time.Second, func() bool {
		metrics = scrapeMetrics(t, listen)
		m := string(metrics)
		return strings.Contains(m, `e2atap_tap_errors_total{reason="handshake",tap="mesh-bad"}`) &&
			strings.Contains(m, `e2atap_tap_errors_total{reason="handshake",tap="bus-bad"}`)
	})
	pollUntil(t, "the refusals logged", 30*time.Second, func() bool {
		s := stderr.String()
		return strings.Contains(strings.ToLower(s), "authorization violation") && strings.Contains(s, "session setup failed")
	})
	resp, err := http.Get("http://" + listen + "/healthz?format=json")
	if err != nil {
		t.Fatal(err)
	}
	health, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(health), "mesh-bad") {
		t.Errorf("/healthz does not show the refused tap: %s", health)
	}
	stopProcess(t, cmd)
	recs, _ := os.ReadFile(records)

	// --check with a password file gone: the key and the file, no secret.
	os.Remove(kafkaWrong)
	_, checkErr, code := corpusProcess(t, nil, nil, "run", "--config", cfgPath, "--check")
	if code != exitUsage || !strings.Contains(string(checkErr), "taps[3] (bus-bad): sasl.password_file: "+kafkaWrong+": no such file") {
		t.Errorf("--check with a missing password file: exit %d:\n%s", code, checkErr)
	}

	outs := map[string][]byte{"stderr": []byte(stderr.String()), "/metrics": metrics, "/healthz": health, "record log": recs, "--check": checkErr}
	for name, out := range outs {
		for _, pw := range []string{authNATSPass, authNATSWrong, authKafkaPass, authKafkaWrong} {
			if strings.Contains(string(out), pw) {
				t.Errorf("a broker password (%s) is in %s", pw, name)
			}
		}
	}
}
