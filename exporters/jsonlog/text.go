package jsonlog

import "github.com/e2atap/e2atap/redact"

// MaskText appends s with credentials, e-mail addresses and phone numbers
// masked, all with fingerprints, as plain text: RedactText without the JSON
// string escaping, for outputs that escape themselves or none (spans, log
// handlers, terminal text). The masks and fingerprints are RedactText's.
// Text that spells a value with JSON \u00XX escapes (a raw JSON text in a
// message) is masked in its unescaped form, as redact.Masker.Text does.
func (r *Redactor) MaskText(dst, s []byte) []byte {
	st := r.get()
	defer r.put(st)
	if redact.HasASCIIEscape(s) {
		u := redact.UnescapeASCII(nil, s)
		if out, changed := st.maskSpans(dst, u, true, false); changed {
			return out
		}
	}
	dst, _ = st.maskSpans(dst, s, true, false)
	return dst
}
