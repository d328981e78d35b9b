package oracle_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	oraclejudge "github.com/wsconverge/converge/judge/oracle"
	oraclemutants "github.com/wsconverge/converge/scenarios/mutants/oracle"
	oraclesim "github.com/wsconverge/converge/sim/oracle"
)

// TestSleepersOnSimulatedHistories judges whole simulated histories (the
// reference under faults and operator actions, and every ports mutant on
// the options that catch it) twice, side by side: as Check does, with
// checkers reading their classes and sleeping until their deadlines, and
// with every checker shown every record. Both must find the same
// violations at the same records: the hand-built histories of the other
// tests do not reach every lifetime, fault and deadline a run does.
func TestSleepersOnSimulatedHistories(t *testing.T) {
	if testing.Short() {
		t.Skip("judges a few dozen simulated runs twice")
	}
	type run struct {
		name string
		o    oraclesim.Options
	}
	var runs []run
	for seed := uint64(1); seed <= 16; seed++ {
		runs = append(runs, run{fmt.Sprintf("reference/%d", seed), oraclesim.Options{Seed: seed, Faults: 60, Ops: 30}})
	}
	for seed := uint64(1); seed <= 3; seed++ { // a long quiet phase: deadlines far apart
		runs = append(runs, run{fmt.Sprintf("reference-quiet/%d", seed),
			oraclesim.Options{Seed: seed, Requests: 12, Faults: 40, Ops: 20, QuietPhase: 2 * time.Hour}})
	}
	for _, m := range oraclemutants.All() {
		for seed := uint64(1); seed <= 3; seed++ {
			o := m.Options
			o.Seed, o.System = seed, m
			runs = append(runs, run{fmt.Sprintf("%s/%d", m.Name(), seed), o})
		}
	}
	violated := 0
	for _, r := range runs {
		o := r.o
		o.Keep = true
		res, err := oraclesim.Run(context.Background(), o)
		require.NoError(t, err, r.name)
		if res.Report.Failed() {
			violated++
		}
		t.Logf("%s: %d records, %d violations", r.name, len(res.Events), len(res.Report.Violations))
		oraclejudge.RequireSameSteps(t, oraclesim.Params(o), res.Events)
	}
	require.Positive(t, violated, "some runs find violations, so finding them at the same records is tested")
}
