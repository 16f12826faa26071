package jsonlog

import "github.com/e2atap/e2atap/redact"

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
	RuleAWS                       // an AWS access key id (AKIA…, ASIA…)
	RuleSlack                     // a Slack token (xoxb-, xoxp-, xapp-…)
	RuleStripe                    // a Stripe secret or restricted key
	RuleGoogle                    // a Google API key (AIza…)
	RulePrivateKey                // a PEM private key block
	RuleBasic                     // the credentials of "Basic <base64>"
	RuleAuthHeader                // an Authorization header's credentials, any scheme
	RuleCookie                    // a Cookie / Set-Cookie value
	RuleKeyValue                  // the value of password=…, api_key: … in text
	RuleURLUserinfo               // the user:password of a URL
	RuleCNID                      // a Chinese resident ID number
	RuleUserID                    // user_id=… in text
	RuleHighEntropy               // a long random token with no known prefix
	RuleVendorToken               // another provider's token (npm_, hf_, SG., Twilio, Telegram…)
	RuleCard                      // a payment card number (Luhn-valid)
	RuleIBAN                      // an IBAN (mod 97)
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
	RuleAWS:           "aws",
	RuleSlack:         "slack",
	RuleStripe:        "stripe",
	RuleGoogle:        "google",
	RulePrivateKey:    "private_key",
	RuleBasic:         "basic",
	RuleAuthHeader:    "authorization",
	RuleCookie:        "cookie",
	RuleKeyValue:      "key_value",
	RuleURLUserinfo:   "url_userinfo",
	RuleCNID:          "cn_id",
	RuleUserID:        "user_id",
	RuleHighEntropy:   "high_entropy",
	RuleVendorToken:   "vendor_token",
	RuleCard:          "card",
	RuleIBAN:          "iban",
}

func (r Rule) String() string {
	if r < NumRules {
		return RuleNames[r]
	}
	return "unknown"
}

// kindRule maps what redact.Find reports to a rule. An unknown kind still
// counts, as credential_key, so a new shape never goes uncounted.
var kindRule = func() (t [redact.NumKinds]Rule) {
	for k := range t {
		t[k] = RuleCredentialKey
	}
	t[redact.KindBearer] = RuleBearer
	t[redact.KindJWT] = RuleJWT
	t[redact.KindSK] = RuleSK
	t[redact.KindGitHub] = RuleGHP
	t[redact.KindGitLab] = RuleGLPAT
	t[redact.KindAWS] = RuleAWS
	t[redact.KindSlack] = RuleSlack
	t[redact.KindStripe] = RuleStripe
	t[redact.KindGoogle] = RuleGoogle
	t[redact.KindPrivateKey] = RulePrivateKey
	t[redact.KindBasic] = RuleBasic
	t[redact.KindAuthorization] = RuleAuthHeader
	t[redact.KindCookie] = RuleCookie
	t[redact.KindKeyValue] = RuleKeyValue
	t[redact.KindURLUserinfo] = RuleURLUserinfo
	t[redact.KindEmail] = RuleEmail
	t[redact.KindPhone] = RulePhone
	t[redact.KindCNID] = RuleCNID
	t[redact.KindUserID] = RuleUserID
	t[redact.KindHighEntropy] = RuleHighEntropy
	t[redact.KindVendorToken] = RuleVendorToken
	t[redact.KindCard] = RuleCard
	t[redact.KindIBAN] = RuleIBAN
	return t
}()

// isPII: masked without a fingerprint, except inside ids and keys.
func (r Rule) isPII() bool {
	return r == RuleEmail || r == RulePhone || r == RuleCNID || r == RuleUserID || r == RuleCard || r == RuleIBAN
}
