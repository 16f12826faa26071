package layers

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/e2atap/e2atap/"

// allowed lists, for each top-level package, the module's packages it may
// import (DESIGN.md, "Packages"). Third-party imports are checked
// separately: e2a, frame and validate take none.
var allowed = map[string][]string{
	"redact":    {},
	"e2a":       {"redact"},
	"frame":     {},
	"validate":  {"e2a", "frame", "redact"},
	"tap":       {"tap", "redact"},
	"exporters": {"e2a", "frame", "validate", "exporters", "redact"},
	"cmd":       {"e2a", "frame", "validate", "tap", "exporters", "internal", "redact"},
	"internal":  {"e2a", "frame", "validate", "tap", "exporters", "internal", "redact"},
}

// stdlibOnly are the packages that may import nothing outside the module
// and the standard library.
var stdlibOnly = map[string]bool{"redact": true, "e2a": true, "frame": true, "validate": true}

func TestImportDirection(t *testing.T) {
	root := "../.."
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "testdata" || strings.HasPrefix(name, ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		top := strings.Split(filepath.ToSlash(rel), "/")[0]
		ok, known := allowed[top]
		if !known {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		test := strings.HasSuffix(path, "_test.go")
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			checked++
			if strings.HasPrefix(p, module) {
				dep := strings.Split(strings.TrimPrefix(p, module), "/")[0]
				if dep == top {
					continue
				}
				// Tests may also use the module's internal tools (the
				// traffic generator) and, in a tap, the engine (to judge
				// what the tap delivered; validate imports no tap, so
				// there is no cycle): the direction is about product code.
				if !contains(ok, dep) && !(test && (dep == "internal" || top == "tap" && dep == "validate")) {
					t.Errorf("%s imports %s: %s may import only %v", rel, p, top, ok)
				}
				continue
			}
			first := strings.Split(p, "/")[0]
			if stdlibOnly[top] && strings.Contains(first, ".") && !test {
				t.Errorf("%s imports %s: %s may import only the standard library", rel, p, top)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no imports checked: is the test running from internal/layers?")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestMain(m *testing.M) {
	if _, err := os.Stat("../../go.mod"); err != nil {
		panic("layers test must run from internal/layers: " + err.Error())
	}
	os.Exit(m.Run())
}
