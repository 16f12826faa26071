package redact

import (
	"math/rand/v2"
	"testing"
)

// TestByteSets holds the kernel's sets to the tables they are built from:
// every byte, in the set by has exactly where the class, cmdRunT,
// credAnchor, anchor (or for sSet, 's' and 'S') say, and setMask64 and setMasks64 to has at
// each of 64 positions.
func TestByteSets(t *testing.T) {
	if !classSetOK[word] || !classSetOK[b64alpha] || !classSetOK[b64std] || !sSetOK || !cmdEndSetOK || !cmdEncSetOK || credAnchorSet == nil || anchorSet == nil {
		t.Fatal("a set the kernel walks does not fit its nibble tables")
	}
	for c := range 256 {
		for _, cl := range []uint8{word, b64alpha, b64std} {
			if got, want := classSets[cl].has(byte(c)), class[c]&cl != 0; got != want {
				t.Errorf("class %#x: has(%#x) = %v, want %v", cl, c, got, want)
			}
		}
		if got, want := sSet.has(byte(c)), c == 's' || c == 'S'; got != want {
			t.Errorf("sSet: has(%#x) = %v, want %v", c, got, want)
		}
		if got, want := credAnchorSet.has(byte(c)), credAnchor[c] != 0; got != want {
			t.Errorf("credAnchorSet: has(%#x) = %v, want %v", c, got, want)
		}
		if got, want := anchorSet.has(byte(c)), anchor[c] != 0; got != want {
			t.Errorf("anchorSet: has(%#x) = %v, want %v", c, got, want)
		}
		if got, want := cmdEndSet.has(byte(c)), cmdRunT[c] == 1; got != want {
			t.Errorf("cmdEndSet: has(%#x) = %v, want %v", c, got, want)
		}
		if got, want := cmdEncSet.has(byte(c)), cmdRunT[c] > 1; got != want {
			t.Errorf("cmdEncSet: has(%#x) = %v, want %v", c, got, want)
		}

	}
	if !haveVec {
		t.Skip("no AVX2 here: the kernel is not run")
	}
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 64+7)
	for n := range 20000 {
		for k := range buf {
			buf[k] = byte(r.UintN(256))
			if n%2 == 0 {
				buf[k] = "aZ09+/-_AJbBwWq=:|@\"% .\xef\xaf\xbasS&?<\t"[r.UintN(32)]
			}
		}
		off := n % 8
		for _, set := range []*byteSet{&classSets[word], &classSets[b64alpha], &sSet, &cmdEndSet, credAnchorSet, anchorSet} {
			var want uint64
			for k := range 64 {
				if set.has(buf[off+k]) {
					want |= 1 << k
				}
			}
			if got := setMask64(&buf[off], set); got != want {
				t.Fatalf("setMask64(%q) = %#x, want %#x", buf[off:off+64], got, want)
			}
			if ga, gb := setMasks64(&buf[off], set, &cmdEncSet); ga != want || gb != setMask64(&buf[off], &cmdEncSet) {
				t.Fatalf("setMasks64(%q) = %#x, %#x, want %#x, %#x", buf[off:off+64], ga, gb, want, setMask64(&buf[off], &cmdEncSet))
			}
		}
	}
}

// TestVecRuns holds runLong (the kernel past a run's first eight bytes)
// to run, the byte loop it must agree with: runs of every length up to
// 300 ending in every kind of byte, from every start in the first 70
// bytes.
func TestVecRuns(t *testing.T) {
	if !vecRuns {
		t.Skip("no AVX2 here: runLong takes no kernel")
	}
	r := rand.New(rand.NewPCG(3, 4))
	const alpha = "ABCXYZabcxyz0189+/-_"
	for n := range 3000 {
		s := make([]byte, r.IntN(400))
		for k := range s {
			s[k] = alpha[r.IntN(len(alpha))]
		}
		if len(s) > 0 && n%3 != 0 {
			s[r.IntN(len(s))] = "=.\" %\n\xef"[r.IntN(7)]
		}
		for i := 0; i < len(s) && i < 70; i++ {
			for _, cl := range []uint8{word, b64alpha} {
				if got, want := runLong(s, i, cl), run(s, i, cl); got != want {
					t.Fatalf("runLong(%q, %d, %#x) = %d, run %d", s, i, cl, got, want)
				}
			}
		}
	}
}

// FuzzVecRuns compares runLong with run on any text.
func FuzzVecRuns(f *testing.F) {
	f.Add([]byte("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="), uint8(5))
	f.Fuzz(func(t *testing.T, s []byte, i uint8) {
		if int(i) >= len(s) {
			return
		}
		for _, cl := range []uint8{word, b64alpha, b64std} {
			if got, want := runLong(s, int(i), cl), run(s, int(i), cl); got != want {
				t.Fatalf("runLong(%q, %d, %#x) = %d, run %d", s, i, cl, got, want)
			}
		}
	})
}

// passOrCopulaRef is passOrCopula as its doc says, a byte at a time:
// "pass" in any case, or an 's' that labelCopula takes.
func passOrCopulaRef(t []byte, copula bool) bool {
	for k := range t {
		if atFold(t, k, "pass") || copula && t[k]|0x20 == 's' && labelCopula(t, k) {
			return true
		}
	}
	return false
}

// TestPassOrCopulaVec holds passOrCopula (the kernel over 64-byte blocks,
// then eight bytes a step) to passOrCopulaRef on texts that hold "pass"
// and the copulas at every offset, across the blocks' and words' edges,
// and on near-misses.
func TestPassOrCopulaVec(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	needles := []string{"pass", "PaSs", "pas", "ass", "key is ", "ken was ", "ret+is+", "key is", "key+was ", "kez is ", "keyis ", "ss", "s "}
	const filler = "aZ09+/sSpP .xw"
	seen := [2]int{}
	for n := range 20000 {
		s := make([]byte, r.IntN(200))
		for k := range s {
			s[k] = filler[r.IntN(len(filler))]
		}
		if len(s) > 8 && n%4 != 0 {
			nd := needles[r.IntN(len(needles))]
			if len(nd) <= len(s) {
				copy(s[r.IntN(len(s)-len(nd)+1):], nd)
			}
		}
		for _, copula := range []bool{false, true} {
			got, want := passOrCopula(s, copula), passOrCopulaRef(s, copula)
			if got != want {
				t.Fatalf("passOrCopula(%q, %v) = %v, want %v", s, copula, got, want)
			}
			if want {
				seen[1]++
			} else {
				seen[0]++
			}
		}
	}
	if seen[0] < 1000 || seen[1] < 1000 {
		t.Fatalf("texts with and without a match: %v, want 1000 each at least", seen)
	}
}

// FuzzPassOrCopula compares passOrCopula with passOrCopulaRef on any text.
func FuzzPassOrCopula(f *testing.F) {
	f.Add([]byte("the api key is abc and the Password is x"), true)
	f.Fuzz(func(t *testing.T, s []byte, copula bool) {
		if got, want := passOrCopula(s, copula), passOrCopulaRef(s, copula); got != want {
			t.Fatalf("passOrCopula(%q, %v) = %v, want %v", s, copula, got, want)
		}
	})
}

// vecPaths is what the kernel may change if it is wrong: every match Find
// reports in s from each start it goes on from, and MayHoldCredentialText.
func vecPaths(s []byte, vec bool) ([]Match, bool) {
	defer func(v bool) { vecRuns = v }(vecRuns)
	vecRuns = vec
	var ms []Match
	for from := 0; from < len(s); {
		m, ok := Find(s, from)
		if !ok {
			break
		}
		ms = append(ms, m)
		from = max(m.End, from+1)
	}
	return ms, MayHoldCredentialText(s)
}

// TestVecPaths holds Find and MayHoldCredentialText with the kernel
// (runLong, passOrCopula, cmdArgAt, anchorCursor) to the same without
// it, on base64 runs and log lines longer than 64 bytes that hold credentials and
// near-misses at every offset.
func TestVecPaths(t *testing.T) {
	if !haveVec {
		t.Skip("no AVX2 here: the kernel is not run")
	}
	r := rand.New(rand.NewPCG(7, 8))
	const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	plants := []string{"AKIAIOSFODNN7EXAMPLE", "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "password=hunter2xyz", " the api key is 0123456789abcdef0123 ",
		"Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", " pass ", " key was x1y2z3w4v5 ", "sk-proj-ABCDEFGHIJ0123456789abcdefghij", "u:p@host",
		"c2stcHJvai1DUlBTYjY0aW5uZXIwMTIzNDU2Nzg5", "2026-03-29T12:00:00Z user=u-5 latency_ms=155 ", "密码：hunter2xyz", "%3D", "\\u003d"}
	found := 0
	for n := range 3000 {
		var s []byte
		if n%2 == 0 {
			s = make([]byte, 64+r.IntN(900))
			for k := range s {
				s[k] = b64[r.IntN(len(b64))]
			}
		} else {
			for len(s) < 64+r.IntN(600) {
				s = append(s, "level=info ts=2026-03-29T12:00:00.001Z msg=\"ok\" req=req-000007-f3a6 "[r.IntN(20):]...)
			}
		}
		for range r.IntN(3) {
			p := plants[r.IntN(len(plants))]
			if len(p) < len(s) {
				copy(s[r.IntN(len(s)-len(p)):], p)
			}
		}
		vm, vok := vecPaths(s, true)
		pm, pok := vecPaths(s, false)
		if vok != pok || len(vm) != len(pm) {
			t.Fatalf("%q: kernel %v %v, plain %v %v", s, vm, vok, pm, pok)
		}
		for k := range vm {
			if vm[k] != pm[k] {
				t.Fatalf("%q: kernel %v, plain %v", s, vm, pm)
			}
		}
		found += len(vm)
	}
	if found < 1000 {
		t.Fatalf("%d matches in all, want 1000 at least (the texts hold too few)", found)
	}
}

// FuzzVecPaths compares Find and MayHoldCredentialText with and without
// the kernel on any text.
func FuzzVecPaths(f *testing.F) {
	f.Add([]byte("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg== password=hunter2xyz"))
	f.Add([]byte("level=info ts=2026-03-29T12:00:00.001Z msg=\"the api key is 0123456789abcdef0123\" req=req-000007-f3a6 AKIAIOSFODNN7EXAMPLE"))
	f.Fuzz(func(t *testing.T, s []byte) {
		if !haveVec {
			t.Skip()
		}
		vm, vok := vecPaths(s, true)
		pm, pok := vecPaths(s, false)
		if vok != pok || len(vm) != len(pm) {
			t.Fatalf("%q: kernel %v %v, plain %v %v", s, vm, vok, pm, pok)
		}
		for k := range vm {
			if vm[k] != pm[k] {
				t.Fatalf("%q: kernel %v, plain %v", s, vm, pm)
			}
		}
	})
}

// TestCmdArgVec holds cmdArgAt (the kernel's walk of a run past 64 bytes)
// to the same without it: what it returns (the match, next) at each digit
// of runs of base64, URL-encoded text and words, with and without form,
// ended by each of cmdRunT's delimiters or by the text's end.
func TestCmdArgVec(t *testing.T) {
	if !haveVec {
		t.Skip("no AVX2 here: the kernel is not run")
	}
	r := rand.New(rand.NewPCG(9, 10))
	const alpha = "ABCxyz0189+/-_=&?%2Fauth pw"
	defer func(v bool) { vecRuns = v }(vecRuns)
	calls := 0
	for n := range 2000 {
		s := []byte("redis-cli auth default ")
		for range 60 + r.IntN(500) {
			s = append(s, alpha[r.IntN(len(alpha)-8)])
		}
		for range r.IntN(3) {
			s[23+r.IntN(len(s)-23)] = " \t\n\"'`<>\\&%+"[r.IntN(12)]
		}
		if n%3 == 0 {
			s = append(s, " rest"...)
		}
		if n%4 == 1 {
			// '+'-encoded with no '=' before the run's end, one after it
			// in the same 64 bytes: enc must not see it (cmdForm false).
			s = []byte("q auth+default+Pw1")
			for range 40 + r.IntN(100) {
				s = append(s, "aB3x9Q"[r.IntN(6)])
			}
			s = append(s, " x=y"...)
		}
		for i := range s {
			if !is(s[i], cDigit) {
				continue
			}
			for _, form := range []bool{false, true} {
				vecRuns = true
				vm, vok, vnext := cmdArgAt(s, 0, i, form)
				vecRuns = false
				pm, pok, pnext := cmdArgAt(s, 0, i, form)
				if vm != pm || vok != pok || vnext != pnext {
					t.Fatalf("cmdArgAt(%q, 0, %d, %v): kernel %v %v %d, plain %v %v %d", s, i, form, vm, vok, vnext, pm, pok, pnext)
				}
				calls++
			}
		}
	}
	if calls < 10000 {
		t.Fatalf("%d calls, want 10000 at least", calls)
	}
}
