package oracle

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle/history"
)

// logViolations prints a run's violations with their evidence.
func logViolations(t *testing.T, res *Result) {
	t.Helper()
	for _, v := range res.Report.Violations {
		t.Log(v.String())
		for _, seq := range v.Evidence {
			if seq >= 1 && int(seq) <= len(res.Events) {
				t.Log("   ", history.Line(res.Events[seq-1], Genesis))
			}
		}
	}
}

// TestSameSeedSameHistory: a run is a function of its seed — two runs of
// one seed record the same history (hash and records), another seed a
// different one; the lean recorder keeps fewer records of a run whose
// hash is again reproducible.
func TestSameSeedSameHistory(t *testing.T) {
	ctx := context.Background()
	a, err := Run(ctx, Options{Seed: 42, Keep: true})
	require.NoError(t, err)
	b, err := Run(ctx, Options{Seed: 42, Keep: true})
	require.NoError(t, err)
	require.Equal(t, a.Hash, b.Hash)
	require.Equal(t, history.Timeline(a.Events, Genesis), history.Timeline(b.Events, Genesis))
	c, err := Run(ctx, Options{Seed: 43})
	require.NoError(t, err)
	require.NotEqual(t, a.Hash, c.Hash)

	l1, err := Run(ctx, Options{Seed: 42, Lean: true, Keep: true})
	require.NoError(t, err)
	l2, err := Run(ctx, Options{Seed: 42, Lean: true})
	require.NoError(t, err)
	require.Equal(t, l1.Hash, l2.Hash)
	require.Less(t, len(l1.Events), len(a.Events))
	require.Empty(t, l1.Report.Violations)
}

// TestRunShape: a run covers its phases, starts and stops the daemon, and
// records faults from the catalogue.
func TestRunShape(t *testing.T) {
	res, err := Run(context.Background(), Options{Seed: 7, Keep: true})
	require.NoError(t, err)
	require.Equal(t, ReferenceName, res.System)
	require.Equal(t, 11*60, int(res.SimTime.Seconds()))
	var starts, exits, faults int
	for _, e := range res.Events {
		switch {
		case e.Proc != nil && e.Proc.Action == history.ProcStart:
			starts++
		case e.Proc != nil && e.Proc.Action == history.ProcExit:
			exits++
		case e.Fault != nil:
			faults++
			require.Contains(t, Catalogue, e.Fault.ID)
			require.True(t, e.At.Before(res.QuietFrom), "fault %s in the quiet phase", e.Fault.ID)
		}
	}
	require.GreaterOrEqual(t, starts, 1)
	require.Equal(t, starts, exits, "every lifetime ends")
	require.Positive(t, faults)
}

// TestNoFaultsNoOps: with faults and workload off, the run is a plain
// healthy run the reference passes.
func TestNoFaultsNoOps(t *testing.T) {
	res, err := Run(context.Background(), Options{Seed: 3, Faults: -1, Ops: -1, Keep: true})
	require.NoError(t, err)
	logViolations(t, res)
	require.Empty(t, res.Report.Violations)
	for _, e := range res.Events {
		require.Nil(t, e.Fault)
		require.False(t, e.Op != nil && e.Op.Action != history.OpRegister, "an op other than the registers")
	}
}

// TestKeptRecordsStayAsMade: the records a run keeps hash, once the run is
// over, as they did when they were made: no memory a kept record points to
// was reused for a later one (docs/decisions/performance.md, DR263 and DR264), with faults, operator
// updates and restarts.
func TestKeptRecordsStayAsMade(t *testing.T) {
	for _, seed := range []uint64{3, 4} {
		res, err := Run(context.Background(), Options{Seed: seed, Faults: -1, Ops: -1, Keep: true})
		require.NoError(t, err)
		again := history.NewRecorder()
		for _, e := range res.Events {
			again.Add(e)
		}
		require.Equal(t, res.Hash, again.Hash(), "seed %d", seed)
	}
}
