package scenarios

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/judge"
	wsref "github.com/wsconverge/converge/refimpl/workspace"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

// The unmodified reference passes 1,000 seeds of the default fault mix
// (small fleets, a day of faults, then the quiet phase), and across them
// every checker's situation arises: the kill matrix shows the checkers
// can fail, this shows the reference does not make them.
func TestReferencePassesAThousandSeeds(t *testing.T) {
	const seeds, chunks = 1000, 4
	var mu sync.Mutex
	tally := wssim.NewTally()
	for c := range chunks {
		t.Run(fmt.Sprintf("seeds-%d-%d", c*seeds/chunks+1, (c+1)*seeds/chunks), func(t *testing.T) {
			t.Parallel()
			for seed := uint64(c*seeds/chunks + 1); seed <= uint64((c+1)*seeds/chunks); seed++ {
				s, r, err := wssim.Execute(context.Background(), wssim.Config{
					Seed: seed, Workspaces: 5, Duration: 24 * time.Hour, Quiet: wssim.DefaultQuiet,
					System: wsref.NewSystem(), Faults: wssim.DefaultFaults(),
				})
				require.NoError(t, err)
				require.Empty(t, r.Failures, "seed %d", seed)
				for _, v := range r.Report.Violations {
					require.Failf(t, "violation", "seed %d: %s\n%v\nreplay: converge sim --seed %d --seeds 1 --workspaces 5 --duration 24h",
						seed, v, s.Evidence(v), seed)
				}
				mu.Lock()
				tally.AddSeed(seed, r.Report)
				mu.Unlock()
			}
		})
	}
	t.Cleanup(func() {
		if t.Failed() {
			return
		}
		// Every obligation met, at the default count, with no allow-list.
		claim := tally.Claim(wssim.Obligations(), judge.Rule{})
		for _, n := range claim.Unmet() {
			st, _ := claim.Standing(n)
			t.Errorf("checker %s %s in %d seeds; it needs: %s", n, claim.Describe(st), seeds, st.Situation)
		}
	})
}
