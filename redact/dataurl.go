package redact

// A text that is one data: URL with a base64 payload (RFC 2397: "data:",
// a media type and its parameters, ";base64,", then the bytes in the
// standard base64 alphabet to the end of the text) is an image's or a
// file's bytes: a model's image output, an image_url in a chat request, a
// tool's attachment. What Find reads in the payload's characters as they
// are is there by chance (a 100 MB corpus of PNG data: URLs had a Google
// API key's shape, "yUAIza" and 40 more, in one image); what it finds by
// decoding the payload (a token or a private key in the file: b64state)
// is real. So, in such a text whose payload holds no encoded token prefix
// (payloadMayDecode false, the pre-check's own test of a base64 run), Find
// reports no credential that starts in the payload (a match is masked as
// high_entropy), and MayHoldCredentialText looks at the header alone: in
// base64 one byte in four is an anchor of its checks, and a stream of
// images spent 45 % of its CPU there. Where the payload holds an encoded
// prefix, the text is searched as any other. The header is searched as
// any text (a parameter ";token=<v>" is). A text with anything after the
// payload, a header with a space or a quote ("data: {…}", a server-sent
// event), or a payload in the URL-safe alphabet is no such text.
//
// The end of a delta (InertB64Tail): a delta that is such a text, whose
// last n bytes are in the payload and hold no encoded token prefix, ends
// where no credential starts, and keeps no tail for a credential cut
// across deltas. The price: a token wrapped in base64 inside a data: URL
// streamed across deltas, with its encoded prefix cut by the boundary, is
// not found (with the prefix whole before the boundary, it is).

// b64std is the standard base64 alphabet: letters, digits, '+' and '/'.
const b64std = alnum | cSlash

// dataURLHeader returns where the payload of a data: URL at s's start
// begins (after ";base64,"), or ok false: the media type and each
// parameter are tokens of letters, digits and "+-._" (a parameter
// name=value).
func dataURLHeader(s []byte) (int, bool) {
	if len(s) < len("data:;base64,") || s[0]|0x20 != 'd' || !atFold(s, 0, "data:") {
		return 0, false
	}
	i := len("data:")
	if i < len(s) && s[i] != ';' {
		// type "/" subtype
		if i = mediaToken(s, i); i >= len(s) || s[i] != '/' {
			return 0, false
		}
		if i = mediaToken(s, i+1); i >= len(s) {
			return 0, false
		}
	}
	for i < len(s) && s[i] == ';' {
		if atFold(s, i, ";base64,") {
			return i + len(";base64,"), true
		}
		j := mediaToken(s, i+1)
		if j == i+1 || j >= len(s) || s[j] != '=' {
			return 0, false
		}
		if i = mediaToken(s, j+1); i == j+1 {
			return 0, false
		}
	}
	return 0, false
}

// mediaToken returns the end of the run of token bytes from s[i] (i when
// there is none).
func mediaToken(s []byte, i int) int {
	for i < len(s) && (is(s[i], alnum) || s[i] == '-' || s[i] == '+' || s[i] == '.' || s[i] == '_') {
		i++
	}
	return i
}

// dataURLText reports whether s is wholly a data: URL with a base64
// payload: its header (dataURLHeader), then one byte or more of the
// standard alphabet to the end, or to up to two '=' that end it. p is
// where the payload starts.
func dataURLText(s []byte) (p int, ok bool) {
	if p, ok = dataURLHeader(s); !ok || p >= len(s) {
		return 0, false
	}
	e := runLong(s, p, b64std)
	if e == p {
		return 0, false
	}
	for k := 0; k < 2 && e < len(s) && s[e] == '='; k++ {
		e++
	}
	return p, e == len(s)
}

// payloadMayDecode reports whether a data: URL's payload (the standard
// alphabet, no padding needed) may hold an encoded token prefix: the test
// b64Candidate makes of a base64 run, which every match Find makes by
// decoding a run passes.
func payloadMayDecode(r []byte) bool {
	if allHex(r) && hexFreeB64 {
		return false
	}
	if len(r) > 0 && (r[0] == 'M' || r[0] == 'b') {
		if _, ok := derKey(r, 0, true, derMinRead); ok {
			return true // a private key's DER (der.go)
		}
	}
	return anyB64Word(r) && b64MayDecode(r)
}

// A text that is wholly the base64 of a media file with no header (the
// image blocks of Anthropic's and Gemini's APIs, {"data": "iVBORw0K…"},
// OpenAI's b64_json, an audio clip) is the same: it starts with the
// encoding of its file's magic number (mediaMagics), is minMediaB64 bytes
// or more of the standard alphabet, and is judged as a data: URL's
// payload whose header ends at 0.

// minMediaB64 is the least length of a text read as a media file's base64.
const minMediaB64 = 100

// mediaMagics are the base64 characters that the first bytes of common
// media files decide (PNG, JPEG, GIF, RIFF: WebP and WAV, PDF, ZIP, gzip,
// MP3 with ID3, Ogg, FLAC, TIFF both ways, Matroska and WebM, WOFF and
// WOFF2); an MP4 or QuickTime file ("ftyp" after its box size) is
// mediaMagic's last case. mediaMagic is written from this list
// (TestMediaMagic holds it to it).
var mediaMagics = []string{"iVBORw0KGg", "/9j/", "R0lGODdh", "R0lGODlh", "UklGR", "JVBERi", "UEsDB", "H4sI", "SUQz",
	"T2dnU", "ZkxhQ", "SUkqA", "TU0AK", "GkXfo", "d09GM", "d09GR"}

// mediaB64Text reports whether s is wholly the base64 of a media file
// (mediaMagics), standard alphabet, up to two '=' at its end.
func mediaB64Text(s []byte) bool {
	if len(s) < minMediaB64 || !mediaMagic(s) {
		return false
	}
	e := runLong(s, 0, b64std)
	for k := 0; k < 2 && e < len(s) && s[e] == '='; k++ {
		e++
	}
	return e == len(s)
}

func mediaMagic(s []byte) bool {
	// By the first byte, so that a text that starts as none does (code,
	// prose: a look-up) costs no comparison.
	var a, b string
	switch s[0] {
	case 'i':
		a = "iVBORw0KGg"
	case '/':
		a = "/9j/"
	case 'R':
		a, b = "R0lGODdh", "R0lGODlh"
	case 'U':
		a, b = "UklGR", "UEsDB"
	case 'J':
		a = "JVBERi"
	case 'H':
		a = "H4sI"
	case 'S':
		a, b = "SUQz", "SUkqA"
	case 'T':
		a, b = "T2dnU", "TU0AK"
	case 'Z':
		a = "ZkxhQ"
	case 'G':
		a = "GkXfo"
	case 'd':
		a, b = "d09GM", "d09GR"
	case 'A':
		// An ISO media file: a four-byte box size, then "ftyp".
		return len(s) >= 10 && string(s[:4]) == "AAAA" && string(s[5:10]) == "GZ0eX"
	default:
		return false
	}
	return at(s, 0, a) || b != "" && at(s, 0, b)
}

// b64Payload reports whether s is wholly a data: URL with a base64
// payload or a media file's base64 (mediaB64Text); p is where the payload
// starts.
func b64Payload(s []byte) (p int, ok bool) {
	if len(s) > 0 && s[0]|0x20 == 'd' {
		if p, ok = dataURLText(s); ok {
			return p, true
		}
	}
	return 0, mediaB64Text(s)
}

// inertB64 is b64Payload for a payload that holds no encoded token prefix.
func inertB64(s []byte) (p int, ok bool) {
	p, ok = b64Payload(s)
	return p, ok && !payloadMayDecode(s[p:])
}

// InertB64Tail reports whether delta is wholly a data: URL with a base64
// payload, or a media file's base64, whose last n bytes are in the
// payload and hold no encoded token prefix: no credential starts there,
// and MayStartCredential need not be asked of them.
func InertB64Tail[T Text](delta T, n int) bool {
	b := view(delta)
	p, ok := b64Payload(b)
	return ok && len(b)-p >= n && !anyB64Word(b[len(b)-n:])
}
