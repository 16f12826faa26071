package ws

// The benchmark contract: the tap against a direct connection, in the same
// run, 200-byte messages on loopback, echo round trips. Two other designs
// (message-level proxies built on gorilla/websocket and coder/websocket,
// each with the same bounded mirror queue) are measured the same way: the
// numbers in doc.go come from here.
//
//	go test -run '^$' -bench . -benchtime 20000x -count 1 ./tap/ws/

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	coderws "github.com/coder/websocket"
	gorillaws "github.com/gorilla/websocket"

	"github.com/e2atap/e2atap/tap"
)

const benchMsgSize = 200

// benchEchoServer is the upstream for every design: gorilla, echoing each
// message with one reusable buffer, so the server costs little and the same.
func benchEchoServer(b *testing.B) string {
	b.Helper()
	upg := gorillaws.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 4096, CheckOrigin: func(*http.Request) bool { return true }}
	var wg sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := upg.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		wg.Add(1)
		defer wg.Done()
		defer c.Close()
		buf := make([]byte, 64<<10)
		for {
			typ, rd, err := c.NextReader()
			if err != nil {
				return
			}
			n, _ := readAll(rd, buf)
			if err := c.WriteMessage(typ, buf[:n]); err != nil {
				return
			}
		}
	}))
	b.Cleanup(func() { srv.Close(); wg.Wait() })
	return "ws://" + srv.Listener.Addr().String()
}

func readAll(r interface{ Read([]byte) (int, error) }, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, nil
		}
	}
	return n, nil
}

// benchClient is a gorilla client that does echo round trips.
type benchClient struct {
	c   *gorillaws.Conn
	msg []byte
	buf []byte
}

func newBenchClient(b *testing.B, url string) *benchClient {
	b.Helper()
	d := gorillaws.Dialer{ReadBufferSize: 4096, WriteBufferSize: 4096}
	c, _, err := d.Dial(url, http.Header{"Origin": {"http://127.0.0.1"}})
	if err != nil {
		b.Fatalf("dial %s: %v", url, err)
	}
	b.Cleanup(func() {
		c.WriteControl(gorillaws.CloseMessage, gorillaws.FormatCloseMessage(1000, ""), time.Now().Add(time.Second))
		c.Close()
	})
	msg := bytes.Repeat([]byte("x"), benchMsgSize)
	copy(msg, `{"request_id":"bench","method":"chat.send","params":{"text":"`)
	msg[len(msg)-2], msg[len(msg)-1] = '"', '}'
	return &benchClient{c: c, msg: msg, buf: make([]byte, 4096)}
}

func (bc *benchClient) send() error { return bc.c.WriteMessage(gorillaws.TextMessage, bc.msg) }

func (bc *benchClient) recv() error {
	_, rd, err := bc.c.NextReader()
	if err != nil {
		return err
	}
	_, err = readAll(rd, bc.buf)
	return err
}

func (bc *benchClient) roundTrip(b *testing.B) time.Duration {
	start := time.Now()
	if err := bc.send(); err != nil {
		b.Fatal(err)
	}
	if err := bc.recv(); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// benchWindow is how many messages the pipelined client keeps in flight:
// enough to keep every stage busy, bounded so that the rate measures the
// path and not how TCP buffers fill.
const benchWindow = 32

// pipelined sends n messages while reading n echoes, at most benchWindow in
// flight, and returns how long that took.
func (bc *benchClient) pipelined(b *testing.B, n int) time.Duration {
	errc := make(chan error, 1)
	window := make(chan struct{}, benchWindow)
	start := time.Now()
	go func() {
		for range n {
			window <- struct{}{}
			if err := bc.send(); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	for range n {
		if err := bc.recv(); err != nil {
			b.Fatal(err)
		}
		<-window
	}
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// designs are the ways to put a tap between client and server; each returns
// the URL to dial.
var designs = []struct {
	name  string
	start func(b *testing.B, upstream string) string
}{
	{"rawtap", startRawTap},
	{"gorilla", startGorillaProxy},
	{"coder", startCoderProxy},
}

// startRawTap is this package, with an engine that keeps up.
func startRawTap(b *testing.B, upstream string) string {
	h := startTap(b, upstream, nil, func(context.Context, tap.Message) error { return nil })
	return h.url("/")
}

// mirrorQueue is the alternatives' bounded queue with a consumer that keeps
// up, as in the tap.
func mirrorQueue(b *testing.B) chan<- []byte {
	q := make(chan []byte, 4096)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range q {
		}
	}()
	b.Cleanup(func() { close(q); <-done })
	return q
}

// startGorillaProxy: a message-level relay on gorilla/websocket: accept the
// client, dial the upstream, then per direction read a whole message,
// write it on, queue the copy.
func startGorillaProxy(b *testing.B, upstream string) string {
	q := mirrorQueue(b)
	upg := gorillaws.Upgrader{ReadBufferSize: 32 << 10, WriteBufferSize: 32 << 10, CheckOrigin: func(*http.Request) bool { return true }}
	var wg sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr := http.Header{}
		for _, k := range []string{"Origin", "Authorization", "Cookie"} {
			if v := r.Header.Values(k); len(v) > 0 {
				hdr[k] = v
			}
		}
		uc, _, err := gorillaws.DefaultDialer.Dial(upstream, hdr)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		cc, err := upg.Upgrade(w, r, nil)
		if err != nil {
			uc.Close()
			return
		}
		wg.Add(1)
		defer wg.Done()
		pipe := func(dst, src *gorillaws.Conn) {
			for {
				typ, m, err := src.ReadMessage()
				if err != nil {
					dst.Close()
					return
				}
				if err := dst.WriteMessage(typ, m); err != nil {
					src.Close()
					return
				}
				select {
				case q <- m:
				default:
				}
			}
		}
		done := make(chan struct{})
		go func() { pipe(uc, cc); close(done) }()
		pipe(cc, uc)
		<-done
	}))
	b.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); wg.Wait() })
	return "ws://" + srv.Listener.Addr().String()
}

// startCoderProxy: the same relay on coder/websocket.
func startCoderProxy(b *testing.B, upstream string) string {
	q := mirrorQueue(b)
	var wg sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.Background()
		uc, _, err := coderws.Dial(ctx, upstream, &coderws.DialOptions{HTTPHeader: http.Header{"Origin": r.Header.Values("Origin")}})
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		cc, err := coderws.Accept(w, r, &coderws.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			uc.CloseNow()
			return
		}
		wg.Add(1)
		defer wg.Done()
		pipe := func(dst, src *coderws.Conn) {
			for {
				typ, m, err := src.Read(ctx)
				if err != nil {
					dst.CloseNow()
					return
				}
				if err := dst.Write(ctx, typ, m); err != nil {
					src.CloseNow()
					return
				}
				select {
				case q <- m:
				default:
				}
			}
		}
		done := make(chan struct{})
		go func() { pipe(uc, cc); close(done) }()
		pipe(cc, uc)
		<-done
	}))
	b.Cleanup(func() { srv.Close(); wg.Wait() })
	return "ws://" + srv.Listener.Addr().String()
}

func percentile(d []time.Duration, p float64) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	i := min(int(float64(len(s))*p), len(s)-1)
	return float64(s[i].Nanoseconds()) / 1e3
}

// BenchmarkEchoLatency alternates one direct round trip and one through the
// design, so that both see the same machine load; it reports both and the
// difference at p50 and p99 (µs).
func BenchmarkEchoLatency(b *testing.B) {
	for _, d := range designs {
		b.Run(d.name, func(b *testing.B) {
			upstream := benchEchoServer(b)
			direct := newBenchClient(b, upstream)
			via := newBenchClient(b, d.start(b, upstream))
			for range 200 { // warm up both paths
				direct.roundTrip(b)
				via.roundTrip(b)
			}
			dd := make([]time.Duration, 0, b.N)
			vd := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				dd = append(dd, direct.roundTrip(b))
				vd = append(vd, via.roundTrip(b))
			}
			b.StopTimer()
			b.ReportMetric(percentile(dd, 0.50), "direct-p50-µs")
			b.ReportMetric(percentile(dd, 0.99), "direct-p99-µs")
			b.ReportMetric(percentile(vd, 0.50), "p50-µs")
			b.ReportMetric(percentile(vd, 0.99), "p99-µs")
			b.ReportMetric(percentile(vd, 0.50)-percentile(dd, 0.50), "added-p50-µs")
			b.ReportMetric(percentile(vd, 0.99)-percentile(dd, 0.99), "added-p99-µs")
		})
	}
}

// BenchmarkEchoThroughput pipelines b.N messages (a writer and a reader on
// one connection) directly and through the design, in alternating rounds
// of 1000 so that both see the same machine load, and reports both rates
// and their ratio.
func BenchmarkEchoThroughput(b *testing.B) {
	for _, d := range designs {
		b.Run(d.name, func(b *testing.B) {
			upstream := benchEchoServer(b)
			direct := newBenchClient(b, upstream)
			via := newBenchClient(b, d.start(b, upstream))
			direct.pipelined(b, 1000)
			via.pipelined(b, 1000)
			b.ReportAllocs()
			b.ResetTimer()
			var dt, vt time.Duration
			for done := 0; done < b.N; done += 1000 {
				n := min(1000, b.N-done)
				dt += direct.pipelined(b, n)
				vt += via.pipelined(b, n)
			}
			b.StopTimer()
			directRate := float64(b.N) / dt.Seconds()
			viaRate := float64(b.N) / vt.Seconds()
			b.ReportMetric(directRate, "direct-msgs/s")
			b.ReportMetric(viaRate, "msgs/s")
			b.ReportMetric(viaRate/directRate, "ratio")
		})
	}
}
