package contracts

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckLimits(t *testing.T) {
	l := DefaultLimits
	require.Equal(t, Limits{MaxRunningPerUser: 2, MaxRunningGlobal: 100}, l, "4.3 defaults")
	cases := []struct {
		name   string
		user   []string
		global int
		want   *LimitExceeded
	}{
		{"4.3: nothing running → allowed", nil, 0, nil},
		{"4.3: one below the per-user max → allowed", []string{"a"}, 1, nil},
		{"4.3: per-user exactly at the max → 429 per_user", []string{"a", "b"}, 2,
			&LimitExceeded{LimitType: "per_user", Current: 2, Max: 2, RunningWorkspaces: []string{"a", "b"}}},
		{"4.3: per-user checked first when both are exceeded", []string{"a", "b"}, 100,
			&LimitExceeded{LimitType: "per_user", Current: 2, Max: 2, RunningWorkspaces: []string{"a", "b"}}},
		{"4.3: one below the global max → allowed", []string{"a"}, 99, nil},
		{"4.3: global exactly at the max → 429 global, no running list", []string{"a"}, 100,
			&LimitExceeded{LimitType: "global", Current: 100, Max: 100}},
		{"4.3: global past the max (soft limit overshoot) → 429 global", nil, 101,
			&LimitExceeded{LimitType: "global", Current: 101, Max: 100}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, CheckLimits(l, tc.user, tc.global))
		})
	}
}

func TestCheckLimitsCopiesTheRunningList(t *testing.T) {
	user := []string{"a", "b"}
	e := CheckLimits(DefaultLimits, user, 2)
	require.NotNil(t, e)
	user[0] = "changed"
	require.Equal(t, []string{"a", "b"}, e.RunningWorkspaces)
	require.Equal(t, "per_user running-workspace limit reached: 2 of 2", e.Error())
}

func TestLimitExceededJSON(t *testing.T) {
	perUser, err := json.Marshal(&LimitExceeded{LimitType: "per_user", Current: 2, Max: 2, RunningWorkspaces: []string{"a", "b"}})
	require.NoError(t, err)
	require.JSONEq(t, `{"limit_type":"per_user","current":2,"max":2,"running_workspaces":["a","b"]}`, string(perUser))
	global, err := json.Marshal(&LimitExceeded{LimitType: "global", Current: 100, Max: 100})
	require.NoError(t, err)
	require.JSONEq(t, `{"limit_type":"global","current":100,"max":100}`, string(global), "running_workspaces for per_user only")
}

func TestCountsRunning(t *testing.T) {
	cases := []struct {
		name   string
		w      *Workspace
		counts bool
	}{
		{"4.3: observed RUNNING, health OK, live → counts", row(withObserved(ObservedRunning), withDesired(DesiredStandby)), true},
		{"4.3 amended: desired RUNNING, still PENDING → counts", row(), true},
		{"4.3 amended: desired RUNNING, STANDBY → counts", row(withObserved(ObservedStandby)), true},
		{"4.3: STANDBY, desired STANDBY → does not count", row(withObserved(ObservedStandby), withDesired(DesiredStandby)), false},
		{"4.3: PENDING, desired PENDING → does not count", row(withDesired(DesiredPending)), false},
		{"4.3: RUNNING in ERROR → does not count", row(withObserved(ObservedRunning), withHealth(HealthError)), false},
		{"4.3: desired RUNNING in ERROR → does not count", row(withHealth(HealthError)), false},
		{"4.3: RUNNING soft-deleted → does not count", row(withObserved(ObservedRunning), withDeleted()), false},
		{"4.3: RUNNING with an operation still counts", row(withObserved(ObservedRunning), withOp(OpStopping), withDesired(DesiredStandby)), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.counts, CountsRunning(tc.w))
		})
	}
}

func TestLimitsOrDefaults(t *testing.T) {
	require.Equal(t, DefaultLimits, Limits{}.OrDefaults())
	require.Equal(t, Limits{MaxRunningPerUser: 5, MaxRunningGlobal: 100}, Limits{MaxRunningPerUser: 5, MaxRunningGlobal: -1}.OrDefaults())
	require.Equal(t, Limits{MaxRunningPerUser: 2, MaxRunningGlobal: 7}, Limits{MaxRunningGlobal: 7}.OrDefaults())
}

// TestCheckGuard: the guard counts the others that count (desired or
// observed RUNNING, health OK, live), never the row being written.
func TestCheckGuard(t *testing.T) {
	l := Limits{MaxRunningPerUser: 2, MaxRunningGlobal: 3}
	mk := func(id, owner string, opts ...wsOpt) *Workspace {
		w := row(append([]wsOpt{withOwner(owner)}, opts...)...)
		w.ID = id
		return w
	}
	rows := []*Workspace{
		mk("a1", "alice"), // desired RUNNING: counts
		mk("a2", "alice", withDesired(DesiredStandby)),                                // does not count
		mk("a3", "alice", withHealth(HealthError)),                                    // ERROR: does not count
		mk("b1", "bob", withObserved(ObservedRunning)),                                // counts
		mk("b2", "bob", withDeleted()),                                                // soft-deleted: does not count
		mk("c1", "carol", withDesired(DesiredStandby), withObserved(ObservedRunning)), // counts
	}
	seq := slices.Values(rows)

	mine, all := RunningOthers(seq, "alice", "new")
	require.Equal(t, []string{"a1"}, mine)
	require.Equal(t, 3, all)

	require.Equal(t, &LimitExceeded{LimitType: LimitGlobal, Current: 3, Max: 3}, CheckGuard(l, "alice", "new", seq),
		"a fourth running workspace is over the global limit")
	require.Nil(t, CheckGuard(l, "alice", "a1", seq), "the written row itself is never counted")
	require.Nil(t, CheckGuard(l, "carol", "c1", seq))

	l.MaxRunningGlobal = 10
	rows = append(rows, mk("a4", "alice", withObserved(ObservedRunning)))
	require.Equal(t, &LimitExceeded{LimitType: LimitPerUser, Current: 2, Max: 2, RunningWorkspaces: []string{"a1", "a4"}},
		CheckGuard(l, "alice", "a2", slices.Values(rows)), "per user first, listing the owner's running workspaces")
	require.Nil(t, CheckGuard(l, "bob", "b2", slices.Values(rows)))
}
