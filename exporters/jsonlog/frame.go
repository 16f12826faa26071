package jsonlog

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"

	"github.com/e2atap/e2atap/frame"
)

// frame writes a decoded EventMeshFrame as an open JSON object:
// {"msgType":2,"flags":1,"seq":5,"attrs":{...},"data":"..." — attributes in
// wire order (duplicates kept as duplicate keys), data as text.
func (st *state) frame(f *frame.Frame) {
	st.out = append(st.out, `{"msgType":`...)
	st.out = strconv.AppendUint(st.out, uint64(f.MsgType), 10)
	st.out = append(st.out, `,"flags":`...)
	st.out = strconv.AppendUint(st.out, uint64(f.Flags), 10)
	st.out = append(st.out, `,"seq":`...)
	st.out = strconv.AppendInt(st.out, int64(f.Seq), 10)
	st.out = append(st.out, `,"attrs":{`...)
	st.path = append(st.path[:0], "attrs"...)
	first := true
	f.Attrs(func(name, value []byte) bool {
		if !first {
			st.out = append(st.out, ',')
		}
		first = false
		ks := len(st.out)
		st.writeKey(nil, name, false)
		st.path = append(st.path[:5], '.')
		st.path = append(st.path, st.out[ks+1:len(st.out)-1]...)
		st.out = append(st.out, ':')
		m := st.decide(ctxPlain, 0, name)
		switch {
		case m.act != actPlain:
			st.strValue(nil, value, m)
		case !st.embedded(value):
			st.strValue(nil, value, m)
		}
		return true
	})
	st.out = append(st.out, `},"data":`...)
	st.path = append(st.path[:0], "data"...)
	d := f.Data
	switch {
	case len(d) == 0:
		st.out = append(st.out, `""`...)
	case st.embedded(d):
	case st.r.content == ContentMask:
		st.out = appendLenMask(st.out, len(d))
		st.hit(RuleContent)
	case st.r.content == ContentDrop:
		st.out = append(st.out, `""`...)
		st.hit(RuleContent)
	case utf8.Valid(d) && f.MsgType == frame.TypeStreamChunk && st.r.content == ContentKeep:
		// A chunk's text continues in the next chunk of its sid: where it
		// is in the line, for the Writer's carry (carry.go).
		st.deltaAt = len(st.out)
		st.delta = append(st.delta[:0], d...)
		st.strValue(nil, d, mode{})
		st.deltaEnd = len(st.out)
	case utf8.Valid(d):
		st.strValue(nil, d, mode{})
	default:
		// Binary data under "keep": credentials and personal data are
		// masked in the bytes before they are encoded, so that no secret
		// survives in base64 either.
		var changed bool
		st.enc, changed = st.maskSpans(st.enc[:0], d, false, false)
		if changed {
			st.addPath()
		}
		st.out = append(st.out, '"')
		st.out = base64.StdEncoding.AppendEncode(st.out, st.enc)
		st.out = append(st.out, `","data_encoding":"base64"`...)
	}
	st.path = st.path[:0]
}

// embedded redacts s as JSON when it is a JSON object or array (a meta
// attribute, an E2A record or CloudEvent carried as frame data) and writes
// the result as a JSON string. It reports false, writing nothing, when s is
// not JSON.
func (st *state) embedded(s []byte) bool {
	k := 0
	for k < len(s) && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n' || s[k] == '\r') {
		k++
	}
	if k == len(s) || (s[k] != '{' && s[k] != '[') {
		return false
	}
	sub := st.r.get()
	defer st.r.put(sub)
	sub.in = s
	sub.out = sub.line[:0]
	var err error
	var e int
	if s[k] == '{' {
		e, err = sub.object(k, ctxTop, 0, true)
	} else {
		e, err = sub.array(k, mode{})
	}
	sub.line = sub.out[:0]
	if err != nil || sub.ws(e) != len(s) {
		return false
	}
	changed := false
	for r, n := range sub.counts {
		st.counts[r] += n
		changed = changed || n > 0
	}
	if changed {
		st.addPath()
	}
	st.out = append(st.out, '"')
	st.out = appendEscaped(st.out, sub.out)
	st.out = append(st.out, '"')
	return true
}
