package jsonlog

import "github.com/e2atap/e2atap/e2a"

// Rule names why a value was masked. The set is closed: the names are the
// label values of e2atap_redactions_total{rule}.
type Rule uint8

const (
	RuleBearer        Rule = iota // "Bearer <token>" in a string
	RuleJWT                       // a JWT in a string
	RuleSK                        // an sk-… API key in a string
	RuleGHP                       // a GitHub ghp_… token in a string
	RuleGLPAT                     // a GitLab glpat-… token in a string
	RuleCredentialKey             // a value under a credential-like key
	RuleAuth                      // a value under auth (bearer_token, extra_headers, _meta, ...)
	RuleRef                       // a *_ref value (api_key_ref, credential_ref)
	RuleContent                   // model output or user text (content policy)
	RuleDataURL                   // the payload of a data: URL (content policy)
	RuleLegacyBlob                // metadata._e2a_wire_legacy_* (content policy)
	RuleEmail                     // an e-mail address
	RulePhone                     // a phone number
	RuleTruncated                 // a value masked to fit max_record_bytes
	NumRules
)

// RuleNames are the label values of the rules, indexed by Rule.
var RuleNames = [NumRules]string{
	RuleBearer:        "bearer",
	RuleJWT:           "jwt",
	RuleSK:            "sk",
	RuleGHP:           "ghp",
	RuleGLPAT:         "glpat",
	RuleCredentialKey: "credential_key",
	RuleAuth:          "auth",
	RuleRef:           "ref",
	RuleContent:       "content",
	RuleDataURL:       "data_url",
	RuleLegacyBlob:    "legacy_blob",
	RuleEmail:         "email",
	RulePhone:         "phone",
	RuleTruncated:     "truncated",
}

func (r Rule) String() string {
	if r < NumRules {
		return RuleNames[r]
	}
	return "unknown"
}

// credRule maps the kind e2a.FindCredential reports to a rule. An unknown
// kind still counts, as credential_key, so a new shape never goes uncounted.
func credRule(kind string) Rule {
	switch kind {
	case e2a.CredBearer:
		return RuleBearer
	case e2a.CredJWT:
		return RuleJWT
	case e2a.CredSK:
		return RuleSK
	case e2a.CredGHP:
		return RuleGHP
	case e2a.CredGLPAT:
		return RuleGLPAT
	}
	return RuleCredentialKey
}
