package layout

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// sections is the set of clause numbers a spec's headings give ("4.2.2").
func sections(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#+ (\d+(?:\.\d+)*)[ .]`).FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = true
	}
	require.NotEmpty(t, out, path)
	return out
}

// A conformance suite ships its spec (issue 23: the README and the
// checkers cited "SPEC x.y" of a text that was not in the repository).
// Every "SPEC x.y" cited in the repository's Go sources, Markdown and
// Python is a clause of docs/spec/workspaces.md, and every "ORACLE-SPEC
// x.y" (or "§x.y") one of docs/spec/oracle.md; and nothing names the
// original SPEC.md or ORACLE-SPEC.md, which are not here.
func TestEveryCitedClauseIsInTheSpec(t *testing.T) {
	root := filepath.Join("..", "..")
	specs := map[string]map[string]bool{
		"SPEC":        sections(t, filepath.Join(root, "docs", "spec", "workspaces.md")),
		"ORACLE-SPEC": sections(t, filepath.Join(root, "docs", "spec", "oracle.md")),
	}
	cite := regexp.MustCompile(`(ORACLE-)?SPEC §?(\d+(?:\.\d+)*)`)
	file := regexp.MustCompile(`\b(ORACLE-)?SPEC\.md\b`)
	var bad []string
	seen := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(name) {
		case ".go", ".md", ".py":
		default:
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		text := string(b)
		for _, m := range cite.FindAllStringSubmatch(text, -1) {
			seen++
			kind := "SPEC"
			if m[1] != "" {
				kind = "ORACLE-SPEC"
			}
			if !specs[kind][m[2]] {
				bad = append(bad, rel+": "+m[0]+" is no clause of docs/spec/")
			}
		}
		if rel != filepath.Join("internal", "layout", "spec_test.go") {
			for _, m := range file.FindAllString(text, -1) {
				bad = append(bad, rel+": names "+m+", which is not in the repository (cite docs/spec/)")
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, seen, 100, "the walk found the citations")
	require.Empty(t, bad)
}
