package workspace

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

// The checker's table, written from SPEC, and the reference's decision
// (decide.Reconcile on an idle row) agree on every row shape.
func TestTableChoiceAgreesWithTheReferencesDecision(t *testing.T) {
	now := t0.Add(time.Hour)
	n, ambiguous := 0, 0
	for _, obs := range []contracts.ObservedStatus{contracts.ObservedPending, contracts.ObservedStandby, contracts.ObservedRunning, contracts.ObservedDeleted} {
		for _, health := range []contracts.HealthStatus{contracts.HealthOK, contracts.HealthError} {
			for _, desired := range []contracts.DesiredState{contracts.DesiredPending, contracts.DesiredStandby, contracts.DesiredRunning} {
				for _, deleted := range []bool{false, true} {
					for _, archive := range []string{"", "key-1"} {
						for _, marker := range []string{"", "key-1", "key-0"} {
							for _, terminal := range []bool{false, true} {
								w := contracts.NewWorkspace("w", "u", "n", "img", t0)
								w.ObservedStatus, w.HealthStatus, w.DesiredState, w.ArchiveKey = obs, health, desired, archive
								if deleted {
									w.DeletedAt = t0
								}
								if marker != "" {
									w.HomeCtx = &contracts.HomeCtx{RestoreMarker: marker}
								}
								if terminal {
									w.ErrorInfo = &contracts.ErrorInfo{Reason: contracts.ReasonActionFailed, IsTerminal: true, OccurredAt: t0}
								}
								want := contracts.OpNone
								newID := func() string { return "op-new" }
								if d := decide.Reconcile(decide.Input{Row: &w, Now: now, NewID: newID}); d.Kind == decide.StepClaim {
									want = d.Op
								}
								got := TableChoice(&w)
								if want == contracts.OpNone && got == contracts.OpRestoring && obs == contracts.ObservedStandby && desired == contracts.DesiredStandby {
									// SPEC reads both ways here (step 4, or the
									// amendment on unrestored workspaces); the
									// reference leaves the row be.
									require.True(t, decide.Unrestored(&w))
									ambiguous++
									continue
								}
								require.Equal(t, want, got, fmt.Sprintf("%+v", w))
								n++
							}
						}
					}
				}
			}
		}
	}
	require.Equal(t, 4*2*3*2*2*3*2-ambiguous, n)
	require.Equal(t, 2, ambiguous, "only a healthy, live STANDBY row with an archive it was not restored from (no marker, or another one)")
}

func TestOperationChoiceFollowsTheTable(t *testing.T) {
	softDeleted := func(op contracts.Operation) *trace {
		tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredStandby).
			claim("w", contracts.OpProvisioning).at(2*time.Second).observe("w", contracts.ObservedStandby).complete("w").
			at(time.Minute).write(contracts.CompAPI, "api", 0, "w", nil, decide.DeletePatch(t0.Add(time.Minute)))
		return tr.at(62*time.Second).claim("w", op)
	}
	r := run(t, softDeleted(contracts.OpArchiving), nil, "operation-choice")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("operation-choice"))

	r = run(t, softDeleted(contracts.OpDeleting), nil, "operation-choice")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "DELETING claimed on a row (observed STANDBY, health OK, desired PENDING, deleted true")
	require.Contains(t, r.Violations[0].Message, "the table chose ARCHIVING")

	// A reader that saw the row before the delete may still claim what
	// the table gave then (nothing here: STANDBY was desired), but not
	// an operation no version since the last one ended called for.
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		claim("w", contracts.OpProvisioning).at(2*time.Second).observe("w", contracts.ObservedStandby).complete("w").
		at(3*time.Second).write(contracts.CompAPI, "api", 0, "w", nil, contracts.Patch{DesiredState: contracts.Some(contracts.DesiredStandby)}).
		at(4*time.Second).claim("w", contracts.OpStarting)
	r = run(t, tr, nil, "operation-choice")
	require.Empty(t, r.Violations, "STARTING was the choice for the row read before the user asked for STANDBY")

	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		claim("w", contracts.OpProvisioning).at(2*time.Second).observe("w", contracts.ObservedStandby).complete("w").
		at(4*time.Second).claim("w", contracts.OpArchiving)
	r = run(t, tr, nil, "operation-choice")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "the table chose STARTING")

	// The versions seen before the last operation ended do not count.
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		at(time.Second).claim("w", contracts.OpProvisioning).at(2*time.Second).observe("w", contracts.ObservedStandby).complete("w").
		at(3*time.Second).write(contracts.CompAPI, "api", 0, "w", nil, contracts.Patch{DesiredState: contracts.Some(contracts.DesiredStandby)}).
		at(4*time.Second).claim("w", contracts.OpProvisioning)
	r = run(t, tr, nil, "operation-choice")
	require.Len(t, r.Violations, 1, "PROVISIONING was chosen for the PENDING row, before the last operation")
}

// 4.2.1 as amended: ARCHIVING of an unrestored volume reuses the op_id of
// archive_key, in its claim or in the write that ensures the op_id.
func TestArchivingAnUnrestoredVolumeReusesItsOpID(t *testing.T) {
	key := "archives/w/op1/home.tar.zst"
	unrestored := func() *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
			write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{ArchiveKey: contracts.Some(key)}).
			observe("w", contracts.ObservedStandby).
			write(contracts.CompAPI, "api", 0, "w", nil, contracts.Patch{DesiredState: contracts.Some(contracts.DesiredPending)})
	}
	archive := func(tr *trace, inClaim bool, opID string) *trace {
		c := decide.ClaimCond(contracts.OpArchiving)
		p := contracts.Patch{Operation: contracts.Some(contracts.OpArchiving), OpStartedAt: contracts.Some(tr.now)}
		if inClaim {
			p.OpID = contracts.Some(opID)
			return tr.write(contracts.CompStateReconciler, "c1", 1, "w", &c, p)
		}
		tr.write(contracts.CompStateReconciler, "c1", 1, "w", &c, p)
		return tr.write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{OpID: contracts.Some(opID)})
	}
	for _, inClaim := range []bool{true, false} {
		r := run(t, archive(unrestored(), inClaim, "op1"), nil, "operation-choice")
		require.Empty(t, r.Violations)
		r = run(t, archive(unrestored(), inClaim, "op2"), nil, "operation-choice")
		require.Len(t, r.Violations, 1)
		require.Contains(t, r.Violations[0].Message, "reuses the op_id of archive_key (op1)")
	}
	// A restored volume (the marker names the archive) takes a new op_id.
	restored := unrestored().write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{HomeCtx: contracts.Some(&contracts.HomeCtx{RestoreMarker: key})})
	r := run(t, archive(restored, true, "op2"), nil, "operation-choice")
	require.Empty(t, r.Violations)
}
