package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mdLink matches a markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinksResolve: every relative link in README.md and docs/ points
// at a file of this repository (a plain clone has nothing else), and no
// document sends the reader to the steering repository's shared/ folder.
func TestDocLinksResolve(t *testing.T) {
	root, _ := filepath.Abs("../..")
	docs := []string{filepath.Join(root, "README.md")}
	more, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	docs = append(docs, more...)
	if c := filepath.Join(root, "CHANGELOG.md"); fileExists(c) {
		docs = append(docs, c)
	}
	checked := 0
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, doc)
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			p := filepath.Join(filepath.Dir(doc), target)
			checked++
			if !strings.HasPrefix(p, root+string(filepath.Separator)) {
				t.Errorf("%s: link %q leaves the repository", rel, m[1])
				continue
			}
			if !fileExists(p) {
				t.Errorf("%s: link %q does not resolve", rel, m[1])
			}
		}
		// docs/rules.md and docs/design.md are verbatim copies of the
		// steering documents (TestDocsMatchContract); they may name its files.
		copyOfSteering := rel == filepath.Join("docs", "rules.md") || rel == filepath.Join("docs", "design.md")
		if !copyOfSteering && (strings.Contains(string(b), "../shared/") || strings.Contains(string(b), "shared/reference")) {
			t.Errorf("%s: cites ../shared, which a clone of this repository does not have", rel)
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: the matcher is broken")
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
