package jsonlog

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/e2atap/e2atap/frame"
	"github.com/e2atap/e2atap/redact"
	"github.com/e2atap/e2atap/validate"
)

func chunk(rid string, seq int, delta string, final bool) []byte {
	d, _ := json.Marshal(delta)
	kind, status := "e2a.chunk", "in_progress"
	if final {
		kind, status = "e2a.complete", "succeeded"
	}
	return []byte(`{"protocol_version":"1.0","response_id":"` + rid + `","request_id":"` + rid + `","sequence":` + strconv.Itoa(seq) +
		`,"is_final":` + strconv.FormatBool(final) + `,"status":"` + status + `","response_kind":"` + kind +
		`","timestamp":"2026-03-29T12:00:0` + strconv.Itoa(seq) + `+00:00","provenance":{"source_protocol":"e2a"},"body":{"delta_kind":"text","delta":` + string(d) + `}}`)
}

// runEngine feeds records through the real engine into a record-log
// Writer (content keep: deltas are written) and returns the log's lines.
func runEngine(t *testing.T, w *Writer, buf *bytes.Buffer, recs ...[]byte) []string {
	t.Helper()
	cfg := validate.DefaultConfig()
	cfg.MaxStreams = 64 // a small table: tests make many engines
	e := validate.NewEngine(cfg, w)
	base := time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC)
	for n, r := range recs {
		e.Observe(&validate.Input{Tap: "ws", Conn: "c1", Dir: 2, Time: base.Add(time.Duration(n) * time.Millisecond),
			Pos: validate.Position{Kind: validate.PosLine, Name: "cap.jsonl", Line: int64(n + 1)}, Data: r})
	}
	e.Finish("end_of_input", nil)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(buf)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

// TestSplitSecret: a secret split across the deltas of two chunks of one
// stream, neither half a shape on its own, leaves no half in the log, and
// both parts carry the whole secret's fingerprint.
func TestSplitSecret(t *testing.T) {
	const secret = "sk-proj-AbCdEfGhIjKlMnOpQrStUv"
	for _, cut := range []int{3, 5, 9, 20, len(secret) - 2} {
		first, second := secret[:cut], secret[cut:]
		var buf bytes.Buffer
		r := NewRedactor(ContentKeep, 65536, testKey)
		w := NewWriterTo(&buf, r)
		lines := runEngine(t, w, &buf,
			chunk("q1", 0, "your key is "+first, false),
			chunk("q2", 0, "other stream", false), // interleaved
			chunk("q1", 1, second+" keep it safe", false),
			chunk("q1", 2, "", true))
		if len(lines) != 4 {
			t.Fatalf("cut %d: %d lines: %q", cut, len(lines), lines)
		}
		all := strings.Join(lines, "\n")
		for _, half := range []string{first[min(3, len(first)):], second[:len(second)-1]} {
			if len(half) >= 3 && strings.Contains(all, half) {
				t.Errorf("cut %d: half %q in the log:\n%s", cut, half, all)
			}
		}
		fp := "******(fp:" + string(r.Fingerprint(nil, []byte(secret))) + ")"
		if n := strings.Count(all, fp); n != 2 {
			t.Errorf("cut %d: the whole secret's mask %s appears %d times:\n%s", cut, fp, n, all)
		}
		if !strings.Contains(all, `your key is `) || !strings.Contains(all, ` keep it safe`) {
			t.Errorf("cut %d: the text around the secret is gone:\n%s", cut, all)
		}
		// Lines of a stream stay in order.
		if i, j := strings.Index(all, `"sequence":0,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","timestamp":"2026-03-29T12:00:00+00:00","provenance":{"source_protocol":"e2a"},"body":{"delta_kind":"text","delta":"your`), strings.Index(all, "keep it safe"); i < 0 || j < i {
			t.Errorf("cut %d: chunk order broken:\n%s", cut, all)
		}
		for _, l := range lines {
			if !json.Valid([]byte(l)) {
				t.Errorf("cut %d: invalid line %s", cut, l)
			}
		}
	}
}

// TestSplitSecretBounds: a held line is written on the second Flush even if
// its stream says nothing more; the next chunk's part is still masked.
func TestSplitSecretBounds(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriterTo(&buf, NewRedactor(ContentKeep, 65536, testKey))
	ri := func(seq int, delta string) *validate.RecordInfo {
		x := jsonInfo(chunk("q1", seq, delta, false))
		x.Stream = []byte("q1")
		return x
	}
	w.Record(ri(0, "pass: ghp_"))
	w.Flush()
	if buf.Len() != 0 {
		t.Fatalf("line written before the second flush: %s", buf.String())
	}
	w.Flush()
	if !strings.Contains(buf.String(), `"delta":"pass: ghp_"`) {
		t.Fatalf("held line not written by the second flush: %q", buf.String())
	}
	w.Record(ri(1, "16C7e42F292c6912E7710c838347Ae178B4a done"))
	w.Close()
	if strings.Contains(buf.String(), "16C7e42F292c6912E7710c838347Ae178B4a") {
		t.Errorf("second half leaked: %s", buf.String())
	}
	if w.CarryMissed() != 1 {
		t.Errorf("CarryMissed = %d, want 1", w.CarryMissed())
	}
}

// TestInvalidUTF8: invalid UTF-8 in a record's strings and keys is written
// as U+FFFD, so every line is valid JSON and valid UTF-8; the engine still
// judges the original bytes.
func TestInvalidUTF8(t *testing.T) {
	recs := [][]byte{
		[]byte("{\"protocol_version\":\"1.0\",\"response_id\":\"r\xff1\",\"request_id\":\"q\xc3\",\"sequence\":0,\"is_final\":true,\"status\":\"succeeded\",\"response_kind\":\"e2a.complete\",\"timestamp\":\"2026-03-29T12:00:00+00:00\",\"provenance\":{\"source_protocol\":\"e2a\"},\"body\":{\"delta\":\"ok \xed\xa0\x80 \xf0\x9f\x98\x80\"},\"metadata\":{\"k\xfe\":\"v\x80\\n\"}}"),
		[]byte("{\"method\":\"chat.send\",\"request_id\":\"x\xe2\x82\",\"params\":{\"text\":\"a\xffb sk-proj-AbCdEfGhIjKl\"}}"),
	}
	for _, c := range []Content{ContentKeep, ContentMask} {
		var buf bytes.Buffer
		lines := runEngine(t, NewWriterTo(&buf, NewRedactor(c, 65536, testKey)), &buf, recs...)
		if len(lines) != len(recs) {
			t.Fatalf("%v: %d lines", c, len(lines))
		}
		for _, l := range lines {
			if !utf8.ValidString(l) || !json.Valid([]byte(l)) {
				t.Errorf("%v: not valid UTF-8 JSON: %q", c, l)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Errorf("%v: %v", c, err)
			}
			if strings.Contains(l, "AbCdEfGhIjKl") {
				t.Errorf("%v: secret leaked: %s", c, l)
			}
		}
		if !strings.Contains(lines[0], `"request_id":"q\ufffd"`) || !strings.Contains(lines[0], "\\ufffd\\ufffd\\ufffd \xf0\x9f\x98\x80") && c == ContentKeep {
			t.Errorf("%v: replacement not as expected: %s", c, lines[0])
		}
	}
}

// TestCarryBytesBound: held chunk lines never exceed maxHeld bytes; past it
// the oldest are written at once, in order within each stream.
func TestCarryBytesBound(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriterTo(&buf, NewRedactor(ContentKeep, 1<<20, testKey))
	text := strings.Repeat("lorem ipsum dolor ", 3000) // ~54 KiB, under maxHeldLine
	streams := maxHeld/len(text) + 8
	for n := range streams {
		ri := jsonInfo(chunk("q"+strconv.Itoa(n), 0, text, false))
		ri.Stream = []byte("q" + strconv.Itoa(n))
		w.Record(ri)
		w.carry.mu.Lock()
		held := w.carry.bytes
		w.carry.mu.Unlock()
		if held > maxHeld {
			t.Fatalf("after %d streams %d bytes held, bound %d", n+1, held, maxHeld)
		}
	}
	w.out.flush()
	if got := strings.Count(buf.String(), "\n"); got < 8 {
		t.Errorf("%d lines written before any Flush, want the oldest written at the bound", got)
	}
	if !strings.Contains(buf.String(), `"request_id":"q0"`) {
		t.Errorf("the oldest held line (q0) was not the one written")
	}
	w.Close()
	if got := strings.Count(buf.String(), "\n"); got != streams {
		t.Errorf("%d lines after Close, want %d", got, streams)
	}
}

// TestSplitSecretAfterScheme: chunk n ends with a header's name and scheme
// or a key ("Authorization: Token ", "password="), chunk n+1 holds the
// value, which is no shape on its own: it is masked in chunk n+1's line.
func TestSplitSecretAfterScheme(t *testing.T) {
	for _, c := range [][2]string{
		{"Authorization: Token ", "CRPStok9f8e7d6c5b4a3"},
		{"Authorization: Token", " CRPStok9f8e7d6c5b4a3"},
		{"headers: Bearer ", "tokBRR7f3Kq9Zx2LmN8pQ4"},
		{"login with password=", "CRPSpass-hunter2-9876, then"},
	} {
		var buf bytes.Buffer
		lines := runEngine(t, NewWriterTo(&buf, NewRedactor(ContentKeep, 65536, testKey)), &buf,
			chunk("q1", 0, c[0], false), chunk("q1", 1, c[1], false), chunk("q1", 2, "", true))
		all := strings.Join(lines, "\n")
		if strings.Contains(all, "CRPS") || strings.Contains(all, "tokBRR") {
			t.Errorf("%q|%q: the value is in the log:\n%s", c[0], c[1], all)
		}
		if len(lines) != 3 || !strings.Contains(lines[1], `"delta":"`) || !strings.Contains(lines[1], "******(fp:") {
			t.Errorf("%q|%q: lines:\n%s", c[0], c[1], all)
		}
		for _, l := range lines {
			if !json.Valid([]byte(l)) {
				t.Errorf("invalid line %s", l)
			}
		}
	}
}

// TestSplitSecretFrames: a secret split across the data of two
// STREAM_CHUNK frames of one sid leaves neither half in the log, both
// parts carry the whole secret's fingerprint, and the logged frames still
// replay (validate reads them back).
func TestSplitSecretFrames(t *testing.T) {
	const secret = "xoxb-1234567890-1234567890123-CRPSabcdefghijklmnopqrst"
	for _, cut := range []int{4, 5, 12, 30, len(secret) - 3} {
		var recs [][]byte
		for seq, d := range []string{"token " + secret[:cut], secret[cut:] + " ok"} {
			b, err := frame.AppendStreamChunk(nil, &frame.StreamChunk{SessionID: "s1", Seq: int32(seq), EventType: "text", Data: []byte(d)})
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, b)
		}
		done, _ := frame.AppendStreamChunk(nil, &frame.StreamChunk{SessionID: "s1", Seq: 2, Done: true})
		recs = append(recs, done)
		var buf bytes.Buffer
		r := NewRedactor(ContentKeep, 65536, testKey)
		lines := runEngine(t, NewWriterTo(&buf, r), &buf, recs...)
		all := strings.Join(lines, "\n")
		for _, half := range []string{secret[min(5, cut):cut], secret[cut:]} {
			if len(half) >= 3 && strings.Contains(all, half) {
				t.Errorf("cut %d: %q in the log:\n%s", cut, half, all)
			}
		}
		fp := "******(fp:" + string(r.Fingerprint(nil, []byte(secret))) + ")"
		if n := strings.Count(all, fp); n != 2 {
			t.Errorf("cut %d: the whole secret's mask appears %d times:\n%s", cut, n, all)
		}
		if len(lines) != 3 || !strings.Contains(lines[0], `"data":"token `) || !strings.Contains(lines[1], ` ok"`) {
			t.Errorf("cut %d: lines:\n%s", cut, all)
		}
	}
}

// findingSink keeps the e2a.secret findings of an engine.
type findingSink struct {
	validate.Sink
	findings []string
}

func (s *findingSink) Finding(f *validate.Finding) {
	if f.Rule == "e2a.secret" {
		s.findings = append(s.findings, f.Rule+" "+f.Message)
	}
}

// TestSplitSecretReplay: a secret split across two chunks of a stream read
// from a log is an e2a.secret finding on the live run, masked in the record
// log, and replaying the record log gives the same finding.
func TestSplitSecretReplay(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriterTo(&buf, NewRedactor(ContentKeep, 65536, testKey))
	live := &findingSink{Sink: w}
	e := validate.NewEngine(validate.DefaultConfig(), live)
	for n, r := range [][]byte{chunk("q1", 0, "the key: sk-pr", false), chunk("q1", 1, "oj-CRPS7a8b9c0d1e2f3g4h ok", false), chunk("q1", 2, "", true)} {
		e.Observe(&validate.Input{Tap: "logs", Pos: validate.Position{Kind: validate.PosLine, Name: "agent.jsonl", Line: int64(n + 1)}, FromLog: true, Data: r})
	}
	e.Finish(validate.ReasonEOF, &validate.Input{})
	w.Close()
	if strings.Contains(buf.String(), "CRPS7a8b") {
		t.Fatalf("the secret is in the record log:\n%s", buf.String())
	}
	want := "e2a.secret credential (sk) in a logged record at body.delta, split across chunks of its stream, up to this one"
	if len(live.findings) != 1 || live.findings[0] != want {
		t.Fatalf("live findings %q, want [%q]", live.findings, want)
	}
	replay := &findingSink{Sink: NewWriterTo(io.Discard, NewRedactor(ContentKeep, 65536, testKey))}
	re := validate.NewEngine(validate.DefaultConfig(), replay)
	if _, err := validate.Read(bytes.NewReader(buf.Bytes()), "records.jsonl", validate.FormatAuto, validate.ReadOptions{FromLog: true}, re); err != nil {
		t.Fatal(err)
	}
	re.Finish(validate.ReasonEOF, &validate.Input{})
	if strings.Join(replay.findings, "\n") != want {
		t.Errorf("replay findings %q, want [%q]", replay.findings, want)
	}
}

// TestSplitSecretWhollyInTail: a credential wholly in chunk n's delta that
// only chunk n+1's start makes one (a URL-encoded Oracle connect string
// cut inside its "%40": "…scott%2FPw%4" | "0%2F%2Fdb…") is masked in chunk
// n's line, the text after it kept, and chunk n+1's line is left as it is
// (the carry cut chunk n+1's delta at a negative offset: validate --log
// panicked, slice bounds out of range).
func TestSplitSecretWhollyInTail(t *testing.T) {
	for _, c := range [][2]string{
		{"dsn=scott%2FOraPw9xQ7Zk%4", "0%2F%2Fdb.example.com%3A1521%2FORCL ok"},
		{"dsn=scott%2FOraPw9xQ7Zk%", "40%2F%2Fdb.example.com%3A1521%2FORCL ok"},
	} {
		var buf bytes.Buffer
		lines := runEngine(t, NewWriterTo(&buf, NewRedactor(ContentKeep, 65536, testKey)), &buf,
			chunk("q1", 0, c[0], false), chunk("q1", 1, c[1], false), chunk("q1", 2, "", true))
		all := strings.Join(lines, "\n")
		if strings.Contains(all, "OraPw9xQ7Zk") {
			t.Errorf("%q|%q: the password is in the log:\n%s", c[0], c[1], all)
		}
		if len(lines) != 3 || !strings.Contains(lines[0], `"delta":"dsn=scott%2F******(fp:`) || !strings.Contains(lines[1], c[1]) {
			t.Errorf("%q|%q: lines:\n%s", c[0], c[1], all)
		}
		for _, l := range lines {
			if !json.Valid([]byte(l)) {
				t.Errorf("invalid line %s", l)
			}
		}
	}
}

// TestSplitSecretSplicedTwice: a line whose delta the carry spliced (the
// first half of a PEM key, after a chunk that ends in the same key) is
// held, and the next chunk's carry splices it again: it must cut the line at the end of its
// spliced delta string. It cut it at the end the string had before, inside
// the original delta: the line was no JSON and showed the key's text after
// the mask's closing quote (TestCorpusRun, keep, with runs of 10
// characters checked).
func TestSplitSecretSplicedTwice(t *testing.T) {
	const key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpCRPSAIBAAKCAQEAx7YbQ2Lm\nN8pQ4tokBRRCRPSline2abcdef\n-----END RSA PRIVATE KEY-----"
	half := len(key) / 2
	var buf bytes.Buffer
	r := NewRedactor(ContentKeep, 65536, testKey)
	w := NewWriterTo(&buf, r)
	lines := runEngine(t, w, &buf,
		chunk("q1", 0, "tok "+key, false),
		chunk("q1", 1, key[:half], false),
		chunk("q1", 2, key[half:], false),
		chunk("q1", 3, "x", false),
		chunk("q1", 4, "", true))
	all := strings.Join(lines, "\n")
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("an invalid line (%d bytes)", len(l))
		}
	}
	for _, part := range []string{"MIIEpCRPSAIBAAKCAQEAx7YbQ2Lm", "N8pQ4tokBRRCRPSline2abcdef"} {
		for i := 0; i+10 <= len(part); i++ {
			if strings.Contains(all, part[i:i+10]) {
				t.Errorf("10 characters of the key's line %d… are in the log", i)
				break
			}
		}
	}
}

// TestSplitSecretManyChunks: a credential a model streams a few characters
// a chunk (its tokens) leaves none of its characters in the record log's
// deltas, read one after another as a reader of the log would join them;
// the text before and after it stays, and every line is JSON.
func TestSplitSecretManyChunks(t *testing.T) {
	for _, c := range []struct{ text, secret string }{
		{"Here is the key: sk-proj-Xq7Lm2Rt9Vb4Nc8Kd3Wf6Hj1Pz5 for the test.", "Xq7Lm2Rt9Vb4Nc8Kd3Wf6Hj1Pz5"},
		{"token ghp_Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi now", "Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi"},
		{"Use password: Tr0ub4dor-and-3-horses now", "Tr0ub4dor-and-3-horses"},
		{"AWS key AKIACRPS7EXAMPLE4XYZ in use", "CRPS7EXAMPLE4XYZ"},
	} {
		for size := 1; size <= 5; size++ {
			var recs [][]byte
			for i, seq := 0, 0; i < len(c.text); i, seq = i+size, seq+1 {
				recs = append(recs, chunk("q1", seq, c.text[i:min(i+size, len(c.text))], false))
			}
			recs = append(recs, chunk("q1", len(recs), "", true))
			var buf bytes.Buffer
			lines := runEngine(t, NewWriterTo(&buf, NewRedactor(ContentKeep, 65536, testKey)), &buf, recs...)
			var text strings.Builder
			last := -1
			for _, l := range lines {
				var r struct {
					Sequence int
					Body     struct{ Delta string }
				}
				if err := json.Unmarshal([]byte(l), &r); err != nil {
					t.Fatalf("%q size %d: invalid line %s", c.text, size, l)
				}
				if r.Sequence <= last {
					t.Errorf("%q size %d: line %d after %d", c.text, size, r.Sequence, last)
				}
				last = r.Sequence
				text.WriteString(r.Body.Delta)
			}
			joined := text.String()
			for i := 0; i+4 <= len(c.secret); i++ {
				if strings.Contains(joined, c.secret[i:i+4]) {
					t.Errorf("%q in pieces of %d: %q of it in the log: %s", c.text, size, c.secret[i:i+4], joined)
					break
				}
			}
			if !strings.HasSuffix(joined, c.text[len(c.text)-4:]) {
				t.Errorf("%q in pieces of %d: the text after it is gone: %s", c.text, size, joined)
			}
		}
	}
}

// pemBlock is a fake key (or certificate) block of kind: n bytes of
// base64 in lines of 64.
func pemBlock(kind string, n int, seed uint64) (block string, lines []string) {
	r := rand.New(rand.NewPCG(seed, 7))
	raw := make([]byte, n*3/4)
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	b64 := base64.StdEncoding.EncodeToString(raw)
	for i := 0; i < len(b64); i += 64 {
		lines = append(lines, b64[i:min(i+64, len(b64))])
	}
	return "-----BEGIN " + kind + "-----\n" + strings.Join(lines, "\n") + "\n-----END " + kind + "-----\n", lines
}

// logText is the deltas of the record log's lines joined, as a reader of
// the log would join them; every line must be JSON.
func logText(t *testing.T, lines []string) string {
	t.Helper()
	var text strings.Builder
	for _, l := range lines {
		var r struct{ Body struct{ Delta string } }
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("invalid line %s", l)
		}
		text.WriteString(r.Body.Delta)
	}
	return text.String()
}

// TestSplitKeyBlock: a private key block streamed across deltas, cut
// anywhere (also more than carryTail bytes after its header, and inside
// the header or the END line), leaves no run of 10 characters of its
// base64 lines in the record log: plain, PKCS#1, OpenSSH, and in a GCP
// service account's JSON ("\n" escapes). The text after the block stays,
// and a certificate cut the same way is printed (no secret).
func TestSplitKeyBlock(t *testing.T) {
	type form struct {
		text, after string
		lines       []string
		secret      bool
	}
	var forms []form
	for n, kind := range []string{"PRIVATE KEY", "RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "ENCRYPTED PRIVATE KEY"} {
		block, lines := pemBlock(kind, 1600, uint64(n))
		forms = append(forms, form{"Here is the key:\n" + block + "Keep it safe.", "Keep it safe.", lines, true})
	}
	block, lines := pemBlock("PRIVATE KEY", 1700, 9)
	forms = append(forms, form{`{"type": "service_account", "private_key_id": "1", "private_key": "` +
		strings.ReplaceAll(block, "\n", `\n`) + `", "client_email": "ci@proj.iam.gserviceaccount.com", "token_uri": "https://oauth2.googleapis.com/token"}`,
		`"token_uri"`, lines, true})
	cert, clines := pemBlock("CERTIFICATE", 1200, 11)
	forms = append(forms, form{"the chain:\n" + cert + "end of chain.", "end of chain.", clines, false})
	for _, f := range forms {
		for _, size := range []int{7, 40, 100, 300, 700, 1000} {
			var recs [][]byte
			for i, seq := 0, 0; i < len(f.text); i, seq = i+size, seq+1 {
				recs = append(recs, chunk("k1", seq, f.text[i:min(i+size, len(f.text))], false))
			}
			recs = append(recs, chunk("k1", len(recs), "", true))
			var buf bytes.Buffer
			joined := logText(t, runEngine(t, NewWriterTo(&buf, NewRedactor(ContentKeep, 65536, testKey)), &buf, recs...))
			shown := 0
			for _, l := range f.lines {
				for i := 0; i+10 <= len(l); i++ {
					if strings.Contains(joined, l[i:i+10]) {
						shown++
						break
					}
				}
			}
			switch {
			case f.secret && shown > 0:
				t.Errorf("%.40q in pieces of %d: %d of its %d lines show in the log: %s", f.text, size, shown, len(f.lines), joined)
			case !f.secret && shown < len(f.lines)/2:
				t.Errorf("%.40q in pieces of %d: only %d of its %d lines show: %s", f.text, size, shown, len(f.lines), joined)
			}
			if !strings.Contains(joined, f.after) {
				t.Errorf("%.40q in pieces of %d: the text after the block is gone: %s", f.text, size, joined)
			}
		}
	}
}

// TestHasDashRun: five dashes in a row anywhere, and no fewer (the carry's
// key block check, redact.HasPEMDash).
func TestHasDashRun(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
	}{
		{"-----", true}, {"x-----", true}, {"ab-----cd", true}, {"abcd-----", true}, {"abc------x", true},
		{"----", false}, {"a----b----c", false}, {"2026-03-29 123e4567-e89b-12d3", false}, {"", false},
	} {
		if got := redact.HasPEMDash([]byte(c.s)); got != c.want {
			t.Errorf("HasPEMDash(%q) = %v", c.s, got)
		}
	}
}
