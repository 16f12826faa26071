package validate

import (
	"fmt"
	"sort"
)

// Rule is a rule of the catalogue (RULES.md), as a small integer so that a
// profile is an array lookup on the hot path.
type Rule uint8

// The rule catalogue. The IDs (RuleIDs) are a contract: never rename one.
const (
	RuleE2ADecode Rule = iota
	RuleE2ARequired
	RuleE2AType
	RuleE2AVersion
	RuleE2AStatus
	RuleE2AKind
	RuleE2ATimestamp
	RuleE2ATimestampUTC
	RuleE2ABody
	RuleE2AFailedKind
	RuleE2AFinalStatus
	RuleE2AKindFinal
	RuleE2ASeqStart
	RuleE2ASeqGap
	RuleE2ASeqDup
	RuleE2ASeqRegress
	RuleE2AAfterFinal
	RuleE2AMissingFinal
	RuleE2AResponseIDDup
	RuleE2AEchoMismatch
	RuleE2ASecret
	RuleE2AEnvelope
	RuleE2ALegacy
	RuleE2ARequestDup
	RuleJSONRPCInvalid
	RuleFrameDecode
	RuleFrameType
	RuleFrameFlags
	RuleFrameLimits
	RuleFrameAttr
	RuleFrameErrorFlag
	RuleFrameMetaFlag
	RuleFrameEtype
	RuleFrameSeqStart
	RuleFrameSeqGap
	RuleFrameSeqDup
	RuleFrameSeqRegress
	RuleFrameAfterDone
	RuleFrameMissingDone
	NumRules
)

// RuleIDs are the public IDs, indexed by Rule.
var RuleIDs = [NumRules]string{
	RuleE2ADecode:        "e2a.decode",
	RuleE2ARequired:      "e2a.required",
	RuleE2AType:          "e2a.type",
	RuleE2AVersion:       "e2a.version",
	RuleE2AStatus:        "e2a.status",
	RuleE2AKind:          "e2a.kind",
	RuleE2ATimestamp:     "e2a.timestamp",
	RuleE2ATimestampUTC:  "e2a.timestamp_utc",
	RuleE2ABody:          "e2a.body",
	RuleE2AFailedKind:    "e2a.failed_kind",
	RuleE2AFinalStatus:   "e2a.final_status",
	RuleE2AKindFinal:     "e2a.kind_final",
	RuleE2ASeqStart:      "e2a.seq_start",
	RuleE2ASeqGap:        "e2a.seq_gap",
	RuleE2ASeqDup:        "e2a.seq_dup",
	RuleE2ASeqRegress:    "e2a.seq_regress",
	RuleE2AAfterFinal:    "e2a.after_final",
	RuleE2AMissingFinal:  "e2a.missing_final",
	RuleE2AResponseIDDup: "e2a.response_id_dup",
	RuleE2AEchoMismatch:  "e2a.echo_mismatch",
	RuleE2ASecret:        "e2a.secret",
	RuleE2AEnvelope:      "e2a.envelope",
	RuleE2ALegacy:        "e2a.legacy",
	RuleE2ARequestDup:    "e2a.request_dup",
	RuleJSONRPCInvalid:   "jsonrpc.invalid",
	RuleFrameDecode:      "frame.decode",
	RuleFrameType:        "frame.type",
	RuleFrameFlags:       "frame.flags",
	RuleFrameLimits:      "frame.limits",
	RuleFrameAttr:        "frame.attr",
	RuleFrameErrorFlag:   "frame.error_flag",
	RuleFrameMetaFlag:    "frame.meta_flag",
	RuleFrameEtype:       "frame.etype",
	RuleFrameSeqStart:    "frame.seq_start",
	RuleFrameSeqGap:      "frame.seq_gap",
	RuleFrameSeqDup:      "frame.seq_dup",
	RuleFrameSeqRegress:  "frame.seq_regress",
	RuleFrameAfterDone:   "frame.after_done",
	RuleFrameMissingDone: "frame.missing_done",
}

func (r Rule) String() string {
	if r < NumRules {
		return RuleIDs[r]
	}
	return "unknown"
}

// ParseRule finds a rule by its public ID.
func ParseRule(id string) (Rule, bool) {
	for i, s := range RuleIDs {
		if s == id {
			return Rule(i), true
		}
	}
	return 0, false
}

// specSeverities are the severities of RULES.md's catalogue (the spec
// profile).
var specSeverities = [NumRules]Severity{
	RuleE2ADecode:        Error,
	RuleE2ARequired:      Error,
	RuleE2AType:          Error,
	RuleE2AVersion:       Warning,
	RuleE2AStatus:        Error,
	RuleE2AKind:          Error,
	RuleE2ATimestamp:     Error,
	RuleE2ATimestampUTC:  Warning,
	RuleE2ABody:          Error,
	RuleE2AFailedKind:    Error,
	RuleE2AFinalStatus:   Error,
	RuleE2AKindFinal:     Off,
	RuleE2ASeqStart:      Error,
	RuleE2ASeqGap:        Error,
	RuleE2ASeqDup:        Error,
	RuleE2ASeqRegress:    Error,
	RuleE2AAfterFinal:    Error,
	RuleE2AMissingFinal:  Warning,
	RuleE2AResponseIDDup: Error,
	RuleE2AEchoMismatch:  Warning,
	RuleE2ASecret:        Error,
	RuleE2AEnvelope:      Error,
	RuleE2ALegacy:        Info,
	RuleE2ARequestDup:    Error,
	RuleJSONRPCInvalid:   Error,
	RuleFrameDecode:      Error,
	RuleFrameType:        Error,
	RuleFrameFlags:       Warning,
	RuleFrameLimits:      Warning,
	RuleFrameAttr:        Error,
	RuleFrameErrorFlag:   Warning,
	RuleFrameMetaFlag:    Warning,
	RuleFrameEtype:       Warning,
	RuleFrameSeqStart:    Error,
	RuleFrameSeqGap:      Error,
	RuleFrameSeqDup:      Error,
	RuleFrameSeqRegress:  Error,
	RuleFrameAfterDone:   Error,
	RuleFrameMissingDone: Warning,
}

// Profile maps rules to severities and switches the reference behaviours
// on or off. The code paths are the same for every profile.
type Profile struct {
	Name     string
	Severity [NumRules]Severity
	// Keepalive: sequence -1 with body.event_type "keepalive" is a
	// heartbeat, outside all sequence rules.
	Keepalive bool
	// ServerPush: metadata._jiuwenswarm_server_push == true takes a record
	// out of every per-stream rule.
	ServerPush bool
	// Interrupt: a chat.interrupt request (intent cancel or supplement)
	// cancels the in-flight streams of its session_id.
	Interrupt bool
	// InvalidJSONReply: the AgentServer's reply to an undecodable message
	// (e2a.error, body.code E2A.INVALID_JSON, response_id invalid-json,
	// request_id null, final, sequence 0) belongs to no stream: its null
	// request_id is not e2a.required (the e2a.decode of the message it
	// answers is the finding). Off under spec, where request_id is
	// required on every response as the document says.
	InvalidJSONReply bool
}

// Profile names.
const (
	ProfileSpec        = "spec"
	ProfileJiuwenswarm = "jiuwenswarm"
)

// SpecProfile is the E2A document as written.
func SpecProfile() Profile {
	return Profile{Name: ProfileSpec, Severity: specSeverities}
}

// JiuwenswarmProfile is the reference implementation's real behaviour
// (RULES.md, "Reference behaviours").
func JiuwenswarmProfile() Profile {
	p := Profile{Name: ProfileJiuwenswarm, Severity: specSeverities, Keepalive: true, ServerPush: true, Interrupt: true, InvalidJSONReply: true}
	p.Severity[RuleE2AResponseIDDup] = Off
	p.Severity[RuleE2AKindFinal] = Error
	return p
}

// ProfileByName returns a built-in profile.
func ProfileByName(name string) (Profile, error) {
	switch name {
	case ProfileSpec:
		return SpecProfile(), nil
	case ProfileJiuwenswarm:
		return JiuwenswarmProfile(), nil
	}
	return Profile{}, fmt.Errorf("unknown profile %q (want %q or %q)", name, ProfileSpec, ProfileJiuwenswarm)
}

// WithSeverities returns p with rule severities overridden by id, e.g.
// {"e2a.legacy": "off"}. Every unknown rule or severity is reported.
func (p Profile) WithSeverities(over map[string]string) (Profile, error) {
	var bad []string
	for id, s := range over {
		r, ok := ParseRule(id)
		if !ok {
			bad = append(bad, fmt.Sprintf("unknown rule %q", id))
			continue
		}
		sev, ok := ParseSeverity(s)
		if !ok {
			bad = append(bad, fmt.Sprintf("rule %q: unknown severity %q (want error, warning, info or off)", id, s))
			continue
		}
		p.Severity[r] = sev
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return p, fmt.Errorf("profile %s: %v", p.Name, bad)
	}
	return p, nil
}
