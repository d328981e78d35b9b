package oracle

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/judge"
	oraclejudge "github.com/wsconverge/converge/judge/oracle"
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
// N seeds, and the report says which checkers the seeds exercised.
func TestReferencePassesSeeds(t *testing.T) {
	n := seedCount(t, 300)
	first := uint64(1)
	if s := os.Getenv("ORACLESIM_FIRST"); s != "" {
		f, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
		first = f
	}
	tally := judge.NewTally(oraclejudge.Names())
	for seed := first; seed < first+uint64(n); seed++ {
		res, err := Run(context.Background(), Options{Seed: seed})
		require.NoError(t, err)
		if len(res.Report.Violations) > 0 || res.Report.Failed() {
			res, err = Run(context.Background(), Options{Seed: seed, Keep: true})
			require.NoError(t, err)
			logViolations(t, res)
			t.Fatalf("seed %d: the reference fails", seed)
		}
		tally.Add(res.Report)
	}
	for _, name := range oraclejudge.Names() {
		t.Logf("%-22s %s", name, tally.Verdict(name))
	}
	t.Logf("not exercised in %d seeds: %v", n, tally.NotExercised())
	if n >= 300 {
		// The default run exercises every checker (measured: all of them
		// within the first 300 seeds); fewer seeds only report.
		require.Empty(t, tally.NotExercised())
	}
}
