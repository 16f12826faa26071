package jsonlog

// MaskText appends s with credentials, e-mail addresses and phone numbers
// masked, all with fingerprints, as plain text: RedactText without the JSON
// string escaping, for outputs that escape themselves or none (spans, log
// handlers, terminal text). The masks and fingerprints are RedactText's.
func (r *Redactor) MaskText(dst, s []byte) []byte {
	st := r.get()
	defer r.put(st)
	dst, _ = st.maskSpans(dst, s, true, false)
	return dst
}
