package workspace

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCatalogueNamesEveryMutantOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range Catalogue() {
		require.False(t, seen[m.Name], "duplicate %s", m.Name)
		seen[m.Name] = true
		require.NotEmpty(t, m.Contract)
		require.NotEmpty(t, m.Description)
		require.Equal(t, "mutant:"+m.Name, m.System.Name())
	}
	require.GreaterOrEqual(t, len(seen), 15)
	_, err := Lookup("no-such-bug")
	require.ErrorContains(t, err, "no mutant named")
	m, err := Lookup("no-cas-claim")
	require.NoError(t, err)
	require.Equal(t, "C4", m.Contract)
}

func TestEveryMutantHasACorpusCounterexample(t *testing.T) {
	for _, m := range Catalogue() {
		require.NotEmpty(t, Corpus(m.Name), "no stored counterexample for %s", m.Name)
	}
	require.Empty(t, Corpus("no-such-bug"))
}
