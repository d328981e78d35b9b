package decide

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

// An op_id kept by an ERROR entry during ARCHIVING must not survive another
// operation: the volume changes afterwards, and an ARCHIVING claimed later
// under the old op_id would find its archive (or its committed archive_key)
// "done" and delete the volume without archiving the newer data. Found by
// the simulator: ARCHIVING failed after committing archive_key, an admin
// recovered it, the user woke it before the reconciler re-claimed ARCHIVING,
// wrote data, and the next ARCHIVING deleted the volume at once.
func TestClaimOtherThanArchivingClearsAKeptOpID(t *testing.T) {
	key := contracts.ArchiveKey("w1", "op1")
	for _, op := range []contracts.Operation{contracts.OpStarting, contracts.OpRestoring, contracts.OpProvisioning, contracts.OpStopping} {
		w := row(withObserved(contracts.ObservedStandby), withOpID("op1"), withArchiveKey(key))
		p := ClaimPatch(w, op, t0, "new-op")
		requireAllowed(t, contracts.CompStateReconciler, w, p)
		after := w.Clone()
		p.Apply(&after, t0)
		require.Empty(t, after.OpID, "%s", op)
		require.Equal(t, key, after.ArchiveKey, "%s: the committed archive stays protected by archive_key", op)
	}
	// ARCHIVING resumes under it; DELETING leaves it (soft-deleted: it
	// protects nothing).
	for _, op := range []contracts.Operation{contracts.OpArchiving, contracts.OpDeleting} {
		w := row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredPending), withOpID("op1"))
		if op == contracts.OpDeleting {
			w = row(withDeleted(), withHealth(contracts.HealthError), withOpID("op1"))
		}
		after := w.Clone()
		p := ClaimPatch(w, op, t0, "new-op")
		p.Apply(&after, t0)
		require.Equal(t, "op1", after.OpID, "%s", op)
	}
}

// C6: STARTING is never attempted without a volume, a retry or a resume
// included. Found by the simulator: the volume vanished while STARTING
// waited to retry a failed start, and the retry called start(id) on a
// workspace the DB last saw PENDING.
func TestStartingIsNotRetriedWithoutAVolume(t *testing.T) {
	now := t0.Add(time.Minute)
	failed := row(withObserved(contracts.ObservedPending), withDesired(contracts.DesiredRunning), withOp(contracts.OpStarting), withOpStarted(t0), withCount(1), withError(false, t0))
	require.Equal(t, StepWait, classify(failed, now, t0).Kind, "no retry")
	require.Equal(t, StepWait, classify(failed, now, time.Time{}).Kind, "no resume")
	failed.ObservedStatus = contracts.ObservedStandby
	require.Equal(t, StepExecute, classify(failed, now, t0).Kind, "with its volume, the retry goes ahead")
	failed.ObservedStatus = contracts.ObservedPending
	require.Equal(t, StepTimeout, classify(failed, t0.Add(Timeout(contracts.OpStarting)+time.Second), t0).Kind, "the timeout ends it")
}
