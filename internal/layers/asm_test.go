package layers

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// xmmOperand is an SSE/AVX register operand (X0-X31, Y0-Y31, Z0-Z31).
var xmmOperand = regexp.MustCompile(`\b[XYZ]([0-9]|[12][0-9]|3[01])\b`)

// TestAsmVEXOnly: an assembly function that uses AVX (VEX-encoded
// instructions) uses no legacy SSE instruction on a vector register.
// redact's setMask64 loaded its nibble mask with MOVL CX, X3 (the legacy
// MOVD) before its VEX code, and on this project's Xeon machines each call
// cost about 250 ns more than with VMOVD, an SSE/AVX transition: its
// 64-byte scan ran at 530 MB/s instead of 21 GB/s, and the whole process
// spent 39 % of a base64 corpus's CPU there (VMOVD CX, X3 since).
// validate's route marks loaded their constants the same way (MOVQ AX, X1).
func TestAsmVEXOnly(t *testing.T) {
	var checked int
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "testdata" || strings.HasPrefix(name, ".") && path != "../.." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_amd64.s") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		type line struct {
			n    int
			text string
		}
		var legacy []line
		vex := false
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			text := sc.Text()
			if i := strings.Index(text, "//"); i >= 0 {
				text = text[:i]
			}
			fields := strings.Fields(text)
			if len(fields) < 2 || strings.HasSuffix(fields[0], ":") || fields[0] == "TEXT" || fields[0] == "#include" {
				continue
			}
			if !xmmOperand.MatchString(strings.Join(fields[1:], " ")) {
				continue
			}
			if strings.HasPrefix(fields[0], "V") {
				vex = true
				continue
			}
			legacy = append(legacy, line{n, strings.TrimSpace(text)})
		}
		if err := sc.Err(); err != nil {
			return err
		}
		checked++
		if vex {
			for _, l := range legacy {
				t.Errorf("%s:%d: %q is a legacy SSE instruction in a file of AVX code: use its VEX form (VMOVD, VMOVQ, VMOVDQU, ...)", path, l.n, l.text)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no _amd64.s file found: the walk is broken")
	}
}
