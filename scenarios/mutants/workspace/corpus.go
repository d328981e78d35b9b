package workspace

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// corpus holds, for each mutant, the shrunk replay file of a run that
// killed it (written by converge mutants --save scenarios/mutants/workspace/corpus).
//
//go:embed corpus/*.json
var corpus embed.FS

// Corpus returns the stored counterexamples of mutant name (replay files,
// as JSON), oldest name first. The kill matrix replays them when a random
// search within its budget does not kill the mutant, and says so: a
// regression corpus, as fuzzers keep one.
func Corpus(name string) [][]byte {
	entries, err := fs.ReadDir(corpus, "corpus")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "mutant-"+name+"-seed-") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var out [][]byte
	for _, n := range names {
		b, err := corpus.ReadFile(path.Join("corpus", n))
		if err == nil {
			out = append(out, b)
		}
	}
	return out
}
