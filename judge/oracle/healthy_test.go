package oracle

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHealthyRunPassesEveryChecker(t *testing.T) {
	b, _ := twoRequests(4)
	evs := b.build()
	r := judgeRun(t, params(), evs)
	require.Empty(t, r.Violations, describe(r, evs))
	for _, n := range Names() {
		t.Logf("%-24s %s (%d)", n, r.Verdict(n), r.Exercised[n])
	}
}
