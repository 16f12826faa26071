package ws

import (
	"bufio"
	"container/list"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/e2atap/e2atap/tap"
)

// relayBufSize is what one read may take from a socket. Reads go straight
// into it (bufio hands over its few buffered bytes first, then steps aside).
const relayBufSize = 32 << 10

// conn is one Gateway connection and its upstream.
type conn struct {
	p   *Proxy
	id  string
	seq atomic.Int64 // message index within the connection, both directions
	// gap: a copy of this connection was lost since the last one queued;
	// the next copy, whichever its direction, carries Gap (the engine gaps
	// every stream of the connection). gapWhy is the last drop's reason,
	// for the Lost message that stands in when no copy follows.
	gap    atomic.Bool
	gapWhy atomic.Uint32

	closing atomic.Bool // Run is stopping: close with 1001 at the next frame boundary
	// shed: closed by admit while it waited for its request head (too
	// many waited); headElem is its place among them (guarded by p.mu).
	shed     atomic.Bool
	headElem *list.Element

	// io is what each direction's relay is doing (DirUpstream-1,
	// DirDownstream-1), for the watcher (watchBehind).
	io [2]relayState
	// behindMu guards behind (what the engine was told last: the
	// connection is behind) and ended (its ConnClosed is queued or on its
	// way: nothing more is told about it).
	behindMu sync.Mutex
	behind   bool
	ended    bool
	settled  int // looks in a row that found the relay keeping up, while behind

	mu       sync.Mutex // guards the fields below against shutdown/kill from Run
	client   net.Conn
	upstream net.Conn
	phase    connPhase
	closeBy  time.Time
	killed   bool
}

// relayState is what one direction's relay is doing: writing since when
// (unix ns, 0: not writing), and whether a read filled what it asked for
// (more may have been waiting) since the watcher last looked.
type relayState struct {
	writing atomic.Int64
	full    atomic.Bool
}

// lost records a dropped copy.
func (c *conn) lost(reason uint8) {
	c.p.stats.Drop(reason)
	c.gapWhy.Store(uint32(reason))
	c.gap.Store(true)
}

func (c *conn) gapReason() uint8 { return uint8(c.gapWhy.Load()) }

// enter moves the connection to phase with its upstream socket, unless Run
// has aborted (false). Deadlines left from the handshake are cleared, and
// a shutdown asked for meanwhile is applied to the new phase.
func (c *conn) enter(phase connPhase, upstream net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.killed {
		return false
	}
	c.phase, c.upstream = phase, upstream
	if phase != phaseHandshake {
		_ = c.client.SetDeadline(time.Time{})
		_ = upstream.SetDeadline(time.Time{})
	}
	if c.closing.Load() {
		c.applyShutdownLocked()
	}
	return true
}

// closeSockets closes both sockets; safe to call twice.
func (c *conn) closeSockets() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.client.Close()
	if c.upstream != nil {
		c.upstream.Close()
	}
}

// relay copies both directions until both have ended.
func (c *conn) relay(cbr, ubr *bufio.Reader, ext extensions) {
	var rsv byte
	if ext.deflate {
		rsv = 0x40
	}
	maxBytes := c.p.cfg.MaxMessageBytes
	up := &half{c: c, dir: tap.DirUpstream, src: cbr, srcConn: c.client, dst: c.upstream, maskOut: true,
		inf: &inflater{takeover: ext.clientTakeover}, io: &c.io[0]}
	down := &half{c: c, dir: tap.DirDownstream, src: ubr, srcConn: c.upstream, dst: c.client,
		inf: &inflater{takeover: ext.serverTakeover}, io: &c.io[1]}
	up.parser = newFrameParser(up, maxBytes, rsv)
	down.parser = newFrameParser(down, maxBytes, rsv)
	up.parser.budget, down.parser.budget = c.p.cfg.Budget, c.p.cfg.Budget
	up.other, down.other = down, up

	done := make(chan struct{})
	go func() {
		defer close(done)
		down.finish(down.run())
	}()
	up.finish(up.run())
	<-done
	// A message still being reassembled will never end: let its bytes go.
	up.parser.release()
	down.parser.release()
}

// shutdown asks the connection to close with 1001 at the next frame
// boundary of each direction, by closeBy at the latest.
func (c *conn) shutdown(closeBy time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeBy = closeBy
	c.closing.Store(true)
	c.applyShutdownLocked()
}

func (c *conn) applyShutdownLocked() {
	now := time.Now()
	switch c.phase {
	case phaseHandshake:
		// Wake whoever waits for the client or the upstream: the handshake
		// ends with 503.
		_ = c.client.SetReadDeadline(now)
		if c.upstream != nil {
			_ = c.upstream.SetReadDeadline(now)
		}
	case phaseRelay:
		// Wake the relays that wait for input; bound the ones that wait to
		// write.
		for _, nc := range []net.Conn{c.client, c.upstream} {
			_ = nc.SetReadDeadline(now)
			_ = nc.SetWriteDeadline(c.closeBy)
		}
	case phaseSplice:
		// No frame boundary to close at: what is under way gets until
		// closeBy.
		for _, nc := range []net.Conn{c.client, c.upstream} {
			_ = nc.SetDeadline(c.closeBy)
		}
	}
}

// kill closes the sockets: Run's grace period is over.
func (c *conn) kill() {
	c.mu.Lock()
	c.killed = true
	c.mu.Unlock()
	c.closeSockets()
}

// half is one direction of a connection. Its goroutine is the only writer
// of dst and the only user of its parser and inflater.
type half struct {
	c       *conn
	other   *half
	dir     tap.Direction
	src     *bufio.Reader
	srcConn net.Conn
	dst     net.Conn
	maskOut bool // dst is the upstream: frames the proxy writes must be masked
	parser  *frameParser
	inf     *inflater
	discard bool // relaying has stopped: what still arrives is not mirrored
	io      *relayState
}

var errUnframed = errors.New("ws: stream not at a frame boundary")

// run relays src to dst until the stream ends. The mirror takes each chunk
// before it is written on: a copy is queued before the peer can answer it,
// so the engine never sees a response ahead of the request that caused it
// (written first, a request's copy could lose that race to its answer's
// under load, and a finished stream would then look like a new one). The
// mirror's share of the relay's time is a frame parse and a copy, plus the
// inflate of a compressed message.
func (h *half) run() error {
	buf := make([]byte, relayBufSize)
	for {
		limit := len(buf)
		if h.c.closing.Load() && !h.parser.closeSeen {
			switch {
			case h.parser.broken:
				return errUnframed
			case h.parser.atBoundary():
				return h.goAway()
			default:
				// Read no further than the end of this frame, so the
				// close can follow it.
				limit = min(limit, h.parser.toBoundary())
			}
		}
		n, err := h.src.Read(buf[:limit])
		if n > 0 {
			now := time.Now()
			h.observe(buf[:n], now)
			// A write that blocks (the peer does not read) makes the
			// connection behind (watchBehind); a read that fills its
			// buffer says more may wait, so it is not caught up yet.
			if n == limit {
				h.io.full.Store(true)
			}
			h.io.writing.Store(now.UnixNano())
			_, werr := h.dst.Write(buf[:n])
			h.io.writing.Store(0)
			if werr != nil {
				return werr
			}
		}
		if err != nil {
			if h.c.closing.Load() && errors.Is(err, os.ErrDeadlineExceeded) {
				// The wake-up from shutdown: go on with the closing deadline.
				h.c.mu.Lock()
				closeBy := h.c.closeBy
				h.c.mu.Unlock()
				if time.Now().Before(closeBy) {
					_ = h.srcConn.SetReadDeadline(closeBy)
					continue
				}
			}
			return err
		}
	}
}

// goAway ends the direction at shutdown: a 1001 close to dst's peer, then
// src is read (not relayed) until its peer answers the close of the other
// half.
func (h *half) goAway() error {
	if _, err := h.dst.Write(closeFrame(closeGoingAway, "going away", h.maskOut)); err != nil {
		return err
	}
	h.discard = true
	buf := make([]byte, 4096)
	for !h.parser.closeSeen && !h.parser.broken {
		n, err := h.src.Read(buf)
		h.parser.feed(buf[:n], time.Time{})
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				h.c.mu.Lock()
				closeBy := h.c.closeBy
				h.c.mu.Unlock()
				if time.Now().Before(closeBy) {
					_ = h.srcConn.SetReadDeadline(closeBy)
					continue
				}
			}
			return err
		}
	}
	return nil
}

// finish reacts to the end of the direction. A clean end of input is
// passed on as a half-close. After a close frame in this direction (the
// closing handshake), the other direction gets CloseTimeout to end the
// same way: its peer owes no more than its own close. Without one (a peer
// that half-closes mid-session and keeps reading), the other direction is
// relayed on until it ends by itself, as it would be directly and as a
// spliced connection is: cutting it after CloseTimeout cut the reading
// peer's responses short (1006) and left their streams a missing_final
// that e2atap caused. A peer's reset is passed on as a reset (resetBoth).
// Anything else ends both at once.
func (h *half) finish(err error) {
	switch {
	case err == nil:
		// goAway completed; the conn closes both sockets when both halves
		// are done.
	case errors.Is(err, io.EOF):
		if cw, ok := h.dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			_ = h.dst.Close()
		}
		if h.parser.closeSeen {
			_ = h.other.srcConn.SetReadDeadline(time.Now().Add(h.c.p.cfg.CloseTimeout))
		}
	case isReset(err):
		resetBoth(h.srcConn, h.dst, h.c.p.cfg.CloseTimeout)
	default:
		h.srcConn.Close()
		h.dst.Close()
	}
}

// observe feeds relayed bytes to the mirror.
func (h *half) observe(b []byte, now time.Time) {
	if h.parser.broken {
		return
	}
	if h.parser.feed(b, now) {
		// The stream stopped making sense to the mirror (the peers will
		// likely close it); it is still relayed as it is.
		h.c.lost(tap.DropDecode)
		h.c.p.log.Debug("ws: mirror lost framing", "conn", h.c.id, "dir", h.dir.String())
	}
}

// overBudget is the parser's report of a copy let go half-way: it is lost
// now, even if its message never ends.
func (h *half) overBudget() {
	if !h.discard {
		h.c.lost(tap.DropBudget)
	}
}

// message is the parser's sink: one complete data message. It owns the
// message's charge: passed on with the copy, or released when the copy is
// dropped.
func (h *half) message(m parsedMessage) {
	p := h.c.p
	budget := p.cfg.Budget
	if h.discard || h.parser.closeSeen {
		// After a close frame in this direction its sender may send no
		// more data (RFC 6455 5.5.1) and the receiving peer does not
		// deliver what still comes (Python websockets drops it, gorilla's
		// reader stops at the close): judged, a final record there made a
		// stream the receiver never saw end succeed.
		budget.Release(m.charged)
		return
	}
	p.stats.Count(h.dir, m.wireSize)
	idx := h.c.seq.Add(1) - 1
	reason := -1
	data, charged := m.payload, m.charged
	switch {
	case m.foreignRSV:
		reason = int(tap.DropDecode)
	case m.oversize, m.overBudget:
		reason = int(tap.DropOversize)
		if m.overBudget {
			reason = int(tap.DropBudget)
		}
		if m.compressed && h.inf.takeover && !h.inf.lost {
			// Its bytes were not kept: the window is gone, and with it
			// every later copy of this direction (counted as this reason).
			h.inf.lost, h.inf.lostWhy = true, uint8(reason)
		}
		if m.overBudget {
			return // counted when it was let go (overBudget)
		}
	case m.compressed:
		if h.inf.lost {
			reason = int(h.inf.lostWhy)
			break
		}
		if !h.inf.takeover && len(p.queue) == cap(p.queue) {
			reason = int(tap.DropQueueFull) // no need to inflate what cannot be queued
			break
		}
		out, outCharged, res, err := h.inf.inflate(m.payload, p.cfg.MaxMessageBytes, budget)
		budget.Release(charged) // the compressed bytes have served
		charged = 0
		switch {
		case err != nil:
			reason = int(tap.DropDecode)
		case res == inflateOversize:
			reason = int(tap.DropOversize)
		case res == inflateOverBudget:
			reason = int(tap.DropBudget)
		default:
			data, charged = out, outCharged
		}
	}
	if reason < 0 {
		format := tap.FormatAuto
		if m.op == opText {
			format = tap.FormatJSON
		}
		msg := tap.Message{
			Tap:     p.cfg.Name,
			Pos:     tap.Position{Kind: tap.PosConn, Name: h.c.id, Offset: idx},
			Conn:    h.c.id,
			Dir:     h.dir,
			Time:    m.at,
			Format:  format,
			Data:    data,
			Gap:     h.c.gap.Swap(false),
			Charged: charged,
		}
		select {
		case p.queue <- msg:
			if idx&63 == 0 { // fresh while the drain is stuck in a slow emit
				p.stats.Lag.Store(int64(len(p.queue)))
			}
			return
		default:
			reason = int(tap.DropQueueFull)
		}
	}
	budget.Release(charged)
	h.c.lost(uint8(reason))
}
