package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

// C9 counts orphan time between the GC's sightings (SPEC 4.5: the timer
// starts at the first unprotected sighting and is cleared at a protected
// one). A workspace in ERROR between two passes protected its archives
// unseen: that does not restart the two hours. Found by the simulator
// (the reference was flagged for following SPEC 4.5 exactly).
func TestC9ProtectionBetweenSightingsDoesNotRestartTheClock(t *testing.T) {
	old := contracts.ArchiveKey("w", "op1")
	erroring := &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, IsTerminal: true}
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredPending).
		call("c1", MObjPut, "w", old, "", "").
		// archive_key moves on: the old archive is an orphan from here.
		write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{ArchiveKey: contracts.Some(contracts.ArchiveKey("w", "op2"))}).
		at(10*time.Minute).call("c1", "objects.List", "", contracts.ArchivePrefix, "2", "").
		// In ERROR (everything protected) between two passes only.
		at(40*time.Minute).write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{ErrorInfo: contracts.Some(erroring)}).
		at(50*time.Minute).write(contracts.CompAdmin, "api", 0, "w", nil, contracts.RecoverPatch()).
		at(70*time.Minute).call("c1", "objects.List", "", contracts.ArchivePrefix, "2", "").
		at(130*time.Minute).call("c1", "objects.List", "", contracts.ArchivePrefix, "2", "").
		call("c1", MObjDelete, "w", old, "deleted", "")
	r := run(t, tr, nil, "c9-gc-protection")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("c9-gc-protection"))

	// Seen protected at a pass, the clock restarts there.
	seen := newTrace().leader("c1", 1).insert("w", contracts.DesiredPending).
		call("c1", MObjPut, "w", old, "", "").
		write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{ArchiveKey: contracts.Some(contracts.ArchiveKey("w", "op2"))}).
		at(40*time.Minute).write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{ErrorInfo: contracts.Some(erroring)}).
		at(70*time.Minute).call("c1", "objects.List", "", contracts.ArchivePrefix, "2", "").
		at(80*time.Minute).write(contracts.CompAdmin, "api", 0, "w", nil, contracts.RecoverPatch()).
		at(130*time.Minute).call("c1", MObjDelete, "w", old, "deleted", "")
	r = run(t, seen, nil, "c9-gc-protection")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "after only 1h0m0s orphaned")
}

// C11 is about operations: the GC deleting the archives of a soft-deleted
// workspace whose health stayed ERROR is none (C9 judges it). Found by the
// simulator.
func TestC11LeavesTheGCToC9(t *testing.T) {
	key := contracts.ArchiveKey("w", "op1")
	info := &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, IsTerminal: true}
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		call("c1", MObjPut, "w", key, "", "").
		write(contracts.CompHealthMonitor, "c1", 1, "w", nil, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)}).
		write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{ErrorInfo: contracts.Some(info)}).
		write(contracts.CompAPI, "api", 0, "w", nil, decide.DeletePatch(t0)).
		at(3*time.Hour).call("c1", MObjDelete, "w", key, "deleted", "")
	r := run(t, tr, nil, "c11-error-skip")
	require.Empty(t, r.Violations)
	// Any other world-changing call on it still counts.
	tr.call("c1", MStart, "w", "img", "created", "")
	r = run(t, tr, nil, "c11-error-skip")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "instances.Start called on a workspace in ERROR")
}

// C9 times an archive by its key, as SPEC 4.5's one timer per archive
// does: an object that vanished (a fault) and was written again under the
// same key between two GC passes keeps the key's orphan time. Found by the
// rapid machine on examples/acme, which follows SPEC 4.5 exactly.
func TestC9TimesAnArchiveByItsKey(t *testing.T) {
	key := contracts.ArchiveKey("w", "op1")
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredPending).
		call("c1", MObjPut, "w", key, "", "").
		write(contracts.CompAPI, "api", 0, "w", nil, decide.DeletePatch(t0)).
		at(time.Minute).call("c1", "objects.List", "", contracts.ArchivePrefix, "1", "").
		at(2*time.Minute).fault(FRemoveObj, "w", key).
		at(3*time.Minute).call("c1", MObjPut, "w", key, "", "").
		at(time.Hour+time.Minute).call("c1", "objects.List", "", contracts.ArchivePrefix, "1", "").
		at(2*time.Hour+time.Minute).call("c1", "objects.List", "", contracts.ArchivePrefix, "1", "").
		call("c1", MObjDelete, "w", key, "deleted", "")
	r := run(t, tr, nil, "c9-gc-protection")
	require.Empty(t, r.Violations)

	// A key never seen before still needs its own two hours.
	other := contracts.ArchiveKey("w", "op2")
	tr.at(2*time.Hour+2*time.Minute).call("c1", MObjPut, "w", other, "", "").
		at(3*time.Hour).call("c1", MObjDelete, "w", other, "deleted", "")
	r = run(t, tr, nil, "c9-gc-protection")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "after only 58m0s orphaned")
}
