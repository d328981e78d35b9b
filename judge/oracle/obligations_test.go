package oracle

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every checker states its obligation (ORACLE-SPEC 5.3's situation): a
// pass is evidence only with it (judge.Claim).
func TestEveryCheckerStatesItsObligation(t *testing.T) {
	obs := Obligations()
	require.Len(t, obs, len(All()))
	seen := map[string]bool{}
	for i, c := range All() {
		o := obs[i]
		require.Equal(t, c.Name(), o.Checker, "report order")
		require.Equal(t, c.Contract(), o.Contract)
		require.NotContains(t, o.Situation, "no obligation stated", "%s needs a sentence in obligations.go", c.Name())
		require.False(t, strings.HasSuffix(o.Situation, "."), "%s: a sentence the reports quote, without a full stop", c.Name())
		seen[c.Name()] = true
	}
	for name := range situations {
		require.True(t, seen[name], "obligations.go states one for %s, which is no checker", name)
	}
}
