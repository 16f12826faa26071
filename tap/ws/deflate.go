package ws

import (
	"compress/flate"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"

	"github.com/e2atap/e2atap/tap"
)

// extensions is what the upstream's handshake response agreed to, as far as
// the mirror needs to know.
type extensions struct {
	deflate bool // permessage-deflate is on: RSV1 marks a compressed message
	// Context takeover per sender: whether the sender's compressor keeps its
	// window across messages (then so must the mirror's inflater).
	clientTakeover bool
	serverTakeover bool
}

// parseExtensions reads Sec-WebSocket-Extensions of a 101 response (RFC 7692
// §7). Extensions other than permessage-deflate are relayed like everything
// else; their RSV-marked messages are not mirrored (DropDecode).
func parseExtensions(h http.Header) extensions {
	var e extensions
	for _, line := range h.Values("Sec-WebSocket-Extensions") {
		for ext := range strings.SplitSeq(line, ",") {
			params := strings.Split(ext, ";")
			if !strings.EqualFold(strings.TrimSpace(params[0]), "permessage-deflate") || e.deflate {
				continue
			}
			e = extensions{deflate: true, clientTakeover: true, serverTakeover: true}
			for _, p := range params[1:] {
				name, _, _ := strings.Cut(p, "=")
				switch strings.ToLower(strings.TrimSpace(name)) {
				case "client_no_context_takeover":
					e.clientTakeover = false
				case "server_no_context_takeover":
					e.serverTakeover = false
				}
			}
		}
	}
	return e
}

// windowSize is the largest LZ77 window permessage-deflate allows (2^15).
const windowSize = 32 << 10

// deflateTail ends a permessage-deflate message for compress/flate: the
// empty stored block the sender stripped (RFC 7692 §7.2.1), then an empty
// final stored block so that the reader stops with io.EOF instead of
// waiting for more input.
var deflateTail = []byte{0x00, 0x00, 0xff, 0xff, 0x01, 0x00, 0x00, 0xff, 0xff}

var errInflaterLost = errors.New("ws: compression context lost")

// inflater decompresses one direction's permessage-deflate messages for the
// mirror. With context takeover each message may refer to the previous 32 KiB
// of output, so the inflater keeps that window and must see every
// compressed message of its direction, in order, including the ones whose
// mirror copy is dropped.
type inflater struct {
	takeover bool
	lost     bool  // a message could not be inflated: the window is unknown from here on
	lostWhy  uint8 // the drop reason of the message that lost it
	src      twoPart
	fr       io.ReadCloser
	window   []byte // last ≤ windowSize bytes of output, with takeover
	chunk    []byte // discard buffer for output past the limit
}

// inflate results besides success.
const (
	inflateOK = iota
	inflateOversize
	inflateOverBudget
)

// twoPart reads a, then b: a compressed payload and deflateTail, without
// copying the payload to append the tail.
type twoPart struct{ a, b []byte }

func (t *twoPart) Read(p []byte) (int, error) {
	if len(t.a) == 0 {
		t.a, t.b = t.b, nil
		if len(t.a) == 0 {
			return 0, io.EOF
		}
	}
	n := copy(p, t.a)
	t.a = t.a[n:]
	return n, nil
}

func (t *twoPart) ReadByte() (byte, error) {
	if len(t.a) == 0 {
		t.a, t.b = t.b, nil
		if len(t.a) == 0 {
			return 0, io.EOF
		}
	}
	c := t.a[0]
	t.a = t.a[1:]
	return c, nil
}

// inflate decompresses in (a message's compressed payload, without
// deflateTail). The output is charged to budget as it grows, by capacity;
// charged is what out holds, for the caller to pass on or release. Output
// past maxBytes (inflateOversize) or past what the budget allows
// (inflateOverBudget) is not kept, but is still decompressed when the
// window depends on it.
func (f *inflater) inflate(in []byte, maxBytes int, budget *tap.Budget) (out []byte, charged int, res int, err error) {
	if f.lost {
		return nil, 0, inflateOK, errInflaterLost
	}
	f.src = twoPart{in, deflateTail}
	var dict []byte
	if f.takeover {
		dict = f.window
	}
	if f.fr == nil {
		f.fr = flate.NewReaderDict(&f.src, dict)
	} else if err := f.fr.(flate.Resetter).Reset(&f.src, dict); err != nil {
		return nil, 0, inflateOK, err
	}
	for {
		if len(out) == cap(out) {
			if len(out) > maxBytes {
				res = inflateOversize
				break
			}
			c := min(max(2*cap(out), 3*len(in), 512), maxBytes+1)
			if !budget.TryAcquire(c - cap(out)) {
				res = inflateOverBudget
				break
			}
			if budget != nil {
				charged += c - cap(out)
			}
			nb := make([]byte, len(out), c)
			copy(nb, out)
			out = nb
		}
		n, rerr := f.fr.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if rerr == io.EOF {
			f.keep(out)
			return out, charged, inflateOK, nil
		}
		if rerr != nil {
			budget.Release(charged)
			f.lost, f.lostWhy = f.takeover, tap.DropDecode
			return nil, 0, inflateOK, rerr
		}
	}
	// Not kept: drop the copy, but follow the stream to its end so the
	// window stays right for the next message, up to followFactor times
	// maxBytes of output.
	budget.Release(charged)
	if !f.takeover {
		return nil, 0, res, nil
	}
	f.keep(out)
	if f.chunk == nil {
		f.chunk = make([]byte, windowSize)
	}
	total, limit := len(out), followLimit(maxBytes)
	for {
		n, rerr := f.fr.Read(f.chunk)
		f.keep(f.chunk[:n])
		total += n
		if rerr == io.EOF {
			return nil, 0, res, nil
		}
		if rerr != nil {
			f.lost, f.lostWhy = true, tap.DropDecode
			return nil, 0, res, rerr
		}
		if total > limit {
			// A zip bomb, or a message no peer with a max_size of
			// maxBytes accepts (it fails the connection with 1009):
			// the window goes, not the relay's time.
			f.lost, f.lostWhy = true, tap.DropOversize
			return nil, 0, inflateOversize, nil
		}
	}
}

// followFactor bounds how far the inflater follows a message it does not
// keep (oversize, or over budget), for the window: up to followFactor
// times MaxMessageBytes of output. Inflating runs on the relay goroutine,
// before the message's last bytes are written on, and deflate expands up
// to 1032 times: a message of 8 MiB on the wire may inflate to 8 GiB, 2.4 s
// of inflating on an idle core (the peer, whose max_size stops it at 8
// MiB, answered 1009 in 0.4 s directly and 2.8 s through the tap).
const followFactor = 4

func followLimit(maxBytes int) int {
	if maxBytes > math.MaxInt/followFactor {
		return math.MaxInt
	}
	return followFactor * maxBytes
}

// keep slides the window over p.
func (f *inflater) keep(p []byte) {
	if !f.takeover {
		return
	}
	if f.window == nil {
		f.window = make([]byte, 0, windowSize)
	}
	if len(p) >= windowSize {
		f.window = append(f.window[:0], p[len(p)-windowSize:]...)
		return
	}
	if over := len(f.window) + len(p) - windowSize; over > 0 {
		n := copy(f.window, f.window[over:])
		f.window = f.window[:n]
	}
	f.window = append(f.window, p...)
}
