package validate

import (
	"github.com/e2atap/e2atap/e2a"
	"github.com/e2atap/e2atap/frame"
)

// router finds what a sharded run needs before a shard judges a message:
// the stream key (request_id, sid, event id) and whether it is a
// chat.interrupt (which every shard must see). It reads only the top level
// of a JSON record in one pass (e2a.ScanHead: escapes and non-ASCII
// handled as the scanner does, so that routing and checking never
// disagree) and only the attributes of a frame; it does not validate: the
// shard's full scan does.
type router struct {
	head e2a.Head
	buf  []byte
}

// routeJSON returns the stream key of a JSON record (aliasing data or the
// router's buffer, valid until the next call) and whether it is a
// chat.interrupt.
func (r *router) routeJSON(data []byte) (key []byte, interrupt bool) {
	r.buf = e2a.ScanHead(data, r.buf[:0], &r.head)
	return r.head.RequestID, r.head.Interrupt
}

// routeFrame returns the stream key of a frame: sid, or id for an EVENT.
func routeFrame(f *frame.Frame) []byte {
	attr := "sid"
	if f.MsgType == frame.TypeEvent {
		attr = "id"
	}
	key, _ := f.Attr(attr)
	return key
}

// headKey reads the stream key from the head of an undecodable JSON
// message (invalid, or cut at a size limit): its request_id when the head
// holds it whole, else nil.
func headKey(data []byte, h *e2a.Head, buf []byte) ([]byte, []byte) {
	buf = e2a.ScanHead(data, buf[:0], h)
	return h.RequestID, buf
}
