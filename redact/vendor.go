package redact

import (
	"bytes"
	"encoding/binary"
)

// The token shapes of more providers (KindVendorToken), payment card
// numbers (KindCard), IBANs (KindIBAN), North American phone numbers and
// URL-encoded key=value pairs. Every credential shape here is revealed at
// an anchor the text prefilter already stops at: a prefix's '_' or '-'
// (npm_, hf_, pypi-, dop_v1_, shpat_, sq0atp-, key-, glrt-…), the 'A' of a
// Telegram bot token's "AA", or a digit inside a long word run (Twilio
// SK…/AC…, Databricks dapi…, Discord, SendGrid SG.….…), which
// MayHoldCredentialText checks with digitToken.

// vendorPrefix is a token prefix through its separators; sep is the index
// of its first '_' or '-', the anchor find reaches it at.
type vendorPrefix struct {
	p   string
	sep int
	min int   // bytes of class cl after p
	cl  uint8 // 0: lower-case hex
	// rnd: the run reads as random (a digit, and upper- and lower-case
	// letters where cl has both): a short prefix common in words and
	// file names ("favicon.ico-<hex>.png", "API-VERSION…").
	rnd bool
	// bare: the prefix starts a word that neither '-' nor a hex digit
	// precedes (a URL escape's "%3D" aside; no "\\f" before it): a prefix
	// made of hex digits ("fc-") inside a run of hex digits and '-' (a
	// UUID) is none, so that the pre-check passes over such runs at one
	// look (hexRunRest, hexSkip; pctHexPrefix for the escape).
	bare bool
	// pair: the token is <id>_<secret>, a run of class cl, one '_' and
	// min bytes of class cl after it: a short prefix glued to names
	// ("re_compile_all").
	pair bool
}

var vendorPrefixes = func() (t [2][16][]vendorPrefix) {
	for _, v := range []vendorPrefix{
		{p: "npm_", min: 36, cl: alnum},                                           // npm
		{p: "hf_", min: 30, cl: alnum},                                            // Hugging Face
		{p: "pypi-AgEIcHlwaS5vcmc", min: 50, cl: word},                            // PyPI (a macaroon for pypi.org)
		{p: "dop_v1_", min: 64}, {p: "doo_v1_", min: 64}, {p: "dor_v1_", min: 64}, // DigitalOcean
		{p: "shpat_", min: 32}, {p: "shpca_", min: 32}, {p: "shppa_", min: 32}, {p: "shpss_", min: 32}, // Shopify
		{p: "sq0atp-", min: 22, cl: word}, {p: "sq0csp-", min: 43, cl: word}, // Square
		{p: "key-", min: 32},                                  // Mailgun
		{p: "glrt-", min: 20, cl: word},                       // GitLab runner
		{p: "gldt-", min: 20, cl: word},                       // GitLab deploy token
		{p: "glptt-", min: 40, cl: word},                      // GitLab pipeline trigger
		{p: "glft-", min: 20, cl: word},                       // GitLab feed token
		{p: "glsoat-", min: 20, cl: word},                     // GitLab SCIM OAuth access token
		{p: "gloas-", min: 20, cl: word},                      // GitLab OAuth application secret
		{p: "glcbt-", min: 20, cl: word},                      // GitLab CI/CD job token
		{p: "glimt-", min: 20, cl: word},                      // GitLab incoming mail token
		{p: "glagent-", min: 20, cl: word},                    // GitLab agent for Kubernetes
		{p: "glffct-", min: 20, cl: word},                     // GitLab feature flags client
		{p: "glrtr-", min: 20, cl: word},                      // GitLab runner (routable)
		{p: "glsa_", min: 32, cl: alnum | cUnder},             // Grafana service account
		{p: "glc_", min: 32, cl: alnum | cSlash},              // Grafana Cloud (base64 of its JSON)
		{p: "GOCSPX-", min: 24, cl: word},                     // Google OAuth client secret
		{p: "PMAK-", min: 59, cl: alnum | cDash},              // Postman API key
		{p: "pul-", min: 40},                                  // Pulumi access token
		{p: "NRAK-", min: 27, cl: cUpper | cDigit},            // New Relic user API key
		{p: "sbp_", min: 40},                                  // Supabase access token
		{p: "gsk_", min: 48, cl: alnum},                       // Groq
		{p: "xai-", min: 64, cl: alnum},                       // xAI
		{p: "pplx-", min: 40, cl: alnum},                      // Perplexity
		{p: "r8_", min: 36, cl: alnum},                        // Replicate
		{p: "whsec_", min: 32, cl: alnum | cSlash},            // Stripe webhook secret
		{p: "dckr_pat_", min: 27, cl: word},                   // Docker Hub
		{p: "lin_api_", min: 40, cl: alnum},                   // Linear
		{p: "rubygems_", min: 48},                             // RubyGems
		{p: "AGE-SECRET-KEY-1", min: 58, cl: cUpper | cDigit}, // age
		{p: "sntryu_", min: 64},                               // Sentry user auth token
		{p: "sntrys_", min: 40, cl: alnum | cSlash},           // Sentry org auth token (base64 JSON, "_", secret)
		{p: "lsv2_pt_", min: 32}, {p: "lsv2_sk_", min: 32},    // LangSmith personal and service keys
		{p: "napi_", min: 40, cl: cLower | cDigit},                 // Neon API key
		{p: "secret_", min: 43, cl: alnum},                         // Notion internal integration token
		{p: "ntn_", min: 40, cl: alnum},                            // Notion token (the newer prefix)
		{p: "figd_", min: 36, cl: word},                            // Figma personal access token
		{p: "pcsk_", min: 40, cl: alnum | cUnder},                  // Pinecone API key (id "_" secret)
		{p: "CFPAT-", min: 40, cl: word},                           // Contentful personal access token
		{p: "tskey-", min: 30, cl: word},                           // Tailscale auth, API and OAuth client keys
		{p: "pscale_", min: 36, cl: word},                          // PlanetScale service token, password, OAuth secret
		{p: "HRKU-", min: 40, cl: word},                            // Heroku API key (the newer prefix)
		{p: "rnd_", min: 32, cl: alnum},                            // Render API key
		{p: "nfp_", min: 36, cl: alnum},                            // Netlify personal access token
		{p: "sgp_", min: 40},                                       // Sourcegraph access token
		{p: "shippo_live_", min: 40}, {p: "shippo_test_", min: 40}, // Shippo
		{p: "xkeysib-", min: 64},                                                             // Brevo (Sendinblue) API key: <64 hex>-<16>
		{p: "aio_", min: 28, cl: alnum},                                                      // Adafruit IO key
		{p: "pnu_", min: 36, cl: alnum},                                                      // Prefect API key
		{p: "CLOJARS_", min: 60},                                                             // Clojars deploy token
		{p: "fm2_", min: 64, cl: alnum | cSlash},                                             // Fly.io macaroon ("FlyV1 fm2_…,fm2_…": flyMacaroons)
		{p: "fm1r_", min: 64, cl: alnum | cSlash}, {p: "fm1a_", min: 64, cl: alnum | cSlash}, // Fly.io (older)
		{p: "duffel_live_", min: 43, cl: word}, {p: "duffel_test_", min: 43, cl: word}, // Duffel
		{p: "fio-u-", min: 64, cl: word},                                       // Frame.io
		{p: "ico-", min: 32, cl: alnum, rnd: true},                             // Infracost
		{p: "tk-us-", min: 48, cl: word},                                       // Scalingo
		{p: "tfp_", min: 59, cl: word},                                         // Typeform personal token
		{p: "sm_pat_", min: 16, cl: alnum}, {p: "sm_aat_", min: 16, cl: alnum}, // SettleMint
		{p: "rdme_", min: 70, cl: cLower | cDigit},                   // ReadMe
		{p: "dnkey-", min: 79, cl: cLower | cDigit | cDash | cUnder}, // Defined Networking: <26>-<52>
		{p: "API-", min: 26, cl: cUpper | cDigit, rnd: true},         // Octopus Deploy
		// The tools AI agents call: search, scraping, sandboxes, inference.
		{p: "fc-", min: 32, rnd: true, bare: true},            // Firecrawl: fc-<32 hex> ("fc-layer-…": no hex run)
		{p: "e2b_", min: 40},                                  // E2B sandboxes: e2b_<40 hex>
		{p: "bkua_", min: 40},                                 // Buildkite user API token: bkua_<40 hex>
		{p: "tvly-", min: 32, cl: alnum, rnd: true},           // Tavily
		{p: "tvly-dev-", min: 32, cl: alnum, rnd: true},       // Tavily (development key)
		{p: "tvly-prod-", min: 32, cl: alnum, rnd: true},      // Tavily (production key)
		{p: "jina_", min: 48, cl: alnum, rnd: true},           // Jina AI ("jina_embeddings_v3": no run)
		{p: "nvapi-", min: 64, cl: word},                      // NVIDIA NIM / build.nvidia.com
		{p: "csk-", min: 40, cl: cLower | cDigit, rnd: true},  // Cerebras
		{p: "llx-", min: 40, cl: alnum, rnd: true},            // LlamaCloud (LlamaParse, LlamaIndex)
		{p: "fo1_", min: 43, cl: word},                        // Fly.io access token
		{p: "phx_", min: 40, cl: alnum, rnd: true},            // PostHog personal API key (phc_ is a public project key)
		{p: "rpa_", min: 40, cl: alnum},                       // RunPod API key
		{p: "tgp_v1_", min: 40, cl: word},                     // Together AI
		{p: "fw_", min: 24, cl: alnum, rnd: true},             // Fireworks AI ("fw_update", "fw_version": no run)
		{p: "re_", min: 20, cl: alnum, rnd: true, pair: true}, // Resend: re_<id>_<secret> ("re_compile", "re_match_all")
		{p: "bb_live_", min: 24, cl: word, rnd: true},         // Browserbase
	} {
		for k := 0; k < len(v.p); k++ {
			if v.p[k] == '_' || v.p[k] == '-' {
				v.sep = k
				break
			}
		}
		c := 0
		if v.p[v.sep] == '-' {
			c = 1
		}
		t[c][v.sep] = append(t[c][v.sep], v)
	}
	return t
}()

// vendorLast marks the two bytes a prefix has before its first
// separator (vendorLast[sep][last] is a bit set of the byte before it):
// the two bytes vendor looks at before anything else.
var vendorLast = func() (t [2][256][4]uint64) {
	for c, byLen := range vendorPrefixes {
		for _, vs := range byLen {
			for _, v := range vs {
				b := v.p[v.sep-2]
				t[c][v.p[v.sep-1]][b>>6] |= 1 << (b & 63)
			}
		}
	}
	return t
}()

// vendor checks the provider prefixes whose first separator is the '_' or
// '-' at s[i]: the prefix must start a word (no letter or digit before it).
func vendor(s []byte, i int) (st, e int, ok bool) {
	c := 0
	if s[i] == '-' {
		c = 1
	}
	if i < 2 || vendorLast[c][s[i-1]][s[i-2]>>6]&(1<<(s[i-2]&63)) == 0 {
		return 0, 0, false
	}
	w := i
	for w > 0 && i-w < 16 && is(s[w-1], alnum) {
		w--
	}
	pct := false
	if w < i && escLetter(s, w) {
		w++ // "\\nhf_…"
	} else if p := pctSepEnd(s, w, i); p > w {
		w, pct = p, true // "%20shpat_…", "%253Dshpat_…"
	}
	if w == i || i-w >= 16 || !pct && !wordStart(s, w) {
		return 0, 0, false
	}
	for _, v := range vendorPrefixes[c][i-w] {
		if !at(s, w, v.p) || v.bare && w > 0 && !pct && (s[w-1] == '-' || hexVal(s[w-1]) >= 0) {
			continue
		}
		b := w + len(v.p)
		if v.pair {
			// (The id's run, its '_', then the secret's: b is the secret's start.)
			if x := run(s, b, v.cl); x-b >= 4 && x-b <= 16 && x+1 < len(s) && s[x] == '_' {
				b = x + 1
			} else {
				continue
			}
		}
		if v.cl == 0 {
			e = hexRun(s, b)
		} else {
			e = run(s, b, v.cl)
		}
		if e-b >= v.min && (!v.rnd || mixedRun(s[w+len(v.p):e], v.cl)) {
			return w, e, true
		}
	}
	return 0, 0, false
}

// pctSepEnd is the end of the URL-encoded separator whose hex digits
// start the word s[w:i] (the '%' is s[w-1]): "%20", "%3D", "%22", also
// encoded twice ("%2520": "%25" is the '%'). It is w where there is none,
// or the escape spells a letter or a digit (a word goes on through it).
func pctSepEnd(s []byte, w, i int) int {
	if w < 1 || s[w-1] != '%' || i-w < 3 {
		return w
	}
	h, l := hexVal(s[w]), hexVal(s[w+1])
	p := w + 2
	if h == 2 && l == 5 && i-w >= 5 && hexVal(s[p]) >= 0 && hexVal(s[p+1]) >= 0 {
		h, l = hexVal(s[p]), hexVal(s[p+1])
		p += 2
	}
	if h < 0 || l < 0 || is(byte(h<<4|l), alnum) {
		return w
	}
	return p
}

// mixedRun reports a digit in t, and each case of letter that cl holds.
func mixedRun(t []byte, cl uint8) bool {
	var has uint8
	for _, c := range t {
		has |= class[c]
	}
	need := cDigit | cl&(cUpper|cLower)
	if cl == 0 {
		need = cDigit | cLower // hex: a digit and a letter
	}
	return has&need == need
}

// digitShape matches the token shapes revealed at a digit that no word
// check sees (too short a word before a '.', '/' or '~'): a Google OAuth
// access token "ya29.…" (at its '2'), a Google refresh token "1//0…", an
// Azure AD client secret "<3>8Q~<34>" (at its digit). It is cheap where
// none starts: a compare or two a digit.
func digitShape(s []byte, from, i int) (st, e int, ok bool) {
	n := len(s)
	switch {
	case s[i] == '2' && i >= 2 && i+3 < n && s[i+1] == '9' && s[i+2] == '.' && s[i-1] == 'a' && s[i-2] == 'y':
		if st = i - 2; st >= from && wordStart(s, st) {
			e = run(s, i+3, word)
			return st, e, e-i-3 >= 50
		}
	case s[i] == '1' && i+4 < n && s[i+1] == '/' && s[i+2] == '/' && s[i+3] == '0' && wordStart(s, i):
		e = run(s, i+4, word)
		return i, e, e-i-4 >= 40
	case i+2 < n && s[i+1] == 'Q' && s[i+2] == '~' && i >= 3 && i-3 >= from:
		st = i - 3
		if !is(s[st], word) || !is(s[st+1], word) || !is(s[st+2], word) || !wordStart(s, st) {
			return 0, 0, false
		}
		e = i + 3
		for e < n && (is(s[e], word) || s[e] == '~' || s[e] == '.') {
			e++
		}
		return st, e, e-i-3 >= 31
	}
	return 0, 0, false
}

// mayDigitShape is digitShape's gate, inlined: the byte after the digit.
func mayDigitShape(s []byte, i int) bool {
	if i+1 >= len(s) {
		return false
	}
	n1 := s[i+1]
	return n1 == '/' || n1 == 'Q' || n1 == '9' && s[i] == '2'
}

// hexRun returns the end of the run of lower-case hex digits at s[i].
func hexRun(s []byte, i int) int {
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
		i++
	}
	return i
}

// telegram matches a Telegram bot token "<8-10 digits>:AA<33>" whose "AA"
// is at s[i]; the digits start a word or follow "bot" (as in the API's
// URLs, "/bot123456789:AA…/getMe").
func telegram(s []byte, i int) (st, e int, ok bool) {
	if i < 9 || s[i-1] != ':' || !at(s, i, "AA") {
		return 0, 0, false
	}
	d := i - 1
	for d > 0 && i-1-d <= 10 && is(s[d-1], cDigit) {
		d--
	}
	if n := i - 1 - d; n < 8 || n > 10 {
		return 0, 0, false
	}
	if !wordStart(s, d) && !(d >= 3 && at(s, d-3, "bot")) {
		return 0, 0, false
	}
	e = run(s, i, word)
	return d, e, e-i >= 35
}

// digitToken checks the word run s[a:b] (which holds a digit) for the
// token shapes with no separator find stops at: Twilio SK…/AC… (34),
// Databricks dapi… (36), a Discord bot token (three base64url segments, the
// first one a user id in base64) and SendGrid's SG.<22>.<43>, where the run
// is either segment. st may be before a (never before from).
func digitToken(s []byte, from, a, b int) (st, e int, ok bool) {
	n := b - a
	if st, ok := twilioSID(s, a, b); ok {
		return st, twilioSecretAfter(s, st), true
	}
	if n == 36 && a > 0 && s[a-1] == '%' {
		// After an escape's hex digits, URL-encoded: "%27AC…%27" (the
		// run ends at the next escape's '%').
		if st, ok := twilioSID(s, a+2, b); ok {
			return st, twilioSecretAfter(s, st), true
		}
	}
	switch {
	case n >= 36 && n <= 40 && at(s, a, "dapi") && hexRun(s, a+4) >= a+36:
		return a, b, true
	case n >= 24 && n <= 28 && b+1 < len(s) && s[b] == '.' && discordID(s[a:b]):
		x := run(s, b+1, word)
		if x-b-1 == 6 && x < len(s) && s[x] == '.' {
			if y := run(s, x+1, word); y-x-1 >= 27 && y-x-1 <= 38 {
				return a, y, true
			}
		}
	case n == 22 && a >= 3 && at(s, a-3, "SG.") && a-3 >= from && b < len(s) && s[b] == '.':
		if y := run(s, b+1, word); y-b-1 >= 43 && wordStart(s, a-3) {
			return a - 3, y, true
		}
	case n >= 43 && a >= 26 && s[a-1] == '.' && at(s, a-26, "SG.") && a-26 >= from:
		if run(s, a-23, word) == a-1 && wordStart(s, a-26) {
			return a - 26, b, true
		}
	case n >= 29 && at(s, a, "GR1348941") && wordStart(s, a):
		// A GitLab runner registration token.
		return a, b, true
	case n >= 24 && a >= 4 && a-4 >= from && s[a-1] == '.' && s[a-4] == 'h' && s[a-3] == 'v' && (s[a-2] == 's' || s[a-2] == 'b' || s[a-2] == 'r') && wordStart(s, a-4):
		// A HashiCorp Vault token: hvs. (service), hvb. (batch), hvr.
		// (recovery).
		return a - 4, b, true
	}
	return dottedToken(s, from, a, b)
}

// dottedToken checks the word run s[a:b] (which holds a digit) for the
// provider tokens with no '_' or '-' separator that digitToken's cases do
// not see: a prefix glued to the run (Bitbucket ATBB…, JFrog AKCp…, Okta
// 00…, Meta EAA…, Square EAAA…, Firebase Cloud Messaging's APA91b…, a
// Mailchimp key's -us<n> suffix) or a dotted prefix before it (Doppler
// dp.st./dp.pt./…, Dropbox sl., Dynatrace dt0c01.<24>.<64>, Terraform
// Cloud <14>.atlasv1.<core>, a Cloudflare Origin CA key v1.0-…, an
// Airtable token pat<14>.<64 hex>), EasyPost EZAK…, ClickHouse Cloud
// 4b1d…, a JFrog reference token cmVmd…, a MaxMind license key …_mmk.
// Each was masked as high_entropy with
// no e2a.secret finding, or (all capitals, or lower-case hex) not masked
// at all. A glued prefix is short, so its random part must read as random
// (randomPart). It costs a compare or two a word run of 22 bytes or more.
func dottedToken(s []byte, from, a, b int) (st, e int, ok bool) {
	n := b - a
	if a >= 3 && s[a-1] == '.' {
		return afterDot(s, from, a, b)
	}
	if n == 40 && s[a+6] == '_' && at(s, b-4, "_mmk") { // a MaxMind license key: <6>_<29>_mmk
		return a, b, randomPart(s[a+7 : b-4])
	}
	switch s[a] {
	case 'A':
		switch {
		case n >= 73 && at(s, a, "AKCp"): // JFrog Artifactory API key
			return a, b, randomPart(s[a+4 : b])
		case n >= 32 && at(s, a, "ATBB"): // Bitbucket app password
			return a, b, randomPart(s[a+4 : b])
		case n >= 100 && at(s, a, "APA91b"): // FCM registration id or a server key's secret
			st = a
			if a >= 12 && s[a-1] == ':' && at(s, a-12, "AAAA") && run(s, a-12, word) == a-1 && a-12 >= from && wordStart(s, a-12) {
				st = a - 12 // the server key: "AAAA<7>:APA91b…"
			}
			return st, b, true
		}
	case 'E':
		if n == 58 && at(s, a, "EZAK") { // EasyPost production API key
			return a, b, randomPart(s[a+4 : b])
		}
		if (at(s, a, "EAAA") && n >= 40 && n <= 72 || at(s, a, "EAA") && n >= 100 && run(s, a, alnum) == b) && !inBase64(s, a, b) { // Square (64 bytes); Meta (Facebook, Instagram; 150 to 250)
			return a, b, randomPart(s[a+3 : b])
		}
	case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b', 'c', 'd', 'e', 'f':
		if n == 42 && at(s, a, "4b1d") || n == 64 && at(s, a, "cmVmd") {
			// A ClickHouse Cloud key (4b1d<38>), a JFrog reference
			// token (cmVmd<59>: base64 of "ref…").
			return a, b, randomPart(s[a+4 : b])
		}
		if (n == 36 || n == 37) && hexRun(s, a) == a+32 && at(s, a+32, "-us") && run(s, a+35, cDigit) == b {
			return a, b, true // a Mailchimp API key: <32 hex>-us<data center>
		}
		if n == 42 && s[a] == '0' && s[a+1] == '0' && !oktaInBase64(s, a, b) { // an Okta API token (SSWS)
			// (Not a random run glued to a PEM header's dashes that
			// happens to be as long: "00…-----BEGIN".)
			return a, b, randomPart(s[a+2:b]) && !bytes.Contains(s[a+2:b], []byte("---"))
		}
	}
	return 0, 0, false
}

// inBase64 reports a '+' or '/' next to the word run s[a:b], or a '='
// after it: the run is a part of a base64 text, which no token holds (a
// protobuf message in base64 starts "EAA" as often as a Meta token does:
// field 2, a varint, "\x10\x00").
func inBase64(s []byte, a, b int) bool {
	return a > 0 && (s[a-1] == '+' || s[a-1] == '/') || b < len(s) && (s[b] == '+' || s[b] == '/' || s[b] == '=')
}

// oktaInBase64 reports a word run s[a:b] of an Okta token's shape that
// is a part of a base64 text: a '/' before it, a '/' or '=' after it, or
// a '+' on both sides. One such run in 7 k of a base64 image's 42-byte
// runs starts "00"; a chunk's run ended by the next chunk's "data:image/…"
// was a split vendor_token too. A '+' on one side is a URL-encoded space
// ("SSWS+00…", "…+and"), and stays a token.
func oktaInBase64(s []byte, a, b int) bool {
	before := byte(' ')
	if a > 0 {
		before = s[a-1]
	}
	after := byte(' ')
	if b < len(s) {
		after = s[b]
	}
	return before == '/' || after == '/' || after == '=' || before == '+' && after == '+'
}

// afterDot is dottedToken for a word run after a '.' (s[a-1]).
func afterDot(s []byte, from, a, b int) (st, e int, ok bool) {
	n := b - a
	st, e = -1, b
	switch {
	case n == 64 && a >= 18 && at(s, a-18, "pat") && run(s, a-15, alnum) == a-1 && hexRun(s, a) == b:
		st = a - 18 // an Airtable personal access token: pat<14>.<64 hex>
	case n >= 172 && at(s, a-3, "v1.0-") && hexRun(s, a+2) == a+26 && s[a+26] == '-' && hexRun(s, a+27) == b:
		st = a - 3 // a Cloudflare Origin CA key: v1.0-<24 hex>-<146 hex>
	case n == 24 && a >= 7 && at(s, a-7, "dt0c01.") && b < len(s) && s[b] == '.':
		// A Dynatrace token at its public part: dt0c01.<24>.<64>.
		if y := run(s, b+1, alnum); y-b-1 >= 64 {
			st, e = a-7, y
		}
	case n < 32:
	case a >= 32 && at(s, a-32, "dt0c01.") && run(s, a-25, alnum) == a-1:
		st = a - 32 // at its secret
	case a >= 23 && at(s, a-9, ".atlasv1.") && run(s, a-23, alnum) == a-9:
		// A Terraform Cloud / Enterprise token: <14>.atlasv1.<60 or more>.
		if n >= 60 {
			st = a - 23
		}
	case n >= 50 && (at(s, a-3, "sl.") || a >= 5 && at(s, a-5, "sl.u.")):
		// A Dropbox access token: sl. (short-lived), sl.u.
		if randomPart(s[a:b]) {
			st = a - 3
			if s[a-2] != 'l' {
				st = a - 5
			}
		}
	default:
		st = doppler(s, a)
	}
	if st < 0 || st < from || !wordStart(s, st) {
		return 0, 0, false
	}
	return st, e, true
}

// doppler returns the start of the Doppler token prefix that ends at s[a]
// (after its '.'), or -1: dp.pt. (personal), dp.st. (service; also
// dp.st.<config>.), dp.ct. (CLI), dp.sa. (service account), dp.scim.,
// dp.audit..
func doppler(s []byte, a int) int {
	for _, p := range [...]string{"dp.pt.", "dp.st.", "dp.ct.", "dp.sa.", "dp.scim.", "dp.audit."} {
		if a >= len(p) && at(s, a-len(p), p) {
			return a - len(p)
		}
	}
	x := a - 1 // dp.st.<config>.
	for x > 0 && a-1-x < 64 && is(s[x-1], word) {
		x--
	}
	if x < a-1 && x >= 6 && at(s, x-6, "dp.st.") {
		return x - 6
	}
	return -1
}

// randomPart reports upper and lower case letters and a digit in v, and
// no identifier (camelCase words and a number): a random part, not a name.
func randomPart(v []byte) bool {
	var seen uint8
	for _, c := range v {
		seen |= class[c]
	}
	return seen&alnum == alnum && !identifier(v)
}

// twilioSID finds a Twilio SK/AC and 32 hex digits that is the word
// s[a:b] or one of its '-' or '_' separated parts ("x-SK…", "SK…-1437": an
// id made of one).
//
// A part starts at a or after a '-' or '_', and one that starts later
// than b-34 is too short: the separators are looked for before b-34 only
// (the word runs of base64 text, 22 to hundreds of bytes with none, were
// walked to their end at every word).
func twilioSID(s []byte, a, b int) (int, bool) {
	for k := a; k+34 <= b; {
		if (at(s, k, "SK") || at(s, k, "AC")) && hexRun(s, k+2) == k+34 && (k+34 == b || s[k+34] == '-' || s[k+34] == '_') {
			return k, true
		}
		k = sepAt(s, k, b-34) + 1
	}
	return 0, false
}

// sepAt is the first '-' or '_' in s[k:e], or e: eight bytes a step (the
// word runs of a base64 image, hundreds of bytes with neither, are walked
// once more here at every word after the pre-check's and Find's walks).
func sepAt(s []byte, k, e int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; k+8 <= e; k += 8 {
		w := binary.LittleEndian.Uint64(s[k:])
		d, u := w^'-'*ones, w^'_'*ones // a zero byte where '-', '_'
		if (d-ones)&^d&highs|(u-ones)&^u&highs != 0 {
			break
		}
	}
	for k < e && s[k] != '-' && s[k] != '_' {
		k++
	}
	return k
}

// discordID reports base64 of an ASCII decimal number, as a Discord
// token's first segment is: every group of four starts [MNO][DTjz][AEIMQUYcgk].
func discordID(seg []byte) bool {
	for k := 0; k+3 <= len(seg); k += 4 {
		c0, c1, c2 := seg[k], seg[k+1], seg[k+2]
		if c0 < 'M' || c0 > 'O' {
			return false
		}
		if c1 != 'D' && c1 != 'T' && c1 != 'j' && c1 != 'z' {
			return false
		}
		switch c2 {
		case 'A', 'E', 'I', 'M', 'Q', 'U', 'Y', 'c', 'g', 'k':
		default:
			return false
		}
	}
	return true
}

// minDigitToken is the shortest word run digitToken accepts (SendGrid's
// middle segment).
const minDigitToken = 22

// digitCandidate is digitToken for the text prefilter: the word run
// around the digit at s[i].
// end is the end of the word run.
func digitCandidate(s []byte, i int) (end int, ok bool) {
	a := i
	for a > 0 && is(s[a-1], word) {
		a--
	}
	if a > 0 && escLetter(s, a) {
		a++
	}
	b := runLong(s, i, word)
	if b-a < minDigitToken {
		return b, false
	}
	_, _, ok = digitToken(s, 0, a, b)
	return b, ok
}

// card matches a payment card number at s[i] (a digit that no letter or
// digit precedes): 13 to 19 digits, alone or in groups of 3 to 6 split by
// single spaces or dashes, the first group of four, with an issuer prefix
// (Visa, Mastercard, Amex, Discover, UnionPay, JCB, Diners) and a valid
// Luhn check digit. Millisecond timestamps (17…) and most ids have no
// issuer prefix; a random 16-digit id that has one passes the Luhn check
// one time in ten.
func card(s []byte, i int) (int, bool) {
	var d [19]byte
	n, e := 0, i
	var sep byte
	for g := 0; ; g++ {
		x := run(s, e, cDigit)
		gl := x - e
		if g == 0 && gl >= 13 && gl <= 19 {
			copy(d[:], s[e:x])
			n, e = gl, x
			break
		}
		if g == 0 && gl != 4 || g > 0 && (gl < 3 || gl > 6) || n+gl > 19 {
			return 0, false
		}
		copy(d[n:], s[e:x])
		n, e = n+gl, x
		if e+1 < len(s) && (sep == 0 && (s[e] == ' ' || s[e] == '-') || sep != 0 && s[e] == sep) && is(s[e+1], cDigit) {
			sep = s[e]
			e++
			continue
		}
		break
	}
	if n < 13 || e < len(s) && is(s[e], alnum) || !cardIIN(d[:n]) || !luhn(d[:n]) {
		return 0, false
	}
	return e, true
}

func cardIIN(d []byte) bool {
	n := len(d)
	p2 := int(d[0]-'0')*10 + int(d[1]-'0')
	p4 := p2*100 + int(d[2]-'0')*10 + int(d[3]-'0')
	switch {
	case d[0] == '4':
		return n == 13 || n == 16 || n == 19
	case p2 >= 51 && p2 <= 55, p4 >= 2221 && p4 <= 2720:
		return n == 16
	case p2 == 34 || p2 == 37:
		return n == 15
	case p2 == 35 || p2 == 62 || p2 == 65 || p4 == 6011 || p4/10 >= 644 && p4/10 <= 649:
		return n >= 16
	case p2 == 30 || p2 == 36 || p2 == 38 || p2 == 39:
		return n >= 14
	}
	return false
}

func luhn(d []byte) bool {
	sum := 0
	for k := len(d) - 1; k >= 0; k-- {
		x := int(d[k] - '0')
		if (len(d)-1-k)%2 == 1 {
			if x *= 2; x > 9 {
				x -= 9
			}
		}
		sum += x
	}
	return sum%10 == 0
}

// iban matches an IBAN starting at s[i] (two capital letters, then the
// two check digits): 15 to 34 capital letters and digits, written whole or
// in groups of four split by single spaces, mod 97 == 1.
func iban(s []byte, i int) (int, bool) {
	var d [34]byte
	n, e := 0, i
	x := run(s, i, cUpper|cDigit)
	switch {
	case x-i >= 15 && x-i <= 34:
		copy(d[:], s[i:x])
		n, e = x-i, x
	case x-i == 4:
		for {
			x = run(s, e, cUpper|cDigit)
			gl := x - e
			if gl > 4 || n+gl > 34 {
				return 0, false
			}
			copy(d[n:], s[e:x])
			n, e = n+gl, x
			if gl < 4 || e+1 >= len(s) || s[e] != ' ' || !is(s[e+1], cUpper|cDigit) {
				break
			}
			e++
		}
	default:
		return 0, false
	}
	if n < 15 || e < len(s) && is(s[e], alnum) || !is(d[2], cDigit) || !is(d[3], cDigit) {
		return 0, false
	}
	// Move the first four to the end, letters to 10..35, mod 97.
	r := 0
	for k := 0; k < n; k++ {
		c := d[(k+4)%n]
		if is(c, cDigit) {
			r = (r*10 + int(c-'0')) % 97
		} else {
			r = (r*100 + int(c-'A') + 10) % 97
		}
	}
	return e, r == 1
}

// nanp matches a North American number at the three digits s[i:i+3]:
// "(415) 555-0132" (from the '(' before i) or "415-555-0132",
// "415.555.0132"; area code and exchange start with 2 to 9.
func nanp(s []byte, from, i int) (st, e int, ok bool) {
	if s[i] < '2' {
		return 0, 0, false
	}
	st, j := i, i+3
	var sep byte
	switch {
	case i > from && s[i-1] == '(' && j < len(s) && s[j] == ')':
		st, j = i-1, j+1
		if j < len(s) && s[j] == ' ' {
			j++
		}
	case j < len(s) && (s[j] == '-' || s[j] == '.'):
		sep = s[j]
		j++
	default:
		return 0, 0, false
	}
	if run(s, j, cDigit) != j+3 || s[j] < '2' {
		return 0, 0, false
	}
	j += 3
	if j >= len(s) || s[j] != '-' && s[j] != '.' || sep != 0 && s[j] != sep {
		return 0, 0, false
	}
	j++
	if run(s, j, cDigit) != j+4 {
		return 0, 0, false
	}
	j += 4
	if j < len(s) && (is(s[j], alnum) || j+1 < len(s) && (s[j] == '-' || s[j] == '.') && is(s[j+1], cDigit)) {
		return 0, 0, false
	}
	return st, j, true
}

// encodedValueEnd reports where a URL-encoded value ends: at a delimiter
// of isValueEnd or at the encoding of one (%26 &, %20 space, %22 ", %27 ',
// %3B ;, %2C ,, %0A, %0D).
func encodedValueEnd(s []byte, e int) bool {
	if isValueEnd(s[e], 0, false, false) || s[e] == '+' { // '+' is a space in a form
		return true
	}
	if s[e] != '%' || e+2 >= len(s) {
		return false
	}
	switch string([]byte{s[e+1], s[e+2] | 0x20}) {
	case "26", "20", "22", "27", "3b", "2c", "0a", "0d", "5c":
		return true
	}
	return false
}

// twilioSecretAfter is the end of the Twilio SID at s[st:st+34] and of the
// secret given right after it, as awsSecretAfter's pair: an account SID
// (AC…) and its auth token (32 hex digits), an API key SID (SK…) and its
// secret (32 letters and digits), as a client's constructor takes them,
// Client('AC…', '<token>') (Python), new Twilio("AC…", "<token>") or
// twilio('AC…', '<token>') (Node): the SID alone was masked, the token
// printed. Between them: a quote (or JSON text's escaped one), a ',' or
// a ':', two spaces at most and a quote, also URL-encoded ("%27%2C+%27").
func twilioSecretAfter(s []byte, st int) int {
	e := st + 34
	quote := func(p int) int {
		switch {
		case p < len(s) && (s[p] == '"' || s[p] == '\''):
			return p + 1
		case at(s, p, `\"`):
			return p + 2 // in JSON text
		case atFold(s, p, "%22") || atFold(s, p, "%27"):
			return p + 3 // URL-encoded
		case atFold(s, p, "%5c%22"):
			return p + 6 // JSON text's, URL-encoded
		}
		return p
	}
	p := quote(e)
	switch {
	case p < len(s) && (s[p] == ',' || s[p] == ':'):
		p++
	case atFold(s, p, "%2c") || atFold(s, p, "%3a"):
		p += 3
	default:
		return e
	}
	for n := 0; p < len(s) && n < 2; n++ {
		if s[p] == ' ' || s[p] == '+' {
			p++
		} else if at(s, p, "%20") {
			p += 3
		} else {
			break
		}
	}
	p = quote(p)
	if s[st] == 'A' {
		if hexRun(s, p) != p+32 || p+32 < len(s) && is(s[p+32], word) {
			return e
		}
		return p + 32
	}
	x := run(s, p, alnum)
	if x-p != 32 || x < len(s) && is(s[x], word) || !mixedRun(s[p:x], cUpper|cLower) {
		return e
	}
	return x
}
