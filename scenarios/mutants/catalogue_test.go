package mutants

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/refimpl/coordinator"
)

func TestCatalogueCoversEveryBugOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range Catalogue() {
		require.False(t, seen[m.Name], "duplicate %s", m.Name)
		seen[m.Name] = true
		require.NotEmpty(t, m.Contract)
		require.NotEmpty(t, m.Description)
		require.Equal(t, "mutant:"+m.Name, m.System.Name())
	}
	require.Len(t, seen, len(coordinator.AllBugs), "every bug of the reference is in the catalogue")
	require.GreaterOrEqual(t, len(seen), 15)
	_, err := Lookup("no-such-bug")
	require.ErrorContains(t, err, "no mutant named")
	m, err := Lookup(string(coordinator.BugNoCAS))
	require.NoError(t, err)
	require.Equal(t, "C4", m.Contract)
}

func TestEveryMutantHasACorpusCounterexample(t *testing.T) {
	for _, m := range Catalogue() {
		require.NotEmpty(t, Corpus(m.Name), "no stored counterexample for %s", m.Name)
	}
	require.Empty(t, Corpus("no-such-bug"))
}
