package oracle_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	oraclemutants "github.com/wsconverge/converge/scenarios/mutants/oracle"
	oraclesim "github.com/wsconverge/converge/sim/oracle"
)

// A mutant's failing seed shrinks to a smaller run that still fails the
// same checker, within the budget, and the shrunk run's replay file
// reproduces it; the same run always shrinks to the same counterexample.
func TestShrinkKeepsTheFailureAndMakesItSmaller(t *testing.T) {
	ctx := context.Background()
	m, ok := oraclemutants.ByName("nonce-not-plus-one")
	require.True(t, ok)
	o := oraclesim.Options{Seed: 1, System: m}
	const checker = "o2-nonce-bounds"
	fails := func(r *oraclesim.Result) bool { return slices.Contains(oraclesim.Runner{}.Violated(r), checker) }
	sh, err := oraclesim.Shrink(ctx, o, fails, 20)
	require.NoError(t, err)
	require.True(t, fails(sh.Result))
	require.LessOrEqual(t, sh.Runs, 20)
	from, to := sh.From, sh.To
	require.Less(t, to.Requests+to.Faults+to.Ops, from.Requests+from.Faults+from.Ops, "%s → %s", from, to)
	require.LessOrEqual(t, to.FaultPhase+to.QuietPhase, from.FaultPhase+from.QuietPhase, "%s → %s", from, to)
	t.Logf("%s → %s in %d runs", from, to, sh.Runs)

	again, err := oraclesim.Shrink(ctx, o, fails, 20)
	require.NoError(t, err)
	require.Equal(t, sh.Result.Hash, again.Result.Hash, "shrinking is bounded by runs, not time")
	require.Equal(t, sh.Runs, again.Runs)

	// The shrunk run's replay file replays it.
	var b bytes.Buffer
	require.NoError(t, json.NewEncoder(&b).Encode(oraclesim.NewReplay(sh.Options, m.Name(), sh.Result)))
	f, err := oraclesim.DecodeReplay(&b)
	require.NoError(t, err)
	ro, err := f.Options(m)
	require.NoError(t, err)
	res, err := oraclesim.Run(ctx, ro)
	require.NoError(t, err)
	require.Equal(t, sh.Result.Hash, res.Hash)
	require.True(t, fails(res))

	_, err = oraclesim.Shrink(ctx, oraclesim.Options{Seed: 1}, fails, 5)
	require.ErrorContains(t, err, "does not fail")
}
