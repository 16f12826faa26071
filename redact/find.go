package redact

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"unsafe"
)

// Kind says which shape a Match is. The names (Kind.String) are metric
// label values: the set is closed.
type Kind uint8

const (
	KindNone          Kind = iota
	KindBearer             // the token of "Bearer <token>" / "Bearer: <token>"
	KindBasic              // the credentials of "Basic <base64>"
	KindAuthorization      // an Authorization header's credentials, any scheme
	KindJWT                // eyJ….….…
	KindSK                 // sk-…, sk-proj-…, sk-ant-… (OpenAI, Anthropic)
	KindGitHub             // ghp_ gho_ ghs_ ghu_ ghr_ github_pat_
	KindGitLab             // glpat-
	KindAWS                // AKIA…/ASIA… access key ids
	KindSlack              // xoxb- xoxp- xoxa- xoxr- xoxs- xoxc- xoxd- xapp-
	KindStripe             // sk_live_ sk_test_ rk_live_ rk_test_
	KindGoogle             // AIza… API keys
	KindVendorToken        // another provider's token: npm_, hf_, pypi-, SG., dop_v1_, shpat_, sq0atp-, key-, Twilio, Discord, Telegram, Databricks…
	KindPrivateKey         // a PEM private key block
	KindCookie             // a Cookie / Set-Cookie header's value
	KindKeyValue           // the value of a credential-named key in text (password=…)
	KindURLUserinfo        // the user:password of scheme://user:password@host
	KindEmail              // an e-mail address
	KindPhone              // a phone number (+CC…, CN mobile)
	KindCNID               // a Chinese resident ID number (check digit valid)
	KindUserID             // the value of user_id=… in text (the reference masks it)
	KindHighEntropy        // a long random token with no known prefix (masked, not a credential for e2a.secret)
	KindCard               // a payment card number (issuer prefix, 13 to 19 digits, Luhn-valid)
	KindIBAN               // an IBAN (country, check digits, mod 97)
	NumKinds
)

var kindNames = [NumKinds]string{
	KindNone:          "none",
	KindBearer:        "bearer",
	KindBasic:         "basic",
	KindAuthorization: "authorization",
	KindJWT:           "jwt",
	KindSK:            "sk",
	KindGitHub:        "ghp",
	KindGitLab:        "glpat",
	KindAWS:           "aws",
	KindSlack:         "slack",
	KindStripe:        "stripe",
	KindGoogle:        "google",
	KindVendorToken:   "vendor_token",
	KindPrivateKey:    "private_key",
	KindCookie:        "cookie",
	KindKeyValue:      "key_value",
	KindURLUserinfo:   "url_userinfo",
	KindEmail:         "email",
	KindPhone:         "phone",
	KindCNID:          "cn_id",
	KindUserID:        "user_id",
	KindHighEntropy:   "high_entropy",
	KindCard:          "card",
	KindIBAN:          "iban",
}

func (k Kind) String() string {
	if k < NumKinds {
		return kindNames[k]
	}
	return "unknown"
}

// Credential reports whether the kind is a credential (rule e2a.secret's
// business) rather than personal data.
func (k Kind) Credential() bool {
	return k > KindNone && k < KindEmail
}

// Match is one thing to mask: s[Start:End] is the value (a header's scheme,
// a key=, "scheme://" and "@host" stay outside it).
type Match struct {
	Start, End int
	Kind       Kind
}

// Text is what Find reads: a string or a byte slice.
type Text interface{ ~string | ~[]byte }

const (
	aPrefix = 1 << iota // a byte inside a token prefix: A (AKIA, AIza), J (eyJ), '-', '_'
	aScheme             // b, B: Bearer, Basic
	aSep                // '=', ':' or '|': key=value, key: value, scheme://, | key | value |
	aAt                 // '@': e-mail
	aDigit              // a digit or '+': phone, CN ID
	aProse              // 'w': "password is <words>" (prosePassword)
	aCJK                // 0xEF, 0xAF, 0xBA: a CJK label's separator (cjkPair)
)

// anchor marks the bytes where a local check runs. They are chosen to be
// rare in prose: a token prefix is found at its separator ("sk-" at '-',
// "ghp_" at '_') or its capital letter ("AKIA", "eyJ"), not at its first
// letter, so that ordinary text costs a table look-up a byte.
var anchor = func() (t [256]uint8) {
	for _, c := range []byte("AJ-_") {
		t[c] |= aPrefix
	}
	t['b'] |= aScheme
	t['B'] |= aScheme
	t['='] |= aSep
	t[':'] |= aSep
	t['|'] |= aSep // a table's cell (tableCell)
	t['@'] |= aAt
	for c := '0'; c <= '9'; c++ {
		t[c] |= aDigit
	}
	t['+'] |= aDigit
	t['w'] |= aProse
	t[0xEF] |= aCJK
	t[0xAF] |= aCJK
	t[0xBA] |= aCJK
	t['W'] |= aProse // SQL's PASSWORD '<pw>' (sqlPasswordWord)
	t['q'] |= aProse // Redis's requirepass <pw> (requirepassWord)
	return t
}()

// anchorBits[k][c] has bit k set if c is an anchor: the eight look-ups of
// eight bytes make a bit mask of their anchors.
var anchorBits = shiftedBits(&anchor)

// Find returns the first thing to mask in s at or after from (no match
// starts before from). "First" is in the order of the anchors that reveal
// them, which is the order of their starts except where a key or an e-mail
// local part reaches back. In a text that is one data: URL with a base64
// payload, or a media file's base64, that holds no encoded token prefix,
// no match that starts in the payload is a credential (dataurl.go). It never allocates.
func Find[T Text](s T, from int) (Match, bool) {
	b := view(s)
	m, ok := find(b, from)
	if ok && m.Kind.Credential() {
		if p, inert := inertB64(b); inert && m.Start >= p {
			m.Kind = KindHighEntropy // (dataurl.go)
		}
	}
	return m, ok
}

// view is s as a byte slice, without a copy: the detector only reads it.
// (The detector works on []byte, not on the type parameter: generic code
// with a dictionary was 2.4 times slower on the hot path.)
func view[T Text](s T) []byte {
	if unsafe.Sizeof(s) == unsafe.Sizeof("") {
		str := *(*string)(unsafe.Pointer(&s))
		return unsafe.Slice(unsafe.StringData(str), len(str))
	}
	return *(*[]byte)(unsafe.Pointer(&s))
}

func find(s []byte, from int) (Match, bool) { return scan(s, from, false) }

// scan is find; nested is set for text decoded from base64, whose own
// base64 runs are not decoded again.
func scan(s []byte, from int, nested bool) (Match, bool) { return scanAt(s, from, from, nested) }

// scanAt is scan from s[start] on, with from (<= start) the bound of the
// matches, of words reaching back and of the text they look at.
func scanAt(s []byte, from, start int, nested bool) (Match, bool) {
	return scanProse(s, from, start, nested, proseState{})
}

// scanProse is scanAt with what proseValue judged of s already (from
// proseSeed, for a text searched again from later starts).
func scanProse(s []byte, from, start int, nested bool, prose proseState) (Match, bool) {
	return scanState(s, from, start, b64state{nested: nested, prose: prose})
}

// scanState is scanProse with the base64 check's state to start from.
func scanState(s []byte, from, start int, b64 b64state) (Match, bool) {
	n := len(s)
	t := &anchor
	c := newAnchorCursor(&anchorBits, anchorSet, start, n)
	cmdDone := b64.cmd.start(n) // cmdArg judged the value up to here
	if cmdDone < 0 && start > 0 {
		// A search from a later start (the next match's, as Masker.Text
		// and the secret rule search a text) does not judge the whole text
		// again: cmdArg is called as it was (judged at each start, a text
		// with nine matches was read nine times).
		cmdDone = 0
	}
	for i := start; i < n; i++ {
		if i = c.next(s, i); i >= n {
			break
		}
		a := t[s[i]]
		switch {
		case a&aPrefix != 0:
			if m, ok := prefixed(s, from, i); ok {
				return m, true
			}
		case a&aScheme != 0:
			if i == 0 || !is(s[i-1], cUpper|cLower) || escLetter(s, i-1) || encodedEqBefore(s, i) {
				if m, ok := scheme(s, i); ok {
					return m, true
				}
				if i+1 < len(s) && s[i+1]|0x20 == 'y' {
					if m, ok := identifiedBy(s, from, i); ok {
						return m, true // SQL's IDENTIFIED BY '…'
					}
				}
			}
		case a&aSep != 0:
			if m, ok := sep(s, from, i); ok {
				return m, true
			}
		case a&aAt != 0:
			if m, ok := oracle(s, from, i, false); ok {
				return m, true
			}
			if m, ok := email(s, from, i); ok {
				return m, true
			}
		case a&aDigit != 0:
			if i >= 2 && (s[i-1] == 'u' || s[i-1]|0x20 == 'd' || s[i-1]|0x20 == 'f' && s[i] == '1') && mayEscCJK(s, i) {
				if m, ok := escCJKPair(s, from, i); ok {
					return m, true // "\u5bc6\u7801\uff1a<pw>"
				}
			}
			if i >= cmdDone && s[i] != '+' {
				if cmdDone < 0 && b64.judgeCmd(s) == 1 {
					cmdDone = n // no digit of s is a command's value
				} else if m, ok, next := cmdArg(s, from, i); ok {
					if m.Start > i {
						// A value in URL-encoded text, decoded: what
						// comes before it is searched first (a match
						// there is the first).
						if m2, ok := scanState(s[:m.Start], from, i, b64); ok {
							return m2, true
						}
					}
					return m, true
				} else {
					cmdDone = next
				}
			}
			m, ok, next := number(s, from, i, &b64)
			if ok {
				return m, true
			}
			i = max(next, i+1) - 1 // never stay in place
		case a&aProse != 0:
			if s[i] == 'q' {
				if m, ok := requirepassWord(s, from, i); ok {
					return m, true
				}
			} else if i >= 1 && s[i-1]|0x20 == 'p' {
				if m, ok := prosePassword(s, from, i); ok {
					return m, true // "my pwd is <pw>" (prosePwd)
				}
			} else if i >= 4 && s[i-1]|0x20 == 's' && s[i-2]|0x20 == 's' {
				if m, ok := prosePassword(s, from, i); ok {
					return m, true
				}
				if m, ok := sqlPasswordWord(s, from, i); ok {
					return m, true
				}
				if m, ok := expectGlob(s, from, i); ok {
					return m, true // expect "*assword*" / send "<pw>\r"
				}
				if m, ok := passwdWord(s, from, i); ok {
					return m, true // openssl passwd <pw>, mkpasswd <pw>
				}
			}
		case a&aCJK != 0:
			if m, ok := cjkPair(s, from, i); ok {
				return m, true
			}
		}
	}
	return Match{}, false
}

// Byte classes.
const (
	cUpper = 1 << iota
	cLower
	cDigit
	cDash  // '-'
	cUnder // '_'
	cB64   // + / (base64), . ~ (b64token)
	cKey   // '.' in a key
	cSlash // + / (the base64 alphabet's last two; URL-safe: - _)
)

var class = func() (t [256]uint8) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c] |= cUpper
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] |= cLower
	}
	for c := '0'; c <= '9'; c++ {
		t[c] |= cDigit
	}
	t['-'] |= cDash
	t['_'] |= cUnder
	t['+'] |= cB64
	t['/'] |= cB64
	t['.'] |= cB64 | cKey
	t['~'] |= cB64
	t['+'] |= cSlash
	t['/'] |= cSlash
	return t
}()

const (
	alnum    = cUpper | cLower | cDigit
	word     = alnum | cDash | cUnder
	b64token = word | cB64
	b64alpha = word | cSlash // both base64 alphabets, standard and URL-safe
)

func is(c byte, cl uint8) bool { return class[c]&cl != 0 }

// encodedEqBefore reports a URL-encoded '=' ("%3D") right before s[i]:
// its 'D' is no letter of a word that s[i] goes on ("x=%3DBasic%20…",
// the '=' of a base64 credential's padding before a scheme; found by
// FuzzFind: masking the first credential put a ')' there, and a second
// pass found the scheme the first had not).
func encodedEqBefore(s []byte, i int) bool { return i >= 3 && atFold(s, i-3, "%3d") }

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// at reports whether s[i:] starts with p (exactly).
func at(s []byte, i int, p string) bool {
	if len(s)-i < len(p) {
		return false
	}
	for k := 0; k < len(p); k++ {
		if s[i+k] != p[k] {
			return false
		}
	}
	return true
}

// atFold reports whether s[i:] starts with p (lower case), ASCII
// case-insensitively.
func atFold(s []byte, i int, p string) bool {
	if len(s)-i < len(p) {
		return false
	}
	for k := 0; k < len(p); k++ {
		if lower(s[i+k]) != p[k] {
			return false
		}
	}
	return true
}

// run returns the end of the run of class cl starting at i.
func run(s []byte, i int, cl uint8) int {
	for i < len(s) && class[s[i]]&cl != 0 {
		i++
	}
	return i
}

// runLong is run for a run that is often long (a base64 run, a word that
// holds a digit: base64 images, hashes, ids): eight bytes a step while
// eight are left, one bounds check and one loop test for the eight. (run
// stays the short loop that is inlined: most digit runs are a byte or
// three.)
//
// Where the run goes on past its first eight bytes, the kernel (vecRuns:
// AVX2) walks it 64 bytes a step: a base64 run of 800 bytes cost about
// 3.5 instructions a byte here a byte at a time. The first eight are
// looked at first, so that a short run (a timestamp's digits, a word of
// a log line) costs no call.
func runLong(s []byte, i int, cl uint8) int {
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8 : i+8]
		if class[w[0]]&cl == 0 {
			return i
		}
		if class[w[1]]&cl == 0 {
			return i + 1
		}
		if class[w[2]]&cl == 0 {
			return i + 2
		}
		if class[w[3]]&cl == 0 {
			return i + 3
		}
		if class[w[4]]&cl == 0 {
			return i + 4
		}
		if class[w[5]]&cl == 0 {
			return i + 5
		}
		if class[w[6]]&cl == 0 {
			return i + 6
		}
		if class[w[7]]&cl == 0 {
			return i + 7
		}
		if i+8+64 <= len(s) && vecRuns && classSetOK[cl] {
			e, ok := runVec(s, i+8, &classSets[cl])
			if ok {
				return e
			}
			i = e - 8 // (fewer than 64 bytes left from e: the test fails from now on)
		}
	}
	return run(s, i, cl)
}

// token matches prefix p at i followed by at least min bytes of class cl.
func token(s []byte, i int, p string, min int, cl uint8) (int, bool) {
	if !at(s, i, p) {
		return 0, false
	}
	e := run(s, i+len(p), cl)
	return e, e-i-len(p) >= min
}

// googleAPIKey matches a Google API key at s[i]: "AIza" and 35 word bytes
// (39 in all). A longer run is a key glued to more text where it starts a
// word and is no part of a base64 text (oktaInBase64): a 100 MB corpus of
// images held "yUAIza" and 40 word bytes before a '+', an e2a.secret
// finding (such a run is in some 50 MB of base64; one of exactly 39 bytes
// in some 1.5 GB).
func googleAPIKey(s []byte, i int) (int, bool) {
	e, ok := token(s, i, "AIza", 35, word)
	return e, ok && (e-i == 39 || wordStart(s, i) && !oktaInBase64(s, i, e))
}

// prefixed checks the token shapes that s[i] ('A', 'J', '-' or '_') is
// part of; the start of a match may be before i (never before from).
func prefixed(s []byte, from, i int) (Match, bool) {
	if c := s[i]; (c == '-' || c == '_') && i > 0 && is(s[i-1], cDigit) &&
		!(c == '-' && atBegin(s, i)) && !(c == '_' && i >= 2 && is(s[i-2], cUpper|cLower)) {
		// Every prefix has a letter before its separator, or a letter and
		// a digit (r8_, lsv2_): "2026-03-29", "req-000007-f3a6", "x_1_2"
		// cost nothing more.
		return Match{}, false
	}
	var st, e int
	var ok bool
	k := KindNone
	switch s[i] {
	case 'A':
		if i+1 >= len(s) || !afterA[s[i+1]] {
			// Every shape below holds one of these after its 'A': in a
			// base64 run 7 'A's in 8 are followed by none, and were tried
			// against each shape in turn.
			return Match{}, false
		}
		st = i
		if at(s, i, "AKIA") || at(s, i, "ASIA") || at(s, i, "ABIA") || at(s, i, "ACCA") {
			// 16 key characters at least; a longer run is masked whole
			// (an id glued to one more character is still the id). Not
			// inside a longer word, glued to a letter or digit before it
			// and a lower-case letter after it: base64 of a binary
			// ("…pCyABIARHBEADQCABLQAAQSBHDUggB…", a wasm module in an npm
			// package, was an e2a.secret finding; h-fp20).
			e = run(s, i+4, cUpper|cDigit)
			if ok = e-i >= 20 && (wordStart(s, i) || e == len(s) || !is(s[e], cLower)); ok {
				k = KindAWS
			}
		} else if e, ok = googleAPIKey(s, i); ok {
			k = KindGoogle
		} else if at(s, i, "AKID") {
			// A Tencent Cloud SecretId: AKID and 32 or more letters and
			// digits.
			e = run(s, i+4, alnum)
			if ok = e-i-4 >= 32 && wordStart(s, i); ok {
				k = KindVendorToken
			}
		} else if i >= 2 && s[i-2] == 'L' && s[i-1] == 'T' && at(s, i, "AI") && wordStart(s, i-2) {
			// An Alibaba Cloud AccessKey ID: LTAI and 12 to 28 letters
			// and digits.
			st, e = i-2, run(s, i+2, alnum)
			if ok = e-i-2 >= 12 && e-i-2 <= 28; ok {
				k = KindVendorToken
			}
		} else if st, e, ok = telegram(s, i); ok {
			k = KindVendorToken
		} else if at(s, i, "AAAAAAAAAAAAAAAAAAAAA") && wordStart(s, i) {
			// A Twitter (X) app-only bearer token: 21 or more 'A's, then
			// the rest URL-encoded.
			st, e = i, i
			for e < len(s) && (is(s[e], alnum) || s[e] == '%') {
				e++
			}
			if ok = e-i >= 80; ok {
				k = KindVendorToken
			}
		} else if (at(s, i, "ATATT3") || at(s, i, "ATCTT3")) && wordStart(s, i) {
			// An Atlassian API token: a long base64url body, '=' and a
			// checksum.
			st, e = i, run(s, i+6, word)
			if e < len(s) && s[e] == '=' {
				e = run(s, e+1, word)
			}
			if ok = e-i >= 100; ok {
				k = KindVendorToken
			}
		} else if i+4 < len(s) && s[i+1] == 'U' && s[i+2] == 'T' {
			return redisAuth(s, from, i) // Redis's AUTH <pw>
		}
	case 'J': // eyJ
		if i >= 2 && s[i-2] == 'e' && s[i-1] == 'y' {
			st = i - 2
			e, ok = jwt(s, st)
			k = KindJWT
			if !ok && st >= 3 && at(s, st-3, "sk.") && st-3 >= from && wordStart(s, st-3) {
				// A Mapbox secret token: "sk." and two base64url
				// segments, the second its secret.
				e = run(s, st, word)
				if e+1 < len(s) && s[e] == '.' && e-st >= 20 {
					e2 := run(s, e+1, word)
					ok, e, k = e2-e-1 >= 16, e2, KindVendorToken
				}
			}
		}
	case '-':
		if i >= 3 {
			// (One look at the byte before the '-' for the three.)
			switch s[i-1] {
			case 'o', 'O':
				if i >= 9 && i+13 < len(s) && s[i+1]|0x20 == 's' && i-9 >= from {
					if m, ok := secureString(s, i); ok {
						return m, true // PowerShell's ConvertTo-SecureString '<pw>'
					}
				}
			case 'd':
				if i+10 < len(s) && s[i+1] == 'a' {
					if m, ok := ngrokAuthtoken(s, from, i); ok {
						return m, true // ngrok config add-authtoken <token>
					}
				}
			case 'l':
				if i >= 14 && i+9 < len(s) && at(s, i-7, "initial") {
					if m, ok := initialPassword(s, from, i); ok {
						return m, true // argocd admin initial-password, then <pw>
					}
				}
			}
		}
		if i >= from+5 && i+1 < len(s) && s[i+1] == 'S' && s[i-1] == ' ' && (i+2 == len(s) || s[i+2] == ' ') && at(s, i-5, "sudo") && wordStart(s, i-5) {
			if m, ok := echoStdin(s, from, i); ok {
				return m, true // echo <pw> | sudo -S <command>
			}
		}
		if i >= from+5 && i+1 < len(s) && s[i+1] == 'S' && s[i-1] == '+' && (i+2 == len(s) || s[i+2] == '+' || s[i+2] == '&') && at(s, i-5, "sudo") {
			if m, ok := echoStdinEncoded(s, from, i); ok {
				return m, true // echo+<pw>+%7C+sudo+-S+<command>
			}
		}
		if i+1 < len(s) && (s[i+1] == '-' || s[i+1] == 'u') && (i == 0 || s[i-1] != '-') {
			if m, ok := flagValue(s, from, i); ok {
				return m, true
			}
		} else if i+2 < len(s) && (s[i+1] == 'p' || s[i+1] == 'a' || s[i+1] == 'h' && s[i+2] == 'p') && i > from && (s[i-1] == ' ' || s[i-1] == '+') {
			if m, ok := shortFlag(s, from, i); ok {
				return m, true
			}
			if s[i+1] == 'p' {
				if m, ok := userHash(s, from, i); ok {
					return m, true // usermod -p '<crypt hash>' <user>
				}
			}
		}
		if i+2 < len(s) && i > from && (s[i-1] == ' ' || s[i-1] == '+') {
			if i >= 7 && s[i-2] == 'd' && at(s, i-7, "passwd") {
				if m, ok := passwdArg(s, from, i); ok {
					return m, true // openssl passwd -6 <pw>, mkpasswd -m sha-512 <pw>
				}
			}
			switch s[i+1] {
			case 'w', 'P', 'p', 's', 'k', 'd', 'n', 'a', 'U', 'u', 'b', 'c', 'B', 'N':
				if m, ok := toolFlag(s, from, i); ok {
					return m, true
				}
			}
		}
		switch {
		case atBegin(s, i):
			if i >= from {
				return pem(s, i)
			}
		case i >= 2 && s[i-2] == 's' && s[i-1] == 'k':
			// sk- after a letter or digit is a word ("task-1234"); after
			// '-' or '_' it is a key glued to an id ("idsk-sk-proj-…").
			if st = i - 2; wordStart(s, st) {
				e, ok = token(s, st, "sk-", 8, word)
				k = KindSK
			}
		case i >= 5 && at(s, i-5, "glpat"):
			st = i - 5
			e, ok = token(s, st, "glpat-", 20, word)
			k = KindGitLab
		case i >= 4 && at(s, i-4, "xox"):
			switch s[i-1] {
			case 'a', 'b', 'p', 'r', 's', 'o', 'e', 'c', 'd': // (c, d: a browser session's token and its cookie)
				st = i - 4
				e, ok = token(s, i, "-", 10, alnum|cDash)
				k = KindSlack
			}
		case i >= 4 && at(s, i-4, "xapp"):
			st = i - 4
			e, ok = token(s, i, "-", 10, alnum|cDash)
			k = KindSlack
		}
	case '_':
		switch {
		case i >= 2 && (at(s, i-2, "sk") || at(s, i-2, "rk")) && (at(s, i+1, "live_") || at(s, i+1, "test_")):
			st = i - 2
			e, ok = token(s, i+6, "", 10, alnum)
			k = KindStripe
		case i >= 3 && s[i-3] == 'g' && s[i-2] == 'h':
			switch s[i-1] {
			case 'p', 'o', 's', 'u', 'r':
				st = i - 3
				e, ok = token(s, i, "_", 20, alnum)
				k = KindGitHub
			}
		case i >= 6 && at(s, i-6, "github") && at(s, i+1, "pat_"):
			st = i - 6
			e, ok = token(s, st, "github_pat_", 20, alnum|cUnder)
			k = KindGitHub
		case i >= 3 && i+1 < len(s) && (s[i-1] == 'd' && s[i+1] == 'u' || s[i-1] == 'e' && s[i+1] == 'p'):
			if m, ok := rabbitUser(s, from, i); ok {
				return m, true // rabbitmqctl add_user <user> <pw>
			}
		case i >= 3 && s[i-1] == 's' && s[i-3] == 'a' && s[i-2] == 'w':
			if m, ok := awsConfigureSet(s, from, i); ok {
				return m, true // aws configure set aws_secret_access_key <key>
			}
		}
	}
	if !ok && (s[i] == '_' || s[i] == '-') {
		if st, e, ok = vendor(s, i); ok {
			k = KindVendorToken
		}
	}
	if !ok || st < from || isMask(s, st) {
		return Match{}, false
	}
	if k != KindAWS {
		// A longer run is still the token (or two glued together): mask
		// all of it.
		e = run(s, e, word)
		if k == KindVendorToken && e < len(s) && s[e] == '=' && at(s, st, "sntrys_") {
			// A Sentry org token's base64 JSON ends in padding before
			// its secret: "sntrys_eyJ…==_<secret>".
			p := e
			for p < len(s) && s[p] == '=' {
				p++
			}
			if p < len(s) && s[p] == '_' {
				e = run(s, p, word)
			}
		}
		if k == KindVendorToken && s[st] == 'f' && s[st+1] == 'm' {
			e = flyMacaroons(s, e)
		}
	} else {
		e = awsSecretAfter(s, e) // an SDK's (id, secret) pair: masked with its id
	}
	return Match{st, e, k}, true
}

// afterA marks the bytes that follow the 'A' of a shape prefixed looks
// for at an 'A': AKIA, AKID (K), ASIA (S), ABIA (B), ACCA (C), AIza and
// LTAI (I), Telegram's ":AA" and X's 21 'A's (A), ATATT3 and ATCTT3 (T),
// Redis's AUTH (U). A new shape at an 'A' adds its second byte here
// (TestAfterA checks the shapes' examples).
var afterA = func() (t [256]bool) {
	for _, c := range []byte("KSBCIATU") {
		t[c] = true
	}
	return t
}()

// flyMacaroons is the end of a Fly.io token whose first macaroon ends at
// s[e]: its base64 may end in '=' padding, and a token is one macaroon or
// more joined by ',' ("FlyV1 fm2_…=,fm2_…").
func flyMacaroons(s []byte, e int) int {
	for {
		p := e
		for p < len(s) && s[p] == '=' {
			p++
		}
		if !(at(s, p, ",fm2_") || at(s, p, ",fm1r_") || at(s, p, ",fm1a_")) {
			return p
		}
		e = run(s, p+5, alnum|cSlash|cUnder)
	}
}

func jwt(s []byte, i int) (int, bool) {
	if !at(s, i, "eyJ") {
		return 0, false
	}
	j := i + 3
	for seg := 0; seg < 3; seg++ {
		if seg > 0 {
			if j >= len(s) || s[j] != '.' {
				return 0, false
			}
			j++
		}
		k := j
		j = run(s, j, word)
		if j == k {
			return 0, false
		}
	}
	return j, true
}

// scheme matches "Bearer <token>", "Bearer: <token>" and "Basic <base64>"
// at s[i]. So that prose ("the Bearer authentication scheme") is not taken
// for a credential, a token after a space must be at least 8 bytes long,
// and at least 20 if it is made of letters only.
func scheme(s []byte, i int) (Match, bool) {
	var k Kind
	j := i
	switch {
	case atFold(s, i, "bearer"):
		k, j = KindBearer, i+6
	case atFold(s, i, "basic"):
		k, j = KindBasic, i+5
	default:
		return Match{}, false
	}
	colon := false
	if j < len(s) && s[j] == ':' && k == KindBearer {
		colon = true
		j++
	}
	sp := j
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	// URL-encoded ("Basic+dXNlcjpwdw%3D%3D", "Bearer%20…"): a space is
	// '+' or "%20", and '+', '/' and '=' in the token are "%2B", "%2F"
	// and "%3D".
	encoded := false
	if j == sp && !colon && j+1 < len(s) && (s[j] == '+' && is(s[j+1], b64token) || atFold(s, j, "%20")) {
		encoded = true
		j += 1 + 2*btoi(s[j] == '%')
	}
	if j == sp && !colon {
		return Match{}, false
	}
	start := j
	letters := true
	for j < len(s) {
		if encoded && s[j] == '%' && (atFold(s, j, "%2b") || atFold(s, j, "%2f")) {
			letters = false
			j += 3
			continue
		}
		if !is(s[j], b64token) || encoded && s[j] == '+' {
			break
		}
		if !is(s[j], cUpper|cLower) {
			letters = false
		}
		j++
	}
	if j == start {
		return Match{}, false
	}
	for j < len(s) && (s[j] == '=' || encoded && atFold(s, j, "%3d")) {
		letters = false
		j += 1 + 2*btoi(s[j] == '%')
	}
	if n := j - start; !colon && (n < 8 || letters && n < 20) {
		return Match{}, false
	}
	if isMask(s, start) {
		return Match{}, false
	}
	return Match{start, j, k}, true
}

// afterMask reports a mask with a fingerprint ending just before s[i]: a
// number glued to it was glued to the value it masks, and is judged as
// it was then (masking twice changes nothing).
func afterMask(s []byte, i int) bool {
	const n = len(Mask+"(fp:)") + FingerprintHex
	return i >= n && s[i-1] == ')' && at(s, i-n, Mask+"(fp:")
}

// inFingerprint reports the start of a mask's fingerprint at s[i]
// ("******(fp:4531319829383912)"): hex this package wrote, all digits
// about once in 1800 masks, which is read as the word it is, not as a
// number (a card number, a phone's), so that masking twice changes
// nothing.
func inFingerprint(s []byte, i int) bool {
	const n = len(Mask + "(fp:")
	return i >= n && s[i-1] == ':' && at(s, i-n, Mask+"(fp:")
}

// holdsMask reports a mask anywhere in s.
func holdsMask(s []byte) bool {
	for k := 0; k+len(Mask) <= len(s); k++ {
		j := bytes.IndexByte(s[k:len(s)-len(Mask)+1], '*') // (from one '*' to the next: most values hold none)
		if j < 0 {
			return false
		}
		if k += j; isMask(s, k) {
			return true
		}
	}
	return false
}

// isMask reports a value this package wrote: "******…".
func isMask(s []byte, i int) bool { return at(s, i, "******") }

// escLetter reports the letter of a JSON escape at s[p] ("\n", "\t",
// "\r", "\b", "\f": an odd run of backslashes before it), as JSON text
// read as text shows it: a word after it starts after the letter
// ("first line\nhf_…" holds the token "hf_…").
func escLetter(s []byte, p int) bool { return p >= 1 && s[p-1] == '\\' && escLetterAfter(s, p) }

// escLetterAfter is escLetter past the backslash before s[p].
func escLetterAfter(s []byte, p int) bool {
	switch s[p] {
	case 'n', 't', 'r', 'b', 'f':
	default:
		return false
	}
	k := p - 1
	for k > 0 && s[k-1] == '\\' {
		k--
	}
	return (p-k)%2 == 1
}

// wordStart reports whether s[p] starts a word: no letter or digit
// before it, or the letter of a JSON escape (escLetter).
func wordStart(s []byte, p int) bool { return p == 0 || !is(s[p-1], alnum) || escLetter(s, p-1) }

// atBegin reports a PEM header's "-----BEGIN " at s[i], also with its
// space URL-encoded as '+' (a form) or "%20" (a '%' here: pem checks the
// rest).
func atBegin(s []byte, i int) bool {
	return at(s, i, "-----BEGIN") && i+10 < len(s) && (s[i+10] == ' ' || s[i+10] == '+' || s[i+10] == '%')
}

// endsSpaced reports whether s[h:j] ends with p, a space of p matching
// ' ', '+' or "%20" (URL-encoded).
func endsSpaced(s []byte, h, j int, p string) bool {
	for k := len(p) - 1; k >= 0; k-- {
		switch {
		case j <= h:
			return false
		case p[k] == ' ' && j-3 >= h && at(s, j-3, "%20"):
			j -= 3
		case s[j-1] == p[k] || p[k] == ' ' && s[j-1] == '+':
			j--
		default:
			return false
		}
	}
	return true
}

// pem matches a PEM private key block at s[i] ("-----BEGIN … PRIVATE KEY-----"):
// up to the matching "-----END …-----", or, without one, to the end of the
// base64 run (line breaks, literal "\n" escapes included).
func pem(s []byte, i int) (Match, bool) {
	j := pemHeader(s, i)
	if j < 0 {
		return Match{}, false
	}
	k := j
	for ; k < len(s) && k-j < 1<<16; k++ {
		c := s[k]
		if c == '-' {
			if at(s, k, "-----END ") || at(s, k, "-----END+") || at(s, k, "-----END%20") {
				e := k + len("-----END ")
				for e < len(s) && e-k < 60 && s[e] != '-' {
					e++
				}
				return Match{i, run(s, e, cDash), KindPrivateKey}, true
			}
			continue
		}
		if !inPEMBlock(c) {
			return Match{i, k, KindPrivateKey}, true
		}
	}
	if k == len(s) {
		// No END line, and nothing after the block but what a block
		// holds: all of it, as when a byte no block holds ends it. The
		// base64 run alone stopped at an armor header's ':' or ' '
		// ("Version: GnuPG v2"), and at the "\n\n" or '/' after it a
		// key cut by the end of a chunk showed its next lines.
		return Match{i, k, KindPrivateKey}, true
	}
	e := j
	for e < len(s) && e-j < 1<<16 && (is(s[e], alnum|cB64) || s[e] == '=' || s[e] == '\n' || s[e] == '\r' || s[e] == '\\' || s[e] == '%') {
		e++
	}
	return Match{i, e, KindPrivateKey}, true
}

// pemHeader is the end of a private key block's header at s[i]
// ("-----BEGIN … PRIVATE KEY-----"), or -1.
func pemHeader(s []byte, i int) int {
	if !atBegin(s, i) {
		return -1
	}
	j := i + len("-----BEGIN")
	h := j
	for j < len(s) && j-h < 60 && (is(s[j], alnum) || s[j] == ' ' || s[j] == '+' || s[j] == '%') {
		j++
	}
	// (OpenVPN's tls-auth and tls-crypt keys: "-----BEGIN OpenVPN Static
	// key V1-----", lines of hex.)
	if !(endsSpaced(s, h, j, " PRIVATE KEY") || endsSpaced(s, h, j, " PRIVATE KEY BLOCK") || endsSpaced(s, h, j, " Static key V1")) || !at(s, j, "-----") {
		return -1
	}
	return j + 5
}

// sep handles '=' and ':' at s[i]: a URL's userinfo after "://", or the
// value of a credential-named key ("password=…", "api_key: …",
// `"private_key": "…"`, "Authorization: Basic …", "Cookie: …").
func sep(s []byte, from, i int) (Match, bool) {
	if s[i] == '|' {
		if m, ok := tableCell(s, from, i); ok {
			return m, true
		}
		return pipeFeed(s, from, i) // echo -e '<pw>\n<pw>' | passwd
	}
	if s[i] == ':' {
		if at(s, i+1, "//") {
			if m, ok := webhook(s, i+3, "/"); ok {
				return m, true
			}
			return userinfo(s, i+3, false)
		}
		if at(s, i+1, `\/\/`) {
			if m, ok := webhook(s, i+5, `\/`); ok {
				return m, true
			}
			return userinfo(s, i+5, true)
		}
		if m, ok := hostUserinfo(s, from, i); ok {
			return m, true
		}
		if m, ok := pgpass(s, from, i, false); ok {
			return m, true
		}
		if i >= 5 && (s[i-5] == '/' || s[i-5]|0x20 == 'o') {
			if m, ok := positional(s, from, i); ok {
				return m, true // "oauth:…", "net use … /user:…"
			}
		}
		if i >= 11 && s[i-1] == ':' {
			if m, ok := addMask(s, from, i); ok {
				return m, true // GitHub Actions' "::add-mask::<secret>"
			}
		}
		if m, ok := colonArg(s, from, i); ok {
			return m, true // xfreerdp /p:, netsh's Key Content, chpasswd
		}
	}
	if s[i] == '=' && i > from && s[i-1] == ' ' && mayValueAfterEq(s, i) {
		if m, ok := setPasswordFor(s, from, i); ok {
			return m, true // MySQL's SET PASSWORD FOR <user> = '<pw>'
		}
	}
	if afterMultiByte(s, from, i) {
		if m, ok := cjkPair(s, from, i); ok {
			return m, true // "数据库密码: <pw>"
		}
	}
	v := i + 1
	if v < len(s) && (s[i] == '=' && s[v] == '>' || s[i] == ':' && s[v] == '=') {
		v++ // password => "…" (Ruby, PHP, Perl), password := "…" (Go)
	} else if s[i] == '=' && at(s, v, `\u003e`) {
		v += 6 // "=>" in JSON text held in a string, HTML-escaped (Go)
	} else if s[i] == ':' && i > from && s[i-1] == ' ' && v < len(s) && is(s[v], cUpper|cLower) {
		// "credential :password => …": a Ruby symbol, no separator.
		return Match{}, false
	}
	return keyValue(s, from, i, v, false)
}

// addMask matches the value of GitHub Actions' workflow command
// "::add-mask::<value>" (a secret the runner is told to mask, printed
// where a step echoes it), whose last ':' is s[i]: the rest of the line.
func addMask(s []byte, from, i int) (Match, bool) {
	if i-11 < from || !at(s, i-11, "::add-mask:") {
		return Match{}, false
	}
	v := i + 1
	e := v
	for e < len(s) && e-v < 1<<12 && s[e] != '\n' && s[e] != '\r' && !(s[e] == '\\' && e+1 < len(s) && escLetterAfter(s, e+1)) && s[e] != '"' {
		e++
	}
	for e > v && (s[e-1] == ' ' || s[e-1] == '\t') {
		e--
	}
	if e == v || s[v] == '$' || isMask(s, v) {
		return Match{}, false
	}
	return Match{v, e, KindKeyValue}, true
}

// argSpan is the command-line argument that starts at s[v], as [st, end):
// a quoted one's inside, up to its closing quote on the line (and, where
// stopAtEscape, before a '\\': the end of a JSON string), else up to a
// value end ('+' too in a URL-encoded form). ok is false for an empty or
// unclosed one and for a mask.
func argSpan(s []byte, v int, form, stopAtEscape bool) (st, end int, ok bool) {
	if v >= len(s) {
		return 0, 0, false // the text ends at the flag ("… pass:")
	}
	end = v
	if q := s[v]; q == '"' || q == '\'' {
		end = v + 1
		for end < len(s) && end-v < 1<<12 && s[end] != q && s[end] != '\n' && !(stopAtEscape && s[end] == '\\') {
			end++
		}
		if end < len(s) && s[end] != q || end == v+1 || end == len(s) && (!inProgress(s[v+1:end]) || holdsMask(s[v+1:end])) {
			// (An unclosed argument that holds a mask was masked in
			// part by an earlier pass, "-P \"!+00000000" its number:
			// no value in progress, or a second pass masks more.)
			return 0, 0, false
		}
		// (Unclosed at the text's end: a value in progress, a stream's
		// delta cut inside it, "sshpass -p 'T6ja" | "cRh…'".)
		v++
	} else {
		for end < len(s) && end-v < 1<<12 && !(form && s[end] == '+') &&
			(!isValueEnd(s[end], 0, false, false) || !form && isListSep(s[end]) && !argEnds(s, end)) {
			end++
		}
	}
	if end == v || isMask(s, v) {
		return 0, 0, false
	}
	return v, end, true
}

// flagValue matches the value of a command-line flag under a credential
// name given as the next argument ("--password hunter2", "--api-key …",
// "--token=…" is a key=value pair), and the password of "-u user:pw" /
// "--user user:pw" (curl). s[i] is the first '-' of "--" or of "-u"; a
// flag starts the text or follows white space or a quote.
func flagValue(s []byte, from, i int) (Match, bool) {
	if i > from && s[i-1] != ' ' && s[i-1] != '\t' && s[i-1] != '"' && s[i-1] != '\'' && s[i-1] != '+' && !escLetter(s, i-1) {
		return Match{}, false
	}
	k := i + 1
	if k < len(s) && s[k] == '-' {
		k++
	}
	e := run(s, k, alnum|cDash|cUnder)
	if e-k == 14 && k-i == 2 && atFold(s, k, "password-stdin") {
		return echoStdin(s, from, i) // echo <pw> | docker login --password-stdin
	}
	if e == k || e >= len(s) || s[e] != ' ' && s[e] != '+' {
		return Match{}, false
	}
	form := s[e] == '+' // a command line in a URL-encoded form: '+' is a space
	v := e + 1
	if v >= len(s) || s[v] == '-' || s[v] == ' ' || s[v] == '+' || isMask(s, v) {
		return Match{}, false
	}
	v, end, ok := argSpan(s, v, form, false)
	if !ok {
		return Match{}, false
	}
	if k-i == 1 && e-k == 1 && s[k] == 'u' || k-i == 2 && eqFold(s[k:e], "user") {
		// curl's -u user:password: the password.
		for c := v; c < end; c++ {
			p := c + 1
			if form && atFold(s, c, "%3a") {
				p = c + 3
			} else if s[c] != ':' {
				continue
			}
			if !form && at(s, p, "//") || form && atFold(s, p, "%2f%2f") {
				break // a URL as the user ("az login -u http://app -p …"): no password
			}
			if p < end && c > v && !isMask(s, p) && !inFingerprint(s, p) {
				// (An empty user, "-u :…", is curl's for Negotiate or
				// NTLM auth, and no pair the pre-check passes. The ':'
				// of a mask's "(fp:" in the user, "-u 0/******(fp:…)@db"
				// masked by an earlier pass, is no pair: masking twice
				// changes nothing.)
				for a := v + 1; a < c; a++ {
					if s[a] == '@' {
						if m, ok := oracle(s, from, a, false); ok {
							// An Oracle connect string as the user
							// ("sqlplus -u scott/<pw>@db:…"): its
							// password first, as a second pass, which
							// finds no pair past the mask, reads it.
							return m, true
						}
					}
				}
				return userPassword(s, v, c, p, end), true
			}
			break
		}
		return Match{}, false
	}
	kc := KeyPlain
	if k-i == 2 {
		kc = classifyWords(s, k, e)
	}
	if kc == KeyNamedKey {
		// --<tool>-key <value> of an unknown tool: masked where the value
		// reads as a key (keyValue's KeyNamedKey).
		if keyLikeValue(s[v:end]) {
			return Match{v, end, KindHighEntropy}, true
		}
		return Match{}, false
	}
	if k-i != 2 || !kc.Credential() && !(e-k == 4 && atFold(s, k, "body") && s[v] != '$' && ghSecretSet(s, from, i)) &&
		!(e-k == 4 && at(s, k, "pass") && s[v] != '$' && lineNames(s, from, i, form, []string{"redis-cli", "valkey-cli", "keydb-cli"})) &&
		!(e-k == 5 && at(s, k, "value") && s[v] != '$' && keyvaultSecretSet(s, from, i)) {
		// (redis-cli --pass <pw>: "pass" alone names no credential.)
		return Match{}, false
	}
	return Match{v, end, KindKeyValue}, true
}

// ghSecretSet reports whether the line before the flag at s[i] holds "gh
// secret set" (GitHub's CLI: "gh secret set NAME --body <secret>").
func ghSecretSet(s []byte, from, i int) bool {
	b := i
	for b > from && i-b < 256 && s[b-1] != '\n' && s[b-1] != '\r' && s[b-1] != ';' && s[b-1] != '|' && !escLetter(s, b-1) {
		b--
	}
	k := bytes.Index(s[b:i], []byte("secret set "))
	return k >= 3 && at(s, b+k-3, "gh ") && (b+k-3 == b || !is(s[b+k-4], word))
}

// echoStdin matches the password echoed into a command's
// --password-stdin (docker login, podman, helm registry login…) or into
// sudo -S, whose first '-' is s[i]: "echo [-n] <pw> | … --password-stdin" on one line.
// A variable or a command's output ("echo $CR_PAT", "$(cat f)") is none.
func echoStdin(s []byte, from, i int) (Match, bool) {
	p := i
	for p > from && i-p < 256 && s[p-1] != '|' && s[p-1] != '\n' && s[p-1] != '\r' && s[p-1] != ';' && !escLetter(s, p-1) {
		p--
	}
	if p == from || s[p-1] != '|' {
		return Match{}, false
	}
	e := p - 1
	for e > from && (s[e-1] == ' ' || s[e-1] == '\t') {
		e--
	}
	// The echo before the pipe, in its segment.
	b := -1
	for q := e - 5; q >= from && e-q < 256 && s[q] != '\n' && s[q] != '\r' && s[q] != ';' && s[q] != '|'; q-- {
		if at(s, q, "echo ") && (q == from || s[q-1] == ' ' || s[q-1] == '\t' || s[q-1] == '"' || s[q-1] == '&' || s[q-1] == '\n' || s[q-1] == '=' || escLetter(s, q-1)) {
			b = q
			break
		}
	}
	if b < 0 {
		return Match{}, false
	}
	args, na := lastArgs(b+5, e, func(p int) int {
		if s[p] == ' ' || s[p] == '\t' {
			return 1
		}
		return 0
	})
	if na == 0 {
		return Match{}, false
	}
	a := args[na-1]
	if na >= 2 && s[args[na-2][0]] != '-' || a[1]-a[0] < 2 {
		return Match{}, false // more than one word: prose
	}
	if (s[a[0]] == '"' || s[a[0]] == '\'') && a[1]-a[0] > 2 && s[a[1]-1] == s[a[0]] {
		a = [2]int{a[0] + 1, a[1] - 1}
	} else if at(s, a[0], `\"`) && a[1]-a[0] > 4 && at(s, a[1]-2, `\"`) {
		a = [2]int{a[0] + 2, a[1] - 2} // in JSON text: echo \"<pw>\"
	}
	if s[a[0]] == '$' || s[a[0]] == '-' || s[a[0]] == '`' || isMask(s, a[0]) {
		return Match{}, false
	}
	return Match{a[0], a[1], KindKeyValue}, true
}

// secureString matches the string PowerShell's ConvertTo-SecureString
// turns into a secure one, whose '-' is s[i]: "ConvertTo-SecureString
// '<pw>' -AsPlainText -Force", also after "-String" (a password in a
// script, as Microsoft's docs print it; the cmdlet's name in any case).
func secureString(s []byte, i int) (Match, bool) {
	if !atFold(s, i-9, "convertto") || !atFold(s, i+1, "securestring") || !wordStart(s, i-9) && !(i >= 12 && s[i-12] == '%') {
		return Match{}, false // (after "%28", "(" URL-encoded, too)
	}
	form := i+13 < len(s) && s[i+13] == '+'
	v := i + 13
	skip := func() {
		for v < len(s) && v-i < 64 && (s[v] == ' ' || s[v] == '\t' || form && s[v] == '+') {
			v++
		}
	}
	skip()
	if v == i+13 {
		return Match{}, false
	}
	if atFold(s, v, "-string") && v+7 < len(s) && (s[v+7] == ' ' || form && s[v+7] == '+') {
		v += 7
		skip()
	}
	if v >= len(s) || s[v] == '-' || s[v] == '$' || s[v] == '(' || isMask(s, v) {
		return Match{}, false // a flag, a variable, an expression: no literal
	}
	esc := at(s, v, `\"`) // in JSON text: ConvertTo-SecureString \"<pw>\"
	if esc {
		v++
	}
	a, e, ok := argSpan(s, v, form, !esc)
	if !ok {
		return Match{}, false
	}
	if esc && s[e-1] == '\\' {
		e--
	}
	if q := s[v]; q != '"' && q != '\'' && !atFold(s, v, "%22") && !atFold(s, v, "%27") {
		// Unquoted, a literal only before -AsPlainText ("use
		// ConvertTo-SecureString to convert it" is prose).
		p := e
		for p < len(s) && p-e < 8 && (s[p] == ' ' || s[p] == '\t' || form && s[p] == '+') {
			p++
		}
		if p == e || !atFold(s, p, "-asplaintext") {
			return Match{}, false
		}
	}
	return Match{a, e, KindKeyValue}, true
}

// userPassword is the match of a password s[p:end] given with its user
// s[v:u] as one argument (curl's -u user:password, HTTPie's -a, Samba's
// -U user%password): the password, or the user and the password as one
// where the user is itself a credential. An API token is given as the
// user with an empty or placeholder password ("-u sk_live_…:x",
// "-u ghp_…:x-oauth-basic"): the password's match alone went past the
// token and left it shown (the search goes on after a match's end), and a
// second pass masked it. A user that holds any other match (an e-mail)
// is masked with the password as well.
func userPassword(s []byte, v, u, p, end int) Match {
	if m, ok := find(s[:u], v); ok && m.Start < u {
		// (Any match: an e-mail as the user is masked with the password
		// too, or a second pass would mask it.)
		return Match{v, end, KindKeyValue}
	}
	return Match{p, end, KindKeyValue}
}

// shortFlag matches the password of the command lines that take it as a
// short flag: "-p<password>" glued to the flag of mysql and its tools
// (their "-p <db>" asks for the password and names a database),
// "sshpass -p <password>", "docker login -p <password>" (podman, helm,
// nerdctl...), "redis-cli -a <password>". s[i] is the '-', after a space
// (or a '+', a space in a URL-encoded form); the command is the first
// word of the line (or of the part of a pipeline) s[i] is in, or a later
// one ("run: mysql -p…", "sudo mysql -p…").
func shortFlag(s []byte, from, i int) (Match, bool) {
	form := s[i-1] == '+'
	b := i - 1
	for b > from && i-b < 256 {
		c := s[b-1]
		if c == '\n' || c == '\r' || c == ';' || c == '|' || c == '&' || c == '(' || c == '`' || c == '"' || c == '\'' || c == '>' ||
			c == '$' || escLetter(s, b-1) {
			break
		}
		b--
	}
	sp := func(c byte) bool { return c == ' ' || c == '\t' || form && c == '+' }
	next := func(p int) (int, int) { // the word at p, after spaces
		for p < i && sp(s[p]) {
			p++
		}
		e := p
		for e < i && !sp(s[e]) {
			e++
		}
		return p, e
	}
	glued, nextArg, rar, mongo := false, false, false, false
	for w, we := next(b); w < i; w, we = next(we) {
		c := we // the command is the word's last run of name bytes: /usr/bin/mysql, [mysql, ?q=mysql
		for c > w && (is(s[c-1], word) || s[c-1] == '.') {
			c--
		}
		cmd := s[c:we]
		switch {
		case s[i+1] == 'a':
			nextArg = eqFoldAny(cmd, "redis-cli", "valkey-cli", "keydb-cli")
		case eqFoldAny(cmd, "mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlcheck", "mysqlshow", "mysqlpump", "mysqlslap",
			"mariadb", "mariadb-dump", "mariadb-admin", "mariadb-import", "mariadb-check"),
			s[i+1] == 'p' && eqFoldAny(cmd, "7z", "7za", "7zr", "7zz"): // 7-Zip's "7z a -p<pw> …" (-p alone prompts)
			glued = s[i+1] != 'h'
		case eqFoldAny(cmd, "rar", "unrar", "winrar", "rar.exe", "winrar.exe"): // RAR's -p<pw>, -hp<pw> (headers too; -p alone prompts)
			glued, rar = true, true
		case eqFold(cmd, "sshpass"):
			glued, nextArg = true, true
		case s[i+1] == 'p' && eqFoldAny(cmd, mongoTools...):
			nextArg, mongo = true, true // MongoDB's shells and tools: -u <user> -p <pw> (-p alone prompts)
		case eqFold(cmd, "az"):
			a, ae := next(we) // Azure's CLI: az login --service-principal -u <app> -p <secret>
			nextArg = s[i+1] == 'p' && ae-a == 5 && at(s, a, "login")
		case eqFoldAny(cmd, "docker", "podman", "nerdctl", "buildah", "skopeo", "helm", "oras", "crane"):
			a, ae := next(we)
			nextArg = ae-a == 5 && at(s, a, "login") || ae-a == 8 && at(s, a, "registry")
		}
		if glued || nextArg {
			break
		}
	}
	if !glued && !nextArg && s[i+1] == 'p' && lineNames(s, from, i, form, mongoTools) {
		// After a quoted argument shortFlag's walk stops at: mongosh
		// "mongodb://db:27017" -u admin -p <pw>.
		nextArg, mongo = true, true
	}
	v := i + 2
	if s[i+1] == 'h' {
		if !rar {
			return Match{}, false
		}
		v++ // RAR's -hp<pw>
	}
	switch {
	case glued && v < len(s) && !sp(s[v]) && !isValueEnd(s[v], 0, false, false):
	case glued && v < len(s) && (s[v] == '"' || s[v] == '\''):
	case nextArg && v < len(s) && sp(s[v]):
		for v < len(s) && v-i < 8 && sp(s[v]) {
			v++
		}
		if v >= len(s) || s[v] == '-' {
			return Match{}, false
		}
	default:
		return Match{}, false
	}
	a, end, ok := argSpan(s, v, form, true)
	if !ok || s[a] == '$' && (a == v || s[v] == '"') || mongo && !cmdValue(s[a:end]) {
		// (mongodump -p 27017: a port given as the password is none.)
		// (A shell variable, "-p $PW" or "-p \"$PW\"", is no password; in
		// single quotes, '$…' is a literal.)
		return Match{}, false
	}
	return Match{a, end, KindKeyValue}, true
}

// keyValue is the value after a credential-named key: the key ends before
// the separator s[i], the value starts at v (after "=", ":", or, encoded,
// "%3D", "%3A").
func keyValue(s []byte, from, i, v int, encoded bool) (Match, bool) {
	// The key: skip back over spaces and a closing quote (`"`, `'`, `\"`,
	// `\\\"` in a JSON text held in a JSON string).
	j := i
	for j > from && j > i-4 && (s[j-1] == ' ' || encoded && s[j-1] == '+') {
		j--
	}
	if encoded && j == i && j-3 >= from && at(s, j-3, "%20") {
		j -= 3 // "API%20key%20%3A%20…"
	}
	if !encoded && j > from && (s[j-1] == '*' || s[j-1] == '`') {
		j = emphasisKeyEnd(s, from, j) // "**Password**: <pw>"
	}
	if j-2 > from && s[j-1] == ']' && (s[j-2] == '"' || s[j-2] == '\'') && s[i] == '=' && i+1 < len(s) && s[i+1] == '>' {
		j-- // PHP's var_dump: ["password"]=>
	} else if encoded && v == i+6 && j-6 >= from && atFold(s, j-3, "%5d") && (atFold(s, j-6, "%22") || atFold(s, j-6, "%27")) {
		j -= 3 // URL-encoded: %5B%22password%22%5D%3D%3E
	}
	quotedKey := false
	if j > from && (s[j-1] == '"' || s[j-1] == '\'') {
		quotedKey = true
		j--
		for n := 0; n < 7 && j > from && s[j-1] == '\\'; n++ {
			j--
		}
	} else if encoded && j-3 >= from && (atFold(s, j-3, "%22") || atFold(s, j-3, "%27")) {
		j -= 3 // an encoded quote ("%22SecretAccessKey%22%3A%22…")
		for n := 0; n < 7 && j-3 >= from && atFold(s, j-3, "%5c"); n++ {
			j -= 3 // escaped (JSON text in a string): "%5C%22password%5C%22%3A…"
		}
	}
	ke := j
	for j > from && ke-j < 64 && is(s[j-1], word|cKey) {
		j--
	}
	foreign := false
	if j > from && (foreignBefore[s[j-1]] || ke-j == 5) && mayForeignKey(s, from, j, ke) {
		// "contraseña: <pw>", "пароль: <pw>", "mot de passe : <pw>"
		// (foreign.go): a label beyond ASCII.
		if p, ok := foreignLabel(s, from, ke); ok {
			j, foreign = p, true
		} else if p, ok := foreignQualified(s, from, ke); ok {
			j, foreign = p, true // "Пароль для входа: <pw>"
		}
	}
	if !foreign {
		j = keyStart(s, from, j, ke)
	}
	if j == ke {
		return Match{}, false
	}
	kc := KeyCredential
	if !foreign {
		kc = classifyWords(s, j, ke)
	}
	if kc != KeyPlain && sourceLine(s, j, ke, v) {
		return Match{}, false // "redact/passwd.go:123": a stack trace's file and line
	}
	if kc != KeyPlain && s[j] == '-' && lineHolds(s, from, j, "mkpasswd") {
		// A flag of mkpasswd's line, "--x=<y>" or "-x=<y>": passwdWord
		// masks the password after it and passes over the flag; read
		// alone once that is masked, a second pass masked more
		// (FuzzFind, 1e7f62c410718cf9; "-Pwd=0", 4158b172330d19d5).
		return Match{}, false
	}
	if kc != KeyPlain && j > from && s[j-1] == ':' && s[i] == ':' && arnService(s, from, j-1) {
		return Match{}, false // arn:aws:secretsmanager:<region>:…: a resource's name, no key
	}
	if ke-j == 3 && kc == KeyCredential && eqFold(s[j:ke], "pwd") && pwdPath(s, v) {
		return Match{}, false // PWD=/workspace/app: the shell's working directory (env, docker inspect)
	}
	if kc == KeyPlain && ke-j == 3 && spacedKey(s, from, j) {
		kc = KeyCredential // "API key: …", "Secret access key: …"
	}
	// A plain key that makes its value a credential by its place or its
	// value, by its length (one test for most keys, which are none).
	queryKey, bareKey, barePass := false, false, false
	if kc == KeyPlain {
		switch ke - j {
		case 5:
			if atFold(s, j, "value") && namedCredential(s, from, j) {
				// name: DB_PASSWORD / value: … (a Kubernetes env entry), <add
				// key="ApiKey" value="…"/> (.NET appSettings).
				kc = KeyCredential
			}
		case 3, 9:
			if j > from && (s[j-1] == '?' || s[j-1] == '&') && s[i] == '=' &&
				(ke-j == 3 && atFold(s, j, "key") || ke-j == 9 && atFold(s, j, "signature")) {
				// A URL's ?key=… (Google's APIs, many others): an API key; its
				// &Signature=… (pre-signed object URLs, webhooks): the request's
				// signature.
				kc, queryKey = KeyCredential, true
			} else if (s[i] == '=' || encoded) && ke-j == 3 && atFold(s, j, "key") && wordStart(s, j) && (j == from || s[j-1] != '.') {
				// A bare key=… outside a URL (a config line, a command's
				// argument): a key where its value reads as a random one.
				kc, bareKey = KeyCredential, true
			}
		case 4:
			if atFold(s, j, "pass") && (wordStart(s, j) || j-3 >= from && s[j-3] == '%') && (j == from || s[j-1] != '.') {
				// A bare pass=, "pass": … (rclone's config, a client's dict): a
				// password where its value reads as a generated one ("pass": true,
				// "pass": 12 of a test run are none).
				kc, barePass = KeyCredential, true
			}
		}
	}
	pairOnly := false
	if kc == KeyPlain && ke-j > 5 && s[ke-5] == '.' && atFold(s, ke-4, "auth") {
		// A client's attribute, "session.auth = ('user', '<pw>')" (or an
		// HTTPBasicAuth(…) call): a credential only as that pair.
		kc, pairOnly = KeyCredential, true
	}
	curlCookie := kc == KeyPlain && s[i] == '=' && !encoded && curlCookieKey(s, from, j)
	if curlCookie {
		kc = KeyCookie // curl -b 'sid=<random>': a cookie, as after "Cookie: "
	}
	var k Kind
	switch kc {
	case KeyCredential, KeyToken, KeyRef:
		k = KindKeyValue
	case KeyAuthorization:
		k = KindAuthorization
	case KeyCookie:
		k = KindCookie
	case KeyEmail:
		k = KindEmail
	case KeyPhone:
		k = KindPhone
	case KeyUserID:
		k = KindUserID
	case KeyNamedKey:
		k = KindHighEntropy // an unknown tool's FOO_KEY: masked where its value reads as a key
	default:
		if l := s[ke-1] | 0x20; !encoded && s[i] == ':' && ke == i && (l == 'n' || l == 'r' || l == 'e') {
			return loginPair(s, from, i) // "Login: admin / <pw>"
		}
		return Match{}, false
	}
	// The value: spaces, an optional opening quote, then to the closing
	// quote, or (unquoted) to a delimiter.
	for v < len(s) && v-i < 8 && (s[v] == ' ' || s[v] == '\t' || encoded && s[v] == '+') {
		v++
	}
	if encoded && v-i <= 3 && at(s, v, "%20") {
		v += 3 // "API%20key%3A%20<key>"
	}
	if v == i+1 && s[i] == ':' && !encoded && at(s, v, "**") && boldLabel(s, from, j, false) ||
		encoded && v-i <= 3 && atFold(s, v, "%2a%2a") && boldLabel(s, from, j, true) {
		// A Markdown bold label, "**Password:** <pw>", "**API Key:** <key>"
		// (a model's reply lists credentials so), also URL-encoded
		// ("%2A%2APassword%3A%2A%2A+<pw>"): the value is after the closing
		// "**".
		b := v
		if v += 2; encoded {
			v += 4
		}
		for v < len(s) && v-b < 10 && (s[v] == ' ' || s[v] == '\t' || encoded && s[v] == '+') {
			v++
		}
		if encoded && v-b <= 6 && at(s, v, "%20") {
			v += 3
		}
	}
	if s[i] == '=' && v == i+2 && s[i+1] == '>' {
		v = phpDumpValue(s, v) // ["password"]=>\n  string(14) "…"
	} else if encoded && v == i+6 && (atFold(s, v, "%0a") || atFold(s, v, "%5cn")) {
		v = phpDumpEncoded(s, v)
	}
	if s[i] == ':' && k == KindKeyValue && v-i <= 2 && v < len(s) && !quotedKey && !encoded && j > from &&
		(s[j-1] == '"' || s[j-1] == '\'') && (s[v] == s[j-1] || at(s, v, `\"`) && j-2 >= from && s[j-2] == '\\') && (v == i+1 || s[i+1] == ' ') {
		// A prompt in quotes, expect "password:" (Tcl's expect, pexpect):
		// the password is what the script sends after it.
		q := 1
		if s[v] == '\\' {
			q = 2
		}
		return expectSend(s, v+q)
	}
	if s[i] == ':' && v == i+2 && s[i+1] == ' ' && goEmptyField(s, from, j, v) {
		return Match{}, false // Go's %+v of an empty field: "Password: PasswordFile:/run/…"
	}
	if k == KindKeyValue && v < len(s) && s[v] != '(' && s[v] != '[' {
		if c := authCall(s, v); c > v {
			v = c // auth=HTTPBasicAuth('user', '<pw>'): the pair in its call
		}
	}
	if k == KindKeyValue && v < len(s) && (s[v] == '(' || s[v] == '[') {
		if m, ok, pair := credPair(s, v); ok || pair {
			// auth=('user', '<pw>'): Python's requests, httpx, aiohttp; a
			// pair whose password is a name ("auth=(user, password)") is
			// none.
			return m, ok
		}
		if pairOnly {
			return Match{}, false
		}
		b := v + 1
		for b < len(s) && b-v < 8 && s[b] == ' ' {
			b++
		}
		if b < len(s) && (s[b] == ')' || s[b] == ']') {
			return Match{}, false // "auth=()"
		}
	}
	if pairOnly {
		return Match{}, false
	}
	if v < len(s) && (s[v] == '{' || s[v] == '[') && !encoded {
		// An object or a list under the key ("password": {"value": …},
		// "cookies": [{…}]) is no value: its own pairs are judged as
		// they come. ODBC's braces quote a value: Pwd={a;b}}c}.
		b := v + 1
		for b < len(s) && b-v < 64 && (s[b] == ' ' || s[b] == '\t' || s[b] == '\n' || s[b] == '\r') {
			b++
		}
		if s[v] == '[' || b >= len(s) || s[b] == '"' || s[b] == '\'' || s[b] == '\\' || s[b] == '{' || s[b] == '[' || s[b] == '}' || b > v+1 {
			return Match{}, false
		}
		e := v + 1
		for e < len(s) && e-v < 1<<10 && s[e] != '\n' && s[e] != '\r' && (s[e] != '}' || at(s, e, "}}")) {
			if s[e] == '}' {
				e++
			}
			e++
		}
		if e >= len(s) || s[e] != '}' || isMask(s, v+1) {
			return Match{}, false
		}
		return Match{v + 1, e, k}, true
	}
	var quote byte
	quoteBS := 0           // the backslashes before an escaped opening quote
	var blockIndent [2]int // a YAML block scalar's indentation, s[b:v] of its first line
	if v < len(s) && (s[v] == '"' || s[v] == '\'' || s[v] == '`' && (k == KindAuthorization || k == KindCookie) && !encoded) {
		// (A header's value in a template literal, JavaScript's
		// Authorization: `Bearer ${token}`: to its closing backtick, not
		// to the line's end.)
		quote = s[v]
		v++
		if v+1 < len(s) && s[v] == quote && s[v+1] == quote {
			v += 2 // TOML's multi-line string: password = """…"""
		}
	} else if v+1 < len(s) && (s[v] == '|' || s[v] == '>') && !encoded {
		// A YAML block scalar ("password: |" or ">-", the value on
		// the lines below it): its first line.
		b := v + 1
		if s[b] == '-' || s[b] == '+' {
			b++
		}
		nl := 0 // the line end: "\n", "\r\n", or their escapes in JSON text
		switch {
		case at(s, b, "\n"):
			nl = 1
		case at(s, b, "\r\n"), at(s, b, `\n`):
			nl = 2
		case at(s, b, `\r\n`):
			nl = 4
		}
		if nl > 0 {
			b += nl
			v = b
			for v < len(s) && v-b < 16 && (s[v] == ' ' || s[v] == '\t') {
				v++
			}
			if v > b {
				blockIndent = [2]int{b, v}
			}
		}
	} else if v < len(s) && s[v] == '\\' {
		b := v
		for b < len(s) && b-v < 7 && s[b] == '\\' {
			b++
		}
		if b < len(s) && s[b] == '"' {
			quote, quoteBS = '\\', b-v
			v = b + 1
			if at(s, v, string(s[b-quoteBS:b+1])+string(s[b-quoteBS:b+1])) {
				v += 2 * (quoteBS + 1) // TOML's """ in JSON text: \"\"\"…
			}
		}
	} else if encoded && (atFold(s, v, "%22") || atFold(s, v, "%27")) {
		v += 3
		if atFold(s, v, string(s[v-3:v])+string(s[v-3:v])) {
			v += 6 // TOML's """ URL-encoded
		}
	} else if encoded && (atFold(s, v, "%7c") || atFold(s, v, "%3e")) {
		// A YAML block scalar URL-encoded: "password%3A+%7C%0A++++<pw>".
		b := v + 3
		if b < len(s) && (s[b] == '-' || atFold(s, b, "%2b")) {
			b += 1 + 2*btoi(s[b] == '%')
		}
		if atFold(s, b, "%0d") {
			b += 3
		}
		if atFold(s, b, "%0a") {
			v = b + 3
			for v < len(s) && v-b < 24 && (s[v] == '+' || atFold(s, v, "%20")) {
				v += 1 + 2*btoi(s[v] == '%')
			}
		}
	} else if encoded && atFold(s, v, "%5c") {
		b := v
		for b < len(s) && b-v < 21 && atFold(s, b, "%5c") {
			b += 3
		}
		if atFold(s, b, "%22") {
			v = b + 3 // JSON text's escaped quote, URL-encoded: "password%3D%5C%22…"
		}
	}
	if encoded && k != 0 && atFold(s, v, "%20") {
		v += 3 // "Authorization%3A%20Basic%20…"
	}
	if k == KindAuthorization {
		// Keep the scheme ("Basic", "Bearer", "Digest") visible; in a
		// URL-encoded text it ends at '+' or "%20".
		w := run(s, v, alnum|cDash)
		if encoded && w > v && w-v <= 24 && (at(s, w, "+") || at(s, w, "%20")) {
			if x := w + 1 + 2*btoi(s[w] == '%'); x < len(s) && !encodedValueEnd(s, x) {
				v = x
			}
		} else if w > v && w < len(s) && s[w] == ' ' && w-v <= 24 {
			x := w
			for x < len(s) && s[x] == ' ' {
				x++
			}
			if x < len(s) && x > w && !isValueEnd(s[x], quote, true, quotedKey) {
				v = x
			}
		}
	}
	if at(s, v, "-----BEGIN") {
		// A PEM key as the value ("private_key":"-----BEGIN…", also
		// URL-encoded, where the value would end at its first '+'): the
		// whole block, not its first word.
		if m, ok := pem(s, v); ok {
			if !k.Credential() {
				// Under a key of no credential's name (an unknown
				// tool's SSH_KEY, TLS_KEY: KeyNamedKey's high_entropy),
				// the block keeps its kind: a private key is one.
				k = m.Kind
			}
			return Match{v, m.End, k}, true
		}
	}
	if v < len(s) && (s[v] == 'M' || s[v] == 'b') {
		// A key's base64 with no armor as the value (der.go): the whole
		// run, across its escapes and line breaks.
		if e, ok := derKey(s, v, false, derMinRead); ok {
			return Match{v, e, k}, true
		}
	}
	if quote == 0 && blockIndent[1] == 0 && !encoded && k == KindKeyValue && v < len(s) && codeExprT[s[v]] && codeExpr(s, v) {
		return Match{}, false // creds := credentials.NewStaticCredentials(…): code, no value
	}
	whole := k == KindAuthorization || k == KindCookie
	var lineQuote byte
	if whole && quote == 0 && !quotedKey && j > from && (s[j-1] == '\'' || s[j-1] == '"') && (j-1 == from || s[j-2] != '\\') {
		// A header line in quotes (curl -H 'Cookie: sid=…' https://…,
		// ["Authorization: Basic …", …]): its quote ends the value, not
		// the line (the URL after it was masked).
		lineQuote = s[j-1]
	}
	if curlCookie && lineQuote == 0 {
		whole = false // curl -b sid=<value> https://…: to the space
	}
	e := v
	open := false // inside an escaped quote paramQuote took
	encParams := encoded && whole && encodedParamAt(s, v)
	for e < len(s) && e-v < 1<<16 {
		if quote == '\\' && s[e] == '\\' {
			// A value in escaped quotes (JSON held in a JSON string) ends
			// at a quote escaped as the opening one was; other escapes
			// are its content ("\\n" in a PEM block, "\\\"" a quote
			// inside it).
			b := e
			for b < len(s) && s[b] == '\\' {
				b++
			}
			if b >= len(s) || s[b] == '"' && b-e == quoteBS {
				if b < len(s) && b > v+quoteBS && at(s, b+1, string(s[e:b+1])) {
					e = b + 1 + b - e + 1 // a doubled escaped quote (ADO.NET in JSON text): one of its bytes
					continue
				}
				break
			}
			e = b
			continue
		}
		if encParams {
			// Auth parameters URL-encoded ("Digest+username%3D%5C%22bob%5C%22%2C+…"):
			// to the end of the pair, a line or an unescaped quote.
			// (A quote opens a value after its "%3D" or closes one before
			// its "%2C"; escaped, "%5C%22", it is JSON text's.)
			if s[e] == '&' || atFold(s, e, "%0a") || atFold(s, e, "%0d") ||
				atFold(s, e, "%22") && !(e-3 >= v && (atFold(s, e-3, "%5c") || atFold(s, e-3, "%3d")) || atFold(s, e+3, "%2c")) {
				break
			}
			e++
			continue
		}
		if whole && quote == 0 && s[e] == '\\' {
			// An escaped quote of a parameter (JSON text held in a
			// string: "Digest username=\\"bob\\", response=\\"…\\""), opened
			// after its '=' and closed before a ',', is part of the
			// value; any other ends it.
			if b, ok := paramQuote(s, v, e, open); ok {
				e, open = b, !open
				continue
			}
		}
		if quote != '\\' && s[e] == '\\' {
			// JSON's escaped slash ("\/", "\\\/" a level deeper) is
			// part of the value: an AWS secret or a base64 token with a
			// '/' in JSON text held in a string ended at its first
			// slash, the rest printed.
			b := e
			for b < len(s) && b-e < 7 && s[b] == '\\' {
				b++
			}
			if b < len(s) && s[b] == '/' && (b-e)%2 == 1 {
				e = b + 1
				continue
			}
		}
		if quote != 0 && quote != '\\' && s[e] == quote && e > v && e+1 < len(s) && s[e+1] == quote {
			// A quote doubled inside a value quoted with it is one of its
			// bytes (ADO.NET's and ODBC's Password="ab"";cd", YAML's
			// 'ab'';cd'), not its end.
			e += 2
			continue
		}
		if s[e] == lineQuote && lineQuote != 0 || encoded && encodedValueEnd(s, e) && (s[e] == '&' || !encodedListSep(s, e) || encodedListEnds(s, j, e)) ||
			isValueEnd(s[e], quote, whole, quotedKey) && (quote != 0 || whole || !isListSep(s[e]) || listEnds(s, j, e)) {
			break
		}
		e++
	}
	if e == v || isMask(s, v) || s[v] == '$' && envRef(s, v, e) || s[v] == '(' && terraformHidden(s, v) || e-v <= 9 && k == KindKeyValue && hashMethod(s[v:e]) || bareKey && !randomValue(s[v:e]) || kc == KeyNamedKey && (!keyLikeValue(s[v:e]) || holdsMask(s[v:e])) || barePass && !strongValue(s[v:e]) && !randomValue(s[v:e]) && !(s[v] != '$' && fromLiteral(s, from, j)) ||
		(bareKey || barePass || encoded) && holdsMask(s[v:e]) {
		// (A bare key's value that holds a mask was judged by its
		// inner pair already, "pass=DB.PW:******(fp:…)": masking twice
		// changes nothing. So was a URL-encoded value's: the userinfo
		// of "sig%3A%2F%2Fu%3Ap%40h", encodedUserinfo's at the "%3A"
		// before keyValue is asked, masked "sig%3A%2F%2F******(fp:…)"
		// and a second pass took the value around the mask; found by
		// FuzzFind.)
		return Match{}, false
	}
	if curlCookie && !sessionCookie(s[v:e]) {
		return Match{}, false // curl -b 'lang=en': no session's value
	}
	if kc == KeyNamedKey && e-v == 32 && pagerDutyName(s[j:ke]) && pagerDutyValue(s[v:e]) {
		return Match{v, e, KindKeyValue}, true // routing_key: <PagerDuty's integration key>
	}
	if blockIndent[1] > blockIndent[0] {
		e = yamlBlockEnd(s, e, s[blockIndent[0]:blockIndent[1]])
	}
	if k == KindCookie && clearedCookie(s[v:e]) {
		// A cookie cleared ("Set-Cookie: session=; Path=/; Max-Age=0",
		// a logout) holds no value: its attributes are no credential.
		return Match{}, false
	}
	if k == KindKeyValue && e-v > 8 && (at(s, v, "pk_live_") || at(s, v, "pk_test_")) {
		// A Stripe publishable key (Laravel's STRIPE_KEY, a checkout
		// page's config) is meant to be public: masked, no credential.
		return Match{v, e, KindHighEntropy}, true
	}
	if sl := slashSep(s, e); k == KindKeyValue && quote == 0 && sl > 0 && ke-j >= 5 && eqFoldAny(s[j:ke], "credentials", "creds", "credential") {
		// "Credentials: admin / <pw>": a user, then its password (the
		// slash escaped in JSON text: " \\/ ").
		u := e + sl
		if isMask(s, u) {
			return Match{}, false // masked once: the user is no secret
		}
		pe := u
		for pe < len(s) && pe-u < 256 && s[pe] > ' ' && s[pe] < 0x7f && s[pe] != '"' && s[pe] != '\'' && s[pe] != '\\' &&
			!(sl == 5 && (s[pe] == '+' || s[pe] == '&' || atFold(s, pe, "%0a") || atFold(s, pe, "%0d"))) {
			pe++
		}
		for pe > u && (s[pe-1] == '.' || s[pe-1] == ',' || s[pe-1] == ';' || s[pe-1] == ')') {
			pe--
		}
		if pe-u >= 4 && is(s[u], alnum) && !holdsMask(s[u:pe]) {
			return Match{u, pe, k}, true
		}
	}
	if kc == KeyNamedKey && at(s, v, "eyJ") {
		// An unknown tool's key whose value is a JWT
		// (SUPABASE_SERVICE_ROLE_KEY=eyJ…): the token keeps its kind.
		if x, ok := find(s[:e], v); ok && x.Start == v && x.Kind.Credential() {
			return x, true
		}
	}
	if queryKey {
		// A token of a known shape keeps its kind ("?key=AIza…" is google).
		if x, ok := find(s[:e], v); ok && x.Start == v && x.Kind.Credential() {
			return x, true
		}
	}
	return Match{v, e, k}, true
}

// curlCookieKey reports a cookie's name at s[j] after curl's -b (in
// quotes or not: curl -b 'sid=<value>' https://…), the flag after "curl"
// on the same line: the pair is a cookie, its value a session's where it
// reads as random (keyValue). (curl's --cookie is a credential's flag.)
func curlCookieKey(s []byte, from, j int) bool {
	q := j
	if q > from && (s[q-1] == '\'' || s[q-1] == '"') {
		q--
	}
	if q-4 < from || !at(s, q-4, " -b ") {
		return false
	}
	b := q - 4
	for b > from && q-b < 256 && s[b-1] != '\n' && s[b-1] != '\r' {
		b--
	}
	c := bytes.LastIndex(s[b:q], []byte("curl "))
	return c >= 0 && (c == 0 || !is(s[b+c-1], word))
}

// sessionCookie reports a cookie string after its first name's '='
// ("<value>; name2=<value2>…") one value of which reads as random or
// generated, or is 16 bytes or more with a digit and a letter: a
// session's.
func sessionCookie(c []byte) bool {
	for first := true; len(c) > 0; first = false {
		v := c
		if k := bytes.IndexByte(c, ';'); k >= 0 {
			v, c = c[:k], c[k+1:]
		} else {
			c = nil
		}
		if k := bytes.IndexByte(v, '='); k >= 0 && !first {
			v = v[k+1:] // (the first value's name is before c)
		}
		if randomValue(v) || strongValue(v) || len(v) >= 16 && bytes.IndexFunc(v, isDigitRune) >= 0 && bytes.IndexFunc(v, isLetterRune) >= 0 {
			return true // (PHP's session ids: 26 lower-case letters and digits)
		}
	}
	return false
}

func isDigitRune(r rune) bool  { return r >= '0' && r <= '9' }
func isLetterRune(r rune) bool { return r|0x20 >= 'a' && r|0x20 <= 'z' }

// slashSep is the length of " / " (or " \\/ ", JSON's escaped slash, or
// "+%2F+", URL-encoded) at s[e], or 0.
func slashSep(s []byte, e int) int {
	switch {
	case at(s, e, " / "):
		return 3
	case at(s, e, ` \/ `):
		return 4
	case atFold(s, e, "+%2f+"):
		return 5
	}
	return 0
}

// arnService reports an Amazon Resource Name's "arn:<partition>:" in
// the word that holds the ':' s[c] before a key
// ("arn:aws:secretsmanager:…", "…:123456789012:secret:prod/db-AbC",
// "arn:aws-us-gov:kms:…"): a service's or a resource type's name, no
// credential's key; what follows names a resource.
func arnService(s []byte, from, c int) bool {
	b := c
	for b > from && c-b < 128 && s[b-1] > ' ' && s[b-1] != '"' && s[b-1] != '\'' && s[b-1] != '`' {
		b--
	}
	return c-b >= 7 && atFold(s, b, "arn:aws")
}

// envRef reports whether the value s[v:e] is a reference to a variable
// in braces, "${DB_PASSWORD}" (a shell's, Compose's, a template's), its
// '}' at s[e] (an unquoted value ends there) or the value's last byte:
// a placeholder, no secret. With a default ("${DB_PASSWORD:-<pw>}") the
// default may be one.
func envRef(s []byte, v, e int) bool {
	if v+2 >= e || s[v+1] != '{' {
		return false
	}
	w := run(s, v+2, word|cKey)
	return w > v+2 && (w == e && e < len(s) && s[e] == '}' && (e+1 == len(s) || !is(s[e+1], b64token)) || w+1 == e && s[w] == '}')
}

// hashMethod reports a password hashing method's name as the value
// ("--pwd=sha-512", "password_scheme: bcrypt"): how a password is
// stored, no password. (mkpasswd's value after such a flag is masked at
// the command's word, the flag then passed over; a second pass read the
// flag as a key and masked its method: FuzzFind, 2bfd0a08433331a7.)
func hashMethod(v []byte) bool {
	return eqFoldAny(v, "sha-512", "sha-256", "sha512", "sha256", "md5", "bcrypt", "yescrypt", "scrypt", "argon2", "argon2id", "sha512crypt", "sha256crypt", "md5crypt", "des")
}

// terraformHidden reports Terraform's "(sensitive value)" (also
// "(sensitive)", "(known after apply)") at s[v]: what a plan prints in
// place of a value it hides or does not know, no secret.
func terraformHidden(s []byte, v int) bool {
	return at(s, v, "(sensitive value)") || at(s, v, "(sensitive)") || at(s, v, "(known after apply)")
}

// expectSend is the string an expect script sends on the line after a
// prompt whose closing quote ends before s[p]: "send \"<pw>\r\"" (Tcl,
// also in braces), "child.sendline('<pw>')" (pexpect), without its
// "\r" or "\n"; a variable ("$pw") is none.
func expectSend(s []byte, p int) (Match, bool) {
	brace := false
	for p < len(s) && (s[p] == ' ' || s[p] == '\t' || s[p] == '{' || s[p] == ')') {
		brace = brace || s[p] == '{'
		p++
	}
	n := lineEndAt(s, p)
	if n == 0 && p < len(s) && s[p] == ';' {
		n = 1 // Tcl's commands on one line: expect -c '…; expect "password:"; send "<pw>\r"'
	}
	if n == 0 && !brace {
		return Match{}, false // (a pattern's action in braces: "{ send … }" on its line)
	}
	p += n
	for p < len(s) && (s[p] == ' ' || s[p] == '\t') {
		p++
	}
	w := run(s, p, word|cKey)
	name := s[p:w]
	switch {
	case eqFold(name, "send") && w < len(s) && s[w] == ' ':
		for w < len(s) && s[w] == ' ' {
			w++
		}
		if at(s, w, "-- ") {
			w += 3
		}
	case (bytes.HasSuffix(name, []byte("sendline")) || bytes.HasSuffix(name, []byte("send"))) && w < len(s) && s[w] == '(':
		w++
	default:
		return Match{}, false
	}
	q := 1
	if at(s, w, `\"`) {
		q = 2
	} else if w >= len(s) || s[w] != '"' && s[w] != '\'' {
		return Match{}, false
	}
	a := w + q
	e := a
	for e < len(s) && e-a < 256 && s[e] != '\n' && !(q == 1 && s[e] == s[w]) && !(q == 2 && at(s, e, `\"`)) {
		e++
	}
	if e >= len(s) || s[e] == '\n' {
		return Match{}, false
	}
	for _, end := range []string{`\\r`, `\\n`, `\r`, `\n`} {
		if e-len(end) >= a && at(s, e-len(end), end) {
			e -= len(end) // (send "\r" alone sends no password: none)
			break
		}
	}
	if e == a || s[a] == '$' || isMask(s, a) {
		return Match{}, false
	}
	return Match{a, e, KindKeyValue}, true
}

// yamlBlockEnd is the end of a YAML block scalar whose first line ends
// at s[e]: the lines after it at its indentation (or deeper) are the
// value too ("private_key: |" and a key's base64 lines, a certificate
// bundle's), also in JSON text (a "\n" escape ends a line there).
func yamlBlockEnd(s []byte, e int, indent []byte) int {
	for lines := 0; lines < 256 && e < len(s); lines++ {
		nl := 0
		switch {
		case at(s, e, "\n"):
			nl = 1
		case at(s, e, "\r\n"), at(s, e, `\n`):
			nl = 2
		case at(s, e, `\r\n`):
			nl = 4
		}
		b := e + nl
		if nl == 0 || !bytes.HasPrefix(s[b:], indent) {
			return e
		}
		p := b + len(indent)
		for p < len(s) && (s[p] == ' ' || s[p] == '\t') {
			p++
		}
		x := p
		for x < len(s) && x-p < 1<<12 && s[x] != '\n' && s[x] != '\r' && s[x] != '\\' && s[x] != '"' {
			x++
		}
		if x == p {
			return e // a blank line, or the text's end
		}
		e = x
	}
	return e
}

// emphasisKeyEnd returns where a key ends that a Markdown emphasis or code
// span closed at s[j-1] holds ("**Password**: <pw>", "*Password*: <pw>",
// "`api_key`: <key>", "**API Key**: <key>", as models' replies list
// credentials): before its closing marks, when as many of the same marks
// open it right before its words; else j.
func emphasisKeyEnd(s []byte, from, j int) int {
	mk, n := s[j-1], 1
	if j-2 >= from && s[j-2] == mk {
		n = 2
	}
	ke := j - n
	k := ke
	for k > from && ke-k < 64 && (is(s[k-1], word|cKey) || s[k-1] == ' ') {
		k--
	}
	if k == ke || k-n < from || s[k] == ' ' || s[ke-1] == ' ' {
		return j
	}
	for x := k - n; x < k; x++ {
		if s[x] != mk {
			return j
		}
	}
	if k-n > from && s[k-n-1] == mk {
		return j // more marks open it than close it
	}
	return ke
}

// boldLabel reports that the key starting at s[j] opens with a Markdown
// bold's "**": right before it, or before the words of a spaced key
// ("**API Key:"); encoded: URL-encoded, "%2A%2APassword" (a key of one
// word: the escape's hex digits read as a word's bytes).
func boldLabel(s []byte, from, j int, encoded bool) bool {
	if encoded {
		return j-6 >= from && atFold(s, j-6, "%2a%2a")
	}
	k := j
	for k > from && j-k < 32 && (is(s[k-1], word) || s[k-1] == ' ') {
		k--
	}
	return k-2 >= from && s[k-1] == '*' && s[k-2] == '*'
}

// credPair is the second string of a pair in parentheses or brackets at
// s[v] ("('admin', '<pw>')", "[user, \"<pw>\"]") under a credential key: a
// user and a password (requests' auth=, a client's credentials=). The
// first may be a name (a variable); the second must be a string literal.
//
// pair is set when s[v] starts a pair whatever its second element.
func credPair(s []byte, v int) (m Match, ok, pair bool) {
	p := v + 1
	ws := func() {
		for p < len(s) && p-v < 256 && (s[p] == ' ' || s[p] == '\t') {
			p++
		}
	}
	ws()
	if p < len(s) && (s[p] == '\'' || s[p] == '"') {
		q := s[p]
		p++
		for p < len(s) && p-v < 256 && s[p] != q && s[p] != '\n' && s[p] != '\\' {
			p++
		}
		if p >= len(s) || s[p] != q {
			return Match{}, false, false
		}
		p++
	} else if e := run(s, p, word|cKey); e > p {
		p = e
	} else {
		return Match{}, false, false
	}
	ws()
	if p >= len(s) || s[p] != ',' {
		return Match{}, false, false
	}
	p++
	ws()
	if p >= len(s) || s[p] != '\'' && s[p] != '"' {
		return Match{}, false, true
	}
	q := s[p]
	a := p + 1
	e := a
	for e < len(s) && e-a < 256 && s[e] != q && s[e] != '\n' && s[e] != '\\' {
		e++
	}
	if e == a || e >= len(s) || s[e] != q || isMask(s, a) {
		return Match{}, false, true
	}
	return Match{a, e, KindKeyValue}, true, true
}

// authCall is the '(' of a call at s[v] to a class of HTTP auth that
// takes a user and a password (requests' HTTPBasicAuth, HTTPDigestAuth,
// HTTPProxyAuth; httpx's and aiohttp's BasicAuth, DigestAuth; with a
// module before it), or v if there is none.
func authCall(s []byte, v int) int {
	e := run(s, v, word|cKey)
	if e >= len(s) || s[e] != '(' || e-v < 9 || e-v > 48 {
		return v
	}
	n := e
	for n > v && s[n-1] != '.' {
		n--
	}
	if !eqFoldAny(s[n:e], "HTTPBasicAuth", "HTTPDigestAuth", "HTTPProxyAuth", "BasicAuth", "DigestAuth") {
		return v
	}
	return e
}

// clearedCookie reports a Cookie or Set-Cookie value whose every pair is
// empty ("session=") or a cookie attribute (Path, Max-Age…).
func clearedCookie(v []byte) bool {
	for len(v) > 0 {
		pair := v
		if p := bytes.IndexByte(v, ';'); p >= 0 {
			pair, v = v[:p], v[p+1:]
		} else {
			v = nil
		}
		pair = bytes.TrimSpace(pair)
		name, val, eq := bytes.Cut(pair, []byte("="))
		if !eq && len(name) > 0 && !eqFoldAny(name, "secure", "httponly", "partitioned") ||
			len(val) > 0 && !eqFoldAny(name, "path", "domain", "max-age", "expires", "samesite", "priority") {
			return false // a value (a cookie may be one without a name)
		}
	}
	return true
}

// parentKeyEnd is the end of the key whose object opens just before the
// quoted key at s[j] ("…password":{"value"), or -1.
func parentKeyEnd(s []byte, from, j int) int {
	q := j
	for q > from && j-q < 4 && (s[q-1] == '"' || s[q-1] == '\\') {
		q--
	}
	if q == j {
		return -1
	}
	// Back over the object's pairs before "value" (Terraform's output
	// -json: "db_password": {"sensitive": true, "type": "string",
	// "value": …}), none of them an object or a list.
	for q > from && j-q < 256 && s[q-1] != '{' {
		if c := s[q-1]; c == '}' || c == ']' || c == '[' {
			return -1
		}
		q--
	}
	if q <= from || s[q-1] != '{' {
		return -1
	}
	q--
	for q > from && j-q < 512 && s[q-1] == ' ' {
		q--
	}
	if q <= from || s[q-1] != ':' {
		return -1
	}
	q--
	for q > from && j-q < 512 && (s[q-1] == ' ' || s[q-1] == '"' || s[q-1] == '\\') {
		q--
	}
	return q
}

// sourceExts are the extensions of the source files a stack trace or a
// compiler's message names with a line number ("passwd.go:123",
// "auth/token.py:88", "secret_key.rs:12:5"), and of the record logs whose
// lines e2atap names as a finding's source ("pwd.jsonl:1").
var sourceExts = []string{"go", "py", "js", "ts", "jsx", "tsx", "mjs", "cjs", "rs", "java", "kt", "rb", "php", "c", "h", "cc", "cpp", "hpp", "cs",
	"swift", "scala", "ex", "exs", "sh", "jsonl", "ndjson", "log"}

// sourceLine reports a key s[j:ke] that is a source file's name (a
// word, '.', one of sourceExts) before a line number at s[v] (digits,
// then the text's end or a byte that is no letter or digit): a source
// location, which a credential word in the file's name makes no pair
// ("redact/passwd.go:123"). "passwd:hunter2" and "passwd.go:hunter2" stay
// pairs.
func sourceLine(s []byte, j, ke, v int) bool {
	if v >= len(s) || !is(s[v], cDigit) {
		return false
	}
	e := run(s, v, cDigit)
	if e < len(s) && (is(s[e], cUpper|cLower) || s[e] == '_' || s[e] == '.' && e+1 < len(s) && is(s[e+1], cDigit)) {
		return false
	}
	d := bytes.LastIndexByte(s[j:ke], '.')
	if d <= 0 || d == ke-j-1 {
		return false
	}
	ext := s[j+d+1 : ke]
	for _, x := range sourceExts {
		if eqFold(ext, x) {
			return true
		}
	}
	return false
}

// namedCredential reports a "value" key at s[j] whose entry is named by
// the pair before it: a "name" or "key" whose value is a credential name
// ("- name: DB_PASSWORD\n  value: …", `key="ApiKey" value="…"`,
// `{"name": "API_TOKEN", "value": "…"}`).
func namedCredential(s []byte, from, j int) bool {
	if q := parentKeyEnd(s, from, j); q >= 0 {
		// Spring Boot's /actuator/env, Terraform's output -json: the
		// entry is the object under a credential key,
		// "spring.datasource.password":{"value":"…",…}.
		ks := q
		for ks > from && q-ks < 96 && is(s[ks-1], word|cKey) {
			ks--
		}
		if ks = keyStart(s, from, ks, q); ks < q && classifyWords(s, ks, q).Credential() {
			return true
		}
	}
	p := j
	for p > from && j-p < 24 {
		c := s[p-1]
		if p-1 > from && s[p-2] == '\\' && (c == 'n' || c == 'r' || c == 't') {
			p -= 2 // "\n  value: …" in JSON text (also held in a string: "\\n")
			continue
		}
		if p-6 >= from && s[p-6] == '\\' && s[p-5] == 'u' && s[p-4] == '0' && s[p-3] == '0' && escapedSpace(s[p-2], s[p-1]) {
			p -= 6 // "\u000a", or the n of "\n" spelled "\u006e"
			continue
		}
		if p-3 >= from && s[p-3] == '%' && encodedSpace(s, p-3) {
			p -= 3 // URL-encoded: "%0A++value%3A+…", "%22+value%3D%22…"
			continue
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != ',' && c != '"' && c != '\'' && c != '\\' && c != '+' {
			break
		}
		p--
	}
	ve := p
	for p > from && ve-p < 64 && is(s[p-1], word|cKey) {
		p--
	}
	vs := keyStart(s, from, p, ve) // past a "%22" or "\n" glued to it
	if vs == ve {
		return false
	}
	p = vs
	for p > from && vs-p < 8 && (s[p-1] == ' ' || s[p-1] == '"' || s[p-1] == '\'' || s[p-1] == '\\' || s[p-1] == '+') {
		p--
	}
	if p-3 >= from && (atFold(s, p-3, "%22") || atFold(s, p-3, "%27")) {
		p -= 3
	}
	switch {
	case p > from && (s[p-1] == ':' || s[p-1] == '='):
		p--
	case p-3 >= from && (atFold(s, p-3, "%3a") || atFold(s, p-3, "%3d")):
		p -= 3
	default:
		return false
	}
	for p > from && (s[p-1] == '"' || s[p-1] == '\'' || s[p-1] == '\\' || s[p-1] == ' ' || s[p-1] == '+') && j-p < 96 {
		p--
	}
	k := p
	for k > from && p-k < 4 && is(s[k-1], cUpper|cLower) {
		k--
	}
	return (p-k == 4 && atFold(s, k, "name") || p-k == 3 && atFold(s, k, "key")) && (k == from || !is(s[k-1], word)) &&
		classifyWords(s, vs, ve).Credential()
}

// encodedSpace reports a URL-encoded space, line break, comma or quote at
// s[p] ('%').
func encodedSpace(s []byte, p int) bool {
	return atFold(s, p, "%0a") || atFold(s, p, "%0d") || atFold(s, p, "%20") || atFold(s, p, "%2c") || atFold(s, p, "%22") ||
		atFold(s, p, "%27") || atFold(s, p, "%09")
}

// escapedSpace reports the hex digits of a \u00XX escape of white space,
// a quote or a comma, or of the letter of a "\n", "\r" or "\t" escape.
func escapedSpace(a, b byte) bool {
	switch a {
	case '0':
		return b == '9' || b == 'a' || b == 'A' || b == 'd' || b == 'D'
	case '2':
		return b == '0' || b == '2' || b == '7' || b == 'c' || b == 'C'
	case '6':
		return b == 'e' || b == 'E'
	case '7':
		return b == '2' || b == '4'
	}
	return false
}

// randomValue reports a value that reads as a random token rather than a
// word or a name ("key=value", "key=user_id", "key=sess-0001"): 16 bytes
// or more of base64 and '-' '_', with upper- and lower-case letters and
// digits.
func randomValue(v []byte) bool {
	if len(v) < 16 {
		return false
	}
	var seen uint8
	for _, c := range v {
		if !is(c, b64token) && c != '=' {
			return false
		}
		seen |= class[c] & alnum
	}
	return seen == alnum
}

// proseValue matches a password written with no separator a key=value
// check sees: in prose ("the password is <pw>", "password was <pw>"),
// netrc's "password <pw>", an XML element of a credential name
// ("<password><pw></password>", "<apiKey>…"). It is revealed at a digit of
// the value, s[i]: a value with no digit is not seen. A prose value is a
// credential (rule e2a.secret) only where it reads as a generated one
// (strongValue: "the password is 2FA-protected" is masked, no finding);
// shorter than 6 bytes it is no value ("the password is 8 characters").
// After a token label and a copula ("the API key is <v>", "your new
// token was <v>": proseLabel) a value is taken only where it reads as a
// token (tokenValue), a credential; a word or a number is none.
// st remembers what was judged already (each value is judged once).
func proseValue(s []byte, from, i int, st *proseState) (Match, bool) {
	if !is(s[i], cDigit) {
		return Match{}, false
	}
	// An XML element URL-encoded or in JSON text with its brackets
	// escaped: at the digit of its '>' ("%3E", "\u003e").
	if s[i] == '3' && i > from && s[i-1] == '%' && i+1 < len(s) && s[i+1]|0x20 == 'e' {
		if m, ok := escapedXML(s, from, i-1, "%3c", 3); ok {
			return m, true
		}
	}
	if s[i] == '0' && i-2 >= from && s[i-1] == 'u' && s[i-2] == '\\' && atFold(s, i+1, "03e") {
		if m, ok := escapedXML(s, from, i-2, `\u003c`, 6); ok {
			return m, true
		}
	}
	// lo bounds the look back for the key: from, or, where the match
	// before from ended right before a colon ("Password for
	// bob@example.com: <pw>", the address matched first), proseBack
	// bytes before it, as passwordFor looks.
	lo := from
	if from > 0 && from < len(s) && s[from] == ':' && is(s[from-1], word) {
		lo = max(from-proseBack, 0)
	}
	if i < st.done || i-lo < 5 {
		return Match{}, false
	}
	if st.delims != 2 && !proseMay(s[max(from-proseBack, 0):], st) {
		st.done = len(s) // no later digit either (the callers' gate)
		return Match{}, false
	}
	// Back to the start of the value: a delimiter, or in URL-encoded text
	// ("the+password+is+x1…") the last '+'. s[from:st.clean] holds
	// neither: a later digit of the same word (an id, "e2a_response…")
	// looks back only as far as the last one did.
	va, plus := i, -1
	for va > from && i-va < 64 && !proseEndT[s[va-1]] {
		if va--; plus < 0 && s[va] == '+' {
			plus = va
		}
		if va == st.clean {
			va = from
			break
		}
	}
	sp := byte(' ')
	if va == from && plus < 0 {
		// No delimiter from from on: none of the word's digits can start
		// a value either (timestamps, ids).
		e := i
		for e < len(s) && e-i < 256 && !proseEndT[s[e]] && s[e] != '+' {
			e++
		}
		st.clean, st.done = e, e
		return Match{}, false
	}
	if plus >= 0 && (va == from || s[va-1] != ' ' || bytes.IndexByte(s[va:plus], '?') >= 0 || bytes.IndexByte(s[va:plus], '&') >= 0) {
		// (After a raw space, a query's: "GET /s?q=the+password+is+…
		// HTTP/1.1", a request line.)
		va, sp = plus+1, '+'
	}
	// From here on, a "no" holds for every later digit of the value too:
	// each finds the same start (or, past 64 bytes, none) and the same
	// byte before it. st.done skips them (proseRest): a hash or a base64
	// run looked back to its start at each of its digits.
	if va-lo < 4 {
		st.done = proseRest(s, i)
		return Match{}, false
	}
	p := va - 1
	c := s[p]
	if c == '\n' && sp == ' ' && namedLine(s, lo, va) {
		// A password on a line of its own, named by the lines before it
		// (<auth-user-pass>, op read).
		ve := va
		for ve < len(s) && ve-va < 256 && s[ve] != '\n' && s[ve] != '\r' {
			ve++
		}
		st.done = ve
		if ve-va < 6 || isMask(s, va) || holdsMask(s[va:ve]) || inFingerprint(s, i) {
			return Match{}, false
		}
		if strongValue(s[va:ve]) {
			return Match{va, ve, KindKeyValue}, true
		}
		return Match{va, ve, KindHighEntropy}, true
	}
	if c == ' ' && sp == ' ' && p-1 > lo && s[p-1] == ' ' {
		// A table's columns padded with spaces (vault kv get's
		// "password    <pw>"): the key before the run.
		for p-1 > lo && va-p < 40 && s[p-1] == ' ' {
			p--
		}
	}
	quoted := (c == '"' || c == '\'' || c == '`') && s[p-1] == sp
	escQuoted := c == '"' && !quoted && s[p-1] == '\\' && p-2 > from && s[p-2] == sp
	if c != '>' && c != sp && !quoted && !escQuoted {
		st.done = proseRest(s, i)
		return Match{}, false // most texts: the value has no key before it
	}
	if quoted {
		p-- // the password is 'x1…'
	} else if escQuoted {
		p -= 2 // in JSON text: requirepass \"x1…\"
	}
	copula := false // an "is" or "was" before the value
	forKey, changedTo := false, false
	if c != '>' && c == sp && p-1 >= from && p-1 > lo {
		switch s[p-1] | 0x20 {
		case ':':
			// "password for admin: <pw>" (the user named, a colon).
			forKey = p-2 > lo && s[p-2] != ' '
		case 'o':
			// "Password changed to <pw>", "password reset to <pw>".
			changedTo = p-3 > from && s[p-3] == sp && s[p-2]|0x20 == 't'
		}
	}
	foreignIs := false  // German's or French's copula: "das Passwort ist <pw>", "le mot de passe est <pw>"
	foreignSep := false // a label beyond English, then a dash or Portuguese's "é": "пароль — <pw>", "a senha é <pw>"
	if c != '>' && !forKey && !changedTo && s[p-1]|0x20 == 't' && p-4 > lo && s[p-4] == sp && (atFold(s, p-3, "ist") || atFold(s, p-3, "est")) {
		p, foreignIs = p-4, true
	} else if c == ' ' && !forKey && !changedTo && (s[p-1] >= 0x80 || s[p-1] == '-') {
		k, ok := foreignSepKey(s, lo, p)
		if !ok {
			st.done = proseRest(s, i)
			return Match{}, false
		}
		p, foreignSep = k, true
	} else if c != '>' && !forKey && !changedTo {
		// "password", "passwd", "passphrase", "is", "was" end in d, e or
		// s: most words before a number in prose do not.
		if l := s[p-1] | 0x20; l != 's' && l != 'd' && l != 'e' {
			if sp == '+' {
				// Nor can a later digit of this '+'-delimited part
				// ("+00:00" of a timestamp).
				e := i
				for e < len(s) && e-i < 256 && !proseEndT[s[e]] && s[e] != '+' && s[e] != '&' {
					e++
				}
				st.done = e
			} else {
				st.done = proseRest(s, i)
			}
			return Match{}, false
		}
		if p-3 >= from && s[p-1] == 's' && s[p-2] == 'i' && s[p-3] == sp {
			p, copula = p-3, true
		} else if p-4 >= from && s[p-4] == sp && at(s, p-3, "was") {
			p, copula = p-4, true
		} else if p-4 > lo && s[p-1]|0x20 == 's' && s[p-2]|0x20 == 'e' && s[p-3] == sp && s[p-4]|0x20 == 'a' {
			p, foreignIs = p-3, true // "la contraseña es <pw>", "CONTRASEÑA ES <pw>"
		}
	}
	if forKey || changedTo {
		var ok bool
		if forKey {
			p, ok = passwordForColon(s, from, p-1, sp)
		} else {
			p, ok = passwordChangedTo(s, from, p-3, sp)
		}
		if !ok {
			st.done = proseRest(s, i)
			return Match{}, false
		}
	}
	k := p
	for k > lo && p-k < 32 && is(s[k-1], word) && !escLetter(s, k-1) {
		k-- // (not into JSON text's "\\n" before a line's first word)
	}
	if foreignSep {
		k = p // (foreignSepKey judged the label)
	}
	token := false // a token label's: a value only where it reads as one
	pwd := copula && eqFold(s[k:p], "pwd") && !pathValue(s, va)
	if copula && !pwd && !eqFoldAny(s[k:p], "password", "passwd", "passphrase") {
		// (From before from: an e-mail address as <who> is matched, and
		// the search goes on past it, "password for bob@example.com is …".)
		if pk, pe, ok := passwordFor(s, max(from-proseBack, 0), p, sp); ok {
			k, p = pk, pe // "the password for admin is <pw>"
		} else {
			token = k < p && proseLabel(s, from, k, p, sp)
		}
	}
	slashPass := c != '>' && p-k == 4 && eqFold(s[k:p], "pass") && userSlashPass(s, lo, k, sp)
	encStart := false
	if sp == '+' && k-1 > from && s[k-1] == '%' && p-k > 2 {
		k, encStart = k+2, true // URL-encoded, after a line end: "%0Arequirepass+…"
	}
	if c == '>' {
		if (k == p || k == from || s[k-1] != '<' || !classifyWords(s, k, p).Credential()) && !xmlCredElement(s, from, p) {
			st.done = proseRest(s, i)
			return Match{}, false
		}
	} else if !foreignSep && (!token && !pwd && !eqFoldAny(s[k:p], "password", "passwd", "passphrase", "requirepass") && !slashPass && !(foreignIs && (foreignCopulaKey(s, lo, k, p, sp) || sp == ' ' && foreignCopulaQualified(s, lo, p))) || !encStart && !wordStart(s, k)) ||
		sp == '+' && k-3 >= from && (atFold(s, k-3, "%3c") || atFold(s, k-3, "%3a")) {
		// (An element's name URL-encoded, "%3Cwsse%3APassword+Type…":
		// its value is after the "%3E", escapedXML's.)
		st.done = proseRest(s, i)
		return Match{}, false
	}
	ve := i
	for ve < len(s) && ve-va < 256 && !proseEndT[s[ve]] && !(sp == '+' && (s[ve] == '+' || s[ve] == '&')) {
		ve++
	}
	st.done = ve
	if sp == '+' && c != '>' && s[va] == '%' {
		// SQL URL-encoded, "PASSWORD+%27<pw>%27": the value in its
		// encoded quotes.
		if a, b, ok := stmtValue(s, va, true); ok && a > va {
			va, ve = a, b
		}
	}
	if isMask(s, va) || inFingerprint(s, i) || s[va] == '%' || holdsMask(s[va:ve]) {
		// (A value that holds a mask was masked already: "passwd =<pw>"
		// masked as a key=value pair, "passwd =******(fp:…)", is read
		// again at a digit of its fingerprint.)
		return Match{}, false
	}
	if c == '>' {
		return Match{va, ve, KindKeyValue}, true
	}
	for ve > va && (s[ve-1] == '.' || s[ve-1] == ',' || s[ve-1] == ';' || s[ve-1] == ':' || s[ve-1] == ')') {
		ve--
	}
	if ve-va < 6 || (slashPass || foreignSep) && dateLike(s[va:ve]) {
		// (A date after "user <name> / pass" or a label and a dash is no
		// password, as after a login's slash: slashPassword.)
		return Match{}, false
	}
	if token {
		if !tokenValue(s[va:ve]) {
			return Match{}, false // "the API key is v2-rotated-2024"
		}
		return Match{va, ve, KindKeyValue}, true
	}
	if strongValue(s[va:ve]) && !sqlNonValue(s[va:ve]) {
		return Match{va, ve, KindKeyValue}, true
	}
	return Match{va, ve, KindHighEntropy}, true
}

// PWDPath reports whether key is "PWD" (any case) and v, its value, a
// path: the shell's working directory ({"PWD": "/srv/app"} of an
// environment), no credential, though "pwd" names a password.
func PWDPath(key, v []byte) bool { return len(key) == 3 && eqFold(key, "pwd") && pathValue(v, 0) }

// pwdPath reports a path as the value at s[v] of a key "PWD" (past
// spaces and an opening quote, escaped or not): the shell's variable
// that names the working directory, in every env dump.
func pwdPath(s []byte, v int) bool {
	for v < len(s) && (s[v] == ' ' || s[v] == '"' || s[v] == '\'' || s[v] == '\\') {
		v++
	}
	return pathValue(s, v)
}

// pathValue reports a value at s[va] that reads as a path ("pwd is
// /home/x", "pwd was ~/src", "pwd is C:\work", "$HOME/x", "./build"):
// after "pwd", the shell's command that prints the working directory, a
// path is the directory, not a password.
func pathValue(s []byte, va int) bool {
	if va >= len(s) {
		return false
	}
	switch c := s[va]; {
	case c == '/', c == '~', c == '.', c == '$':
		return true // (also "$HOME/x", "./build")
	case is(c, cUpper|cLower) && va+2 < len(s) && s[va+1] == ':' && (s[va+2] == '\\' || s[va+2] == '/'):
		return true
	}
	return false
}

// proseBack is how far before its from proseValue looks for "password
// for <who>": <who> an e-mail address matched before the value.
const proseBack = 96

// proseLabel reports a token label whose last word is s[k:p], before
// proseValue's "is" or "was": "token" (access token, auth token, bearer
// token, "your new token"), "api key", "secret key", "access key" (also
// "secret access key"), "private key", "client secret", or one word
// naming one ("api_key", "access-token"). Not "key" alone ("the key is
// the id").
func proseLabel(s []byte, from, k, p int, sp byte) bool {
	w := s[k:p]
	switch {
	case eqFold(w, "token"):
		return true
	case eqFold(w, "key"), eqFold(w, "secret"):
		q := k - 1
		if q <= from || s[q] != sp {
			return false
		}
		j := q
		for j > from && q-j < 8 && is(s[j-1], cUpper|cLower) {
			j--
		}
		if !wordStart(s, j) {
			return false
		}
		if eqFold(w, "key") {
			return eqFoldAny(s[j:q], "api", "secret", "access", "private")
		}
		return eqFold(s[j:q], "client")
	}
	return eqFoldAny(w, "api_key", "api-key", "apikey", "secret_key", "access_key", "secret_access_key", "private_key",
		"access_token", "access-token", "auth_token", "bearer_token", "client_secret", "client-secret")
}

// tokenValue reports a value after a token label that reads as one:
// strongValue, randomValue, or 16 hex digits or more with a letter and
// a digit ("3f9a8c7e5b2d4a1c…").
func tokenValue(v []byte) bool {
	if strongValue(v) || randomValue(v) {
		return true
	}
	if len(v) < 16 {
		return false
	}
	var seen uint8
	for _, c := range v {
		if !is(c, cDigit) && (c|0x20 < 'a' || c|0x20 > 'f') {
			return false
		}
		seen |= class[c] & alnum
	}
	return seen&cDigit != 0 && seen&(cUpper|cLower) != 0
}

// proseRest is where the value proseValue turned away at its digit s[i]
// ends for the digits after it: at a delimiter, or at a '+' or '&' (which
// may start another value in URL-encoded text).
func proseRest(s []byte, i int) int {
	e := i + 1
	for e < len(s) && !proseEndT[s[e]] && s[e] != '+' && s[e] != '&' {
		e++
	}
	return e
}

// holdsPass reports whether t holds "pass" in any case (as eqFold
// compares: ASCII letters only), the start of every word proseValue takes
// a value after. It looks for a doubled 's' eight bytes at a time, with
// "pa" before it.
func holdsPass(t []byte) bool { return passOrCopula(t, false) }

// proseKeys is proseValue's gate of a text with no '>': holdsPass, or a
// token label's last letters before a copula ("…key is ", "…token was ",
// "…secret is ", also '+'-delimited: labelCopula), found in the same walk
// of t's 's' bytes.
func proseKeys(t []byte) bool { return passOrCopula(t, true) }

// passOrCopula is holdsPass(t), or with copula proseKeys(t).
//
// Where the kernel runs (vecRuns), the 's' bytes of each 64-byte block are
// found at once (sSet: base64 and log lines hold one or two in 64 bytes),
// and each is judged as below; the rest of t, fewer than 64 bytes, eight
// at a time. labelCopula looks at the byte after the 's' itself, so the
// walks need not agree on which 's' bytes they ask it about.
func passOrCopula(t []byte, copula bool) bool {
	const ones, highs, lows = 0x0101010101010101, 0x8080808080808080, 0x7f7f7f7f7f7f7f7f
	i, last := 0, uint64(0) // last: t[i-1] is an 's'
	for ; vecRuns && i+64 <= len(t); i += 64 {
		z := setMask64(&t[i], &sSet)
		if z == 0 {
			last = 0
			continue
		}
		if last != 0 && z&1 != 0 && i >= 3 && t[i-3]|0x20 == 'p' && t[i-2]|0x20 == 'a' {
			return true // a pair across the block before
		}
		for ss := z & (z >> 1); ss != 0; ss &= ss - 1 {
			if k := i + bits.TrailingZeros64(ss); k >= 2 && t[k-2]|0x20 == 'p' && t[k-1]|0x20 == 'a' {
				return true
			}
		}
		if copula {
			for c := z; c != 0; c &= c - 1 {
				if labelCopula(t, i+bits.TrailingZeros64(c)) {
					return true
				}
			}
		}
		last = z >> 63
	}
	for ; i+8 <= len(t); i += 8 {
		x := binary.LittleEndian.Uint64(t[i:])
		v := x | 0x20*ones ^ 's'*ones       // 0 where 's' or 'S'
		z := ^((v&lows + lows) | v) & highs // 0x80 there
		if z == 0 {
			last = 0
			continue
		}
		if last != 0 && z&0x80 != 0 && i >= 3 && t[i-3]|0x20 == 'p' && t[i-2]|0x20 == 'a' {
			return true // a pair across the word before
		}
		for ss := z & (z >> 8); ss != 0; ss &= ss - 1 {
			if k := i + bits.TrailingZeros64(ss)/8; k >= 2 && t[k-2]|0x20 == 'p' && t[k-1]|0x20 == 'a' {
				return true
			}
		}
		if copula {
			// The 's' bytes before a ' ' or '+' (and "!\"#()*", which
			// x|0x0B also makes '+'), or at the word's end: a copula's
			// last letter, rare in text that is no English prose.
			w := x | 0x0b*ones ^ '+'*ones
			sep := ^((w&lows + lows) | w) & highs
			for c := z & (sep>>8 | 0x80<<56); c != 0; c &= c - 1 {
				if labelCopula(t, i+bits.TrailingZeros64(c)/8) {
					return true
				}
			}
		}
		last = z >> 63
	}
	if copula {
		for k := i; k < len(t); k++ {
			if t[k]|0x20 == 's' && labelCopula(t, k) {
				return true
			}
		}
	}
	for i = max(i-3, 0); i+4 <= len(t); i++ {
		if atFold(t, i, "pass") {
			return true
		}
	}
	return false
}

// labelCopula reports whether the 's' at t[k] ends the copula of a token
// label: "key is ", "ken was ", "ret is " (api key, access token, client
// secret; proseLabel judges the label), "pwd is " (a password's short
// name), ' ' or '+' around the copula.
func labelCopula(t []byte, k int) bool {
	if k < 5 || k+1 >= len(t) || t[k+1] != ' ' && t[k+1] != '+' {
		return false
	}
	le := k - 2 // "is"
	if t[k-1]|0x20 == 'a' && t[k-2]|0x20 == 'w' {
		le = k - 3 // "was"
	} else if t[k-1]|0x20 == 'e' {
		// Spanish's "es" after "contraseña" ('ñ' or 'Ñ' in UTF-8, then
		// 'a'): "la contraseña es <pw>".
		// URL-encoded: "la+contrase%C3%B1a+es+<pw>".
		return t[le] == t[k+1] && (t[le-3] == 0xc3 && (t[le-2] == 0xb1 || t[le-2] == 0x91) && t[le-1]|0x20 == 'a' ||
			t[le] == '+' && le >= 7 && encodedEnye(t, le-7) && t[le-1]|0x20 == 'a')
	} else if t[k-1]|0x20 != 'i' {
		return false
	}
	if le < 3 || t[le] != ' ' && t[le] != '+' {
		return false
	}
	a, b, c := t[le-3]|0x20, t[le-2]|0x20, t[le-1]|0x20
	return a == 'k' && b == 'e' && c == 'y' || a == 'k' && b == 'e' && c == 'n' || a == 'r' && b == 'e' && c == 't' ||
		a == 'p' && b == 'w' && c == 'd'
}

// encodedEnye reports 'ñ' or 'Ñ' URL-encoded at s[i] ("%C3%B1", "%c3%91").
func encodedEnye(s []byte, i int) bool {
	return i+6 <= len(s) && atFold(s, i, "%c3%") && (atFold(s, i+4, "b1") || s[i+4] == '9' && s[i+5] == '1')
}

// proseSeed is what proseValue judges of s from its first digit on, for
// the searches of s from any start: that s holds no value it takes
// (proseNone) when s has no '>', no "pass" and no token label's copula
// (proseKeys) after a ' ' or '+' (as
// proseValue looks for them in s[from:], which holds no more than s),
// else nothing yet.
// proseMay says whether proseValue may take a value anywhere in s (its
// from on), worked out once (st.delims); where it may not, st.done is then
// past every digit. A value is delimited by ' ', '>' or '+' (URL-encoded):
// a text with none of them (an id, a timestamp without an offset) holds
// none. Nor does a text with no '>', no "pass" in any case and no
// "key", "token" or "secret" before "is" or "was" (proseKeys): a value is
// only ever taken after an XML element's '>', after "password", "passwd"
// or "passphrase", or after a token label's copula (proseLabel), and a text dense with digits (a tool's JSON result, a
// hash, base64, log lines) looked back from the first digit of each word
// for a key it cannot hold. The pre-check calls it too.
func proseMay(s []byte, st *proseState) bool {
	if st.delims == 0 {
		st.delims = 1
		if proseGate(s) {
			st.delims = 2
		}
	}
	if st.delims == 1 {
		st.done = len(s)
		return false
	}
	return true
}

func proseSeed(s []byte) proseState {
	if proseGate(s) {
		return proseState{}
	}
	return proseNone(len(s))
}

// proseGate is proseMay's judgement of s: a '>', or a ' ' or '+' and
// proseKeys, or (foreignSepIn) a label beyond English before a dash or
// Portuguese's "é".
func proseGate(s []byte) bool {
	if bytes.IndexByte(s, '>') >= 0 {
		return true
	}
	if bytes.IndexByte(s, ' ') < 0 {
		return bytes.IndexByte(s, '+') >= 0 && proseKeys(s)
	}
	return proseKeys(s) || foreignSepIn(s)
}

// foreignSepKey reports a label beyond English and its separator before
// the space s[p] that ends them, where proseValue takes a password after
// them: one of foreignLabels or Portuguese's "senha" before a dash
// between spaces ("пароль — <pw>", "пароль - <pw>", an en dash too),
// "senha" before Portuguese's copula ("a senha é <pw>"), or "password"
// before Italian's ("la password è <pw>"). It returns the label's start.
func foreignSepKey(s []byte, lo, p int) (int, bool) {
	e, sep := 0, byte(0)
	switch {
	case p-2 > lo && s[p-1] == '-' && s[p-2] == ' ':
		e, sep = p-2, '-'
	case p-4 > lo && (s[p-1] == 0x94 || s[p-1] == 0x93) && s[p-2] == 0x80 && s[p-3] == 0xe2 && s[p-4] == ' ':
		e, sep = p-4, '-' // an em dash (U+2014) or en dash (U+2013)
	case p-3 > lo && (s[p-1] == 0xa9 || s[p-1] == 0x89) && s[p-2] == 0xc3 && s[p-3] == ' ':
		e, sep = p-3, 'e' // "é", "É"
	case p-3 > lo && (s[p-1] == 0xa8 || s[p-1] == 0x88) && s[p-2] == 0xc3 && s[p-3] == ' ':
		e, sep = p-3, 'i' // Italian's "è" after the English word: "la password è <pw>"
	default:
		return 0, false
	}
	label := func(e int) (int, bool) {
		switch sep {
		case 'i':
			k := e - 8
			return k, k >= lo && eqFold(s[k:e], "password") && wordStart(s, k)
		case 'e':
			k := e - 5
			return k, k >= lo && eqFold(s[k:e], "senha") && wordStart(s, k)
		}
		if k := e - 5; k >= lo && eqFold(s[k:e], "senha") && wordStart(s, k) {
			return k, true
		}
		return foreignLabel(s, lo, e)
	}
	if k, ok := label(e); ok {
		return k, true
	}
	return qualifiedLabel(s, lo, e, label)
}

// qualifiedLabel reports a label (label says where one ends) before a
// preposition and one to three words that end at s[e]: "a senha do banco
// é <pw>", "пароль от почты — <pw>", "la password del database è <pw>",
// "das Passwort für den Server ist <pw>", as "the password for <who> is"
// reads in English (passwordFor). It returns the label's start.
func qualifiedLabel(s []byte, lo, e int, label func(int) (int, bool)) (int, bool) {
	w := e // the end of the word looked at
	for n := 0; n < 4 && w > lo; n++ {
		b := bytes.LastIndexByte(s[max(lo, w-32):w], ' ')
		if b < 0 {
			return 0, false
		}
		b += max(lo, w-32) // the space before the word
		if n > 0 && qualifierWord(s[b+1:w]) {
			if k, ok := label(b); ok {
				return k, true
			}
		}
		w = b
	}
	return 0, false
}

// qualifierWord reports a preposition that names whose a password is
// after its label, in the languages of foreignLabels and their copulas:
// "do", "del", "für", "du", "для", "от"…
func qualifierWord(w []byte) bool {
	switch len(w) {
	case 2, 3, 4, 5, 6, 7:
	default:
		return false
	}
	return eqFoldAny(w, "do", "da", "de", "dos", "das", "del", "della", "dello", "di", "per", "para", "des", "du", "pour", "vom", "zum", "zur") ||
		string(w) == "für" || string(w) == "для" || string(w) == "от" || string(w) == "к"
}

// foreignSepIn reports whether s may hold foreignSepKey's shapes: a dash
// between spaces or a "é" after a space, with a label before it
// (proseGate's look, once a text: the bytes are looked for, not walked).
func foreignSepIn(s []byte) bool {
	for k := 0; ; {
		j := bytes.IndexByte(s[k:], 0xe2) // an em or en dash
		if j < 0 {
			break
		}
		k += j + 1
		if p := k + 2; p < len(s) && s[p] == ' ' && s[k] == 0x80 && (s[k+1] == 0x94 || s[k+1] == 0x93) {
			if _, ok := foreignSepKey(s, 0, p); ok {
				return true
			}
		}
	}
	for k := 0; ; {
		j := bytes.IndexByte(s[k:], 0xc3) // "é" (and ñ, ö, ó of labels before a dash)
		if j < 0 {
			break
		}
		k += j + 1
		if p := k + 1; p < len(s) && s[p] == ' ' && (s[k] == 0xa9 || s[k] == 0x89 || s[k] == 0xa8 || s[k] == 0x88) {
			if _, ok := foreignSepKey(s, 0, p); ok {
				return true
			}
		}
	}
	for k := 0; ; {
		j := bytes.Index(s[k:], []byte(" - "))
		if j < 0 {
			return false
		}
		k += j + 1
		if _, ok := foreignSepKey(s, 0, k+1); ok {
			return true
		}
	}
}

// proseNone is the state of proseValue in a text of n bytes that holds no
// value it takes, as it leaves it after judging so.
func proseNone(n int) proseState { return proseState{done: n, delims: 1} }

// proseState is what proseValue judged already in one text: done, the end
// of the last value judged; clean, an offset such that s[from:clean] holds
// no delimiter and no '+' (no value can start in it).
type proseState struct {
	done, clean int
	delims      int8 // 0: not looked for yet, 1: s[from:] has no ' ', '>' or '+', 2: it has
}

// escapedXML matches the value of an XML element of a credential name
// whose brackets are escaped: URL-encoded ("%3Cpassword%3E<pw>%3C%2F…",
// open "%3c") or as in JSON text ("\u003cpassword\u003e<pw>\u003c/…",
// open `\u003c`). s[q:q+n] is the escaped '>'.
func escapedXML(s []byte, from, q int, open string, n int) (Match, bool) {
	k := -1
	for x := q - len(open); x >= from && q-x < 256; x-- {
		if s[x] == open[0] && atFold(s, x, open) {
			k = x + len(open)
			break
		}
	}
	if k < 0 || k == q || (run(s, k, word) != q || !classifyWords(s, k, q).Credential()) && !xmlCredTag(s, k, q) {
		return Match{}, false
	}
	v := q + n
	e := v
	for e < len(s) && e-v < 256 && !proseEndT[s[e]] && s[e] != '%' && s[e] != '&' && s[e] != '+' {
		e++
	}
	if e == v || isMask(s, v) {
		return Match{}, false
	}
	return Match{v, e, KindKeyValue}, true
}

// proseEndT marks the bytes that end a value in prose: white space, a
// quote, an angle bracket or a backslash (an escape of JSON text held in
// a string).
var proseEndT = func() (t [256]bool) {
	for _, c := range []byte(" \t\n\r\"'`<>\\") {
		t[c] = true
	}
	return t
}()

// strongValue reports a value that reads as a generated password: 8
// bytes or more with upper- and lower-case letters and digits, or with
// letters, digits and a symbol not used to join words ('-', '_', '.', '/'),
// and no run of 6 lower-case letters, a word ("2FA-protected").
func strongValue(v []byte) bool {
	if len(v) < 8 {
		return false
	}
	var seen uint8
	sym := false
	lowers := 0
	for _, c := range v {
		seen |= class[c] & alnum
		if class[c]&alnum == 0 && c != '-' && c != '_' && c != '.' && c != '/' {
			sym = true
		}
		if lowers = lowers + 1; class[c]&cLower == 0 {
			lowers = 0
		} else if lowers >= 6 {
			return false
		}
	}
	return seen == alnum || seen&cDigit != 0 && seen&(cUpper|cLower) != 0 && sym
}

// paramQuote reports an escaped quote at s[e] (an odd run of
// backslashes, then '"') that opens an auth parameter's value (after its
// '=', open false) or closes one (before a ',', open true), and the byte
// after it.
func paramQuote(s []byte, v, e int, open bool) (int, bool) {
	b := e
	for b < len(s) && b-e < 8 && s[b] == '\\' {
		b++
	}
	if b >= len(s) || s[b] != '"' || (b-e)%2 == 0 {
		return 0, false
	}
	if open && b+1 < len(s) && s[b+1] == ',' {
		return b + 1, true
	}
	if open || e == v || s[e-1] != '=' {
		return 0, false
	}
	// The parameter's name: a short word of letters (not a token's
	// base64 padding, "Bearer eyJ…=\\"").
	n := e - 1
	for n > v && e-n < 26 && is(s[n-1], cUpper|cLower|cUnder|cDash) {
		n--
	}
	if n == e-1 || e-n >= 26 || n > v && s[n-1] != ' ' && s[n-1] != ',' {
		return 0, false
	}
	return b + 1, true
}

// encodedParamAt reports an auth parameter's name and its URL-encoded '='
// at s[v] ("username%3D…", Digest's first).
func encodedParamAt(s []byte, v int) bool {
	e := run(s, v, cUpper|cLower|cUnder)
	return e > v && e-v <= 24 && atFold(s, e, "%3d")
}

// isValueEnd says where a key's value ends: at its closing quote, or
// unquoted at white space and the delimiters of query strings and prose;
// a header value (whole) runs to the end of the line (or of its JSON
// string, when the key was quoted).
func isValueEnd(c, quote byte, whole, quotedKey bool) bool {
	switch {
	case quote == '\\':
		return c == '\\' || c == '"'
	case quote != 0:
		return c == quote
	case whole:
		return c == '\n' || c == '\r' || c == '\\' || quotedKey && c == '"'
	}
	switch c {
	case ' ', '\t', '\n', '\r', '"', '\'', '&', ',', ';', '<', '>', ')', ']', '}', '\\':
		return true
	}
	return false
}

func isListSep(c byte) bool { return c == ',' || c == ';' || c == '&' }

// listEnds reports whether an unquoted value ends at the ',', ';' or '&'
// at s[e], its key starting at s[j]. Passwords hold these bytes, and a
// shell's or an env file's assignment ("PGPASSWORD=ab,cd"), a flag's
// value ("--password=ab&cd") or a line of prose goes on past them; a list
// of pairs ends its values at its separator: the key after one
// ("?user=bob&password=…&next=…", "Server=db;Password=…;"), or a pair
// after it ("password=…&remember=1", "Password=…;Encrypt=True",
// "password=…,user=app"). White space, the text's end, another end
// ("&&", ";\n", ",\"") or an HTML-escaped '&' after it end it too.
func listEnds(s []byte, j, e int) bool {
	c := s[e]
	if j > 0 && (s[j-1] == c || c == '&' && s[j-1] == '?' || c == '&' && j >= 5 && at(s, j-5, "&amp;")) {
		return true
	}
	n := e + 1
	if n >= len(s) || isValueEnd(s[n], 0, false, false) || c == '&' && at(s, n, "amp;") {
		return true
	}
	// A pair's key: words, single spaces between them ("User ID="), then
	// '=' (or ':' after a ',': "{user:app,password:…}").
	k := n
	for k < len(s) && k-n < 40 && (is(s[k], word|cKey) || s[k] == ' ' && s[k-1] != ' ' && k > n) {
		k++
	}
	return k > n && k < len(s) && s[k-1] != ' ' && (s[k] == '=' || c == ',' && s[k] == ':')
}

// encodedListSep reports a ',', ';' or '&' at s[e], also URL-encoded
// (%2C, %3B, %26).
func encodedListSep(s []byte, e int) bool {
	return isListSep(s[e]) || s[e] == '%' && (atFold(s, e, "%2c") || atFold(s, e, "%3b") || atFold(s, e, "%26"))
}

// encodedListEnds is listEnds in a URL-encoded text: the separator at s[e]
// (raw or encoded) ends the value after an encoded key that follows the
// same separator or '?', before the end of the value's text or a pair
// ("%26remember%3D1").
func encodedListEnds(s []byte, j, e int) bool {
	if s[e] != '%' {
		return listEnds(s, j, e)
	}
	sep := s[e : e+3]
	if j >= 3 && (atFold(s, j-3, string(sep)) || atFold(s, j-3, "%3f") && atFold(sep, 0, "%26")) {
		return true
	}
	n := e + 3
	if n >= len(s) || encodedValueEnd(s, n) {
		return true
	}
	k := n
	for k < len(s) && k-n < 40 && (is(s[k], word|cKey) || s[k] == '+' && k > n && s[k-1] != '+') {
		k++
	}
	return k > n && s[k-1] != '+' && (atFold(s, k, "%3d") || atFold(sep, 0, "%2c") && atFold(s, k, "%3a"))
}

// argEnds reports whether an unquoted command-line argument ends at the
// ',', ';' or '&' at s[e]: a password holds them ("sshpass -p ab,cd"),
// a shell operator ("; ", "&&", "& ") is white space or another end
// after it.
func argEnds(s []byte, e int) bool {
	n := e + 1
	return n >= len(s) || isValueEnd(s[n], 0, false, false) || s[n] == '|'
}

// teamsWebhook matches the path of a Microsoft Teams incoming webhook
// ("https://<tenant>.webhook.office.com/webhookb2/<uuid>@<uuid>/IncomingWebhook/<32 hex>/<uuid>"),
// whose authority, at s[i], names the tenant first: from "webhookb2" on,
// its '@' included.
func teamsWebhook(s []byte, i int, slash string) (Match, bool) {
	const host, path = ".webhook.office.com", "webhookb2"
	h := i
	for h < len(s) && h-i < 64 && (is(s[h], alnum|cDash) || s[h] == '.') {
		h++
	}
	if h-i <= len(host) || !atFold(s, h-len(host), host) || !atFold(s, h, slash) || !atFold(s, h+len(slash), path) {
		return Match{}, false
	}
	j := h + len(slash)
	e := j + len(path)
	for e < len(s) {
		if is(s[e], word) || s[e] == '@' {
			e++
		} else if slash == "%2f" && atFold(s, e, "%40") {
			e += 3
		} else if atFold(s, e, slash) {
			e += len(slash)
		} else {
			break
		}
	}
	if e-j < len(path)+40 || isMask(s, j) {
		return Match{}, false
	}
	return Match{j, e, KindVendorToken}, true
}

// webhookPaths are the URLs whose path is the credential (incoming
// webhooks: who has the URL can post), up to the path's secret part.
var webhookPaths = []string{"hooks.slack.com/services/", "hooks.slack.com/workflows/", "hooks.slack.com/triggers/",
	"discord.com/api/webhooks/", "discordapp.com/api/webhooks/"}

// webhook matches the path of a webhook URL whose authority starts at
// s[i], its slashes written as slash ("/", JSON's "\/", URL-encoded
// "%2f", any case): from the path's first segment after webhookPaths to the end of
// the path.
func webhook(s []byte, i int, slash string) (Match, bool) {
	if m, ok := teamsWebhook(s, i, slash); ok {
		return m, true
	}
	if i >= len(s) || s[i] != 'h' && s[i] != 'd' {
		return Match{}, false
	}
	for _, p := range webhookPaths {
		j, k := i, 0
		for ; k < len(p) && j < len(s); k++ {
			if p[k] == '/' {
				if !atFold(s, j, slash) {
					break
				}
				j += len(slash)
				continue
			}
			if s[j] != p[k] {
				break
			}
			j++
		}
		if k < len(p) {
			continue
		}
		e := j
		for e < len(s) {
			if is(s[e], word) {
				e++
			} else if atFold(s, e, slash) {
				e += len(slash)
			} else {
				break
			}
		}
		if e-j < 8 || isMask(s, j) {
			return Match{}, false
		}
		return Match{j, e, KindVendorToken}, true
	}
	return Match{}, false
}

// keyStart is where a key whose run of key bytes is s[j:ke] starts: after
// the letter of a JSON escape ("\\napi-key: …"), the two hex digits of a
// URL-encoded delimiter ("%26sig%3D…") or the hex of a \u00XX escape
// ("\u0026token=…") that begin the run.
func keyStart(s []byte, from, j, ke int) int {
	if j > from && j < ke && escLetter(s, j) {
		return j + 1
	}
	if j > from && s[j-1] == '%' && ke-j > 2 && hexVal(s[j]) >= 0 && hexVal(s[j+1]) >= 0 {
		return j + 2
	}
	if j > from && s[j-1] == '\\' && ke-j > 5 && s[j] == 'u' && s[j+1] == '0' && s[j+2] == '0' && hexVal(s[j+3]) >= 0 && hexVal(s[j+4]) >= 0 {
		return j + 5 // "\u0026sig=…": JSON text held in a string, its '&' escaped
	}
	return j
}

// userinfo matches the userinfo of a URL whose authority starts at s[i]:
// up to '@', before any '/', '?', white space or quote, and before a '#'
// in the user or after a port: a '#' in the password
// ("postgres://app:pa#ss@db/x", a generated password as people paste it,
// unencoded) is part of it; "http://h:8080#a@b" is a fragment.
func userinfo(s []byte, i int, escaped bool) (Match, bool) {
	colon := -1
	for j := i; j < len(s) && j-i < 512; j++ {
		switch c := s[j]; c {
		case ':':
			if colon < 0 {
				colon = j
			}
		case '#':
			if colon < 0 || run(s, colon+1, cDigit) >= j {
				return Match{}, false
			}
		case '@':
			if j == i || j+1 >= len(s) || !is(s[j+1], alnum) || isMask(s, i) || holdsMask(s[i:j]) {
				// holdsMask: the password holds a mask this package wrote
				// (what it hid was no password: "nats://bob:<a phone
				// number>@h" masked once), and masking twice changes
				// nothing.
				return Match{}, false
			}
			return Match{i, j, KindURLUserinfo}, true
		case '/', '?', ' ', '\t', '\n', '\r', '"', '\'', '<', '>':
			return Match{}, false
		case '\\':
			if escaped {
				return Match{}, false
			}
		}
	}
	return Match{}, false
}

// encodedUserinfo is userinfo in a URL-encoded text: the authority starts
// at s[i] (after "%3A%2F%2F"), the userinfo ends at "%40", before a
// delimiter or the encoding of one ("%2F", "%3F", "%20"; "%23" in the
// user or after a port, as userinfo takes '#').
//
// An "%40" before any "%3A" may be the '@' of a user that is an e-mail
// address ("app%40corp%3Apw%40h": a URL-encoded text encoded again, read
// decoded once, where "%40" was "%2540"): the userinfo then ends at the
// "%40" after the password, if one comes before the authority ends.
func encodedUserinfo(s []byte, i int) (Match, bool) {
	colon, userAt := -1, -1
	end := func() (Match, bool) {
		if userAt < 0 || colon >= 0 && colon < userAt {
			return Match{}, false
		}
		return encodedUserinfoAt(s, i, userAt) // (a ':' after it: the host's)
	}
	for j := i; j < len(s) && j-i < 512; j++ {
		switch s[j] {
		case '%':
			switch {
			case colon < 0 && atFold(s, j, "%3a"):
				colon = j + 3
			case atFold(s, j, "%23") && colon >= 0 && run(s, colon, cDigit) < j:
				j += 2 // '#' in the password
			case atFold(s, j, "%40"):
				if colon < 0 && userAt < 0 && j > i {
					userAt = j
					j += 2
					continue
				}
				return encodedUserinfoAt(s, i, j)
			case atFold(s, j, "%2f"), atFold(s, j, "%3f"), atFold(s, j, "%23"), atFold(s, j, "%20"), atFold(s, j, "%22"):
				return end()
			}
		case '/', '?', '#', ' ', '\t', '\n', '\r', '"', '\'', '<', '>', '&', '+', '\\':
			return end()
		}
	}
	return end()
}

// encodedUserinfoAt is encodedUserinfo's match when the userinfo that
// starts at s[i] ends at the "%40" at s[j].
func encodedUserinfoAt(s []byte, i, j int) (Match, bool) {
	if j == i || j+3 >= len(s) || !is(s[j+3], alnum) || isMask(s, i) || holdsMask(s[i:j]) {
		return Match{}, false
	}
	return Match{i, j, KindURLUserinfo}, true
}

// hostUserinfo matches the userinfo of an address with no scheme whose
// user ends at the ':' at s[i], as Kafka and Redis clients take brokers:
// "user:password@host:9092". Both the ':' and a port after the host are
// needed ("git@host:22" names a user only). The user may be empty where
// the ':' starts the text or a quoted or spaced value (":password@host:6379",
// Redis' default user; or the second half of "user" | ":password@host:9092"
// cut in two chunks of a stream, each masked alone).
func hostUserinfo(s []byte, from, i int) (Match, bool) {
	a := i
	for a > from && (is(s[a-1], word) || s[a-1] == '.') {
		a--
	}
	if a == i && !emptyUserStart(s, i) || a > from && (s[a-1] == '/' || s[a-1] == '\\' || s[a-1] == '@') || isMask(s, a) {
		return Match{}, false
	}
	if a >= len(Mask)+1 && s[a-1] == '(' && isMask(s, a-len(Mask)-1) {
		return Match{}, false // the "fp:" or "len:" of a mask ("******(fp:…)@host:9092")
	}
	at, ok := hostAfterUserinfo(s, i)
	if !ok || holdsMask(s[i+1:at]) {
		// holdsMask: the password holds a mask this package wrote
		// ("bob:<a phone number with spaces>@kafka:9092" masked once):
		// no password.
		return Match{}, false
	}
	return Match{a, at, KindURLUserinfo}, true
}

// hostAfterUserinfo is the rest of hostUserinfo after the user: the ':' at
// s[i], a password, '@', a host and ":port". at is the '@'.
func hostAfterUserinfo(s []byte, i int) (at int, ok bool) {
	at = i + 1
	for ; at < len(s) && at-i < 256; at++ {
		c := s[at]
		if c <= ' ' || c == '"' || c == '\'' || c == ',' || c == '/' || c == '\\' || c == '<' || c == '>' || c == '@' {
			break
		}
	}
	if at == i+1 || at >= len(s) || s[at] != '@' {
		return 0, false
	}
	h := at + 1
	if atFold(s, h, "tcp(") || atFold(s, h, "tcp6(") || atFold(s, h, "unix(") || atFold(s, h, "udp(") {
		return at, true // Go's MySQL DSN: "app:<pw>@tcp(db:3306)/orders"
	}
	for h < len(s) && (is(s[h], alnum|cDash) || s[h] == '.') {
		h++
	}
	if h == at+1 || h >= len(s) || s[h] != ':' {
		return 0, false
	}
	p := run(s, h+1, cDigit)
	if p == h+1 || p-h-1 > 5 || p < len(s) && is(s[p], alnum) {
		return 0, false
	}
	return at, true
}

// goDSNEncoded is hostUserinfo's Go MySQL DSN URL-encoded, at the '3'
// s[i] of the "%3A" after its user: "app%3A<pw>%40tcp%28db%3A3306%29%2Fapp"
// (also unix, udp, tcp6): the user and the password, up to the "%40".
func goDSNEncoded(s []byte, from, i int) (Match, bool) {
	a := i - 1
	for a > from && i-1-a < 64 && (is(s[a-1], word) || s[a-1] == '.') {
		a--
	}
	if a >= from+3 && s[a-3] == '%' && a+2 <= i-1 {
		a += 2 // the hex digits of an escape glued before the user ("%22app")
	}
	if a == i-1 || isMask(s, a) {
		return Match{}, false
	}
	at := i + 2
	for ; at < len(s) && at-i < 256; at++ {
		c := s[at]
		if c <= ' ' || c == '+' || c == '&' || c == '"' || c == '\'' || c == '/' || c == '\\' || c == '%' && !is(s[min(at+1, len(s)-1)], cDigit|cUpper|cLower) {
			return Match{}, false
		}
		if c == '%' && atFold(s, at, "%40") {
			break
		}
	}
	if at == i+2 || !atFold(s, at, "%40") {
		return Match{}, false
	}
	h := at + 3
	if !(atFold(s, h, "tcp%28") || atFold(s, h, "tcp6%28") || atFold(s, h, "unix%28") || atFold(s, h, "udp%28")) || holdsMask(s[i+2:at]) {
		return Match{}, false
	}
	return Match{a, at, KindURLUserinfo}, true
}

// emptyUserStart reports a ':' at s[i] that may start a userinfo with no
// user: at the start of s or after white space or a quote.
func emptyUserStart(s []byte, i int) bool {
	if i == 0 {
		return true
	}
	switch s[i-1] {
	case ' ', '\t', '\n', '\r', '"', '\'':
		return true
	}
	return false
}

// email matches an e-mail address around the '@' at s[i].
func email(s []byte, from, i int) (Match, bool) {
	a := i
	for a > from && isLocal(s[a-1]) {
		a--
	}
	if a == i {
		return Match{}, false
	}
	// Domain: labels of [A-Za-z0-9-] separated by dots, the last one
	// alphabetic and at least two letters long.
	e, dots, last := i+1, 0, i+1
	for e < len(s) {
		c := s[e]
		if is(c, alnum|cDash) {
			e++
			continue
		}
		if c == '.' && e+1 < len(s) && is(s[e+1], alnum) && e > last {
			dots++
			e++
			last = e
			continue
		}
		break
	}
	// The last label is the top-level domain, letters only, two at least.
	// One that goes on with '-' is an address glued to a suffix
	// ("a@example.org-842", an id made of it): the address ends before the
	// '-'. A last label that is no top-level domain ("a@example.org.x",
	// "a@example.org.v2") is a suffix glued to the address, which ends at
	// the dot before it: the longest valid address is taken. A last label
	// cut by a mask went on into the value the mask hides, and is judged
	// as it was then, no top-level domain ("0@0.AAeyJ0.0.0" masked once is
	// "0@0.AA******(fp:…)"; masking twice changes nothing).
	if isMask(s, e) && dots > 0 {
		e, dots = last-1, dots-1
		for last = e; last > i+1 && s[last-1] != '.'; last-- {
		}
	}
	for {
		if dots == 0 {
			return Match{}, false
		}
		tld := last
		for tld < e && is(s[tld], cUpper|cLower) {
			tld++
		}
		if tld < e && s[tld] == '-' {
			e = tld
		}
		if tld == e && e-last >= 2 {
			break
		}
		e, dots = last-1, dots-1 // the '.' before the last label
		for last = e; last > i+1 && s[last-1] != '.'; last-- {
		}
	}
	if isMask(s, a) {
		return Match{}, false
	}
	return Match{a, e, KindEmail}, true
}

func isLocal(c byte) bool {
	return is(c, word) || c == '.' || c == '%' || c == '+'
}

// number handles a digit or '+' at s[i]: an international phone number
// ("+" and 8 to 15 digits, single separators between groups), a CN mobile
// number (1[3-9] and 9 digits, optionally after 86, or written 3-4-4), a CN
// resident ID number (17 digits and a check digit or X, checked). A number
// must not touch a letter or digit on either side. next is where the scan
// goes on when nothing matched.
func number(s []byte, from, i int, b64 *b64state) (Match, bool, int) {
	m, ok, next := numberAt(s, from, i, b64)
	if !ok {
		return m, ok, next
	}
	switch m.Kind {
	case KindPhone, KindCard, KindCNID, KindIBAN:
		e := m.End
		for k := 0; k < 2 && e < len(s) && isPhoneSep(s[e]); k++ {
			e++
		}
		if isMask(s, e) {
			// A number glued to a mask, or followed by a separator and
			// a mask, was glued to the value the mask hides, or went
			// on into it (a number must not touch a letter or digit,
			// nor be followed by one more group), and is judged as it
			// was then: no number ("+000000000000ACCA…" masked once is
			// "+000000000000******(fp:…)", "200.200.0000.200.200.0000"
			// is "200.200.0000.******(fp:…)"; masking twice changes
			// nothing).
			return Match{}, false, m.End
		}
	}
	return m, ok, next
}

// numberAt is number without the check of what follows a match.
func numberAt(s []byte, from, i int, b64 *b64state) (m Match, ok bool, next int) {
	c := s[i]
	if mayDigitShape(s, i) {
		if st, e, ok := digitShape(s, from, i); ok {
			return Match{st, e, KindVendorToken}, true, 0
		}
	}
	if c == '0' && i >= from+2 && i+3 < len(s) && s[i-1] == 'u' && s[i-2] == '\\' && s[i+1] == '0' && s[i+2] == '3' && (s[i+3]|0x20 == 'd' || s[i+3]|0x20 == 'a') {
		// password\u003dhunter2: a key=value pair in JSON text held in a
		// string, its '=' escaped (Gson).
		if m, ok := keyValue(s, from, i-2, i+4, false); ok {
			return m, true, 0
		}
	}
	if c-'3' <= 1 && i > from && s[i-1] == '%' && c == '4' && i+1 < len(s) && s[i+1] == '0' {
		if m, ok := oracleEncoded(s, from, i, false); ok {
			return m, true, 0
		}
	} else if c == '3' && i > from && s[i-1] == '%' && i+1 < len(s) && (s[i+1]|0x20 == 'd' || s[i+1]|0x20 == 'a') {
		if s[i+1]|0x20 == 'a' {
			if m, ok := pgpassEncoded(s, from, i); ok {
				return m, true, 0
			}
			if m, ok := twitchOAuthAt(s, from, i-1, i+2); ok {
				return m, true, 0 // "PASS+oauth%3A…"
			}
			if m, ok := netUseEncoded(s, from, i); ok {
				return m, true, 0 // "net+use+…+%2Fuser%3A…"
			}
			if m, ok := goDSNEncoded(s, from, i); ok {
				return m, true, 0 // "app%3A<pw>%40tcp%28db%3A3306%29"
			}
		}
		if s[i+1]|0x20 == 'd' && i >= 2 && s[i-2] == '+' {
			if m, ok := setPasswordForEncoded(s, from, i-1); ok {
				return m, true, 0 // SET+PASSWORD+FOR+…+%3D+%27<pw>%27
			}
		}
		if s[i+1]|0x20 == 'a' && atFold(s, i+2, "%2f%2f") {
			// postgres%3A%2F%2Fapp%3Apw%40db: a URL's userinfo, encoded.
			if m, ok := webhook(s, i+8, "%2f"); ok {
				return m, true, 0
			}
			if m, ok := encodedUserinfo(s, i+8); ok {
				return m, true, 0
			}
		}
		if s[i+1]|0x20 == 'a' && atFold(s, i+2, "%5c%2f%5c%2f") {
			// postgres%3A%5C%2F%5C%2Fapp%3Apw%40db: JSON text ("\/")
			// URL-encoded.
			if m, ok := encodedUserinfo(s, i+14); ok {
				return m, true, 0
			}
		}
		// password%3Dhunter2: a key=value pair in a URL-encoded text
		// ("%3D%3E" is "=>", "%3A%3D" ":=").
		v := i + 2
		if atFold(s, v, "%3e") && s[i+1]|0x20 == 'd' || atFold(s, v, "%3d") && s[i+1]|0x20 == 'a' {
			v += 3
		}
		if m, ok := keyValue(s, from, i-1, v, true); ok {
			return m, true, 0
		}
	}
	if i-from >= 5 && c != '+' && (i >= b64.prose.done || s[i-1] == '%' || s[i-1] == 'u') {
		// (proseValue's gate, inlined: most digits are in ids and
		// timestamps.)
		if m, ok := proseValue(s, from, i, &b64.prose); ok {
			return m, true, 0
		}
	}
	if i >= 2 && i-2 >= from && isUpper(s[i-1]) && isUpper(s[i-2]) && (i == 2 || !is(s[i-3], alnum)) && i+1 < len(s) && is(s[i+1], cDigit) {
		if e, ok := iban(s, i-2); ok {
			return Match{i - 2, e, KindIBAN}, true, 0
		}
	}
	if i > 0 && (is(s[i-1], alnum) && !escLetter(s, i-1) || s[i-1] == '+' || afterMask(s, i) || inFingerprint(s, i)) {
		// A digit inside a word: the word may be a random token.
		if m, ok, next := highEntropy(s, from, i, b64); ok || next > i {
			return m, ok, next
		}
		return Match{}, false, max(run(s, i, cDigit), i+1)
	}
	if c == '+' {
		if e, ok := intlPhone(s, i); ok {
			return Match{i, e, KindPhone}, true, 0
		}
		return Match{}, false, i + 1
	}
	e := run(s, i, cDigit)
	d := e - i
	if e < len(s) && is(s[e], cUpper|cLower) {
		if d == 17 && (s[e] == 'X' || s[e] == 'x') && (e+1 >= len(s) || !is(s[e+1], alnum)) && cnID(s, i) {
			return Match{i, e + 1, KindCNID}, true, 0
		}
		if m, ok, next := highEntropy(s, from, i, b64); ok || next > i {
			return m, ok, next
		}
		return Match{}, false, e
	}
	if d == 4 || d >= 13 && d <= 19 && d != 18 {
		if end, ok := card(s, i); ok {
			return Match{i, end, KindCard}, true, 0
		}
	}
	switch {
	case d == 3:
		if end, ok := cnGrouped(s, i); ok {
			return Match{i, end, KindPhone}, true, 0
		}
		if st, end, ok := nanp(s, from, i); ok {
			return Match{st, end, KindPhone}, true, 0
		}
	case d == 11 && cnMobile(s, i), d == 13 && s[i] == '8' && s[i+1] == '6' && cnMobile(s, i+2):
		return Match{i, e, KindPhone}, true, 0
	case d == 18 && cnID(s, i):
		return Match{i, e, KindCNID}, true, 0
	case d == 18:
		if end, ok := card(s, i); ok {
			return Match{i, end, KindCard}, true, 0
		}
	}
	return Match{}, false, e
}

// Random tokens with no known prefix (npm_…, hf_…, SendGrid's SG.….…, a
// Twilio SK…, a bot token): a run of [A-Za-z0-9_-] at least minEntropyLen
// long, with upper and lower case letters and digits, whose characters
// carry at least minEntropy bits each (Shannon, over the run), and that
// does not read as an identifier (see identifier). Words, camelCase
// identifiers ("TestNATSSlowConsumerGivesNoFalseFinding1724886460"), hex
// ids, UUIDs and timestamps fall short.
const (
	minEntropyLen = 32
	minEntropy    = 4.3
)

// highEntropy checks the token around the digit (or '+') at s[i]: a
// base64 run holding an encoded credential (b64.check), else a random
// token. next > i is where the scan goes on (after the token) when the
// token was looked at.
func highEntropy(s []byte, from, i int, b64 *b64state) (Match, bool, int) {
	if (i < b64.word || i == b64.word && s[i] == '+') && (b64.nested || i < b64.end) {
		// Inside a word judged already and a run checked already (or text
		// decoded from base64): b64.check and the judgement below both
		// decline, wherever the word starts. Each digit of a long word (a
		// UUID, a hash, base64) walked back to its start before.
		//
		// At a '+' that ends the word judged last (base64's words are
		// runs between '+' and '/'), the judgement would be that word's
		// again, from the same start (the walk back from the '+' passes
		// the digit it was judged at): what the '+' adds is only a token
		// glued after it inside the word, and one the scan did not reach
		// and return before the '+' is none (a token prefix is no digit,
		// so no digit run the scan skips holds one). So it declines too.
		return Match{}, false, 0
	}
	a := i
	for a > from && is(s[a-1], word) {
		a--
	}
	if a > from && escLetter(s, a) {
		a++ // "\\nSK…": the word starts after the escape
	}
	if m, ok := b64.check(s, from, a, i); ok {
		if m.Start > i {
			// Once the run's match is masked, what is before it in the
			// run is text of its own: it is scanned as such now (its
			// words judged, a number after a '+'), so that masking twice
			// changes nothing. Its own base64 is not decoded again: no
			// alignment of it held anything before m.Start.
			if p, ok := scanAt(s[:m.Start], from, i, true); ok {
				return p, true, 0
			}
		}
		return m, true, 0
	}
	if i < b64.word {
		return Match{}, false, 0
	}
	b := runLong(s, i, word)
	// The word is judged once; when it is no token, the scan goes on
	// inside it (a token glued after an id: "run1_ghp_…", "a1-sk-…").
	b64.word = b
	m, ok := wordToken(s, from, a, i, b)
	if ok && m.Kind == KindHighEntropy {
		m = b64Run(s, from, m, b64)
	}
	return m, ok, 0
}

// b64Run widens a high-entropy word to the base64 run it is part of (a
// key's base64 with '+' in it, or with '/' and '=' padding: minisign and
// WireGuard keys, an AWS secret outside a key=value pair): masked word by
// word, the words of it too short to judge were shown, runs of up to 40
// characters of the key. A path ('/' only, no padding) stays as it is.
func b64Run(s []byte, from int, m Match, b64 *b64state) Match {
	x, y := m.Start, m.End
	plus, slash := false, false
	inEsc := x-1 > from && s[x-1] == '%' && (atFold(s, x-1, "%2b") || atFold(s, x-1, "%2f"))
	if inEsc {
		// The word starts inside an encoded '+' or '/' (the hex digits
		// of "%2F" begin a word): the run goes back past the escape,
		// whatever it holds (a path's too: "x%2F" + "2Fabc…" masked from
		// the '2' showed the start of a random run, an AWS secret's).
		x--
	}
	for x > from {
		if is(s[x-1], b64alpha) {
			x--
		} else if x-3 >= from && (atFold(s, x-3, "%2b") || atFold(s, x-3, "%2f")) {
			x -= 3 // URL-encoded
		} else {
			break
		}
		plus, slash = plus || s[x] == '+' || s[x] == '%' && s[x+2]|0x20 == 'b', slash || s[x] == '/' || s[x] == '%' && s[x+2]|0x20 == 'f'
	}
	if x < m.Start && x > from && escLetter(s, x) {
		x++ // "\\nRWQ…": the run starts after the escape
	}
	fwd := runHint{fwdX: y, lastPlus: -1, lastSlash: -1}
	if h := &b64.hint; y >= h.fwdX && y <= h.fwdY && y >= 2 && s[y-1] != '%' && s[y-2] != '%' {
		// The search of the rest of a run walked it already: the walk
		// from y goes on in plain steps to fwdY, and a '+' or '/' it
		// passes is one of those after y (the two bytes before y, which
		// the first steps look at for an encoded "%2b", hold no '%').
		plus, slash = plus || h.lastPlus >= y, slash || h.lastSlash >= y
		fwd, y = *h, h.fwdY
	} else {
		var p, sl, plain bool
		y, fwd.lastPlus, fwd.lastSlash, p, sl, plain = runAfter(s, y)
		plus, slash = plus || p, slash || sl
		if fwd.fwdY = y; !plain {
			fwd.fwdY = 0
		}
	}
	e := y
	for e < len(s) && e-y < 6 && (s[e] == '=' || atFold(s, e, "%3d")) {
		e += 1 + 2*btoi(s[e] == '%')
	}
	if x == m.Start && y == m.End || isMask(s, x) {
		return m
	}
	if e > m.End {
		// What the run holds after the word is judged first: a token
		// after a '+' ("…+ghp_…", a URL-encoded form's space) keeps its
		// kind, and the run ends before it. The search of s[:e] from the
		// word's end is told what is known of the run already (runHint),
		// so that each word of it does not walk the rest again.
		rest := b64state{hint: runHint{fwdX: fwd.fwdX, fwdY: fwd.fwdY, lastPlus: fwd.lastPlus, lastSlash: fwd.lastSlash}}
		if h := b64.hint; h.noWordY <= e {
			rest.hint.noWordX, rest.hint.noWordY = h.noWordX, h.noWordY
		}
		if b64.prose.delims == 1 {
			// s[from:] holds no value proseValue takes: s[m.End:e] none either.
			rest.prose = proseNone(e)
		}
		rest.cmd = b64.cmd // (s[:e] holds a command's word only if s does)
		if n, ok := scanState(s[:e], m.End, m.End, rest); ok && (n.Kind != KindHighEntropy || n.End < e) {
			e = n.Start
			if n.Kind == KindHighEntropy {
				e = n.End
			}
			for e > m.End && (s[e-1] == '+' || s[e-1] == '/') {
				e--
			}
			y = min(y, e)
		}
	}
	if !plus && !(slash && e > y) && !inEsc {
		return m
	}
	return Match{x, e, KindHighEntropy}
}

// runAfter walks the base64 run on from s[y] for b64Run, whose word ends
// there (s[y-2] and s[y-1] are no '%'): its end, the last '+' and '/'
// of its plain stretches (-1 if none), whether it holds a '+' or '/',
// also URL-encoded ("%2B", "%2F"), and whether all of it is plain. The
// plain stretches go a run at a time (runLong), their last '+' and '/'
// looked for from their ends: the walk a byte, which judged each byte's
// '+' and '/' and the encoded forms' "%" two bytes back, was most of
// b64Run's instructions. (A plain byte never has a '%' two bytes before
// it: not at the word's end, and an encoded byte's "%2" is followed by
// its letter.)
func runAfter(s []byte, y int) (end, lastPlus, lastSlash int, plus, slash, plain bool) {
	lastPlus, lastSlash, plain = -1, -1, true
	for y < len(s) {
		if z := runLong(s, y, b64alpha); z > y {
			if k := bytes.LastIndexByte(s[y:z], '+'); k >= 0 {
				lastPlus, plus = y+k, true
			}
			if k := bytes.LastIndexByte(s[y:z], '/'); k >= 0 {
				lastSlash, slash = y+k, true
			}
			y = z
		}
		if !atFold(s, y, "%2b") && !atFold(s, y, "%2f") {
			break
		}
		y += 3
		plain = false
		plus, slash = plus || s[y-1]|0x20 == 'b', slash || s[y-1]|0x20 == 'f'
	}
	return y, lastPlus, lastSlash, plus, slash, plain
}

// wordToken judges the word s[a:b] around the digit (or '+') at s[i], the
// first of the word: a token of a known shape with digits (digitToken),
// else a random one.
func wordToken(s []byte, from, a, i, b int) (Match, bool) {
	if b-a < minDigitToken {
		return Match{}, false
	}
	if st, e, ok := digitToken(s, from, a, b); ok && !isMask(s, st) {
		return Match{st, e, KindVendorToken}, true
	}
	// A known token glued inside the word ends the word judged here: once
	// it is masked, the word ends where its mask begins, and what is
	// before it is judged on its own. Judging it so now masks a random
	// token glued before a known one ("<random>-----BEGIN …",
	// "<random>-glpat-…") the first time, and masking the result again
	// changes nothing.
	glued, gluedOK := gluedToken(s, from, i+1, b)
	if gluedOK && glued.Start > a {
		b = glued.Start
		if b-a < minDigitToken {
			// Too short to be a token: the scan goes on to the glued
			// one ("build7-glpat-…").
			return Match{}, false
		}
		if st, e, ok := digitToken(s, from, a, b); ok && !isMask(s, st) {
			return Match{st, e, KindVendorToken}, true
		}
	}
	if b-a < minEntropyLen {
		return Match{}, false
	}
	var seen uint8
	var counts [128]uint16
	var present [2]uint64 // the bytes counted, a bit each (word bytes are ASCII)
	for k := a; k < b; k++ {
		c := s[k]
		seen |= class[c] & alnum
		counts[c]++
		present[c>>6&1] |= 1 << (c & 63)
	}
	if seen != alnum || isMask(s, a) {
		return Match{}, false
	}
	if entropy(&counts, &present, b-a) < minEntropy || identifier(s[a:b]) {
		return Match{}, false
	}
	if gluedOK && glued.Start <= a {
		// The known token starts the word (its prefix reaches back to
		// the word's start): it keeps its kind.
		return glued, true
	}
	if a > from && cryptByte(s[a-1]) || b < len(s) && cryptByte(s[b]) {
		if f, g, ok := cryptField(s, from, a, b); ok {
			return Match{f, g, KindHighEntropy}, true // the whole hash, not a word of it
		}
	}
	return Match{a, b, KindHighEntropy}, true
}

// cryptByte reports a byte of a crypt(3) hash's alphabet that ends a
// word: '.', '/', '$'.
func cryptByte(c byte) bool { return c == '.' || c == '/' || c == '$' }

// cryptField returns the crypt(3) hash (cryptHash) that holds the word
// s[a:b], a field of its line (an /etc/shadow line: "root:$6$<salt>$<hash>:19000:…"),
// at or after from: a word of it masked alone left the rest of the hash
// printed around the mask.
func cryptField(s []byte, from, a, b int) (int, int, bool) {
	if bytes.IndexByte(s[max(from, a-120):a], '$') < 0 {
		return 0, 0, false // (a base64 run's words, most of them: no '$')
	}
	f := a
	for f > from && a-f < 256 && (is(s[f-1], alnum) || cryptByte(s[f-1]) || s[f-1] == '=' || s[f-1] == ',') {
		f--
	}
	for f < a && s[f] != '$' {
		f++ // the hash starts at its '$' (a user before it is "user:$6$…" only past a ':')
	}
	g := b
	for g < len(s) && g-b < 256 && (is(s[g], alnum) || cryptByte(s[g]) || s[g] == '=' || s[g] == ',') {
		g++
	}
	if f >= a || !cryptHash(s[f:g]) || f > from && is(s[f-1], alnum) {
		return 0, 0, false
	}
	return f, g, true
}

// entropy is the Shannon entropy, in bits a byte, of a word of n bytes
// whose bytes are counted in counts, present the bytes whose count is not
// 0 (a bit each): only those are visited, in the order of their values, as
// the walk of all 128 counts took them (a word of 32 to 64 bytes holds 20
// to 40 distinct ones; the walk of the empty slots was half of the
// function's instructions). p·log2(p) of a count under four is worked out
// at its first use and used again: a random word (a base64 image's, 32 to
// hundreds of bytes) holds most of its bytes once or twice, and math.Log2
// a byte was a twentieth of the instructions of such text. The terms and
// the order of the sum are the same.
func entropy(counts *[128]uint16, present *[2]uint64, n int) float64 {
	fn := float64(n)
	h := 0.0
	var few [4]float64 // the term of count c, once known (never 0: c < n)
	for w, m := range present {
		for ; m != 0; m &= m - 1 {
			c := counts[w<<6|bits.TrailingZeros64(m)]
			if c < uint16(len(few)) {
				if few[c] == 0 {
					p := float64(c) / fn
					few[c] = p * math.Log2(p)
				}
				h -= few[c]
				continue
			}
			p := float64(c) / fn
			h -= p * math.Log2(p)
		}
	}
	return h
}

// gluedToken returns the first known token (prefixed) anchored in
// s[k:b], a word's bytes after its first digit: the match the scan finds
// next in the word.
func gluedToken(s []byte, from, k, b int) (Match, bool) {
	for ; k < b; k++ {
		if anchor[s[k]]&aPrefix != 0 {
			if m, ok := prefixed(s, from, k); ok && m.Kind.Credential() {
				return m, true
			}
		}
	}
	return Match{}, false
}

func cnMobile(s []byte, i int) bool {
	return s[i] == '1' && s[i+1] >= '3' && s[i+1] <= '9'
}

// cnID checks the 18-character ID number at s[i:]: a plausible birth date
// (19xx or 20xx, month, day) and the ISO 7064 MOD 11-2 check character.
func cnID(s []byte, i int) bool {
	weights := [17]int{7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2}
	sum := 0
	for k := 0; k < 17; k++ {
		sum += int(s[i+k]-'0') * weights[k]
	}
	check := "10X98765432"[sum%11]
	last := s[i+17]
	if last == 'x' {
		last = 'X'
	}
	if last != check {
		return false
	}
	y := s[i+6 : i+8]
	if !(y[0] == '1' && y[1] == '9' || y[0] == '2' && y[1] == '0') {
		return false
	}
	month := int(s[i+10]-'0')*10 + int(s[i+11]-'0')
	day := int(s[i+12]-'0')*10 + int(s[i+13]-'0')
	return month >= 1 && month <= 12 && day >= 1 && day <= 31
}

// intlPhone reads "+CC digits..." at s[i] == '+': 8 to 15 digits in all,
// groups separated by at most two of " -.()".
func intlPhone(s []byte, i int) (int, bool) {
	digits, e, lastDigit := 0, i+1, -1
	// group is where the last whole group of digits that keeps the number
	// within 15 digits ends: "+8613987654322-876" is a number glued to a
	// suffix (an id made of it, an extension), and the number is masked.
	group, groupDigits := -1, 0
	for e < len(s) {
		if is(s[e], cDigit) {
			digits++
			lastDigit = e
			e++
			continue
		}
		k := e
		for k < len(s) && k-e < 2 && isPhoneSep(s[k]) {
			k++
		}
		if k == e || k >= len(s) || !is(s[k], cDigit) || lastDigit < 0 {
			break
		}
		if digits <= 15 {
			group, groupDigits = e, digits
		}
		e = k
	}
	if digits > 15 && group > 0 && groupDigits >= 8 {
		digits, lastDigit = groupDigits, group-1
	}
	if digits < 8 || digits > 15 {
		return 0, false
	}
	end := lastDigit + 1
	if end < len(s) && (is(s[end], alnum) || s[end] == '+') { // "+1…+2…" is no number: nor would it be once masked
		return 0, false
	}
	return end, true
}

func isPhoneSep(c byte) bool {
	return c == ' ' || c == '-' || c == '.' || c == '(' || c == ')'
}

// cnGrouped matches a CN mobile number written 3-4-4 with spaces or dashes
// ("139-1234-5678") at s[i:], returning its end.
func cnGrouped(s []byte, i int) (int, bool) {
	groups := [3]int{3, 4, 4}
	e := i
	for g, n := range groups {
		if g > 0 {
			if e >= len(s) || (s[e] != ' ' && s[e] != '-') {
				return 0, false
			}
			e++
		}
		for k := 0; k < n; k++ {
			if e >= len(s) || !is(s[e], cDigit) {
				return 0, false
			}
			e++
		}
	}
	if !cnMobile(s, i) || (e < len(s) && is(s[e], alnum)) {
		return 0, false
	}
	return e, true
}

// Straddle finds a match that starts in tail (the end of a stream's
// previous text, e.g. the last 256 bytes of chunk n's delta) and ends in
// head (the start of the next text): a secret split across two chunks; or
// a match wholly in head that head alone does not show, because what makes
// it one is in tail ("Authorization: Token " | "<token>", "password=" |
// "<value>", "Bearer " | "<token>").
// joined is scratch (tail and head are appended to joined[:0]; pass it back
// in to reuse it); m is in joined's coordinates: when m.Start < len(tail),
// joined[m.Start:len(tail)] ends the previous text and joined[len(tail):m.End]
// starts the next one (m.End <= len(tail): a credential in tail that
// head completes, "user:pw" | "@host:9092"); when m.Start >= len(tail),
// the match is joined[m.Start:m.End], in the next text only.
func Straddle(joined, tail, head []byte) (out []byte, m Match, ok bool) {
	joined = append(append(joined[:0], tail...), head...)
	nt := len(tail)
	// The text is searched from one start after another: whether it holds
	// what proseValue takes a value after is judged once (each find of a
	// base64 tail looked for it in the whole text again).
	prose := proseSeed(joined)
	// (A match that ends where tail does is searched past too: what head
	// starts with may be a value only tail's end makes one, "Password
	// for bob@example.com" | ": <pw>".)
	for from := 0; from < nt || from == nt && from > 0; {
		x, found := scanProse(joined, from, from, false, prose)
		if !found {
			break
		}
		if x.Start >= nt {
			if x.End > nt && !isMask(joined, x.Start) && !inHead(joined[nt:], x.Start-nt, x.End-nt, x.Kind.Credential(), prose.delims == 1) {
				return joined, x, true
			}
			if x.Kind == KindEmail && x.End < len(joined) && joined[x.End] == ':' && x.Start-nt < proseBack {
				// An address in head before a colon, its label in tail
				// ("my pass" | "word for bob@example.com: <pw>"): the
				// password after it, as StraddleNext's.
				if y, ok := scanProse(joined, x.End, x.End, false, prose); ok && y.Start >= x.End && !isMask(joined, y.Start) &&
					!inHead(joined[nt:], y.Start-nt, y.End-nt, y.Kind.Credential(), prose.delims == 1) {
					return joined, y, true
				}
			}
			break
		}
		if !isMask(joined, x.Start) && (x.End > nt || x.Kind.Credential() && !inHead(joined[:nt], x.Start, x.End, true, prose.delims == 1)) {
			// Across the boundary, or a credential in tail that only
			// head makes one ("bus:pw" | "@kafka-1:9092").
			return joined, x, true
		}
		from = x.End
	}
	return joined, Match{}, false
}

// StraddleNext goes on from m, a match Straddle(joined, tail, head)
// returned that runs from tail into head and is no credential (an e-mail
// address or a phone number cut in two), to the next match in head that
// head alone does not show: the password after "Password for bob@exam" |
// "ple.com: <pw>", whose label is before the address, so that Straddle,
// which stops at its first match, never reaches it. Its arguments and
// results are Straddle's; ok is false where m does not end in head or
// there is no such match. Not after a high-entropy run: base64 streamed
// across deltas (a data: URL in each, an image's or a file's bytes) has
// one across every boundary, and searching each head past it doubled the
// CPU of such a stream (validate on py-b64: 922 M -> 2,157 M
// instructions); a label is not followed by random text before its value.
func StraddleNext(joined, tail, head []byte, m Match) (out []byte, n Match, ok bool) {
	nt := len(tail)
	if m.Start >= nt || m.End <= nt || m.End >= nt+len(head) || m.Kind.Credential() || m.Kind == KindHighEntropy {
		return joined, Match{}, false
	}
	joined = append(append(joined[:0], tail...), head...)
	prose := proseSeed(joined)
	x, found := scanProse(joined, m.End, m.End, false, prose)
	if !found || x.Start < m.End || isMask(joined, x.Start) || inHead(joined[nt:], x.Start-nt, x.End-nt, x.Kind.Credential(), prose.delims == 1) {
		return joined, Match{}, false
	}
	return joined, x, true
}

// inHead reports whether head alone has the match head[start:end] (and
// so for tail); cred: as a credential ("token=" | "<32 random>" is a
// credential, the random run alone only high_entropy).
//
// noProse: head is a part of a text of which proseSeed judged that it
// holds no value for proseValue.
func inHead(head []byte, start, end int, cred, noProse bool) bool {
	var prose proseState
	if noProse {
		prose = proseNone(len(head))
	}
	for from := 0; from <= start; {
		m, ok := scanProse(head, from, from, false, prose)
		if !ok || m.Start > start {
			return false
		}
		if m.Start == start && m.End == end && (!cred || m.Kind.Credential()) {
			return true
		}
		from = max(m.End, from+1)
	}
	return false
}

// btoi is 1 for true, 0 for false.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
