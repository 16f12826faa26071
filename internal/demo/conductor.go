package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/e2atap/e2atap/internal/gen"
)

// Taps names the e2atap taps that watch the simulation, for the ledger.
type Taps struct {
	WS, Log, NATS string
}

// ConductorConfig shapes the whole simulation's traffic.
type ConductorConfig struct {
	Gen    gen.Config
	Frames FrameGenConfig
	// FrameShare is the share of messages that are frames on NATS.
	FrameShare float64
	// Rate is the pace in messages per second; 0 sends as fast as delivery
	// allows.
	Rate float64
	// KeepaliveAfter: a chat silent this long gets a keepalive chunk (the
	// reference: 10 s), and a frame stream its next frame, so that at a
	// slow pace no stream looks abandoned to e2atap's idle timeout.
	KeepaliveAfter time.Duration
	// DeliverTimeout bounds the wait for a message to reach the other peer.
	DeliverTimeout time.Duration
	Taps           Taps
}

// Counters of a Conductor (read with Load from any goroutine).
type Counters struct {
	Messages   atomic.Uint64 // everything sent: requests, responses, frames
	Requests   atomic.Uint64
	Responses  atomic.Uint64 // responses on the wire
	LogOnly    atomic.Uint64 // log records that differ from their wire copy (leaked token)
	Keepalives atomic.Uint64 // keepalives sent for slow chats
	Frames     atomic.Uint64
	Cancelled  atomic.Uint64 // responses the AgentServer refused after an interrupt
	Altered    atomic.Uint64 // messages received different from what was sent
}

// Conductor sends the scripted traffic one message at a time and books
// the faults. Used from one goroutine.
type Conductor struct {
	cfg    ConductorConfig
	g      *gen.Generator
	fg     *FrameGen
	rnd    *rand.Rand
	gw     *Gateway
	as     *AgentServer
	pub    *FramePublisher
	ledger *Ledger
	last   map[string]time.Time // stream → last message sent
	lastKA time.Time
	C      Counters
}

// NewConductor ties the peers together. Faults in cfg.Gen.Faults and
// cfg.Frames.Faults choose what is injected.
func NewConductor(cfg ConductorConfig, gw *Gateway, as *AgentServer, pub *FramePublisher, ledger *Ledger) *Conductor {
	if cfg.DeliverTimeout <= 0 {
		cfg.DeliverTimeout = 5 * time.Second
	}
	if cfg.KeepaliveAfter <= 0 {
		cfg.KeepaliveAfter = time.Second
	}
	return &Conductor{
		cfg: cfg, g: gen.New(cfg.Gen), fg: NewFrameGen(cfg.Frames),
		rnd: rand.New(rand.NewPCG(cfg.Gen.Seed, 0xc0d)), gw: gw, as: as, pub: pub, ledger: ledger,
		last: map[string]time.Time{},
	}
}

// Run sends messages at cfg.Rate until ctx is done or n messages were
// scheduled (n ≤ 0: no limit). It returns nil when ctx ends it.
func (c *Conductor) Run(ctx context.Context, n int) error {
	start := time.Now()
	var timer *time.Timer
	for i := 0; n <= 0 || i < n; i++ {
		if c.cfg.Rate > 0 {
			due := start.Add(time.Duration(float64(i) / c.cfg.Rate * float64(time.Second)))
			if d := time.Until(due); d > 0 {
				if timer == nil {
					timer = time.NewTimer(d)
				} else {
					timer.Reset(d)
				}
				select {
				case <-ctx.Done():
					timer.Stop()
					return nil
				case <-timer.C:
				}
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		if err := c.Step(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	return nil
}

// Step sends the keepalives that are due, then one scheduled message.
func (c *Conductor) Step(ctx context.Context) error {
	if err := c.keepalives(ctx); err != nil {
		return err
	}
	if c.cfg.FrameShare > 0 && c.pub != nil && c.rnd.Float64() < c.cfg.FrameShare {
		return c.sendFrame(c.fg.Next())
	}
	return c.sendE2A(ctx, c.g.Next())
}

// Drain ends every live stream (finals, done chunks; nothing for the
// faults that never end) and flushes the frames.
func (c *Conductor) Drain(ctx context.Context) error {
	for _, m := range c.g.Drain() {
		if err := c.sendE2A(ctx, m); err != nil {
			return err
		}
	}
	if c.pub == nil {
		return nil
	}
	for _, m := range c.fg.Drain() {
		if err := c.sendFrame(m); err != nil {
			return err
		}
	}
	return c.pub.Flush()
}

func (c *Conductor) keepalives(ctx context.Context) error {
	now := time.Now()
	if now.Sub(c.lastKA) < c.cfg.KeepaliveAfter/4 {
		return nil
	}
	c.lastKA = now
	live := map[string]bool{}
	for _, id := range c.g.Live() {
		live[id] = true
		if t, ok := c.last[id]; ok && now.Sub(t) >= c.cfg.KeepaliveAfter {
			c.C.Keepalives.Add(1)
			if err := c.sendE2A(ctx, c.g.Keepalive(id)); err != nil {
				return err
			}
		}
	}
	if c.pub != nil {
		for _, sid := range c.fg.Live() {
			live[sid] = true
			if t, ok := c.last[sid]; ok && now.Sub(t) >= c.cfg.KeepaliveAfter {
				if m, ok := c.fg.Advance(sid); ok {
					if err := c.sendFrame(m); err != nil {
						return err
					}
				}
			}
		}
	}
	for id := range c.last {
		if !live[id] {
			delete(c.last, id)
		}
	}
	return nil
}

func (c *Conductor) sendE2A(ctx context.Context, m gen.Message) error {
	if m.Stream != "" {
		c.last[m.Stream] = time.Now()
	}
	switch m.Dir {
	case gen.ToServer:
		if err := c.gw.Send(m.Data); err != nil {
			return err
		}
		c.C.Messages.Add(1)
		c.C.Requests.Add(1)
		return c.await(c.as.Received(), m.Data)
	case gen.ToClient:
		onWire, err := c.as.Send(m)
		if errors.Is(err, ErrCancelled) {
			c.C.Cancelled.Add(1)
			return nil
		}
		if err != nil {
			return err
		}
		c.C.Messages.Add(1)
		if m.Fault != "" {
			// The AgentServer logs every response; the wire copy of a
			// log-only record carries no fault.
			taps := []string{c.cfg.Taps.Log}
			if onWire && !m.Log {
				taps = append(taps, c.cfg.Taps.WS)
			}
			c.ledger.Inject(Fault(m.Fault), m.Stream, taps...)
		}
		if m.Log {
			c.C.LogOnly.Add(1)
		}
		if !onWire {
			return nil
		}
		c.C.Responses.Add(1)
		want := m.Data
		if m.Log {
			want = m.Wire
		}
		return c.await(c.gw.Received(), want)
	}
	return fmt.Errorf("demo: message with no direction")
}

func (c *Conductor) sendFrame(m FrameMsg) error {
	c.last[m.Stream] = time.Now()
	if err := c.pub.Publish(m); err != nil {
		return err
	}
	c.C.Messages.Add(1)
	c.C.Frames.Add(1)
	if m.Fault != "" {
		c.ledger.Inject(m.Fault, m.Stream, c.cfg.Taps.NATS)
	}
	return nil
}

// await waits for the other peer to read the message and checks that it
// arrived unchanged.
func (c *Conductor) await(ch <-chan []byte, want []byte) error {
	t := time.NewTimer(c.cfg.DeliverTimeout)
	defer t.Stop()
	select {
	case got, ok := <-ch:
		if !ok {
			return errors.New("demo: connection closed")
		}
		if !bytes.Equal(got, want) {
			c.C.Altered.Add(1)
		}
		return nil
	case <-t.C:
		// Not ctx: a message already sent is waited for, or the next
		// wait would read it in place of its own.
		return ErrTimeout
	}
}
