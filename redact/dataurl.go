package redact

// A text that is one data: URL with a base64 payload (RFC 2397: "data:",
// a media type and its parameters, ";base64,", then the bytes in the
// standard base64 alphabet to the end of the text) is an image's or a
// file's bytes: a model's image output, an image_url in a chat request, a
// tool's attachment. No credential starts in its payload: whatever Find
// sees there is random (a provider token is not in it as itself: its
// base64 is another text). So Find reports no credential that starts in
// the payload of such a text (a match of a credential's shape there, by
// chance, is masked as high_entropy: a 100 MB corpus of PNG data: URLs
// had a Google API key's shape, "AIza" and 35 more, in one image), and
// MayHoldCredentialText looks at the header alone, not the payload: in
// base64 one byte in four is an anchor of its checks, and a stream of
// images spent 45 % of its CPU there. The header is searched as any text
// (a parameter ";token=<v>" is). A text with anything after the payload,
// a header with a space or a quote ("data: {…}", a server-sent event),
// or a payload in the URL-safe alphabet is no such text, and is searched
// as any other.
//
// The same holds for the end of a delta: a delta that is such a text and
// whose payload is longer than the tail kept for a credential cut across
// deltas ends inside the payload, where no credential starts
// (DataURLPayload, for the callers of MayStartCredential).

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

// DataURLPayload reports whether s is wholly a data: URL with a base64
// payload, and how many bytes of the payload end it (padding included):
// a tail of fewer bytes than that is inside the payload, where no
// credential starts (MayStartCredential need not be asked).
func DataURLPayload[T Text](s T) (n int, ok bool) {
	b := view(s)
	p, ok := dataURLText(b)
	if !ok {
		return 0, false
	}
	return len(b) - p, true
}
