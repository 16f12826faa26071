package ws

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

// maxHead bounds a request or response head the tap reads. A request head
// that does not end within it is not parsed but passed through, and the
// upstream answers it as it would directly.
const maxHead = 64 << 10

// connPhase is where a connection is, for shutdown.
type connPhase uint8

const (
	phaseHandshake connPhase = iota // reading the request, dialing, waiting for the upstream's answer
	phaseRelay                      // a WebSocket: relayed frame by frame and mirrored
	phaseSplice                     // anything else: passed through byte for byte
)

// serve runs one accepted connection. A complete WebSocket upgrade request
// is relayed and mirrored once the upstream has answered it with 101;
// anything else (plain HTTP, a refusal by the upstream, bytes that are not
// HTTP at all) is passed through unchanged.
func (c *conn) serve() {
	p := c.p
	defer c.closeSockets()
	cbr := bufio.NewReaderSize(c.client, 4096)
	c.mu.Lock()
	_ = c.client.SetReadDeadline(time.Now().Add(p.cfg.HandshakeTimeout))
	if c.closing.Load() {
		c.applyShutdownLocked() // a shutdown before this deadline was set
	}
	c.mu.Unlock()
	head, err := readHead(cbr)
	p.headDone(c)
	if c.shed.Load() {
		return // closed for want of room: nothing goes to the upstream
	}
	if c.closing.Load() {
		if err == nil {
			writeStatus(c.client, http.StatusServiceUnavailable, "e2atap: shutting down")
		}
		return
	}
	if err != nil {
		if len(head) == 0 && !errors.Is(err, os.ErrDeadlineExceeded) {
			return // connected and left: a TCP health check
		}
		c.splice(cbr, head, nil) // not a head the tap can read: the upstream's business
		return
	}
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(head)))
	if err != nil || !isUpgrade(req) {
		c.splice(cbr, head, nil)
		return
	}
	c.upgrade(cbr, head)
}

// upgrade forwards a WebSocket opening handshake as it was read (names,
// case and order of the headers, Host), and relays the upstream's answer
// as it comes. Only on the upstream's 101 does the client get a 101: the
// upstream's own response head, so that subprotocol and extensions are
// what the upstream chose. An upstream that cannot be reached gets the
// client a 502 (504 when it connected but did not answer in time), before
// any upgrade.
func (c *conn) upgrade(cbr *bufio.Reader, head []byte) {
	p := c.p
	ctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	var gone atomic.Bool
	stopWatch := c.watchClient(cbr, func() { gone.Store(true); cancel() })
	d, err := c.handshake(ctx, head)
	stopWatch()
	if err != nil {
		var ue *upstreamError
		switch {
		case c.closing.Load() || p.ctx.Err() != nil:
			writeStatus(c.client, http.StatusServiceUnavailable, "e2atap: shutting down")
		case gone.Load():
			// The client gave up first, as it would have directly.
		case exhausted(err):
			p.exhaustedNow(err)
			writeStatus(c.client, http.StatusServiceUnavailable, "e2atap: out of file descriptors")
		case errors.As(err, &ue) && ue.stage == "dial":
			p.health.fail("dial", ue.err)
			writeStatus(c.client, http.StatusBadGateway, "e2atap: upstream unreachable")
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded):
			p.health.fail("handshake", err)
			writeStatus(c.client, http.StatusGatewayTimeout, "e2atap: upstream did not answer the handshake in time")
		default:
			p.health.fail("handshake", err)
			writeStatus(c.client, http.StatusBadGateway, "e2atap: upstream closed the connection without an answer")
		}
		return
	}
	p.health.answered()
	if d.status != http.StatusSwitchingProtocols {
		// A refusal (403 from an Origin check, 404, 500…): the client gets
		// it as it came, body and all, and the connection is the peers'.
		c.splice(cbr, d.raw, d)
		return
	}
	if !c.enter(phaseRelay, d.nc) {
		d.nc.Close()
		return // Run aborted before the relay began: there is nothing to mirror
	}
	if _, err := c.client.Write(d.raw); err != nil {
		return
	}
	c.id = newConnID()
	p.log.Debug("ws: connection open", "conn", c.id)
	c.relay(cbr, d.br, d.ext)
	c.closeSockets()
	p.log.Debug("ws: connection closed", "conn", c.id, "messages", c.seq.Load())
	p.enqueueClosed(c)
}

// watchClient notices a client that hangs up while the tap waits for the
// upstream, and calls gone: a client's own timeout then ends the
// upstream's handshake too, so that a slow upstream is not left with
// connections nobody waits for. The returned stop ends the watch; cbr is
// the caller's again after it.
func (c *conn) watchClient(cbr *bufio.Reader, gone func()) (stop func()) {
	done := make(chan struct{})
	var stopping atomic.Bool
	c.mu.Lock()
	_ = c.client.SetReadDeadline(time.Time{})
	if c.closing.Load() {
		c.applyShutdownLocked()
	}
	c.mu.Unlock()
	go func() {
		defer close(done)
		if _, err := cbr.Peek(1); err != nil && !stopping.Load() && !errors.Is(err, os.ErrDeadlineExceeded) {
			gone()
		}
		// Bytes the client sent early stay buffered for the relay.
	}()
	return func() {
		stopping.Store(true)
		_ = c.client.SetReadDeadline(time.Now())
		<-done
		c.mu.Lock()
		_ = c.client.SetReadDeadline(time.Time{})
		if c.closing.Load() {
			c.applyShutdownLocked()
		}
		c.mu.Unlock()
	}
}

// upstreamError is a failure to reach the upstream at all (stage "dial").
type upstreamError struct {
	stage string
	err   error
}

func (e *upstreamError) Error() string { return "ws: upstream " + e.stage + ": " + e.err.Error() }
func (e *upstreamError) Unwrap() error { return e.err }

// dialed is the upstream after its answer to the opening handshake.
type dialed struct {
	nc     net.Conn
	br     *bufio.Reader // may already hold what follows the head (connection.ack, a body)
	raw    []byte        // the response head, byte for byte
	status int
	ext    extensions
}

// handshake connects to the upstream, sends it the client's request head
// (only the request target gains Config.Upstream's path, when it has one)
// and reads the response head.
func (c *conn) handshake(ctx context.Context, head []byte) (*dialed, error) {
	p := c.p
	dctx, dcancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
	nc, err := dialUpstream(dctx, p.up)
	dcancel()
	if err != nil {
		return nil, &upstreamError{stage: "dial", err: err}
	}
	if !c.enter(phaseHandshake, nc) {
		nc.Close()
		return nil, errors.New("ws: shutting down")
	}
	hctx, hcancel := context.WithTimeout(ctx, p.cfg.HandshakeTimeout)
	defer hcancel()
	stop := context.AfterFunc(hctx, func() { _ = nc.SetDeadline(time.Now()) })
	fail := func(err error) (*dialed, error) {
		stop()
		if hctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", hctx.Err(), err)
		}
		return nil, err
	}
	if _, err := nc.Write(rewriteTarget(head, p.up.prefix)); err != nil {
		return fail(err)
	}
	br := bufio.NewReaderSize(nc, 4096)
	raw, err := readHead(br)
	if err != nil {
		return fail(fmt.Errorf("ws: upstream handshake: %w", err))
	}
	if !stop() {
		return fail(hctx.Err())
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		return fail(fmt.Errorf("ws: upstream handshake: %w", err))
	}
	resp.Body.Close()
	_ = nc.SetDeadline(time.Time{})
	return &dialed{nc: nc, br: br, raw: raw, status: resp.StatusCode, ext: parseExtensions(resp.Header)}, nil
}

// rewriteTarget puts prefix in front of the request target of head's
// request line; the rest of head is left as it is.
func rewriteTarget(head []byte, prefix string) []byte {
	if prefix == "" {
		return head
	}
	sp := bytes.IndexByte(head, ' ')
	if sp < 0 || sp+1 >= len(head) || head[sp+1] != '/' {
		return head // authority or absolute form: left to the upstream
	}
	out := make([]byte, 0, len(head)+len(prefix))
	out = append(out, head[:sp+1]...)
	out = append(out, prefix...)
	return append(out, head[sp+1:]...)
}

// splice passes a connection through: what was read of the client so far
// (head) and then everything else, both ways, until both sides are done.
// With d, the upstream is already connected and head is its answer, for
// the client; without, the tap connects now and head goes to the
// upstream. Nothing is mirrored.
func (c *conn) splice(cbr *bufio.Reader, head []byte, d *dialed) {
	p := c.p
	var ubr io.Reader
	if d == nil {
		ctx, cancel := context.WithTimeout(p.ctx, p.cfg.DialTimeout)
		nc, err := dialUpstream(ctx, p.up)
		cancel()
		if err != nil {
			if !c.closing.Load() && p.ctx.Err() == nil {
				code, msg := http.StatusBadGateway, "e2atap: upstream unreachable"
				if exhausted(err) {
					p.exhaustedNow(err)
					code, msg = http.StatusServiceUnavailable, "e2atap: out of file descriptors"
				} else {
					p.health.fail("dial", err)
				}
				if len(head) > 0 {
					writeStatus(c.client, code, msg)
				}
			}
			return
		}
		p.health.answered()
		if !c.enter(phaseSplice, nc) {
			nc.Close()
			return
		}
		if _, err := nc.Write(rewriteTarget(head, p.up.prefix)); err != nil {
			return
		}
		ubr = nc
	} else {
		if !c.enter(phaseSplice, d.nc) {
			return
		}
		if _, err := c.client.Write(head); err != nil {
			return
		}
		ubr = d.br
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		pipe(c.upstream, cbr, c.client, c.p.cfg.CloseTimeout)
	}()
	pipe(c.client, ubr, c.upstream, c.p.cfg.CloseTimeout)
	<-done
}

// pipe copies src to dst until src ends; a clean end is passed on as a
// half-close, a peer's reset as a reset (resetBoth, waiting up to wait),
// any other failure ends both directions.
func pipe(dst net.Conn, src io.Reader, srcConn net.Conn, wait time.Duration) {
	buf := make([]byte, 32<<10)
	// Wrapped, so that neither ReadFrom nor WriteTo brings a buffer of its own.
	_, err := io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{src}, buf)
	if err == nil {
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
			return
		}
	}
	if isReset(err) {
		resetBoth(srcConn, dst, wait)
		return
	}
	dst.Close()
	srcConn.Close()
}

// readHead reads an HTTP head up to and including its empty line, at most
// maxHead bytes. On an error it returns what it read.
func readHead(br *bufio.Reader) ([]byte, error) {
	var head []byte
	for {
		line, err := br.ReadSlice('\n')
		head = append(head, line...)
		if len(head) > maxHead {
			return head, errors.New("head too large")
		}
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			return head, err
		}
		if len(line) <= 2 && (string(line) == "\r\n" || string(line) == "\n") {
			if len(head) == len(line) {
				continue // RFC 9112 §2.2: empty lines before the start line are ignored (and passed on as they came)
			}
			return head, nil
		}
	}
}

// writeStatus answers with a status of the tap's own and closes: the only
// answers e2atap ever writes itself are 502/504 (the upstream cannot be
// reached) and 503 (shutting down).
func writeStatus(nc net.Conn, code int, body string) {
	body += "\n"
	b := make([]byte, 0, 160+len(body))
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(code)...)
	b = append(b, "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\nConnection: close\r\n\r\n"...)
	b = append(b, body...)
	_ = nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, _ = nc.Write(b)
}
