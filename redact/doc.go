// Package redact is e2atap's one redaction policy for text: it finds the
// credentials and personal data people actually leak (token shapes of the
// common providers, JWTs, PEM private keys, Authorization/Cookie headers,
// key=value pairs under credential names, URL userinfo (also without a
// scheme, as brokers are written: "user:password@host:9092"), e-mail addresses,
// phone numbers, Chinese resident ID numbers) wherever they start, and masks
// them as "******(fp:<16 hex>)", a keyed fingerprint of the masked value.
// A token wrapped in base64 with nothing around it is found as its own kind
// (base64.go); a long random token with no known prefix is masked as
// KindHighEntropy unless it reads as an identifier (camelCase words and a
// digit suffix, "TestNATSSlowConsumerGivesNoFalseFinding1724886460").
//
// Provider tokens with a fixed shape (vendor.go: npm_, hf_, pypi-, SendGrid
// SG.….…, Twilio SK/AC+32 hex, Discord, Telegram bot tokens, dapi, dop_v1_,
// shpat_, sq0atp-, Mailgun key-, GitLab's glrt-/glft-/gloas-/GR1348941…,
// Vault hvs./hvb., Google ya29./1//0/GOCSPX-, Azure AD client secrets
// …8Q~…, Atlassian ATATT3…, Grafana glc_/glsa_, Slack and Discord webhook
// URLs; dotted or short glued prefixes: Doppler dp.pt./dp.st., Dropbox sl.,
// Dynatrace dt0c01., Terraform Cloud ….atlasv1.…, Bitbucket ATBB, Okta
// 00+40, Meta EAA…, Square EAAA…, FCM AAAA…:APA91b…, JFrog AKCp…,
// Cloudflare Origin CA v1.0-…, Mailchimp …-us<n>; Render rnd_, Netlify
// nfp_, Sourcegraph sgp_, Shippo, Brevo xkeysib-, Adafruit aio_, Prefect
// pnu_, Clojars; Duffel, Frame.io fio-u-, Infracost ico-, Scalingo tk-us-,
// Typeform tfp_, SettleMint sm_pat_, ReadMe rdme_, Defined Networking
// dnkey-, Octopus Deploy API-, EasyPost EZAK, ClickHouse Cloud 4b1d,
// JFrog reference tokens cmVmd, MaxMind …_mmk, Microsoft Teams webhook
// URLs; the tools AI agents call: Firecrawl fc-, E2B e2b_, Buildkite
// bkua_, Tavily tvly-, Jina jina_, NVIDIA nvapi-, Cerebras csk-,
// LlamaCloud llx-, Fly.io fo1_, PostHog phx_, RunPod rpa_, Together
// tgp_v1_, Fireworks fw_, Resend re_…_…, Browserbase bb_live_) are
// KindVendorToken, a credential. "<vendor>_KEY" (STRIPE_KEY, serpapiKey,
// --deepgram-key) of a known vendor is a credential key; of any other
// word but a data structure's (CACHE_KEY, PARTITION_KEY, PUBLIC_KEY) it
// is KeyNamedKey, its value masked as KindHighEntropy where it reads as a
// key (KeyLikeValue). Shapes are also found in JSON
// text read as text (after a "\n" or "\t" escape, a "\u0026" before a
// key, "\u003d" as '=', a value in escaped quotes) and in URL-encoded text
// (a key=value pair, also after escaped quotes, "%3A%2F%2F" userinfo, an
// Authorization header, a PEM block with '+' or "%20" spaces); text that
// spells a shape with \u00XX escapes of its own (JSON text held in JSON
// text) or is URL-encoded twice ("%2540") is masked decoded once
// (Masker.Text, UnescapeASCII).
// Credentials labelled in Chinese, Japanese or Korean (密码, 密钥, 令牌,
// パスワード, 비밀번호…) before ':', '=', a full-width '：' or '＝', or a
// copula (是, 为, は: "数据库密码是 <pw>"), and an ASCII credential key
// before a full-width separator, are found too (cjk.go); a JSON key that
// ends in such a label is a credential name.
// Credentials written with no key=value separator are found too: a
// command's short flag (mysql's -p<pw>, sshpass -p, docker login -p,
// redis-cli -a), a password in prose or netrc ("the password is <pw>",
// "password <pw>": seen at a digit of the value, and a finding only where
// the value reads as generated; "the password is <one word>." with no
// digit, at the 'w' of password: masked, never a finding, unless the word
// ends like an English one, prose.go), an XML element of a credential name
// (<password>…</password>), an admin tool's flag (ldapsearch -w, sqlcmd,
// bcp and zip -P, openssl -pass pass:, keytool -storepass…), a "value"
// named by the pair before it
// (name: DB_PASSWORD / value: …, <add key="ApiKey" value="…"/>), each also
// URL-encoded and in JSON text, and a bare key=<random token>; a Mapbox
// secret token (sk.eyJ….…); a .pgpass line's password
// (host:port:db:user:password, a PostgreSQL port or '*') and an Oracle
// connect string's (user/password@//host…, or user/password@alias after
// sqlplus, rman, expdp… or JDBC's thin:), also in JSON text and
// URL-encoded (dsn.go); a
// Fly.io token (fm2_…, its macaroons joined by ','); the password of
// HTTPie's -a user:pw, Samba's -U user%pw and htpasswd -b; a YAML block
// scalar's first line and a TOML multi-line string under a credential
// key; an OpenVPN static key; a base64 run with '+' (or '/' and padding)
// one word of which reads as random, whole (a key's base64, its short
// words too; a word that starts in the hex digits of an encoded '/' or
// '+', from the run's start). JSON escapes URL-encoded ("%5Cu0041", once or twice) are
// decoded with the others (UnescapeASCII). Passwords that a statement
// names by a word (statement.go): SQL's IDENTIFIED BY '…' and PASSWORD
// '…' (also URL-encoded), Redis's AUTH [<user>] <pw> and requirepass,
// rabbitmqctl add_user/change_password; PHP var_dump's ["password"]=>
// string(n) "…"; an XML element of a credential name with a namespace
// prefix or attributes (<wsse:Password Type="…">). Go's %+v of an empty
// field ("Password: PasswordFile:…") is none. Also: net use's password
// (plain, in JSON text, URL-encoded; a DOMAIN\user whose user starts
// with an escape's letter), Go's MySQL DSN (user:pw@tcp(…)/db, also
// encoded), PowerShell's ConvertTo-SecureString '<pw>', ssh-keygen -N/-P,
// az login -p, a bare pass= with a generated value, 7z's -p<pw>, gh
// secret set's --body, aws configure set aws_secret_access_key <key>,
// ngrok config add-authtoken, auth=HTTPBasicAuth('user', '<pw>') and
// session.auth = ('user', '<pw>'); a YAML block scalar's later lines at
// its indentation, expect's send after a "password:" prompt (pexpect's
// sendline), Spring Boot's actuator/env {"value": …} under a credential
// key (also after other pairs: Terraform's output -json), ODBC's braced
// Pwd={…}, a quote doubled inside a quoted value (ADO.NET's
// Password="a"";b"), SQL*Plus's "SQL> conn user/<pw>@alias", GitHub
// Actions' ::add-mask::<secret>, "echo <pw> | docker login
// --password-stdin". Also (command.go): a password or token a command
// or a call takes as a plain argument, seen at a digit of it (Redis's
// lower-case auth, bindpw, wandb/cargo/vault login, nmcli's psk and
// password, setx and fish's set -gx of a credential-named variable,
// dotnet user-secrets set, mc alias set's secret key, .login(user, pw),
// new PDO, mysqli_connect, getConnection, smtp.PlainAuth,
// define('DB_PASSWORD', …)), and at a ':' xfreerdp's /p:, netsh's "Key
// Content : …", a chpasswd line and a PuTTY key's Private-Lines; echo
// <pw> | sudo -S and SET PASSWORD FOR URL-encoded; SQL's PASSWORD '…'
// and requirepass with no digit in the value (masked, no finding, as
// prose passwords). An unquoted value
// goes on past ',', ';' and '&' unless a list of pairs or a shell
// operator ends it there (listEnds). A private key block streamed across
// many texts: OpenKey says which bytes of the next one are inside it. A
// private key's base64 with no PEM armor (PKCS#8, encrypted PKCS#8,
// PKCS#1, SEC1, an OpenSSH key's body; der.go) is KindPrivateKey, told by
// the DER (or OpenSSH) structure its first bytes decode to, not by a
// prefix: public keys and certificates are none.
// Also (login.go), seen at a digit of the password, a credential where
// it reads as generated and masked only otherwise: "Login: admin / <pw>"
// and "user admin / pass <pw>", "Password for <e-mail>: <pw>" (after the
// address's own match), an OpenVPN <auth-user-pass> block's password
// line, vault kv get's "password    <pw>" row, op read's output after
// "op read op://…/<credential field>", and "das Passwort ist <pw>", "le
// mot de passe est <pw>", "la contraseña es <pw>" (also URL-encoded with
// '+'); PagerDuty's routing_key (or integration_key) with 32 hex digits
// is a credential, another routing_key's value a broker's (masked where
// it reads as a key; PagerDutyKeyName and PagerDutyKeyValue judge a JSON
// member alike). A date, a time or an address after a login's slash
// ("User: root / 2024-01-01", "user admin / pass 2024-01-01") is no
// password. A label beyond English before a dash between spaces
// ("пароль — <pw>", "пароль - <pw>", an en dash), Portuguese's "a senha
// é <pw>" or Italian's "la password è <pw>" is read as "password is"
// (foreignSepKey; also with a preposition and up to three words
// between: "a senha do banco é", "das Passwort für den Server ist",
// qualifiedLabel; proseGate passes a
// text that holds one, foreignSepIn; MayStartCredential keeps a delta
// that ends after the label, its dash or "é": foreignSepTailStart), a
// date after it as none; "la
// contraseña es" also in capitals and URL-encoded with "%20". Straddle
// goes on past an address in head before a colon to the password after
// it ("my pass" | "word for bob@example.com: <pw>"). A PEM private key
// block under a key that names a key of some tool (SSH_KEY=, whose
// values are high_entropy) keeps its kind. A header line in quotes (curl
// -H 'Cookie: …' https://…) ends its value at its quote; a session cookie
// after curl's -b is a cookie (curlCookieKey, sessionCookie).
// The audit corpus (testdata/audit) holds a fake value of every family's
// documented shape in every position; exporters/jsonlog's TestAuditCorpus
// and cmd/e2atap's TestAudit* hold every output to it.
// Payment card numbers (issuer prefix and Luhn), IBANs (mod 97) and North
// American phone numbers ("(415) 555-0132", "415-555-0132") are personal
// data: masked, never an e2a.secret finding. Deliberately not masked:
// IPv4 addresses, UUIDs, hex digests, timestamps, version strings and
// model names ("gpt-4o-2024-08-06"), national phone formats without a
// country code other than the North American one ("020 7946 0958").
// The payload of a data: URI is masked as high_entropy where Find sees
// it (the record log drops it by its content policy first); it is never a
// finding: in a text that is one data: URL with base64 whose payload
// holds no encoded token prefix, no match that starts in the payload is a
// credential, and the pre-check reads the header alone (dataurl.go); what
// decoding a payload finds (a key or a token in an attached file) is. A provider token wrapped in base64 is masked as high_entropy,
// not as its kind.
//
// It sits at the bottom of the import layers (standard library only), so
// that e2a (rule e2a.secret), validate, the exporters and cmd all use the
// same detector: a shape is added once and every output masks it.
//
// # Place in the pipeline
//
// Every output that can print a value taken from traffic or configuration
// passes it through a Masker: the record log (exporters/jsonlog, which
// walks JSON and calls Find on every string and ClassifyKey on every key),
// findings, span attributes, the process's log lines, error messages. The
// fast path is one pass over the text with a 256-entry byte table: only at
// a few anchor bytes (a token prefix's first letter, '=', ':', '@', a digit
// run, '-----BEGIN') does a local check run; text with nothing to mask is
// returned as it is, without allocating.
//
// For JSON: e2a.ScanSecrets (rule e2a.secret) walks each record and
// skips a decoded string for which MayHoldCredentialText, a conservative
// pre-check that stops only at the bytes where a credential can be
// revealed, is false (MayHoldCredential is the same promise for a raw JSON
// text, keys included); the record log walks every record and calls Find
// on each decoded string. Straddle finds a secret split across two texts of a
// stream (two chunks' deltas, two frame chunks' data), also one wholly in
// the second text whose key or scheme ends the first ("Authorization:
// Token " | "<token>"); StraddleNext goes on past a match of Straddle's
// that is no credential to the one after it ("Password for bob@exam" |
// "ple.com: <pw>"); MayStartCredential says whether the end of a text
// is worth keeping for it (rule e2a.secret keeps a stream's tail only
// then). MayHoldCredential passes the base64 encodings of the token
// prefixes, so that it stays conservative for base64 runs.
//
// # Fingerprints
//
// A fingerprint is the first 64 bits of HMAC-SHA256(key, value), in hex.
// Equal values under one key get equal fingerprints, so a masked token can
// still be followed across records, findings and spans. The key comes from
// the configuration or E2ATAP_FINGERPRINT_KEY; without one a random key is
// made per process (fingerprints then never join across runs). 64 bits
// stop a search for a collision, not a search of a small value space: who
// knows the key can test every phone number in seconds, so the key is a
// secret (a Kubernetes Secret, never a ConfigMap) and is rotated.
//
// # Concurrency
//
// A Masker is immutable and safe for concurrent use; its HMAC state comes
// from a pool.
package redact
