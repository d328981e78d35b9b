package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// SPEC 3.1: a check of the lock immediately before every world-changing
// call, and none after the lease is lost without a newer successful one.
func TestLeaseRecheckBeforeEveryWorldChangingCall(t *testing.T) {
	base := func() *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredPending).at(time.Second).claim("w", contracts.OpDeleting)
	}
	// Correct: a check before each call.
	tr := base().check("c1", 1, "").call("c1", MDelete, "w", "", "", "").check("c1", 1, "").call("c1", MDeleteVolume, "w", "", "", "")
	r := run(t, tr, nil, "lease-recheck")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("lease-recheck"))

	// One check for two calls: the second has none of its own.
	tr = base().check("c1", 1, "").call("c1", MDelete, "w", "", "", "").call("c1", MDeleteVolume, "w", "", "", "")
	r = run(t, tr, nil, "lease-recheck")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "storage.DeleteVolume with no successful check")

	// The acquisition is not a check; nor is a failed check.
	tr = newTrace().leader("c1", 1).call("c1", MObjDelete, "", "archives/w/o/home.tar.zst", "", "")
	r = run(t, tr, nil, "lease-recheck")
	require.Len(t, r.Violations, 1)
	tr = base().check("c1", 1, "unavailable").call("c1", MDelete, "w", "", "", "")
	r = run(t, tr, nil, "lease-recheck")
	require.Len(t, r.Violations, 1)
}

// The depose strikes between the claim and the actuator call: an
// instance that checked at the top of its step, claimed, and then called
// is flagged; one that checked again, right before the call, is not, even
// when the loss falls between that check and the call.
func TestLeaseRecheckAfterTheLeaseIsLost(t *testing.T) {
	deposed := func(tr *trace) *trace {
		return tr.add(history.Event{Kind: history.KindFault, Instance: "c1", Method: FDepose}).leader("c2", 2)
	}
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).at(time.Second).check("c1", 1, "").claim("w", contracts.OpProvisioning)
	tr = deposed(tr).call("c1", MProvision, "w", "", "", "")
	r := run(t, tr, nil, "lease-recheck")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "after its lease was lost")

	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).at(time.Second).check("c1", 1, "").claim("w", contracts.OpProvisioning).check("c1", 1, "")
	tr = deposed(tr).call("c1", MProvision, "w", "", "", "")
	r = run(t, tr, nil, "lease-recheck")
	require.Empty(t, r.Violations, "the loss fell between the check and the call right after it")

	// A newer epoch's check makes the call legitimate again.
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).check("c1", 1, "")
	tr = deposed(tr).claim("w", contracts.OpProvisioning).leader("c1", 3).check("c1", 3, "").call("c1", MProvision, "w", "", "", "")
	r = run(t, tr, nil, "lease-recheck")
	require.Empty(t, r.Violations)
}

// SPEC 3.1: the check comes "immediately before" the call: a write or a
// call of the instance between its check and the world-changing call is
// flagged even when the lease survived; the storage job's upload, recorded
// inside the archive call it belongs to, is not such a call.
func TestLeaseRecheckImmediatelyBefore(t *testing.T) {
	base := func() *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).at(time.Second)
	}
	// Checked at the top of the step, then claimed, then called.
	tr := base().check("c1", 1, "").claim("w", contracts.OpProvisioning).call("c1", MProvision, "w", "", "", "")
	r := run(t, tr, nil, "lease-recheck")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "immediately before")

	// Checked, then published, then called.
	tr = base().claim("w", contracts.OpProvisioning).check("c1", 1, "").trigger("c1", "w").call("c1", MProvision, "w", "", "", "")
	r = run(t, tr, nil, "lease-recheck")
	require.Len(t, r.Violations, 1)

	// Correct: the claim, then the check, then the call.
	tr = base().claim("w", contracts.OpProvisioning).check("c1", 1, "").call("c1", MProvision, "w", "", "", "")
	r = run(t, tr, nil, "lease-recheck")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("lease-recheck"))

	// The archive call's own upload, recorded just before the call.
	arch := func() *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredStandby).at(time.Second).claim("w", contracts.OpArchiving).
			check("c1", 1, "").call("c1", MObjPut, "w", "archives/w/o/home.tar.zst", "by the storage job", "")
	}
	tr = arch().call("c1", MArchive, "w", "o", "", "storage job failed")
	r = run(t, tr, nil, "lease-recheck")
	require.Empty(t, r.Violations)

	// An upload followed by anything but its archive call is the
	// instance's own call between the check and the world-changing one.
	tr = arch().trigger("c1", "w").call("c1", MArchive, "w", "o", "", "")
	r = run(t, tr, nil, "lease-recheck")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "immediately before")
}
