package scenarios

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	wsjudge "github.com/wsconverge/converge/judge/workspace"
	wsref "github.com/wsconverge/converge/refimpl/workspace"
	wsmutants "github.com/wsconverge/converge/scenarios/mutants/workspace"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

// The replay corpus: for every mutant, the shrunk run that killed it
// (written by `converge mutants --save scenarios/mutants/workspace/corpus`, embedded
// in package mutants).
// Each must still kill its mutant — the checkers it names flag the mutant —
// while the reference passes those checkers on the very same run. (Hashes
// are not compared: any change to the reference changes them.)
func TestReplayCorpusStillKillsEveryMutant(t *testing.T) {
	covered := map[string]bool{}
	for _, mut := range wsmutants.Catalogue() {
		for i, b := range wsmutants.Corpus(mut.Name) {
			path := fmt.Sprintf("corpus of %s #%d", mut.Name, i)
			f, err := wssim.ParseReplay(b)
			require.NoError(t, err)
			require.NotEmpty(t, f.Mutant, path)
			require.NotEmpty(t, f.Kills, path)
			covered[f.Mutant] = true
			t.Run(f.Mutant, func(t *testing.T) {
				m, err := wsmutants.Lookup(f.Mutant)
				require.NoError(t, err)
				cfg, err := f.Config(m.System)
				require.NoError(t, err)
				r, err := wssim.Run(context.Background(), cfg)
				require.NoError(t, err)
				ref := cfg
				ref.System = wsref.NewSystem()
				rr, err := wssim.Run(context.Background(), ref)
				require.NoError(t, err)
				for _, k := range f.Kills {
					require.Equal(t, wsjudge.Violated, r.Report.Verdict(k), "%s no longer flags %s (%s)", k, f.Mutant, path)
					require.NotEqual(t, wsjudge.Violated, rr.Report.Verdict(k), "the reference fails %s on %s too", k, path)
				}
			})
		}
	}
	for _, m := range wsmutants.Catalogue() {
		require.True(t, covered[m.Name], "no replay file kills mutant %s: run converge mutants --save scenarios/mutants/workspace/corpus", m.Name)
	}
}
