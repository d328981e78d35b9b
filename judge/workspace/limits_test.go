package workspace

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// insertOf adds an insert of owner's workspace id with desired state d.
func (tr *trace) insertOf(owner, id string, d contracts.DesiredState) *trace {
	w := contracts.NewWorkspace(id, owner, "n", "img", tr.now)
	w.DesiredState = d
	return tr.add(history.Event{Kind: history.KindInsert, Component: contracts.CompAPI, Workspace: id, Row: &w})
}

func (tr *trace) desire(id string, d contracts.DesiredState) *trace {
	return tr.write(contracts.CompAPI, "api", 0, id, nil, contracts.Patch{DesiredState: contracts.Some(d)})
}

// TestLimitsAmendedCounting: a workspace counts as soon as it is desired
// RUNNING (SPEC 4.3 as amended), so a third create by one user is over the
// per-user limit even though nothing runs yet.
func TestLimitsAmendedCounting(t *testing.T) {
	tr := newTrace().insertOf("alice", "a1", contracts.DesiredRunning).insertOf("alice", "a2", contracts.DesiredRunning).
		insertOf("alice", "a3", contracts.DesiredRunning)
	r := run(t, tr, nil, "limits")
	require.Len(t, r.Violations, 1)
	require.Equal(t, "a3", r.Violations[0].Subject)
	require.Contains(t, r.Violations[0].Message, "owner already at 2 of 2")
}

func TestLimitsAllowedHistory(t *testing.T) {
	tr := newTrace().insertOf("alice", "a1", contracts.DesiredRunning).
		insertOf("alice", "a2", contracts.DesiredStandby). // does not count
		insertOf("bob", "b1", contracts.DesiredRunning).
		add(history.Event{Kind: history.KindAPI, Method: "api.Create", Err: contracts.APILimitExceeded + ": per_user …"}).
		insertOf("alice", "a3", contracts.DesiredRunning) // a2 does not count: 1 of 2
	// A refused guarded write is recorded with the limit error and is
	// no acceptance.
	tr.add(history.Event{Kind: history.KindWrite, Component: contracts.CompAPI, Workspace: "a2", Applied: false,
		Patch: &contracts.Patch{DesiredState: contracts.Some(contracts.DesiredRunning)},
		Err:   (&contracts.LimitExceeded{LimitType: contracts.LimitPerUser, Current: 2, Max: 2}).Error()})
	r := run(t, tr, nil, "limits")
	require.Empty(t, r.Violations)
	require.Equal(t, 2, r.Exercised["limits"], "the 429 and the refused guarded write")
}

// TestLimitsPatchToRunning: a PATCH to RUNNING is judged with the
// workspace itself left out, and a workspace in ERROR does not count.
func TestLimitsPatchToRunning(t *testing.T) {
	tr := newTrace().insertOf("alice", "a1", contracts.DesiredRunning).insertOf("alice", "a2", contracts.DesiredStandby).
		insertOf("alice", "a3", contracts.DesiredStandby).
		desire("a2", contracts.DesiredRunning) // a1 + a2: at the limit, allowed
	require.Empty(t, run(t, tr, nil, "limits").Violations)

	tr.desire("a3", contracts.DesiredRunning) // a1 and a2 count: over
	r := run(t, tr, nil, "limits")
	require.Len(t, r.Violations, 1)
	require.Equal(t, "a3", r.Violations[0].Subject)

	ok := newTrace().insertOf("alice", "a1", contracts.DesiredRunning).insertOf("alice", "a3", contracts.DesiredStandby).
		write(contracts.CompHealthMonitor, "c1", 1, "a1", nil, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)}).
		insertOf("alice", "a2", contracts.DesiredRunning).
		desire("a3", contracts.DesiredRunning) // a1 is in ERROR: only a2 counts
	require.Empty(t, run(t, ok, nil, "limits").Violations)
}

func TestLimitsGlobal(t *testing.T) {
	tr := newTrace()
	for _, u := range []string{"u1", "u2", "u3"} {
		tr.insertOf(u, u+"-ws", contracts.DesiredRunning)
	}
	r := Check(Input{Events: tr.events, Limits: contracts.Limits{MaxRunningPerUser: 2, MaxRunningGlobal: 2}}, &limits{})
	require.Len(t, r.Violations, 1)
	require.Equal(t, "u3-ws", r.Violations[0].Subject)
	require.Contains(t, r.Violations[0].Message, "fleet already at 2 of 2")
}

// TestRejectedInsertIsNoRow: an insert recorded with an error never
// enters the replayed table.
func TestRejectedInsertIsNoRow(t *testing.T) {
	tr := newTrace().insertOf("alice", "a1", contracts.DesiredRunning)
	w := contracts.NewWorkspace("a2", "alice", "n", "img", t0)
	tr.add(history.Event{Kind: history.KindInsert, Workspace: "a2", Row: &w, Err: "duplicate"})
	tr.insertOf("alice", "a3", contracts.DesiredRunning)
	require.Empty(t, run(t, tr, nil, "limits").Violations)
}

// The checker keeps its count as writes apply; whatever the writes, it
// is the count contracts.RunningOthers makes over the whole table.
func TestLimitsCountMatchesARecount(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tr := newTrace()
		ids := []string{"a", "b", "c", "d", "e"}
		owners := []string{"u1", "u2"}
		for i := range rapid.IntRange(1, 40).Draw(t, "events") {
			id := rapid.SampledFrom(ids).Draw(t, "id")
			switch rapid.IntRange(0, 4).Draw(t, "kind") {
			case 0:
				tr.insertOf(rapid.SampledFrom(owners).Draw(t, "owner"), id,
					rapid.SampledFrom([]contracts.DesiredState{contracts.DesiredRunning, contracts.DesiredStandby}).Draw(t, "desired"))
			case 1:
				tr.desire(id, rapid.SampledFrom([]contracts.DesiredState{contracts.DesiredRunning, contracts.DesiredStandby}).Draw(t, "desired"))
			case 2:
				tr.observe(id, rapid.SampledFrom([]contracts.ObservedStatus{contracts.ObservedRunning, contracts.ObservedStandby}).Draw(t, "observed"))
			case 3:
				tr.write(contracts.CompHealthMonitor, "c1", 1, id, nil, contracts.Patch{HealthStatus: contracts.Some(
					rapid.SampledFrom([]contracts.HealthStatus{contracts.HealthOK, contracts.HealthError}).Draw(t, "health"))})
			case 4:
				tr.write(contracts.CompAPI, "api", 0, id, nil, contracts.Patch{DeletedAt: contracts.Some(t0.Add(time.Duration(i) * time.Second))})
			}
		}
		s, c := newState(), &limits{}
		for i := range tr.events {
			e := &tr.events[i]
			for _, owner := range owners {
				for _, id := range ids {
					wantMine, wantAll := contracts.RunningOthers(maps.Values(s.Rows), owner, id)
					mine, all := c.others(owner, id)
					slices.Sort(wantMine)
					require.Equal(t, wantAll, all, "event %d", i)
					require.Equal(t, wantMine, mine, "event %d", i)
				}
			}
			s.apply(e)
			c.AfterApply(s, e, nil)
		}
	})
}
