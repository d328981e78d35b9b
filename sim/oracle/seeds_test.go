package oracle

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/judge"
	oraclejudge "github.com/wsconverge/converge/judge/oracle"
	"github.com/wsconverge/converge/sim/engine"
)

// seedCount is how many seeds TestReferencePassesSeeds runs:
// ORACLESIM_SEEDS overrides it.
func seedCount(t *testing.T, def int) int {
	t.Helper()
	if s := os.Getenv("ORACLESIM_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err)
		return n
	}
	if testing.Short() {
		return def / 10
	}
	return def
}

// TestReferencePassesSeeds: the reference daemon passes every checker on
// N seeds (and on the steered seeds that follow them), and across them
// every checker's situation arises at least judge.DefaultMin times, with
// no allow-list: while one has not, the run goes on, steering each batch
// toward the unmet obligations, within a budget of 200 seeds more.
func TestReferencePassesSeeds(t *testing.T) {
	n := seedCount(t, 300)
	first := uint64(1)
	if s := os.Getenv("ORACLESIM_FIRST"); s != "" {
		f, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
		first = f
	}
	rule := judge.Rule{}
	tally := judge.NewTally(oraclejudge.Names())
	c := engine.Campaign[*Result]{Seeds: engine.Shard{}.Seeds(first, n+200), Min: n, Jobs: 1, Now: time.Now,
		Steerer: NewSteerer(rule),
		Run: func(ctx context.Context, seed uint64, st *engine.Steering) (*Result, error) {
			return Run(ctx, Options{Seed: seed, Steering: st})
		},
		Sample: func(_ uint64, st *engine.Steering, r *Result) engine.Sample { return Sample(st, r) },
		Emit: func(o engine.Outcome[*Result], st *engine.Steering) bool {
			require.NoError(t, o.Err)
			if res := o.R; res.Report.Failed() || len(res.Report.Violations) > 0 {
				res, err := Run(context.Background(), Options{Seed: o.Seed, Steering: st, Keep: true})
				require.NoError(t, err)
				logViolations(t, res)
				t.Fatalf("seed %d (steering %v): the reference fails", o.Seed, st)
			}
			tally.AddSeed(o.Seed, o.R.Report)
			return true
		},
	}
	end := c.Go(context.Background())
	claim := tally.Claim(Obligations(), rule)
	for _, st := range claim.Standings {
		t.Logf("%-30s %-16s %5d in %3d seeds, first %d", st.Checker, claim.Describe(st), st.Exercised, st.Seeds, st.First)
		if len(st.PartCounts) > 0 {
			t.Logf("%-30s parts: %s", "", st.PartsLine())
		}
	}
	t.Logf("%d seeds, %d of them steered", end.Ran, end.Steered)
	require.Empty(t, claim.Unmet(), "obligations unmet after %d seeds", end.Ran)
}

// Steering is effective in the oracle world too: the default run never
// has more ready jobs than the pool (O7) in its first batch, and steering
// meets every obligation within a few batches, where hundreds of
// unsteered seeds were needed.
func TestOracleSteeringMeetsWhatTheFirstBatchMissed(t *testing.T) {
	rule := judge.Rule{}
	tally, firstBatch := judge.NewTally(oraclejudge.Names()), judge.NewTally(oraclejudge.Names())
	c := engine.Campaign[*Result]{Seeds: engine.Shard{}.Seeds(1, 120), Min: engine.DefaultBatch, Jobs: 2, Now: time.Now,
		Steerer: NewSteerer(rule),
		Run: func(ctx context.Context, seed uint64, st *engine.Steering) (*Result, error) {
			return Run(ctx, Options{Seed: seed, Steering: st, Discard: true})
		},
		Sample: func(_ uint64, st *engine.Steering, r *Result) engine.Sample { return Sample(st, r) },
		Emit: func(o engine.Outcome[*Result], st *engine.Steering) bool {
			require.NoError(t, o.Err)
			require.False(t, o.R.Report.Failed(), "seed %d (steering %v): %v", o.Seed, st, o.R.Report.Violations)
			tally.AddSeed(o.Seed, o.R.Report)
			if st == nil {
				firstBatch.AddSeed(o.Seed, o.R.Report)
			}
			return true
		},
	}
	end := c.Go(context.Background())
	missed := firstBatch.Claim(Obligations(), rule).Unmet()
	require.Contains(t, missed, "o7-concurrency")
	require.True(t, end.Met, "unmet after %d seeds: %v", end.Ran, tally.Claim(Obligations(), rule).Unmet())
	t.Logf("the first batch missed %v; %d seeds (%d steered) met them all", missed, end.Ran, end.Steered)
}

// A steered seed's options record its steering: a replay file carries it
// and reproduces the seed's history.
func TestSteeredSeedReplays(t *testing.T) {
	st := &engine.Steering{Target: "o7-concurrency", On: []string{"F8", FeatureCrowd, FeaturePartialQuorums}}
	o := Options{Seed: 4, Steering: st}
	res, err := Run(context.Background(), o)
	require.NoError(t, err)
	require.Contains(t, res.Faults, "F8")
	f := NewReplay(o, "", res)
	require.Equal(t, st, f.Steering)
	b, err := json.Marshal(f)
	require.NoError(t, err)
	back, err := DecodeReplay(bytes.NewReader(b))
	require.NoError(t, err)
	bo, err := back.Options(nil)
	require.NoError(t, err)
	again, err := Run(context.Background(), bo)
	require.NoError(t, err)
	require.Equal(t, res.Hash, again.Hash)
	require.Error(t, Options{Seed: 1, Steering: &engine.Steering{On: []string{"F99"}}}.Validate())
}
