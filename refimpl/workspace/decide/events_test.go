package decide

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

func TestDiverges(t *testing.T) {
	change := func(w *contracts.Workspace) *ports.Change {
		ch := ports.ChangeOf(w, t0)
		return &ch
	}
	cases := []struct {
		name string
		w    *contracts.Workspace
		want bool
	}{
		{"4.6: healthy, idle, desired RUNNING, observed PENDING → diverges", row(), true},
		{"4.6: converged → no hint", row(withObserved(contracts.ObservedRunning)), false},
		{"4.6: an operation in progress → no hint (the reconciler awaits it)", row(withOp(contracts.OpProvisioning)), false},
		{"4.6: health ERROR → no hint", row(withHealth(contracts.HealthError)), false},
		{"4.6: soft-deleted and converged otherwise → diverges", row(withObserved(contracts.ObservedRunning), withDeleted()), true},
		{"4.6: observed DELETED → no hint", row(withObserved(contracts.ObservedDeleted), withDeleted()), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Diverges(change(tc.w)))
		})
	}
}

func TestResyncs(t *testing.T) {
	since := t0.Add(time.Minute)
	for _, tc := range []struct {
		updated time.Time
		want    bool
	}{{t0, false}, {since.Add(-time.Nanosecond), false}, {since, true}, {since.Add(time.Second), true}} {
		w := row()
		w.UpdatedAt = tc.updated
		require.Equal(t, tc.want, Resyncs(w, since), "updated %s", tc.updated)
	}
}

// TestTTLReadsOnlyWhatTheDecisionReads: where TTLNeedsActivity says no,
// and where TTLNeedsIdleTimer says the timer does not matter, the
// decision is the same whatever the unread keys hold.
func TestTTLReadsOnlyWhatTheDecisionReads(t *testing.T) {
	now := t0.Add(48 * time.Hour)
	activities := []contracts.Activity{{}, {IdleTimerSet: true}, {Connections: 1}, {Connections: 2, IdleTimerSet: true}}
	n := 0
	for _, obs := range []contracts.ObservedStatus{contracts.ObservedPending, contracts.ObservedStandby, contracts.ObservedRunning, contracts.ObservedDeleted} {
		for _, d := range []contracts.DesiredState{contracts.DesiredRunning, contracts.DesiredStandby, contracts.DesiredPending} {
			w := row(withObserved(obs), withDesired(d), withLastAccess(t0))
			w.StandbyTTLSeconds, w.ArchiveTTLSeconds = 60, 3600
			to, ok := TTLDecision(w, contracts.Activity{}, now)
			for _, a := range activities {
				if !TTLNeedsActivity(w) {
					gto, gok := TTLDecision(w, a, now)
					require.Equal(t, ok, gok, "%s %s %+v", obs, d, a)
					require.Equal(t, to, gto)
				}
				if !TTLNeedsIdleTimer(a) {
					b := a
					b.IdleTimerSet = !a.IdleTimerSet
					ato, aok := TTLDecision(w, a, now)
					bto, bok := TTLDecision(w, b, now)
					require.Equal(t, aok, bok, "%s %s %+v", obs, d, a)
					require.Equal(t, ato, bto)
				}
				n++
			}
		}
	}
	require.Equal(t, 48, n)
	require.True(t, TTLNeedsActivity(row(withObserved(contracts.ObservedRunning))))
	require.True(t, TTLNeedsIdleTimer(contracts.Activity{}))
	require.False(t, TTLNeedsIdleTimer(contracts.Activity{Connections: 1}))
}

func TestHealthAfterReconcile(t *testing.T) {
	busy, idle := FleetSummary{OperationsInProgress: 1}, FleetSummary{Diverged: 3}
	early, late := t0.Add(2*time.Second), t0.Add(30*time.Second)
	require.Equal(t, early, HealthAfterReconcile(late, early, busy), "3: an operation in progress: the HealthMonitor no later than the reconciler")
	require.Equal(t, early, HealthAfterReconcile(early, late, busy), "an earlier HealthMonitor run stays")
	require.Equal(t, late, HealthAfterReconcile(late, early, idle), "nothing in progress: its own period")
}
