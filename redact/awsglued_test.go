package redact

import "testing"

// TestAWSIDInsideAWord: an AWS key id's shape glued to a letter or digit
// before it and a lower-case letter after it is a part of a longer word
// (base64 of a binary: a wasm module in an npm package, where h-fp20 found
// "…pCyABIARHBEADQCABLQAAQSBHDUggB…" an e2a.secret finding), no key id; an
// id at a word's start, or glued on one side, still is.
func TestAWSIDInsideAWord(t *testing.T) {
	for _, s := range []string{
		"const wasm = 'C0EAIQMgAkEANgIcIAIgATYCFCACQf0NNgIQIAJBHTYCDAxpCyABIARHBEADQCABLQAAQSBHDUggBCABQQFqIgFHDQALQSUhAwxpC0El'",
		"x" + awsID + "g", "9" + awsID + "z",
	} {
		if m, ok := firstCredential([]byte(s)); ok {
			t.Errorf("Find(%q) reports %v at %d:%d", s, m.Kind, m.Start, m.End)
		}
	}
	for _, s := range []string{awsID, "x" + awsID, awsID + "abc", "id=" + awsID + "g", "\\n" + awsID + "q", awsID + "9", "(" + awsSTS + ")"} {
		if m, ok := firstCredential([]byte(s)); !ok || m.Kind != KindAWS {
			t.Errorf("Find(%q) = %v %v, want aws", s, m.Kind, ok)
		}
	}
}
