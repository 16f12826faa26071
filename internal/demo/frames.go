package demo

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/e2atap/e2atap/frame"
)

// Subjects of the frame traffic (EventMesh Mode-1: requests to the agent's
// lite, chunks to the client's lite, demultiplexed by sid).
const (
	AgentSubject  = "agent.demo-agent"
	ClientSubject = "client.gw-1"
	replyTo       = "client-parent#client.gw-1"
)

// FrameGenConfig shapes the frame traffic of the simulated agent.
type FrameGenConfig struct {
	Seed uint64
	// Concurrent streams interleaved on the client subject.
	Concurrent int
	// Chunks per stream before the done chunk (min, max).
	MinChunks, MaxChunks int
	// FaultRate is the probability that a stream carries a fault.
	FaultRate float64
	// Faults that may be injected (frame faults only; others are ignored).
	Faults []Fault
}

// FrameMsg is one frame to publish.
type FrameMsg struct {
	Subject string
	Stream  string // sid
	Data    []byte
	// Fault is set on the frame that carries an injected fault: the chunk
	// after the lost one, or the last chunk of a stream without done.
	Fault Fault
}

type frameStream struct {
	sid     string
	chunks  int
	next    int
	skip    int
	fault   Fault
	sentReq bool
	done    bool
}

// FrameGen makes STREAM_REQ / STREAM_CHUNK frames as the reference's
// factories build them, with labelled faults. Deterministic for a seed;
// not safe for concurrent use.
type FrameGen struct {
	cfg    FrameGenConfig
	faults []Fault
	rnd    *rand.Rand
	live   []*frameStream
	n      int
}

// NewFrameGen returns a frame generator.
func NewFrameGen(cfg FrameGenConfig) *FrameGen {
	if cfg.Concurrent < 1 {
		cfg.Concurrent = 2
	}
	if cfg.MinChunks < 2 {
		cfg.MinChunks = 2
	}
	if cfg.MaxChunks < cfg.MinChunks {
		cfg.MaxChunks = cfg.MinChunks
	}
	g := &FrameGen{cfg: cfg, rnd: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0xf4a3e))}
	for _, f := range cfg.Faults {
		if f.IsFrame() {
			g.faults = append(g.faults, f)
		}
	}
	return g
}

func (g *FrameGen) newStream() *frameStream {
	g.n++
	s := &frameStream{
		sid:    fmt.Sprintf("demo-agent:%08x-%04d", g.rnd.Uint32(), g.n),
		chunks: g.cfg.MinChunks + g.rnd.IntN(g.cfg.MaxChunks-g.cfg.MinChunks+1),
		skip:   -1,
	}
	if len(g.faults) > 0 && g.rnd.Float64() < g.cfg.FaultRate {
		s.fault = g.faults[g.rnd.IntN(len(g.faults))]
		if s.fault == FrameLostChunk {
			// Never the first chunk (that would be a late start, not a
			// gap); the done chunk always follows, so a gap always shows.
			s.skip = 1 + g.rnd.IntN(s.chunks-1)
		}
	}
	return s
}

// Next returns the next frame of some live stream.
func (g *FrameGen) Next() FrameMsg {
	for len(g.live) < g.cfg.Concurrent {
		g.live = append(g.live, g.newStream())
	}
	i := g.rnd.IntN(len(g.live))
	return g.advance(i)
}

// Live returns the sids of the streams in flight.
func (g *FrameGen) Live() []string {
	out := make([]string, 0, len(g.live))
	for _, s := range g.live {
		if s.sentReq {
			out = append(out, s.sid)
		}
	}
	return out
}

// Advance returns the next frame of stream sid (false when it is not live).
func (g *FrameGen) Advance(sid string) (FrameMsg, bool) {
	for i, s := range g.live {
		if s.sid == sid {
			return g.advance(i), true
		}
	}
	return FrameMsg{}, false
}

// Drain returns the frames that end every live stream.
func (g *FrameGen) Drain() []FrameMsg {
	var out []FrameMsg
	for len(g.live) > 0 {
		out = append(out, g.advance(0))
	}
	return out
}

func (g *FrameGen) advance(i int) FrameMsg {
	s := g.live[i]
	finish := func() { s.done = true; g.live = append(g.live[:i], g.live[i+1:]...) }
	if !s.sentReq {
		s.sentReq = true
		b, _ := frame.AppendStreamRequest(nil, &frame.StreamRequest{SessionID: s.sid, ReplyTo: replyTo, Model: "demo-model", Prompt: []byte("hello")})
		return FrameMsg{Subject: AgentSubject, Stream: s.sid, Data: b}
	}
	m := FrameMsg{Subject: ClientSubject, Stream: s.sid}
	seq := s.next
	s.next++
	if seq == s.skip {
		// The lost chunk is never published; the next frame shows the gap.
		seq = s.next
		s.next++
		m.Fault = FrameLostChunk
	}
	c := frame.StreamChunk{SessionID: s.sid, Seq: int32(seq), EventType: "text"}
	switch {
	case seq < s.chunks:
		c.Data = []byte("token " + strconv.Itoa(seq) + " ")
		if seq == s.chunks-1 && s.fault == FrameMissingDone {
			// The last chunk: no done chunk will follow.
			m.Fault = FrameMissingDone
			finish()
		}
	default:
		c.Done, c.EventType = true, ""
		finish()
	}
	m.Data, _ = frame.AppendStreamChunk(nil, &c)
	return m
}

// FramePublisher is the simulated agent's NATS connection.
type FramePublisher struct {
	nc *nats.Conn
}

// DialPublisher connects to NATS.
func DialPublisher(url string) (*FramePublisher, error) {
	nc, err := nats.Connect(url, nats.Name("e2atap demo agent"))
	if err != nil {
		return nil, fmt.Errorf("frame publisher: %w", err)
	}
	return &FramePublisher{nc: nc}, nil
}

// Publish sends one frame (core NATS: at most once, in order per
// connection).
func (p *FramePublisher) Publish(m FrameMsg) error {
	return p.nc.Publish(m.Subject, m.Data)
}

// Flush waits until the server has everything published.
func (p *FramePublisher) Flush() error { return p.nc.FlushTimeout(5 * time.Second) }

// Close drains and closes the connection.
func (p *FramePublisher) Close() { p.nc.Close() }

// StartNATS starts an embedded NATS server on 127.0.0.1 (port 0: a free
// one) and waits until it accepts connections.
func StartNATS(port int) (*server.Server, error) {
	if port == 0 {
		port = server.RANDOM_PORT
	}
	opts := &server.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true, MaxPayload: 8 << 20}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, fmt.Errorf("nats: not ready on 127.0.0.1:%d", port)
	}
	return ns, nil
}
