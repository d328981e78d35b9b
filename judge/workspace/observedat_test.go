package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

// observedFleet is a leader c1 observing workspaces w (STANDBY, created at
// t0) and d (DELETED) with passes every 30 s from the first minute; the
// final rows carry the observed_at values given.
func observedFleet(passes int, between func(tr *trace), wAt, dAt time.Time) (*trace, *Final) {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredStandby).insert("d", contracts.DesiredStandby)
	for i := range passes {
		tr.at(time.Minute+time.Duration(i)*30*time.Second).call("c1", MInstancesList, "", "", "", "")
		if i == 1 && between != nil {
			between(tr)
		}
	}
	w := contracts.Workspace{ID: "w", CreatedAt: t0, ObservedStatus: contracts.ObservedStandby, ObservedAt: wAt}
	d := contracts.Workspace{ID: "d", CreatedAt: t0, ObservedStatus: contracts.ObservedDeleted, ObservedAt: dAt}
	return tr, &Final{End: tr.now.Add(time.Second), Rows: []contracts.Workspace{w, d}}
}

func TestObservedAtStampedOnEveryObservation(t *testing.T) {
	// Four passes at 1:00, 1:30, 2:00, 2:30: w stamped at the third pass
	// is fresh enough; d is DELETED and no longer observed.
	tr, f := observedFleet(4, nil, t0.Add(2*time.Minute), t0)
	r := run(t, tr, f, "observed-at")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("observed-at"))

	// w last stamped before the first of the last four passes: a pass
	// observed it without writing observed_at.
	tr, f = observedFleet(5, nil, t0.Add(80*time.Second), t0)
	r = run(t, tr, f, "observed-at")
	require.Len(t, r.Violations, 1)
	require.Equal(t, "w", r.Violations[0].Subject)
	require.Contains(t, r.Violations[0].Message, "observed without its observed_at written")

	// Never stamped at all.
	tr, f = observedFleet(4, nil, time.Time{}, t0)
	r = run(t, tr, f, "observed-at")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "observed_at never")
}

func TestObservedAtWaitsForUndisturbedPasses(t *testing.T) {
	// A failed call of the leader between the passes: its passes may have
	// been cut short, so four in a row are not there to judge by.
	fail := func(tr *trace) { tr.call("c1", "store.MarkObserved", "", "", "", "unavailable") }
	tr, f := observedFleet(5, fail, time.Time{}, t0)
	r := run(t, tr, f, "observed-at")
	require.Empty(t, r.Violations)
	require.Equal(t, NotExercise, r.Verdict("observed-at"))

	// A new leader starts the count again.
	lead := func(tr *trace) { tr.leader("c2", 2) }
	tr, f = observedFleet(5, lead, time.Time{}, t0)
	r = run(t, tr, f, "observed-at")
	require.Equal(t, NotExercise, r.Verdict("observed-at"))

	// Another instance's listings are not the leader's passes.
	tr, f = observedFleet(0, nil, time.Time{}, t0)
	for i := range 5 {
		tr.at(time.Minute+time.Duration(i)*30*time.Second).call("c2", MInstancesList, "", "", "", "")
	}
	r = run(t, tr, f, "observed-at")
	require.Equal(t, NotExercise, r.Verdict("observed-at"))
}

func TestCompletionStampBeforeClearing(t *testing.T) {
	base := func() *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
			claim("w", contracts.OpProvisioning).at(2*time.Second).observe("w", contracts.ObservedStandby).complete("w").
			at(time.Minute).claim("w", contracts.OpStarting).at(70*time.Second).observe("w", contracts.ObservedRunning)
	}
	r := run(t, base().stamp("w").complete("w"), nil, "completion-stamp")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("completion-stamp"), "PROVISIONING needs no stamp; STARTING had one")

	r = run(t, base().complete("w"), nil, "completion-stamp")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "STARTING completed at 2026-01-05T00:01:10Z with last_access_at 2026-01-05T00:00:00Z")

	// A stamp of an earlier tick of this operation is not the time of the
	// completion (SPEC 4.2.2: "never an earlier read"); one of the same
	// step is.
	tr0 := base().stamp("w").at(72 * time.Second).complete("w")
	r = run(t, tr0, nil, "completion-stamp")
	require.Len(t, r.Violations, 1, "a lower bound (after the claim) is not enough")
	require.Contains(t, r.Violations[0].Message, "the time of the completion")

	// A stamp from before the claim (the previous operation's) is no stamp.
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).stamp("w").
		at(time.Minute).claim("w", contracts.OpStarting).at(70*time.Second).observe("w", contracts.ObservedRunning).complete("w")
	r = run(t, tr, nil, "completion-stamp")
	require.Len(t, r.Violations, 1)

	// The completion may carry the stamp itself.
	tr = base()
	tr.complete("w").events[len(tr.events)-1].Patch.LastAccessAt = contracts.Some(tr.now)
	r = run(t, tr, nil, "completion-stamp")
	require.Empty(t, r.Violations)

	// An error entry clears the operation without a stamp.
	info := &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, IsTerminal: true, OccurredAt: t0}
	tr = base().write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{Operation: contracts.Some(contracts.OpNone), ErrorInfo: contracts.Some(info)})
	r = run(t, tr, nil, "completion-stamp")
	require.Empty(t, r.Violations)
}

func TestTTLRuleAppliedOnceFaultsStop(t *testing.T) {
	// w RUNNING, untouched since t0, standby TTL 300 s; faults stop at
	// 10 min. The rule has held since then; the run ends at 10 min +
	// end.
	build := func(end time.Duration, applied bool) (*trace, *Final) {
		tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
			write(contracts.CompAPI, "c1", 1, "w", nil, contracts.Patch{LastAccessAt: contracts.Some(t0)}).
			at(time.Second).observe("w", contracts.ObservedRunning).
			at(10*time.Minute).fault(FQuiet, "", "")
		if applied {
			tr.at(11 * time.Minute).add(history.Event{Kind: history.KindWrite, Component: contracts.CompAPI, Args: onBehalfOf + string(contracts.CompTTLManager),
				Workspace: "w", Patch: &contracts.Patch{DesiredState: contracts.Some(contracts.DesiredStandby)}, Applied: true})
		}
		tr.at(10*time.Minute + end)
		return tr, &Final{End: tr.now}
	}
	tr, f := build(2*time.Minute, false)
	require.Empty(t, run(t, tr, f, "ttl").Violations, "two periods are allowed")

	tr, f = build(5*time.Minute, false)
	r := run(t, tr, f, "ttl")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "the TTL rule for desired STANDBY has held since")

	tr, f = build(5*time.Minute, true)
	r = run(t, tr, f, "ttl")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("ttl"))

	// An open connection keeps it running.
	tr, f = build(5*time.Minute, false)
	tr.events = append(tr.events[:3:3], append([]history.Event{{Kind: history.KindCall, Instance: "proxy", Method: MBusIncr, Args: "ws_conn:w", Result: "1", At: t0, Seq: 99}}, tr.events[3:]...)...)
	require.Empty(t, run(t, tr, f, "ttl").Violations)
}

// SPEC 4.2.2: ARCHIVING completes with op_id = null, and every completion
// with op_started_at, error_count and error_info cleared.
func TestCompletionClearsWhatTheTableSays(t *testing.T) {
	key := contracts.ArchiveKey("w", "op1")
	archived := func(writes ...contracts.Patch) *trace {
		tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredPending).observe("w", contracts.ObservedStandby).
			claim("w", contracts.OpArchiving).
			write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{OpID: contracts.Some("op1")}).
			write(contracts.CompStateReconciler, "c1", 1, "w", nil, decide.ArchiveCommitPatch(key)).
			at(time.Minute).observe("w", contracts.ObservedPending)
		for _, p := range writes {
			tr.write(contracts.CompStateReconciler, "c1", 1, "w", nil, p)
		}
		return tr
	}
	done := decide.CompletePatch(&contracts.Workspace{Operation: contracts.OpArchiving})
	r := run(t, archived(done), nil, "completion-stamp")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("completion-stamp"))

	kept := done
	kept.OpID = contracts.Opt[string]{}
	r = run(t, archived(kept), nil, "completion-stamp")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "ARCHIVING completed leaving op_id op1")

	counted := done
	counted.ErrorCount = contracts.Opt[int]{}
	r = run(t, archived(contracts.Patch{ErrorCount: contracts.Some(1)}, counted), nil, "completion-stamp")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "leaving error_count 1")
}
