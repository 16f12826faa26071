package redact

import (
	"bytes"
	"encoding/binary"
)

// KeyClass is what a key's name says about its value.
type KeyClass uint8

const (
	KeyPlain KeyClass = iota
	// KeyCredential: password, passwd, pwd, passphrase, secret, credential,
	// api key, private key, access key, account key, bearer, auth, sig...:
	// every scalar under it is a credential.
	KeyCredential
	// KeyToken: the last word is "token" (access_token, idToken): string
	// values are credentials; a number is a count (max_token).
	KeyToken
	// KeyRef: the last word is "ref" (api_key_ref, credential_ref): names a
	// secret without being one, still masked; objects are walked.
	KeyRef
	// KeyAuthorization: an Authorization header (any scheme).
	KeyAuthorization
	// KeyCookie: Cookie, Set-Cookie.
	KeyCookie
	// KeyEmail, KeyPhone: personal data whatever its shape.
	KeyEmail
	KeyPhone
	// KeyUserID: user_id, userid (masked in text, as the reference does;
	// the record log keeps it, the rules read it).
	KeyUserID
	// KeyNamedKey: the last word is "key" after a word that names neither
	// a known vendor (stripe_key, serpapiKey: KeyCredential) nor a data
	// structure (cache_key, partition_key, public_key: plain), as an
	// unknown tool's FOO_KEY: a value that reads as a key (keyLikeValue:
	// random, or a long run of hex digits) is masked, as high_entropy, no
	// credential (not Credential).
	KeyNamedKey
)

// Credential reports a class whose string values are credentials.
func (c KeyClass) Credential() bool {
	return c == KeyCredential || c == KeyToken || c == KeyAuthorization || c == KeyCookie
}

// ClassifyKey classifies a key: it is split into words (at '_', '-', '.',
// ' ', camelCase boundaries and letter/digit transitions) compared ASCII case-insensitively. Words
// are compared whole, so "tokens", "max_tokens" and "token_count" are not
// credentials while "token", "access_token" and "accessToken" are;
// "password" and "secret" count anywhere ("mysecretvalue",
// "db_password"; not "secretary"). A key whose last word describes the credential rather
// than holding it ("password_hint", "secret_name", "authorization_url")
// is plain.
func ClassifyKey[T Text](k T) KeyClass {
	b := view(k)
	c := classifyWords(b, 0, len(b))
	if c == KeyPlain && len(b) >= 5 && foreignKey(b) {
		return KeyCredential // {"contraseña": "<pw>"}, "DB_ПАРОЛЬ" (foreign.go)
	}
	return c
}

// stopLast are last words that make a credential-named key plain.
var stopLast = []string{"url", "uri", "endpoint", "hint", "type", "method", "required", "enabled", "name",
	"names", "len", "length", "count", "policy", "scheme", "mode", "expires", "expiry", "ttl", "header",
	"field", "path", "file", "id", "ids", "kind", "version", "source", "set", "present", "rotated",
	"updated", "created", "at", "hash", "format", "prompt", "label", "description", "env", "strength",
	"stdin", "fd", // (docker login --password-stdin <registry>: the password is read from stdin)
	"store", "helper"} // (Docker's "credsStore": "desktop", git's credential.helper store: a helper's name)

func classifyWords(s []byte, from, to int) KeyClass {
	k := s[from:to]
	if len(k) >= 6 && k[len(k)-1] >= 0x80 && cjkLabelAt(s, from, to) {
		return KeyCredential // "密码", "数据库密码", "API密钥" (cjk.go)
	}
	if len(k) < 3 || !mayBeSpecial(k) {
		return KeyPlain
	}
	return classifySpecial(k)
}

// classifySpecial is classifyWords for a key of three bytes or more that
// holds a special word (mayBeSpecial).
func classifySpecial(k []byte) KeyClass {
	n := len(k)
	var prev, last, penult []byte
	kind := KeyPlain
	words := 0
	flush := func(w []byte) {
		before := prev
		penult = before
		prev, last = w, w
		words++
		if eqFold(w, "id") && eqFold(before, "user") && kind == KeyPlain {
			kind = KeyUserID
		}
		if len(w) < 3 {
			return
		}
		switch lower(w[0]) {
		case 'p', 's', 'a', 'c', 'b', 'k', 'u', 'i', 'w', 'l', 'h', 'j', 'g':
		default:
			return
		}
		switch {
		case eqFoldAny(w, passWordsForeign...):
			kind = KeyCredential
		case eqFold(w, "authorization") || eqFold(w, "authorisation"):
			if kind == KeyPlain {
				kind = KeyAuthorization
			}
		case eqFold(w, "cookie") || eqFold(w, "cookies"):
			if kind == KeyPlain {
				kind = KeyCookie
			}
		case eqFoldAny(w, "pwd", "psk", "passphrase", "bearer", "apikey", "privatekey", "accesskey", "secretkey",
			"accountkey", "credential", "credentials", "creds", "signingkey", "sessionkey", "sharedaccesskey", "subscriptionkey", "appkey"):
			kind = KeyCredential
		case eqFold(w, "key") && eqFoldAny(before, "api", "private", "access", "secret", "signing", "encryption", "account", "master", "session", "client",
			"subscription", "functions", "app", "admin", "service", "write", "license", "deploy", "root", "shared", "storage", "ingest", "auth"):
			kind = KeyCredential
		case eqFold(w, "userid"):
			if kind == KeyPlain {
				kind = KeyUserID
			}
		}
	}
	var ws [8][]byte // the first words (namedKey)
	start := -1
	for i := 0; i <= n; i++ {
		sep := i == n || k[i] == '_' || k[i] == '-' || k[i] == '.' || k[i] == ' '
		boundary := false
		if !sep && i > 0 && isUpper(k[i]) {
			p := k[i-1]
			boundary = isLowerByte(p) || is(p, cDigit) || (isUpper(p) && i+1 < n && isLowerByte(k[i+1]))
		} else if !sep && i > 0 {
			// A letter/digit transition ends a word too: a digit glued to
			// a key word ("1private_key", "oauth2_token") leaves it whole.
			boundary = is(k[i], cDigit) != is(k[i-1], cDigit) && is(k[i-1], cUpper|cLower|cDigit) && is(k[i], cUpper|cLower|cDigit)
		}
		if (sep || boundary) && start >= 0 {
			if words < len(ws) {
				ws[words] = k[start:i]
			}
			flush(k[start:i])
			start = -1
		}
		if !sep && start < 0 {
			start = i
		}
	}
	// password, passwd and secret count inside any word.
	if kind != KeyCredential && (containsFold(k, "passw") || containsFold(k, "secret") && !containsFold(k, "secretar")) {
		kind = KeyCredential
	}
	if eqFold(last, "ref") {
		return KeyRef
	}
	if kind == KeyUserID && words > 2 {
		kind = KeyPlain // user_id_hash, owner_user_id: not the reference's rule
	}
	if kind != KeyPlain {
		if words > 1 && kind != KeyUserID && eqFoldAny(last, stopLast...) {
			return KeyPlain
		}
		return kind
	}
	switch {
	case eqFold(last, "sig") && words == 1, eqFold(last, "auth") && words == 1, // "auth", npm's "_auth"
		// DB_PASS, MYSQL_PW, X-Amz-Signature: the last word only
		// ("pass_through", "signature_method" are plain), after a word
		// that names what the password or signature is for: a
		// "first_pass", a "signature" or a tool's "function_signature"
		// is what agents' records are full of, and no credential.
		words > 1 && eqFoldAny(last, "pass", "pw") && eqFoldAny(penult, passOwners...),
		words > 1 && eqFold(last, "signature") && eqFoldAny(penult, signatureOwners...),
		// GITHUB_PAT, AZURE_DEVOPS_EXT_PAT: a personal access token
		// (a "glob_pat" is a pattern).
		words > 1 && eqFold(last, "pat") && eqFoldAny(penult, patOwners...),
		// Honeycomb's API key header (X-Honeycomb-Team, and in
		// OTEL_EXPORTER_OTLP_HEADERS): a team's key, not its name.
		words > 1 && eqFold(last, "team") && eqFold(penult, "honeycomb"):
		return KeyCredential
	case eqFold(last, "token"),
		len(last) > 5 && eqFold(last[len(last)-5:], "token") && eqFoldAny(last[:len(last)-5], "access", "refresh", "id", "auth", "api", "bearer", "session", "csrf", "xsrf", "oauth",
			"identity", "registry"): // .docker/config.json's "identitytoken", "registrytoken"
		return KeyToken
	}
	if words > 1 && eqFold(last, "key") {
		return namedKey(ws[:min(words, len(ws))-1], penult)
	}
	if len(last) > 5 && eqFold(last[len(last)-3:], "key") && eqFoldAny(last[:len(last)-3], keyVendors...) {
		// A known vendor glued to "key" ("stripekey", "OPENAIKEY",
		// "serpapikey"), as STRIPE_KEY. Only a vendor: "monkey",
		// "turnkey", "whiskey", "passkey" are words.
		return KeyCredential
	}
	switch {
	case eqFoldAny(k, "email", "e_mail", "e-mail", "email_address", "emailAddress", "mail"):
		return KeyEmail
	case eqFoldAny(k, "phone", "phone_number", "phoneNumber", "mobile", "mobile_phone", "telephone", "tel", "msisdn"):
		return KeyPhone
	}
	return KeyPlain
}

// namedKey classifies a key of two words or more whose last word is
// "key" and which classifySpecial found plain (api_key, secret_key,
// license_key are credentials' before it): ws are the words before the
// last (the first seven), penult the one right before it. A
// data-structure word among them makes it plain (CACHE_KEY,
// IDEMPOTENCY_KEY, OBJECT_KEY, STRIPE_PUBLIC_KEY); a known vendor right
// before "key" a credential's (STRIPE_KEY, DEEPGRAM_KEY, serpapiKey); any
// other word KeyNamedKey, masked where its value reads as a key.
func namedKey(ws [][]byte, penult []byte) KeyClass {
	if len(penult) < 2 || is(penult[0], cDigit) {
		return KeyPlain // "api2Key", "x_key": a digit or a letter names no tool
	}
	if len(ws) == 1 && eqFold(penult, "routing") {
		// PagerDuty's routing_key (its Events API's integration key, 32
		// hex digits): masked where its value reads as a key, a
		// credential where it has the key's shape (keyValue's
		// pagerDutyValue); a message broker's routing key
		// ("orders.created") reads as none.
		return KeyNamedKey
	}
	for x, w := range ws {
		if eqFold(w, "pagerduty") {
			return KeyCredential // PAGERDUTY_ROUTING_KEY, pagerduty_integration_key
		}
		if eqFoldAny(w, keyDataWords...) {
			return KeyPlain
		}
		if x+1 < len(ws) && is(ws[x+1][0], cDigit) && cap(ws[x+1]) == cap(w)-len(w) {
			// A word glued to its digits ("S3", "sha256"): split at the
			// digit, compared whole.
			for _, d := range keyDataWords {
				if len(d) == len(w)+len(ws[x+1]) && eqFold(w, d[:len(w)]) && eqFold(ws[x+1], d[len(w):]) {
					return KeyPlain
				}
			}
		}
	}
	if eqFoldAny(penult, keyVendors...) {
		return KeyCredential
	}
	return KeyNamedKey
}

// keyDataWords are the words that make a "<word>_key" a data structure's
// key, a name or a public key, not a credential (their values are often
// hashes or random ids: a cache key's SHA-256, an idempotency key's
// random token, a partition key's UUID); keyVendors the vendors whose
// "<vendor>_key" is their API key (many are plain hex: Deepgram, W&B,
// SerpAPI, Serper, AssemblyAI, ElevenLabs, Azure's services).
var (
	keyDataWords = []string{"cache", "caching", "primary", "foreign", "sort", "sorting", "partition", "partitioning", "range", "hash", "hashed",
		"cluster", "clustering", "composite", "surrogate", "natural", "candidate", "alternate", "unique", "lookup", "map", "dict", "idempotency",
		"idempotent", "idempotence", "dedup", "dedupe", "deduplication", "routing", "route", "binding", "row", "column", "shard", "sharding",
		"index", "object", "s3", "gcs", "blob", "bucket", "file", "path", "folder", "dir", "message", "msg", "group", "stream", "event",
		"correlation", "trace", "span", "request", "cursor", "page", "pagination", "sequence", "seq", "order", "ordering", "lock", "mutex",
		"record", "entity", "join", "hot", "short", "shortcut", "modifier", "toggle", "public", "pub", "publishable", "gpg", "pgp", "kms",
		"etag", "commit", "revision", "checksum", "digest", "thumbprint", "sha", "sha1", "sha256", "md5", "uuid", "guid",
		"table", "schema", "config", "translation", "locale", "label", "tag", "metric", "metrics", "field", "attribute", "attr",
		"property", "prop", "param", "state", "store", "redis", "memcache", "memcached", "queue", "topic", "job", "task", "nonce", "react",
		"list", "item", "node", "child", "parent", "workspace", "kafka", "signin", "keyboard", "press", "enter", "escape", "menu", "hotkey"}
	keyVendors = []string{"stripe", "openai", "anthropic", "claude", "elevenlabs", "eleven", "deepgram", "wandb", "serpapi", "serper",
		"assemblyai", "cohere", "mistral", "groq", "tavily", "firecrawl", "brave", "exa", "jina", "voyage", "voyageai", "replicate",
		"together", "fireworks", "pinecone", "sendgrid", "mailgun", "twilio", "algolia", "datadog", "openrouter", "perplexity", "pplx",
		"gemini", "deepseek", "xai", "cerebras", "nvidia", "ngc", "huggingface", "runpod", "browserbase", "resend", "postmark",
		"mailchimp", "mailjet", "brevo", "sendinblue", "vonage", "nexmo", "plivo", "telnyx", "azure", "cognitive", "speech", "translator",
		"newrelic", "dynatrace", "pagerduty", "opsgenie", "cloudflare", "fastly", "vercel", "netlify", "heroku", "linode", "vultr",
		"hetzner", "digitalocean", "shodan", "virustotal", "censys", "ipinfo", "ipstack", "openweather", "openweathermap", "weatherapi",
		"newsapi", "alphavantage", "finnhub", "coinmarketcap", "etherscan", "infura", "moralis", "youtube", "stability", "ideogram",
		"heygen", "cartesia", "gladia", "speechmatics", "lmnt", "playht", "weaviate", "qdrant", "zilliz", "upstash", "llamacloud",
		"llamaparse", "langsmith", "langfuse", "helicone", "portkey", "scrapingbee", "scraperapi", "zenrows", "apify", "brightdata",
		"diffbot", "zerobounce", "bing", "kagi", "searchapi", "valueserp", "scaleserp", "jigsawstack", "baseten", "anyscale", "deepinfra",
		"octoai", "lepton", "novita", "hyperbolic", "sambanova", "nlpcloud"}
)

// KeyLikeValue reports whether v, the value of a KeyNamedKey key, is
// masked (keyLikeValue).
func KeyLikeValue[T Text](v T) bool { return keyLikeValue(view(v)) }

// keyLikeValue reports a value that reads as a key: random (randomValue)
// or 24 hex digits or more, a digit and a letter among them (the plain
// hex keys of many vendors; a git commit or a hash is one too, which is
// why KeyNamedKey's values are only masked).
func keyLikeValue(v []byte) bool {
	if randomValue(v) {
		return true
	}
	if len(v) < 24 {
		return false
	}
	var seen uint8
	for _, c := range v {
		if hexVal(c) < 0 {
			return false
		}
		seen |= class[c] & (cDigit | cUpper | cLower)
	}
	return seen&cDigit != 0 && seen != cDigit
}

// passOwners are the words before a last "pass" or "pw" that make the key
// a password's (DB_PASS, SMTP_PW); patOwners those before a last "pat"
// that make it a personal access token's (GITHUB_PAT); signatureOwners
// those before a last "signature" that make it a request signature
// (X-Amz-Signature).
var (
	passOwners = []string{"db", "database", "mysql", "postgres", "postgresql", "pg", "redis", "smtp", "mail", "email",
		"admin", "root", "user", "ftp", "sftp", "ldap", "sql", "mongo", "mongodb", "amqp", "rabbitmq", "rabbit", "proxy",
		"ssh", "login", "account", "app", "api", "service", "wifi", "vpn", "master", "sudo", "keystore", "truststore",
		"store", "key", "basic", "http", "mqtt", "nats", "kafka", "broker", "registry", "docker", "git", "svn", "jdbc", "oracle", "mssql",
		"become", "default", "bind", "vault", "imap", "pop", "pop3", "sasl", "smb", "cifs", "winrm", "enable", "initial", "pfx", "jks", "tls", "ssl"}
	patOwners = []string{"github", "gh", "gitlab", "gl", "gitea", "forgejo", "ado", "azdo", "devops", "ext", "azure", "vsts", "tfs",
		"bitbucket", "atlassian", "jira", "personal", "access", "hf", "huggingface", "docker", "dockerhub", "quay", "npm", "ci",
		"bot", "deploy", "admin", "user", "service", "api", "registry", "git"}
	signatureOwners = []string{"amz", "goog", "hmac", "webhook", "oauth", "sas", "url", "request", "jwt", "api", "hub",
		"slack", "stripe", "twilio", "shopify", "github", "svix", "upload", "s3", "aws", "gcs", "blob", "payload"}
)

// specialWords are the substrings one of which every key that is not
// plain holds (case-insensitively).
var specialWords = append([]string{"pass", "pw", "psk", "phone", "secret", "sig", "token", "tel", "auth", "key", "pat",
	"cookie", "cred", "bearer", "mail", "mobile", "msisdn", "ref", "user", "honeycomb"}, passWordsForeign...)

// passWordsForeign are "password" in other languages, spelled in ASCII as
// config keys and labels are ("senha: <pw>", "Kennwort=<pw>",
// "contrasena", "wachtwoord", "haslo" for hasło, "sifre" for şifre): a key
// of one of them is a credential's, as "password" is. (Spellings with
// letters beyond ASCII, "contraseña", "пароль", are not read.) "parola"
// is not one: it is Italian for "word".
var passWordsForeign = []string{"senha", "kennwort", "contrasena", "wachtwoord", "passord", "losenord", "haslo", "heslo",
	"salasana", "sifre", "adgangskode", "lozinka", "jelszo", "geslo"}

// pairTable indexes words by their first two bytes: a word starting with
// ab is in group pair(a, b)-1. A word is compared ASCII
// case-insensitively (it is given in lower case) or, if exact, only as it
// is spelled. (A table of only the rows of bytes that start a word, 16
// KiB instead of 64, made anyWord 8% slower: its row look-up and pair
// look-up then depend on each other, here they are issued together.)
type pairTable struct {
	// first[a]: a word starts with a (pair[a] is not all zero), looked
	// at first: 256 bytes that stay in cache where pair's rows do not.
	first [256]bool
	// pair[a][b]: 1 + the group of the words starting ab, or 0.
	pair [256][256]uint8
	// groups[g] are the words of group g, slices of one array.
	groups [][]pairWord
	// high: a word starts with a byte >= 0x80 (else anyWord skips runs
	// of them eight at a time: text in most scripts but Latin).
	high bool
}

type pairWord struct {
	w     string
	exact bool
}

func newPairTable(words []string) *pairTable { return makePairTable(words, nil) }

// newExactTable is a pairTable whose words match only as they are spelled.
func newExactTable(words []string) *pairTable { return makePairTable(nil, words) }

// makePairTable indexes folded words (lower case, any case matches) and
// exact ones in one table: one look-up a byte finds either. Folded words
// come first: a folded word's variants share a group. The groups are
// slices of one array (a few allocations, not one a word: the tables are
// made at every process start).
func makePairTable(folded, exact []string) *pairTable {
	t := &pairTable{}
	n := len(folded) + len(exact)
	word := func(k int) (string, bool) {
		if k < len(folded) {
			return folded[k], false
		}
		return exact[k-len(folded)], true
	}
	variants := func(w string, ex bool, fa, fb *[2]byte) ([]byte, []byte) {
		as, bs := foldBytes(fa, w[0]), foldBytes(fb, w[1])
		if ex {
			as, bs = as[:1], bs[:1]
		}
		return as, bs
	}
	groupOf := make([]uint8, n)
	var counts [256]uint16
	groups := 0
	for k := 0; k < n; k++ {
		w, ex := word(k)
		var fa, fb [2]byte
		as, bs := variants(w, ex, &fa, &fb)
		g := int(t.pair[as[0]][bs[0]])
		if g == 0 {
			if groups == 255 {
				panic("redact: more than 255 two-byte groups of words")
			}
			groups++
			g = groups
			for _, a := range as {
				t.first[a] = true
				for _, b := range bs {
					t.pair[a][b] = uint8(g)
				}
			}
		}
		groupOf[k] = uint8(g)
		counts[g]++
	}
	words := make([]pairWord, n)
	t.groups = make([][]pairWord, groups)
	k0 := 0
	for g := range t.groups {
		t.groups[g] = words[k0 : k0 : k0+int(counts[g+1])]
		k0 += int(counts[g+1])
	}
	for k := 0; k < n; k++ {
		w, ex := word(k)
		g := int(groupOf[k]) - 1
		t.groups[g] = append(t.groups[g], pairWord{w, ex}) // within its capacity: no allocation
	}
	for c := 0x80; c < 256; c++ {
		t.high = t.high || t.first[c]
	}
	return t
}

// anyWord reports whether s holds one of the words: one table look-up a
// byte, the words compared only where two bytes start one.
func anyWord(t *pairTable, s []byte) bool {
	for i := 0; i+1 < len(s); i++ {
		if !t.first[s[i]] {
			if s[i] >= 0x80 && !t.high {
				// No word starts in the bytes >= 0x80 after it.
				for i+9 <= len(s) && binary.LittleEndian.Uint64(s[i+1:])&highBits == highBits {
					i += 8
				}
			}
			continue
		}
		g := t.pair[s[i]][s[i+1]]
		if g == 0 {
			continue
		}
		for _, w := range t.groups[g-1] {
			if w.exact && at(s, i, w.w) || !w.exact && atFold(s, i, w.w) {
				return true
			}
		}
	}
	return false
}

// highBits has the high bit of each byte of a word.
const highBits = 0x8080808080808080

// foldBytes returns c and, for a lower-case letter, its upper case, in buf.
func foldBytes(buf *[2]byte, c byte) []byte {
	buf[0] = c
	if c >= 'a' && c <= 'z' {
		buf[1] = c - 'a' + 'A'
		return buf[:2]
	}
	return buf[:1]
}

// (specialTable is in tables_gen.go.)

// mayBeSpecial is a one-pass pre-check for ClassifyKey.
func mayBeSpecial(k []byte) bool { return anyWord(specialTable, k) }

func isUpper(c byte) bool     { return c >= 'A' && c <= 'Z' }
func isLowerByte(c byte) bool { return c >= 'a' && c <= 'z' }

func eqFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		if lower(b[i]) != lower(s[i]) {
			return false
		}
	}
	return true
}

func eqFoldAny(b []byte, ss ...string) bool {
	for _, s := range ss {
		if eqFold(b, s) {
			return true
		}
	}
	return false
}

// containsFold reports whether k holds p (lower case), case-insensitively.
func containsFold(k []byte, p string) bool {
	for i := 0; i+len(p) <= len(k); i++ {
		if lower(k[i]) == p[0] && atFold(k, i, p) {
			return true
		}
	}
	return false
}

// credNeedles are substrings that every credential Find reports contains,
// besides the special words of keys (pass, token, auth, cookie...), which
// key=value pairs, Authorization and Cookie values need: token prefixes,
// the scheme words, a URL's "://" (or its JSON-escaped ":\/\/"), a PEM
// header. Compared case-insensitively (so a little more passes). And the
// encoded forms of the token prefixes (b64Needles, b64Table: compared as
// they are spelled), for a token wrapped in base64.
var credNeedles = []string{"akia", "asia", "abia", "acca", "aiza", "akid", "ltai", "eyj", "-----begin", "sk-", "_live_", "_test_",
	"ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_", "glpat-", "xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "xoxo-", "xoxe-",
	"xoxc-", "xoxd-", "xapp-", "bearer", "basic", "://", `:\/\/`, "%3a%2f%2f", "%3a%5c%2f%5c%2f", "oauth:", "oauth%3a"}

// cmdNeedles are the commands whose short flag takes a password
// (shortFlag) that no other needle names: mysql and its tools, mariadb,
// redis-cli (and the other -cli), docker login (and the other registry
// clients); toolFlag's OpenLDAP clients, sqlcmd, bcp, zip, keytool,
// HTTPie (http -a), Samba's clients (-U user%password) and htpasswd -b;
// sshpass, -storepass and -pass pass: hold "pass".
var cmdNeedles = []string{"mysql", "mariadb", "-cli", "login", "registry", "ldap", "sqlcmd", "bcp", "zip", "keytool",
	"-u ", "-u+", "--user", // curl's -u user:password (flagValue)
	"http -a", "http+-a", "https -a", "https+-a", "httpie", "smbclient", "rpcclient", "smbcacls", "smbget", "smbtree", "smbmap", "htpasswd",
	"net use",        // (netUse)
	"identified",     // SQL's IDENTIFIED BY '…' (identifiedBy)
	"rabbitmqctl",    // (rabbitUser)
	"o-securestring", // PowerShell's ConvertTo-SecureString '…' (secureString; "se" pairs fill text)
	"ygen",           // ssh-keygen -N '<passphrase>' (toolFlag; "ke" pairs fill text)
	"hpass",          // sshpass -p <pw> (shortFlag; its tail after "-p " is kept; "ss" pairs fill text)
	"7z",             // 7-Zip's 7z a -p<pw> (shortFlag)
	"add-mask",       // GitHub Actions' ::add-mask::<secret> (addMask)
	"openssl",        // openssl enc -k <pw> (toolFlag)
	"lftp",           // lftp -u user,<pw> (toolFlag)
	"mosquitto",      // mosquitto_passwd -b <file> <user> <pw> (htpasswd)
	"-hp",            // RAR's -hp<pw> (shortFlag)
	"sudo -s",        // echo <pw> | sudo -S (echoStdin)
	"sudo+-s",        // the same URL-encoded (echoStdinEncoded)
	// command.go's (most of its words hold a credential word already:
	// auth, pw, psk, secret, pass, key, login):
	"freerdp",       // xfreerdp /p:<pw> (colonArg)
	"alias set",     // mc alias set NAME URL AK SK (mcAlias)
	"new pdo",       // new PDO(dsn, user, pw) (callArg)
	"getconnection", // DriverManager.getConnection(url, user, pw) (callArg)
	"private-lines", // a PuTTY key's Private-Lines: (ppkPrivate)
	// a tail cut inside the words before the value is kept:
	"smtp.",   // smtp.Pl | ainAuth("", user, "<pw>", host)
	"define(", // define( 'D | B_PASSWORD', '<pw>')
	"set -gx", // set -gx OPENAI_ | API_KEY <key>
	"vault l", // vault log | in s.…
	// a setter's or a builder's call (setterCall): .setPassword(" | <pw>
	"sword(", "oken(", "cret(", "key(",
	// a user and its password (callArg): HTTPBasicAuth('admin', ' | <pw>
	"basicauth(", "digestauth(", "kcredential(", "authentication(", "dcredentials(", "authenticationtoken(", "hcredentials(",
	// a crypt hash, usermod -p '<hash>' (userHash; "us" of "usermod" fills text):
	"$1$", "$5$", "$6$", "$y$", "$2b$", "$2y$"}

// holdNeedles are MayHoldCredential's needles of shapes no other needle
// names and no tail needs kept for: expect's glob prompt ("*assword*",
// then send "<pw>\r": expectGlob; no "pass" in it), MongoDB's shells and
// tools ("mongosh -u admin -p <pw>": shortFlag; FuzzMayHoldCredentialText,
// "mongo -p A"); and the labels beyond ASCII of foreign.go
// ("contraseña: <pw>", "пароль: <pw>", "hasło=<pw>", "şifre: <pw>",
// "Jelszó: <pw>", "lösenord: <pw>"; "mot de passe" holds "pass"), in
// UTF-8 (its capitals as their own needles: the comparison folds ASCII
// only), as JSON escapes and URL-encoded.
var holdNeedles = []string{"assword", "mongo",
	"contrase", "пароль", "Пароль", "ПАРОЛЬ", "парола", "Парола", "ПАРОЛА", "hasł", "hasŁ", "şifre", "Şifre", "Şİfre", "jelsz", "senord",
	`u043f\u0430\u0440`, `u041f\u0430\u0440`, `u041f\u0410\u0420`, "%d0%bf%d0%b0%d1%80", "%d0%9f%d0%b0%d1%80", "%d0%9f%d0%90%d0%a0",
	`has\u0142`, `has\u0141`, `u015fifre`, `u015eif`, "%c5%9fifre", "%c5%9ei"}

// (needleTable is in tables_gen.go.)

// vendorNeedles are the prefixes of KindVendorToken (compared
// case-insensitively).
func vendorNeedles() []string {
	var sb stringsBuf
	for _, byLen := range vendorPrefixes {
		for _, vs := range byLen {
			for _, v := range vs {
				for _, c := range []byte(v.p[:v.sep+1]) {
					sb.buf = append(sb.buf, lower(c))
				}
				sb.end()
			}
		}
	}
	sb.buf = append(sb.buf, "dapi"...)
	sb.end()
	return sb.strings()
}

// stringsBuf builds many short strings with two allocations (their bytes
// in one string, and the slice): the needle lists are made at every
// process start.
type stringsBuf struct {
	buf  []byte
	ends []int
}

// end ends the string being appended to buf.
func (b *stringsBuf) end() { b.ends = append(b.ends, len(b.buf)) }

func (b *stringsBuf) strings() []string {
	all := string(b.buf)
	out := make([]string, len(b.ends))
	from := 0
	for k, e := range b.ends {
		out[k] = all[from:e]
		from = e
	}
	return out
}

// exactVendorNeedles are the starts of the KindVendorToken shapes found at
// a digit, spelled as they are: Twilio's SK/AC and a hex digit, SendGrid's
// "SG.", Telegram's ":AA", and the first three bytes of a Discord token
// (base64 of a user id's first two digits); and a part of the shapes of
// digitShape, digitToken and the Atlassian tokens, chosen so that the
// needle's first byte is rare in records ("vs." of Vault's "hvs.", "a29."
// of "ya29.", "//0" of "1//0…", "R1348941" of GitLab's "GR1348941"): every
// needle's first byte costs a look-up of the second.
func exactVendorNeedles() []string {
	sb := stringsBuf{buf: make([]byte, 0, 512), ends: make([]int, 0, 160)}
	for _, c := range []byte("0123456789abcdef") {
		sb.buf = append(sb.buf, 'S', 'K', c)
		sb.end()
		sb.buf = append(sb.buf, 'A', 'C', c)
		sb.end()
	}
	for _, n := range digitNeedles {
		sb.buf = append(sb.buf, n...)
		sb.end()
	}
	for d0 := byte('1'); d0 <= '9'; d0++ {
		for d1 := byte('0'); d1 <= '9'; d1++ {
			const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
			sb.buf = append(sb.buf, b64[d0>>2], b64[(d0&3)<<4|d1>>4], b64[(d1&15)<<2])
			sb.end()
		}
	}
	return sb.strings()
}

// digitNeedles are the exact needles of the shapes found at a digit or
// 'A' that no prefix table holds (see exactVendorNeedles).
// The dotted and glued prefixes of dottedToken are needles as they are
// (an Okta token's "00" is not: mayOkta).
var digitNeedles = []string{"SG.", ":AA", "R1348941", "vs.", "vb.", "vr.", "a29.", "//0", "Q~", "ATATT3", "ATCTT3", "AAAAAAAA",
	"dp.", "sl.", "dt0c01.", "atlasv1.", "ATBB", "APA91b", "EAA", "AKCp", "v1.0-", "-us", "EZAK", "4b1d", "cmVmd", "_mmk"}

// MayHoldCredential is a conservative pre-check on a raw JSON text: false
// means that no decoded string of it holds a credential Find reports and
// no decoded key of it is a credential name (ClassifyKey), so a scan of
// the decoded record can be skipped. It is one pass with a two-byte
// table; only where two bytes start a needle is the needle compared. A
// \u00XX escape of a printable ASCII byte (the only way JSON spells a
// letter differently) always passes, and so does a broker address with
// credentials and no scheme (mayHostUserinfo).
func MayHoldCredential[T Text](raw T) bool {
	b := view(raw)
	return anyWord(needleTable, b) || hasASCIIEscape(b) || mayHostUserinfo(b) || mayOkta(b) || mayAirtable(b) || derLead(b)
}

// mayAirtable is the gate of an Airtable token (dottedToken) on raw JSON:
// "pat", 14 letters and digits and a '.'. ("pat" as a needle would pass
// every "path".)
func mayAirtable(b []byte) bool {
	for i := 0; i+18 <= len(b); {
		j := bytes.Index(b[i:], []byte("pat"))
		if j < 0 {
			return false
		}
		i += j
		if run(b, i+3, alnum) == i+17 && i+17 < len(b) && b[i+17] == '.' {
			return true
		}
		i += 3
	}
	return false
}

// mayOkta is the gate of an Okta token (dottedToken) on raw JSON: "00" and
// 40 more bytes of a word run. ("00" as a needle would pass every
// timestamp.)
func mayOkta(b []byte) bool {
	for i := 0; i+42 <= len(b); {
		j := bytes.Index(b[i:len(b)-40], []byte("00"))
		if j < 0 {
			return false
		}
		i += j
		if run(b, i, word)-i >= 42 {
			return true
		}
		i += 2
	}
	return false
}

// mayHostUserinfo is the gate of hostUserinfo on raw JSON: a ':' followed
// by a password, '@', a host and ":port", whatever the user before it
// (which JSON escapes may spell differently). The ':'s are looked at only
// when b holds an '@'.
func mayHostUserinfo(b []byte) bool {
	if bytes.IndexByte(b, '@') < 0 {
		return false
	}
	for i := bytes.IndexByte(b, ':'); i >= 0; {
		if _, ok := hostAfterUserinfo(b, i); ok {
			return true
		}
		j := bytes.IndexByte(b[i+1:], ':')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// keyLabels are the words before " key" that make it a secret's label in
// prose and in the tables tools print ("API key: …", "Secret access key:
// …", "Subscription key: …"): "key" alone names anything ("Primary key:
// id", "Sort key: ts", "Public key: ssh-ed25519 …").
var keyLabels = []string{"api", "secret", "private", "access", "signing", "encryption", "master", "app",
	"application", "subscription", "storage", "account", "shared", "license", "licence", "session", "admin"}

// spacedKey reports whether the key "key" at s[j] (its run of key bytes)
// follows one space (or a '+', URL-encoded) and a word of keyLabels, as a
// label of its own: the word starts the text or follows a byte that is no
// letter or digit, a JSON escape ("\nAPI key: …", also URL-encoded) or
// a URL-encoded byte ("%22API+key%3A…").
func spacedKey(s []byte, from, j int) bool {
	if j-2 < from || !atFold(s, j, "key") {
		return false
	}
	sp := 1
	if s[j-1] != ' ' && s[j-1] != '+' {
		if j-4 < from || !at(s, j-3, "%20") {
			return false
		}
		sp = 3 // "API%20key%3A%20…" (encodeURIComponent, Python's quote)
	}
	for _, l := range keyLabels {
		w := j - sp - len(l)
		if w < from || !atFold(s, w, l) {
			continue
		}
		if w == from || !is(s[w-1], alnum) || escLetter(s, w-1) || w-3 >= from && s[w-3] == '%' && hexVal(s[w-2]) >= 0 && hexVal(s[w-1]) >= 0 ||
			w-4 >= from && atFold(s, w-4, "%5c") && (s[w-1] == 'n' || s[w-1] == 't' || s[w-1] == 'r') {
			// ("%5Cn": JSON text's "\n", URL-encoded.)
			return true
		}
	}
	return false
}
