package ws

import (
	"time"

	"github.com/e2atap/e2atap/tap"
)

// Connections that have not sent a complete request head yet (heads) hold
// a descriptor and a goroutine each for up to HandshakeTimeout, and cost
// nothing to open: left unbounded, a few hundred idle or slowloris
// connections took every descriptor the process had, so that no Gateway
// was relayed and the metrics port (/readyz) could not accept either, for
// as long as they stayed (a head that never ends is then passed through
// to the upstream, two descriptors more). So at most maxHeads(nofile)
// connections wait for their head; past it, the oldest of them that has
// waited headMinWait is closed, and while none has, the listener waits
// (new clients wait in its backlog). A client that sends its head at once,
// as a Gateway does, is never closed for it.
const (
	headMinWait = 250 * time.Millisecond
	// headsMin and headsMax bound maxHeads: a few even under a tiny
	// descriptor limit; at most what a burst of real clients needs (each
	// waiter holds a goroutine and a 4 KiB reader).
	headsMin = 8
	headsMax = 4096
)

// maxHeads is how many connections may wait for their head under a
// descriptor limit of nofile (0: unknown): a quarter of it, so that
// relays, dials, the outputs and the metrics port keep the rest.
func maxHeads(nofile uint64) int {
	if nofile == 0 {
		return headsMax
	}
	return int(min(max(nofile/4, headsMin), headsMax))
}

// headWait is a connection's place among those waiting for their head.
type headWait struct {
	c     *conn
	since time.Time
}

// admit makes room for one more connection waiting for its head. It
// closes the oldest waiters that have waited headMinWait, as many as are
// over the bound, and reports how long the caller should wait before it
// accepts (0: accept now).
func (p *Proxy) admit(now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.heads.Len() < headsMin {
		return 0
	}
	limit := maxHeads(nofileLimit())
	var shed []*conn
	for p.heads.Len() >= limit {
		e := p.heads.Front()
		w := e.Value.(*headWait)
		if wait := w.since.Add(headMinWait).Sub(now); wait > 0 {
			p.shedNow(shed)
			return wait
		}
		p.heads.Remove(e)
		w.c.headElem = nil
		w.c.shed.Store(true)
		shed = append(shed, w.c)
	}
	p.shedNow(shed)
	return 0
}

// shedNow closes the sockets of the connections admit let go (p.mu held:
// closing a socket does not block), and counts and logs them.
func (p *Proxy) shedNow(shed []*conn) {
	if len(shed) == 0 {
		return
	}
	for _, c := range shed {
		_ = c.client.Close()
		p.stats.Error(tap.ErrOther)
	}
	p.shedTotal += uint64(len(shed))
	now := time.Now()
	if p.shedLogged.IsZero() || now.Sub(p.shedLogged) >= time.Minute {
		p.log.Warn("ws: too many connections without a request head: the oldest closed (logged at most once a minute)",
			"closed", p.shedTotal, "waiting", p.heads.Len(), "max_waiting", maxHeads(nofileLimit()), "min_wait", headMinWait.String())
		p.shedLogged, p.shedTotal = now, 0
	}
}

// waitHead enters c among the connections waiting for their head.
func (p *Proxy) waitHead(c *conn, now time.Time) {
	c.headElem = p.heads.PushBack(&headWait{c: c, since: now})
}

// headDone takes c out of the connections waiting for their head (its head
// came, or it ended); safe to call twice.
func (p *Proxy) headDone(c *conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.headElem != nil {
		p.heads.Remove(c.headElem)
		c.headElem = nil
	}
}
