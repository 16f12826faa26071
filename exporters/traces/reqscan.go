package traces

import "unicode/utf8"

// maxReqScan bounds how much of a request the Tracer reads for the fields
// the engine's scanner does not keep (agent, task, context, provenance).
// The reference writes them before method and params, so they sit in the
// first few hundred bytes; a request that puts them after a large params
// object simply has no agent attributes.
const maxReqScan = 16 << 10

// reqFields are the request's values the spans need beyond e2a.Record.
// They alias the request's bytes: copy them before the call returns.
type reqFields struct {
	agentID, sourceAgentID, agentRef []byte
	taskID, contextID                []byte
	sourceProtocol, abstractOp       []byte
}

// scanRequest reads the top-level agent_id, source_agent_id, agent_ref
// (its id, or the string itself), task_id, context_id and
// provenance.source_protocol / provenance.details.abstract_operation of a
// JSON request. It reads at most maxReqScan bytes, never allocates, and
// keeps only plain strings (no escapes, valid UTF-8): whatever it cannot
// read is left out, never guessed.
func scanRequest(data []byte, out *reqFields) {
	if len(data) > maxReqScan {
		data = data[:maxReqScan]
	}
	s := scanner{b: data}
	s.object(s.ws(0), 0, out)
}

type scanner struct{ b []byte }

// Objects the scanner descends into: the request, its provenance and
// agent_ref, and provenance.details.
const (
	lvlTop = iota
	lvlProvenance
	lvlAgentRef
	lvlDetails
)

func (s *scanner) ws(i int) int {
	for i < len(s.b) {
		switch s.b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// str reads the string at s.b[i] (a quote): its raw content, whether it
// has escapes, and the index after it; ok false if it is cut off.
func (s *scanner) str(i int) (v []byte, esc bool, next int, ok bool) {
	for j := i + 1; j < len(s.b); j++ {
		switch s.b[j] {
		case '"':
			return s.b[i+1 : j], esc, j + 1, true
		case '\\':
			esc = true
			j++
		}
	}
	return nil, false, 0, false
}

// skip returns the index after the value at s.b[i].
func (s *scanner) skip(i int) (int, bool) {
	if i >= len(s.b) {
		return 0, false
	}
	switch s.b[i] {
	case '"':
		_, _, j, ok := s.str(i)
		return j, ok
	case '{', '[':
		depth := 0
		for j := i; j < len(s.b); j++ {
			switch s.b[j] {
			case '"':
				_, _, k, ok := s.str(j)
				if !ok {
					return 0, false
				}
				j = k - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1, true
				}
			}
		}
		return 0, false
	}
	j := i
	for j < len(s.b) {
		switch s.b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j, j > i
		}
		j++
	}
	return 0, false // cut off: a literal may go on
}

// plain returns the string value at s.b[i] if it is a plain string (no
// escapes, valid UTF-8, not empty), and the index after the value.
func (s *scanner) plain(i int) (v []byte, next int, ok bool) {
	if i < len(s.b) && s.b[i] == '"' {
		str, esc, j, ok := s.str(i)
		if !ok {
			return nil, 0, false
		}
		if esc || len(str) == 0 || !utf8.Valid(str) {
			return nil, j, true
		}
		return str, j, true
	}
	j, ok := s.skip(i)
	return nil, j, ok
}

// object reads the members of the object at s.b[i] at nesting lvl; it
// returns the index after it, ok false on input it cannot read.
func (s *scanner) object(i, lvl int, out *reqFields) (int, bool) {
	if i >= len(s.b) || s.b[i] != '{' {
		return 0, false
	}
	i = s.ws(i + 1)
	if i < len(s.b) && s.b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(s.b) || s.b[i] != '"' {
			return 0, false
		}
		key, esc, j, ok := s.str(i)
		if !ok {
			return 0, false
		}
		if j = s.ws(j); j >= len(s.b) || s.b[j] != ':' {
			return 0, false
		}
		j = s.ws(j + 1)
		var dst *[]byte
		sub := -1
		if !esc {
			switch lvl {
			case lvlTop:
				switch string(key) {
				case "agent_id":
					dst = &out.agentID
				case "source_agent_id":
					dst = &out.sourceAgentID
				case "task_id":
					dst = &out.taskID
				case "context_id":
					dst = &out.contextID
				case "agent_ref":
					if j < len(s.b) && s.b[j] == '{' {
						sub = lvlAgentRef
					} else {
						dst = &out.agentRef
					}
				case "provenance":
					sub = lvlProvenance
				}
			case lvlAgentRef:
				if string(key) == "id" {
					dst = &out.agentRef
				}
			case lvlProvenance:
				switch string(key) {
				case "source_protocol":
					dst = &out.sourceProtocol
				case "details":
					sub = lvlDetails
				}
			case lvlDetails:
				if string(key) == "abstract_operation" {
					dst = &out.abstractOp
				}
			}
		}
		switch {
		case sub >= 0 && j < len(s.b) && s.b[j] == '{':
			j, ok = s.object(j, sub, out)
		case dst != nil:
			var v []byte
			v, j, ok = s.plain(j)
			if v != nil {
				*dst = v // the last occurrence wins, as in the engine's scanner
			}
		default:
			j, ok = s.skip(j)
		}
		if !ok {
			return 0, false
		}
		if j = s.ws(j); j >= len(s.b) {
			return 0, false
		}
		switch s.b[j] {
		case ',':
			i = s.ws(j + 1)
		case '}':
			return j + 1, true
		default:
			return 0, false
		}
	}
}
