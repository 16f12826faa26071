package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The planted-secret corpus through the broker taps: Kafka (kfake) and
// NATS (core and JetStream, an in-process nats-server). Besides the
// records of the corpus (allCorpusStreams), secrets are planted where a
// broker carries them outside the record: Kafka record keys, header names
// and values, a topic name; NATS headers (plain and CloudEvents binary
// mode, whose ce-* headers the tap turns into record members), subjects
// inside wildcard subscriptions, a JetStream stream's name (one that
// exists, one that does not); records that do not decode (bad JSON holding
// tokens, records over the size limits); and brokers that refuse the
// tap's credentials. Every output of the real binary is searched as in
// TestCorpusRun (leakChecker, needleForms, checkMarks).

// brokerPlants are the values planted outside the records. Each is one the
// policy masks (checked: a plant it would print as is makes no test).
var brokerPlants = []corpusShape{
	{"kafka_topic", "ghp_CRPSkafkatopic9abcdefghijKLMN", []string{"CRPSkafkatopic9abcdefghijKLMN"}},
	{"kafka_key", "sk-proj-CRPSkafkakey0123456789", []string{"CRPSkafkakey0123456789"}},
	{"kafka_header_value", "Bearer tokCRPSkafkahdrval0123456", []string{"tokCRPSkafkahdrval0123456"}},
	{"kafka_header_name", "glpat-CRPSkafkahdrname0123", []string{"CRPSkafkahdrname0123"}},
	{"nats_header_value", "Bearer tokCRPSnatshdrval01234567", []string{"tokCRPSnatshdrval01234567"}},
	{"nats_header_name", "glpat-CRPSnatshdrname01234", []string{"CRPSnatshdrname01234"}},
	{"ce_header_value", "ghp_CRPScehdrval0123456789abcdefgh", []string{"CRPScehdrval0123456789abcdefgh"}},
	{"ce_header_name", "npm_crpscehdrnameabcdefghijklmnopqrstuvw", []string{"crpscehdrnameabcdefghijklmnopqrstuvw"}},
	{"core_subject", "sk-proj-CRPScoresubject0123456", []string{"CRPScoresubject0123456"}},
	{"js_subject", "sk-proj-CRPSjssubject01234567", []string{"CRPSjssubject01234567"}},
	{"js_stream", "hf_CRPSstrmabcdefghijklmnopqrstuvwx", []string{"CRPSstrmabcdefghijklmnopqrstuvwx"}},
	{"js_missing_stream", "hf_CRPSmissabcdefghijklmnopqrstuvwx", []string{"CRPSmissabcdefghijklmnopqrstuvwx"}},
	{"bad_json", "ghp_CRPSbadjson56789abcdefghijKLMN", []string{"CRPSbadjson56789abcdefghijKLMN"}},
	{"oversize", "sk-proj-CRPSoversize0123456789", []string{"CRPSoversize0123456789"}},
}

// opaquePlants are secrets no detector can see: only where they are (a
// header or CloudEvents attribute named for a credential) says what they
// are. Whatever reads them must mask them by that name.
var opaquePlants = []corpusShape{
	{"kafka_api_key_header", "CRPSkafkaOpaqueKey0123", []string{"CRPSkafkaOpaqueKey0123"}},
	{"nats_api_key_header", "CRPSnatsOpaqueKey01234", []string{"CRPSnatsOpaqueKey01234"}},
	{"ce_password_attr", "CRPSceOpaquePassw0rd12", []string{"CRPSceOpaquePassw0rd12"}},
	{"ce_authorization_attr", "CRPSceOpaqueAuthz0123", []string{"CRPSceOpaqueAuthz0123"}},
}

// brokerSecrets are planted where only the URL's redaction protects them
// (no detector needed): the passwords of the broker connections.
const (
	corpusNATSPass = "CRPSjsNatsPassw0rd"
	corpusBadPass  = "CRPSwrongNatsPassw0rd"
	corpusBadToken = "CRPSwrongNatsToken0123" // token auth: nats://<token>@host
)

func brokerPlant(name string) string {
	for _, p := range append(append([]corpusShape(nil), brokerPlants...), opaquePlants...) {
		if p.name == name {
			return p.value
		}
	}
	panic("no plant " + name)
}

// TestCorpusBrokers: the real binary with a kafka tap (kfake, a regex over
// two topics, one named with a token) and a nats tap reading core subjects
// and JetStream streams, a second nats tap whose URL holds a wrong
// password; all fed the corpus with secrets in keys, headers, topic,
// subjects and stream names, plus records that do not decode. Nothing
// planted may show in the record log, the findings, stderr, /metrics or the
// spans; ids show as the one mark the policy gives them.
func TestCorpusBrokers(t *testing.T) {
	for _, p := range brokerPlants {
		if m := corpusMark(p.value); m == p.value || !strings.Contains(m, "(fp:") {
			t.Fatalf("plant %s: the policy prints %q as %q: it would prove nothing", p.name, p.value, m)
		}
	}
	dir := t.TempDir()
	const maxRecord = 16 << 10
	for _, l := range corpusLines() {
		if len(l) >= maxRecord {
			t.Fatalf("a corpus line of %d bytes is over the test's record limit", len(l))
		}
	}

	// Kafka: two topics, the records keyed and with headers.
	kTopic, kTokTopic := "agent.corpus", "agent."+brokerPlant("kafka_topic")
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, kTopic, kTokTopic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	prod, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)

	// NATS with JetStream, and a password.
	ns := startNATSWith(t, &server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true,
		JetStream: true, StoreDir: t.TempDir(), Username: "e2atap", Password: corpusNATSPass})
	natsAddr := strings.TrimPrefix(ns.ClientURL(), "nats://")
	nc, err := nats.Connect(ns.ClientURL(), nats.UserInfo("e2atap", corpusNATSPass))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	jsStream, jsTokStream := "CORPUS", brokerPlant("js_stream")
	for name, subj := range map[string]string{jsStream: "js.>", jsTokStream: "jst.>"} {
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{subj}, Storage: jetstream.MemoryStorage}); err != nil {
			t.Fatal(err)
		}
	}

	// What every broker carries: the corpus, with the secret of each
	// stream's shape as the Kafka key and in headers; frames; records that
	// do not decode.
	lines := corpusLines()
	badJSON := `{"protocol_version":"1.0","request_id":"` + brokerPlant("bad_json") + `","params":{"token":"` + corpusShapes[2].value + `","x":`
	oversize := `{"protocol_version":"1.0","request_id":"` + brokerPlant("oversize") + `","method":"chat.send","params":{"pad":"` +
		strings.Repeat(corpusShapes[0].value+" "+corpusShapes[3].value+" ", maxRecord/40+1) + `"}}`
	kafkaHeaders := func(s corpusShape) []kgo.RecordHeader {
		return []kgo.RecordHeader{
			{Key: "authorization", Value: []byte(brokerPlant("kafka_header_value"))},
			{Key: "x-e2a-id", Value: []byte(s.value)},
			{Key: brokerPlant("kafka_header_name"), Value: []byte("1")},
			{Key: "x-api-key", Value: []byte(brokerPlant("kafka_api_key_header"))},
		}
	}
	var krecs []*kgo.Record
	nkafka := 0
	for _, s := range corpusShapes {
		for _, st := range corpusStreams(s) {
			for _, l := range append([]string{st.req}, st.resps...) {
				krecs = append(krecs, &kgo.Record{Topic: kTopic, Key: []byte(s.value), Value: []byte(l), Headers: kafkaHeaders(s)})
				nkafka++
			}
		}
	}
	frames := allCorpusFrames(t)
	for _, f := range frames {
		krecs = append(krecs, &kgo.Record{Topic: kTopic, Key: []byte(brokerPlant("kafka_key")), Value: f})
		nkafka++
	}
	for _, l := range lines[:3] {
		krecs = append(krecs, &kgo.Record{Topic: kTokTopic, Key: []byte(brokerPlant("kafka_key")), Value: []byte(l), Headers: kafkaHeaders(corpusShapes[0])})
		nkafka++
	}
	for _, v := range []string{badJSON, oversize} {
		krecs = append(krecs, &kgo.Record{Topic: kTopic, Key: []byte(brokerPlant("kafka_key")), Value: []byte(v), Headers: kafkaHeaders(corpusShapes[0])})
	}
	if err := prod.ProduceSync(ctx, krecs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	msgID := 0 // Nats-Msg-Id: JetStream drops a repeated one as a duplicate
	natsHeader := func(s corpusShape) nats.Header {
		msgID++
		return nats.Header{"Authorization": {brokerPlant("nats_header_value")}, "X-E2a-Id": {s.value},
			brokerPlant("nats_header_name"): {"1"}, "X-Api-Key": {brokerPlant("nats_api_key_header")}, "Nats-Msg-Id": {fmt.Sprintf("%s-%d", s.value, msgID)}}
	}
	// CloudEvents binary mode: the tap builds a structured event from the
	// ce-* headers, the record in data.
	ceHeader := func(s corpusShape) nats.Header {
		h := natsHeader(s)
		h["ce-specversion"] = []string{"1.0"}
		h["ce-id"] = []string{s.value}
		h["ce-source"] = []string{"/agent/" + brokerPlant("ce_header_value")}
		h["ce-type"] = []string{"e2a.request"}
		h["ce-"+brokerPlant("ce_header_name")] = []string{brokerPlant("ce_header_value")}
		h["Content-Type"] = []string{"application/json"}
		h["ce-password"] = []string{brokerPlant("ce_password_attr")}
		h["Ce-Authorization"] = []string{brokerPlant("ce_authorization_attr")}
		return h
	}
	njs := 0
	for _, s := range corpusShapes {
		for _, st := range corpusStreams(s) {
			for _, l := range append([]string{st.req}, st.resps...) {
				if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: "js.corpus", Header: natsHeader(s), Data: []byte(l)}); err != nil {
					t.Fatal(err)
				}
				njs++
			}
		}
	}
	for i, l := range lines[:6] {
		subj := "js." + brokerPlant("js_subject")
		if i >= 3 {
			subj = "jst.x"
		}
		if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: subj, Header: ceHeader(corpusShapes[i]), Data: []byte(l)}); err != nil {
			t.Fatal(err)
		}
		njs++
	}
	for _, v := range []string{badJSON, oversize} {
		if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: "js.bad", Header: natsHeader(corpusShapes[0]), Data: []byte(v)}); err != nil {
			t.Fatal(err)
		}
	}

	rcv := &otlpReceiver{}
	otlp := httptest.NewServer(rcv)
	t.Cleanup(otlp.Close)
	listen := freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	findings, records := filepath.Join(dir, "findings.jsonl"), filepath.Join(dir, "records.jsonl")
	cfg := fmt.Sprintf(`profile: jiuwenswarm
listen: %s
streams: {join_window: 0s, idle_timeout: 1m, max_record_bytes: %d}
taps:
  - {name: bus, type: kafka, brokers: [%q], topics: ['^agent\..*'], regex: true, start: earliest, commit_interval: 100ms}
  - name: mesh
    type: nats
    url: "nats://127.0.0.1:1"
    subjects: ["agent.>"]
    max_message_bytes: %d
    jetstream:
      - {stream: %s, start_seq: 1}
      - {stream: %s, start_seq: 1}
      - {stream: %s, start_seq: 1}
  - {name: mesh-bad, type: nats, url: "nats://127.0.0.1:1", subjects: ["bad.>"]}
  - {name: mesh-tok, type: nats, url: "nats://127.0.0.1:1", subjects: ["bad.>"]}
outputs:
  findings: {path: %q}
  log: {path: %q}
`, listen, maxRecord, cluster.ListenAddrs()[0], 4*maxRecord, jsStream, jsTokStream, brokerPlant("js_missing_stream"), findings, records)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(otlpEnv(otlp.URL), "E2ATAP_FINGERPRINT_KEY="+corpusFPKey,
		"E2ATAP_TAP_MESH_URL=nats://e2atap:"+corpusNATSPass+"@"+natsAddr,
		"E2ATAP_TAP_MESH_BAD_URL=nats://e2atap:"+corpusBadPass+"@"+natsAddr,
		"E2ATAP_TAP_MESH_TOK_URL=nats://"+corpusBadToken+"@"+natsAddr)
	cmd, stderr := startE2atap(t, env, "run", "--log-level", "debug", "--config", cfgPath)
	waitReady(t, listen)
	pollUntil(t, "the core subscription", 20*time.Second, func() bool { return subscribed(ns, "agent.>") })

	// Core NATS: the corpus with headers, CloudEvents binary mode, tokens
	// inside subjects of the wildcard, records that do not decode, one
	// over the tap's own size limit.
	ncore := 0
	for _, s := range corpusShapes {
		for _, st := range corpusStreams(s) {
			for _, l := range append([]string{st.req}, st.resps...) {
				if err := nc.PublishMsg(&nats.Msg{Subject: "agent.corpus", Header: natsHeader(s), Data: []byte(l)}); err != nil {
					t.Fatal(err)
				}
				ncore++
			}
		}
	}
	for i, l := range lines[:3] {
		for _, subj := range []string{"agent.x." + brokerPlant("core_subject") + ".y", "agent.ce." + brokerPlant("core_subject")} {
			h := natsHeader(corpusShapes[i])
			if strings.HasPrefix(subj, "agent.ce.") {
				h = ceHeader(corpusShapes[i])
			}
			if err := nc.PublishMsg(&nats.Msg{Subject: subj, Header: h, Data: []byte(l)}); err != nil {
				t.Fatal(err)
			}
			ncore++
		}
	}
	for _, v := range []string{badJSON, oversize, strings.Repeat(oversize, 5)} {
		if err := nc.PublishMsg(&nats.Msg{Subject: "agent.bad", Header: natsHeader(corpusShapes[0]), Data: []byte(v)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	total := nkafka + njs + ncore
	deadline := time.Now().Add(60 * time.Second)
	for fileLines(records) < total {
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(records)
			t.Fatalf("%d of %d records in the record log: kafka %d of %d, mesh core %d of %d, JetStream %d of %d", fileLines(records), total,
				bytes.Count(b, []byte(`"tap":"bus"`)), nkafka, bytes.Count(b, []byte(`"source":"mesh:agent.`)), ncore, bytes.Count(b, []byte(`"source":"mesh:js`)), njs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	pollUntil(t, "a decode finding for each record that does not decode", 30*time.Second, func() bool {
		b, _ := os.ReadFile(findings)
		return bytes.Count(b, []byte(`"rule":"e2a.decode"`)) >= 6 // bad JSON and oversize, on each tap
	})
	pollUntil(t, "the refused password and token logged", 30*time.Second, func() bool {
		n := 0
		for _, l := range strings.Split(stderr.String(), "\n") {
			if strings.Contains(l, "nats server unreachable") && (strings.Contains(l, `"tap":"mesh-bad"`) || strings.Contains(l, `"tap":"mesh-tok"`)) {
				n++
			}
		}
		return n >= 2
	})
	pollUntil(t, "the missing stream logged", 30*time.Second, func() bool {
		return strings.Contains(stderr.String(), "jetstream consumer failed")
	})
	metricsBody := scrapeMetrics(t, listen)
	// The operator's views: /healthz (tap states, last errors) and
	// /observe (the recent findings, streams and records).
	get := func(path string) []byte {
		resp, err := http.Get("http://" + listen + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s: %s", path, resp.Status, b)
		}
		return b
	}
	health := get("/healthz")
	observed := get("/observe?types=finding,stream,record&last=100000&follow=0")
	if !bytes.Contains(health, []byte("mesh-bad")) || bytes.Count(observed, []byte("\n")) < 100 {
		t.Errorf("/healthz or /observe shows too little to be searched:\n%s\n%d bytes of /observe", health, len(observed))
	}
	if !containsLine(string(metricsBody), `e2atap_tap_dropped_total{reason="oversize",tap="mesh"} 1`) {
		t.Error("the core message over max_message_bytes is not counted as an oversize drop")
	}
	stopProcess(t, cmd)

	recs, _ := os.ReadFile(records)
	finds, _ := os.ReadFile(findings)
	rcv.mu.Lock()
	spanRaw, spanText, nspans := append([]byte(nil), rcv.raw.Bytes()...), append([]byte(nil), rcv.text.Bytes()...), rcv.spans
	rcv.mu.Unlock()
	if nspans < len(allCorpusStreams()) {
		t.Errorf("%d spans for %d streams on each of 3 taps", nspans, len(allCorpusStreams()))
	}
	for _, tapName := range []string{"bus", "mesh"} {
		if !bytes.Contains(recs, []byte(`"tap":"`+tapName+`"`)) {
			t.Errorf("no record of tap %s in the record log", tapName)
		}
	}
	// The places outside the records that an output names, masked.
	for _, want := range []string{
		`"source":"bus:agent.` + corpusMark(brokerPlant("kafka_topic")) + `/0/`,
		`"source":"mesh:agent.x.` + corpusMark(brokerPlant("core_subject")) + `.y"`,
		`"source":"mesh:js.` + corpusMark(brokerPlant("js_subject")) + `#`,
		`"id":"` + corpusMark(corpusShapes[0].value) + `"`, // a ce-id header, as a member of the event
	} {
		if !bytes.Contains(recs, []byte(want)) {
			t.Errorf("the record log lacks %s", want)
		}
	}
	if m := corpusMark(brokerPlant("js_missing_stream")); !strings.Contains(stderr.String(), m) {
		t.Errorf("the log of the missing stream does not name it as %s", m)
	}

	lc := newLeakChecker(t)
	lc.plants = append(append(lc.plants, brokerPlants...), opaquePlants...)
	outs := map[string][]byte{"record log": recs, "findings log": finds, "stderr": []byte(stderr.String()), "/metrics": metricsBody,
		"OTLP spans (protobuf)": spanRaw, "OTLP spans (strings)": spanText, "/healthz": health, "/observe": observed}
	for name, out := range outs {
		lc.check(name, out)
		for _, pw := range []string{corpusNATSPass, corpusBadPass, corpusBadToken} {
			if bytes.Contains(out, []byte(pw)) {
				t.Errorf("a NATS password (%s) is in the %s", pw, name)
			}
		}
	}
	lc.strict("/metrics", metricsBody)
	checkMessages(t, "findings log", finds, 5*len(corpusShapes))
	var spanMessages bytes.Buffer
	for _, l := range bytes.Split(spanText, []byte("\n")) {
		if bytes.HasPrefix(l, []byte("e2atap.message=")) || bytes.HasPrefix(l, []byte("span ")) {
			spanMessages.Write(l)
			spanMessages.WriteByte('\n')
		}
	}
	lc.strict("span names, status and finding events", spanMessages.Bytes())
	checkMarks(t, map[string][]byte{"record log": recs, "findings log": finds, "spans": spanText})
	lc.report()
}
