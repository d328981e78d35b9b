package scenarios

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/invariant"
	"github.com/wsconverge/converge/refimpl"
	"github.com/wsconverge/converge/scenarios/mutants"
	"github.com/wsconverge/converge/sim"
)

// The replay corpus: for every mutant, the shrunk run that killed it
// (written by `converge mutants --save scenarios/mutants/corpus`, embedded
// in package mutants).
// Each must still kill its mutant — the checkers it names flag the mutant —
// while the reference passes those checkers on the very same run. (Hashes
// are not compared: any change to the reference changes them.)
func TestReplayCorpusStillKillsEveryMutant(t *testing.T) {
	covered := map[string]bool{}
	for _, mut := range mutants.Catalogue() {
		for i, b := range mutants.Corpus(mut.Name) {
			path := fmt.Sprintf("corpus of %s #%d", mut.Name, i)
			f, err := sim.ParseReplay(b)
			require.NoError(t, err)
			require.NotEmpty(t, f.Mutant, path)
			require.NotEmpty(t, f.Kills, path)
			covered[f.Mutant] = true
			t.Run(f.Mutant, func(t *testing.T) {
				m, err := mutants.Lookup(f.Mutant)
				require.NoError(t, err)
				cfg, err := f.Config(m.System)
				require.NoError(t, err)
				r, err := sim.Run(context.Background(), cfg)
				require.NoError(t, err)
				ref := cfg
				ref.System = refimpl.NewSystem()
				rr, err := sim.Run(context.Background(), ref)
				require.NoError(t, err)
				for _, k := range f.Kills {
					require.Equal(t, invariant.Violated, r.Report.Verdict(k), "%s no longer flags %s (%s)", k, f.Mutant, path)
					require.NotEqual(t, invariant.Violated, rr.Report.Verdict(k), "the reference fails %s on %s too", k, path)
				}
			})
		}
	}
	for _, m := range mutants.Catalogue() {
		require.True(t, covered[m.Name], "no replay file kills mutant %s: run converge mutants --save scenarios/mutants/corpus", m.Name)
	}
}
