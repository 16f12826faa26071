package ws

import (
	"bufio"
	"bytes"
	"compress/flate"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/e2atap/e2atap/tap"
)

// rawFrame builds one frame by hand (RFC 6455 §5.2), independently of the
// package's own code.
func rawFrame(fin bool, rsv1 bool, op byte, mask bool, payload []byte) []byte {
	var f []byte
	b0 := op
	if fin {
		b0 |= 0x80
	}
	if rsv1 {
		b0 |= 0x40
	}
	f = append(f, b0)
	var m byte
	if mask {
		m = 0x80
	}
	switch n := len(payload); {
	case n < 126:
		f = append(f, m|byte(n))
	case n <= 0xFFFF:
		f = append(f, m|126, byte(n>>8), byte(n))
	default:
		f = append(f, m|127)
		f = binary.BigEndian.AppendUint64(f, uint64(n))
	}
	if !mask {
		return append(f, payload...)
	}
	key := [4]byte{0x37, 0xfa, 0x21, 0x3d}
	f = append(f, key[:]...)
	for i, b := range payload {
		f = append(f, b^key[i%4])
	}
	return f
}

type collectSink struct{ msgs []parsedMessage }

func (s *collectSink) overBudget() {}

func (s *collectSink) message(m parsedMessage) {
	m.payload = bytes.Clone(m.payload)
	m.at = time.Time{}
	s.msgs = append(s.msgs, m)
}

// The parser must give the same messages however the stream is cut.
func TestFrameParserAnySplit(t *testing.T) {
	var stream []byte
	stream = append(stream, rawFrame(false, false, opText, true, []byte("Hel"))...)
	stream = append(stream, rawFrame(true, false, opPing, true, []byte("ping"))...)
	stream = append(stream, rawFrame(true, false, opContinuation, true, []byte("lo"))...)
	stream = append(stream, rawFrame(true, false, opBinary, true, bytes.Repeat([]byte{1, 2, 3}, 30000))...)
	stream = append(stream, rawFrame(true, false, opText, false, []byte{})...)
	stream = append(stream, rawFrame(true, false, opClose, true, []byte{0x03, 0xE8})...)
	want := []parsedMessage{
		{op: opText, payload: []byte("Hello"), wireSize: 5},
		{op: opBinary, payload: bytes.Repeat([]byte{1, 2, 3}, 30000), wireSize: 90000},
		{op: opText, payload: []byte{}, wireSize: 0},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		sink := &collectSink{}
		p := newFrameParser(sink, 1<<20, 0)
		for rest := stream; len(rest) > 0; {
			n := 1 + rng.IntN(min(len(rest), 1+trial*50))
			if p.feed(rest[:n], time.Time{}) {
				t.Fatalf("trial %d: framing error", trial)
			}
			rest = rest[n:]
		}
		if diff := cmp.Diff(want, sink.msgs, cmp.AllowUnexported(parsedMessage{}), cmpBytes); diff != "" {
			t.Fatalf("trial %d (-want +got):\n%s", trial, diff)
		}
		if !p.closeSeen || !p.atBoundary() {
			t.Fatalf("trial %d: closeSeen %v boundary %v", trial, p.closeSeen, p.atBoundary())
		}
	}
}

func TestFrameParserRejectsBrokenFraming(t *testing.T) {
	for name, stream := range map[string][]byte{
		"continuation first":     rawFrame(true, false, opContinuation, false, []byte("x")),
		"reserved opcode":        rawFrame(true, false, 0x3, false, nil),
		"fragmented ping":        rawFrame(false, false, opPing, false, nil),
		"long control":           rawFrame(true, false, opPong, false, make([]byte, 126)),
		"new message in message": append(rawFrame(false, false, opText, false, []byte("a")), rawFrame(true, false, opText, false, []byte("b"))...),
	} {
		p := newFrameParser(&collectSink{}, 1<<20, 0)
		if !p.feed(stream, time.Time{}) || !p.broken {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestMaskBytesMatchesNaive(t *testing.T) {
	key := [4]byte{1, 2, 3, 4}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		b := make([]byte, rng.IntN(100))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		pos := rng.IntN(4)
		want := bytes.Clone(b)
		for i := range want {
			want[i] ^= key[(pos+i)%4]
		}
		if got := maskBytes(key, pos, b); got != (pos+len(b))%4 || !bytes.Equal(b, want) {
			t.Fatalf("pos %d len %d", pos, len(b))
		}
	}
}

func TestParseExtensions(t *testing.T) {
	for _, tc := range []struct {
		hdr  string
		want extensions
	}{
		{"", extensions{}},
		{"permessage-deflate", extensions{true, true, true}},
		{"permessage-deflate; server_no_context_takeover; client_max_window_bits=15", extensions{true, true, false}},
		{"Permessage-Deflate;client_no_context_takeover;server_no_context_takeover", extensions{true, false, false}},
		{"x-other, permessage-deflate; client_no_context_takeover", extensions{true, false, true}},
	} {
		h := http.Header{}
		if tc.hdr != "" {
			h.Set("Sec-WebSocket-Extensions", tc.hdr)
		}
		if got := parseExtensions(h); got != tc.want {
			t.Errorf("%q: %+v, want %+v", tc.hdr, got, tc.want)
		}
	}
}

// compressMessages deflates msgs as a permessage-deflate sender does: one
// compressor, sync-flushed after each message, tail stripped.
func compressMessages(t *testing.T, msgs [][]byte, takeover bool) [][]byte {
	t.Helper()
	var out [][]byte
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestSpeed)
	for _, m := range msgs {
		if !takeover {
			w.Reset(&buf)
		}
		buf.Reset()
		w.Write(m)
		w.Flush()
		b := bytes.Clone(buf.Bytes())
		out = append(out, bytes.TrimSuffix(b, []byte{0, 0, 0xff, 0xff}))
	}
	return out
}

func TestInflaterContextTakeover(t *testing.T) {
	var msgs [][]byte
	for i := range 30 {
		msgs = append(msgs, bytes.Repeat([]byte("the same sentence again and again "), i*40+1))
	}
	for _, takeover := range []bool{true, false} {
		inf := &inflater{takeover: takeover}
		budget := tap.NewBudget(1 << 20)
		for i, c := range compressMessages(t, msgs, takeover) {
			limit, b := 1<<20, budget
			if i == 10 {
				// Oversize (13634 bytes), within followFactor times the
				// limit: dropped, but the window must follow.
				limit = 4000
			}
			if i == 20 {
				b = tap.NewBudget(100) // over budget: the same
			}
			out, charged, res, err := inf.inflate(c, limit, b)
			if err != nil {
				t.Fatalf("takeover %v, message %d: %v", takeover, i, err)
			}
			if i == 10 || i == 20 {
				if want := map[int]int{10: inflateOversize, 20: inflateOverBudget}[i]; res != want || out != nil || charged != 0 || b.Used() != 0 {
					t.Fatalf("message %d: result %d, %d bytes, charged %d, used %d; want result %d and nothing held", i, res, len(out), charged, b.Used(), want)
				}
				continue
			}
			if charged < len(out) || int64(charged) != budget.Used() {
				t.Fatalf("message %d: charged %d for %d bytes, budget used %d", i, charged, len(out), budget.Used())
			}
			budget.Release(charged)
			if !bytes.Equal(out, msgs[i]) {
				t.Fatalf("takeover %v, message %d: %d bytes, want %d", takeover, i, len(out), len(msgs[i]))
			}
		}
	}
}

// TestInflaterLetsABombGo: a message that inflates past followFactor
// times the limit is not followed to its end (a zip bomb would hold the
// relay for seconds): the window goes with it, and the direction's later
// copies are dropped as oversize.
func TestInflaterLetsABombGo(t *testing.T) {
	msgs := [][]byte{[]byte(`{"first":"message"}`), make([]byte, 64<<20), []byte(`{"after":"the bomb"}`)}
	for _, takeover := range []bool{true, false} {
		c := compressMessages(t, msgs, takeover)
		inf := &inflater{takeover: takeover}
		if out, _, _, err := inf.inflate(c[0], 1<<20, nil); err != nil || !bytes.Equal(out, msgs[0]) {
			t.Fatalf("takeover %v: first message %q, %v", takeover, out, err)
		}
		out, charged, res, err := inf.inflate(c[1], 1<<20, nil)
		if err != nil || out != nil || charged != 0 || res != inflateOversize {
			t.Fatalf("takeover %v: the bomb gave %d bytes, charged %d, result %d, %v; want it dropped as oversize", takeover, len(out), charged, res, err)
		}
		if left := len(inf.src.a); left == 0 {
			t.Errorf("takeover %v: the bomb was inflated to its end (64 MiB for a limit of 1 MiB)", takeover)
		}
		out, _, _, err = inf.inflate(c[2], 1<<20, nil)
		if takeover {
			if !errors.Is(err, errInflaterLost) || inf.lostWhy != tap.DropOversize {
				t.Fatalf("after the bomb, with takeover: %q, %v (lost for %d); want the window lost as oversize", out, err, inf.lostWhy)
			}
		} else if err != nil || !bytes.Equal(out, msgs[2]) {
			t.Fatalf("after the bomb, without takeover: %q, %v", out, err)
		}
	}
}

// rawPeer is a WebSocket server written by hand: it answers the handshake,
// then records the raw bytes it gets and sends the raw bytes it is given.
func rawPeer(t *testing.T, send []byte, want int) (url string, got <-chan []byte) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan []byte, 1)
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		var nc net.Conn
		var br *bufio.Reader
		var req *http.Request
		for req == nil { // skip connections that bring no request: the tap's health probes
			var err error
			if nc, err = ln.Accept(); err != nil {
				ch <- nil
				return
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(10 * time.Second))
			br = bufio.NewReader(nc)
			req, _ = http.ReadRequest(br)
		}
		io.WriteString(nc, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "+
			acceptKey(req.Header.Get("Sec-WebSocket-Key"))+"\r\nX-Raw: yes\r\n\r\n")
		nc.Write(send)
		b := make([]byte, want)
		_, err = io.ReadFull(br, b)
		if err != nil {
			ch <- nil
			return
		}
		ch <- b
	}()
	return "ws://" + ln.Addr().String(), ch
}

// Frames pass byte for byte, masks and fragment boundaries included, in
// both directions; the mirror reassembles the messages.
func TestRawFramesAreByteIdentical(t *testing.T) {
	var toServer, toClient []byte
	toServer = append(toServer, rawFrame(false, false, opText, true, []byte(`{"a":`))...)
	toServer = append(toServer, rawFrame(true, false, opPing, true, []byte("keepalive"))...)
	toServer = append(toServer, rawFrame(false, false, opContinuation, true, []byte(`"frag`))...)
	toServer = append(toServer, rawFrame(true, false, opContinuation, true, []byte(`mented"}`))...)
	toServer = append(toServer, rawFrame(true, false, opBinary, true, bytes.Repeat([]byte{0xEF}, 70000))...)
	toServer = append(toServer, rawFrame(true, false, opClose, true, []byte{0x0F, 0xA1, 'b', 'y', 'e'})...)
	toClient = append(toClient, rawFrame(true, false, opText, false, []byte(`{"type":"event"}`))...)
	toClient = append(toClient, rawFrame(true, false, opPong, false, []byte("keepalive"))...)
	toClient = append(toClient, rawFrame(false, false, opBinary, false, []byte{1})...)
	toClient = append(toClient, rawFrame(true, false, opContinuation, false, []byte{2, 3})...)
	toClient = append(toClient, rawFrame(true, false, opClose, false, []byte{0x0F, 0xA1, 'b', 'y', 'e'})...)

	up, serverGot := rawPeer(t, toClient, len(toServer))
	h := startTap(t, up, nil, nil)
	nc, err := net.Dial("tcp", h.p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(nc, "GET /raw HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 || resp.Header.Get("X-Raw") != "yes" {
		t.Fatalf("handshake: %v %v", resp, err)
	}
	// Write in awkward pieces: the tap must not care where reads end.
	for rest := toServer; len(rest) > 0; {
		n := min(len(rest), 7)
		nc.Write(rest[:n])
		rest = rest[n:]
	}
	clientGot := make([]byte, len(toClient))
	if _, err := io.ReadFull(br, clientGot); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(clientGot, toClient) {
		t.Error("client received different bytes than the server sent")
	}
	if got := <-serverGot; !bytes.Equal(got, toServer) {
		t.Error("server received different bytes than the client sent")
	}
	nc.Close()
	eventually(t, "ConnClosed", func() bool { return hasConnClosed(h.mirror()) })
	if diff := cmp.Diff([][]byte{[]byte(`{"a":"fragmented"}`), bytes.Repeat([]byte{0xEF}, 70000)}, h.dataOf(tap.DirUpstream), cmpBytes); diff != "" {
		t.Errorf("mirror upstream (-want +got):\n%.500s", diff)
	}
	if diff := cmp.Diff([][]byte{[]byte(`{"type":"event"}`), {1, 2, 3}}, h.dataOf(tap.DirDownstream), cmpBytes); diff != "" {
		t.Errorf("mirror downstream (-want +got):\n%s", diff)
	}
}

func FuzzFrameParser(f *testing.F) {
	f.Add(rawFrame(true, false, opText, true, []byte("hello")), uint8(3))
	f.Add(append(rawFrame(false, true, opText, false, []byte("a")), rawFrame(true, false, opContinuation, false, []byte("b"))...), uint8(1))
	f.Fuzz(func(t *testing.T, stream []byte, cut uint8) {
		whole := &collectSink{}
		pw := newFrameParser(whole, 1<<16, 0x40)
		brokeWhole := pw.feed(stream, time.Time{})
		pieces := &collectSink{}
		pp := newFrameParser(pieces, 1<<16, 0x40)
		brokePieces := false
		step := int(cut%16) + 1
		for rest := stream; len(rest) > 0; {
			n := min(step, len(rest))
			brokePieces = pp.feed(rest[:n], time.Time{}) || brokePieces
			rest = rest[n:]
		}
		if brokeWhole != brokePieces {
			t.Fatalf("broken: whole %v, pieces %v", brokeWhole, brokePieces)
		}
		if diff := cmp.Diff(whole.msgs, pieces.msgs, cmp.AllowUnexported(parsedMessage{}), cmpBytes); diff != "" {
			t.Fatalf("split changes messages:\n%s", diff)
		}
	})
}

// acceptKey is Sec-WebSocket-Accept for a client's Sec-WebSocket-Key.
func acceptKey(key string) string {
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(h[:])
}
