package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/history"
)

// release is inst's recorded release of the lock of epoch (SPEC 3.1).
func (tr *trace) release(inst string, epoch int64) *trace {
	return tr.add(history.Event{Kind: history.KindLeader, Method: "release", Instance: inst, Epoch: epoch})
}

// SPEC 3.1: a leader whose lock check fails gives up, records the release
// and unlocks, and returns to acquisition; it does not keep its lease.
func TestGivesUpReleases(t *testing.T) {
	const dbDown = "store unavailable"

	// Correct: the failed check is followed at once by the release, and
	// the instance leads again only through a new acquisition.
	tr := newTrace().leader("c1", 1).at(time.Second).check("c1", 1, "").
		at(2*time.Second).check("c1", 1, dbDown).release("c1", 1).
		at(4*time.Second).leader("c1", 2).check("c1", 2, "").call("c1", MInstancesList, "", "", "", "")
	r := run(t, tr, nil, "gives-up-releases")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("gives-up-releases"))

	// Correct: the release itself failed (the DB still down), so the
	// session still holds the lock and a later lock try re-takes it under
	// the same epoch, unrecorded.
	tr = newTrace().leader("c1", 1).at(2*time.Second).check("c1", 1, dbDown).
		call("c1", MRelease, "", "c1", "", dbDown).
		at(4*time.Second).check("c1", 1, "").call("c1", MInstancesList, "", "", "", "")
	r = run(t, tr, nil, "gives-up-releases")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("gives-up-releases"))

	// Violation: the instance skips the step and, at the next one, checks
	// the same lease again and goes on leading: it never gave up.
	tr = newTrace().leader("c1", 1).at(2*time.Second).check("c1", 1, dbDown).
		at(4*time.Second).check("c1", 1, "").call("c1", MInstancesList, "", "", "", "")
	r = run(t, tr, nil, "gives-up-releases")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "without attempting a release")
	require.Contains(t, r.Violations[0].Message, "checked its lock again")

	// Violation: it acts at a later step with no release attempt.
	tr = newTrace().leader("c1", 1).at(2*time.Second).check("c1", 1, dbDown).
		at(3*time.Second).call("c1", MInstancesList, "", "", "", "")
	r = run(t, tr, nil, "gives-up-releases")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "did "+MInstancesList)

	// A check that fails because the lock was lost owes no release:
	// nothing is left to release, and the situation does not arise.
	tr = newTrace().leader("c1", 1).at(time.Second).
		add(history.Event{Kind: history.KindLeader, Method: "lost", Instance: "c1", Epoch: 1}).
		at(2*time.Second).check("c1", 1, "not leader").
		at(3*time.Second).call("c1", MTryAcquire, "", "c1", "", dbDown)
	r = run(t, tr, nil, "gives-up-releases")
	require.Empty(t, r.Violations)
	require.Equal(t, NotExercise, r.Verdict("gives-up-releases"))

	// A crash ends what is owed: the process and its session are gone.
	tr = newTrace().leader("c1", 1).at(2*time.Second).check("c1", 1, dbDown).
		add(history.Event{Kind: history.KindCrash, Instance: "c1"}).
		at(5*time.Second).leader("c1", 2).check("c1", 2, "")
	r = run(t, tr, nil, "gives-up-releases")
	require.Empty(t, r.Violations)
}
