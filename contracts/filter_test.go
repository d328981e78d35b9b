package contracts

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFilterMatch(t *testing.T) {
	cases := []struct {
		name  string
		f     Filter
		w     *Workspace
		match bool
	}{
		{"all: a live row", FilterAll, row(), true},
		{"all: a DELETED row", FilterAll, row(withObserved(ObservedDeleted), withDeleted()), true},

		{"active: live row", FilterActive, row(withObserved(ObservedRunning)), true},
		{"active: soft-deleted, not yet DELETED", FilterActive, row(withDeleted()), true},
		{"active: DELETED excluded", FilterActive, row(withObserved(ObservedDeleted), withDeleted()), false},

		{"reconcile: converged healthy row excluded", FilterReconcile, row(withObserved(ObservedRunning)), false},
		{"reconcile: observed ≠ desired", FilterReconcile, row(), true},
		{"reconcile: operation in progress", FilterReconcile, row(withObserved(ObservedRunning), withOp(OpStopping)), true},
		{"reconcile: operation in progress even when DELETED", FilterReconcile, row(withObserved(ObservedDeleted), withDeleted(), withOp(OpDeleting)), true},
		{"reconcile: health ERROR, converged", FilterReconcile, row(withObserved(ObservedRunning), withHealth(HealthError)), true},
		{"reconcile: error_info set, converged", FilterReconcile, row(withObserved(ObservedRunning), withError(false, t0)), true},
		{"reconcile: soft-deleted PENDING == PENDING", FilterReconcile, row(withDeleted(), withDesired(DesiredPending)), true},
		{"reconcile: DELETED without operation excluded", FilterReconcile, row(withObserved(ObservedDeleted), withDeleted(), withHealth(HealthError), withTerminal()), false},

		{"ttl: RUNNING OK NONE live", FilterTTL, row(withObserved(ObservedRunning)), true},
		{"ttl: STANDBY OK NONE live", FilterTTL, row(withObserved(ObservedStandby)), true},
		{"ttl: PENDING excluded", FilterTTL, row(), false},
		{"ttl: ERROR excluded", FilterTTL, row(withObserved(ObservedRunning), withHealth(HealthError)), false},
		{"ttl: operation excluded", FilterTTL, row(withObserved(ObservedRunning), withOp(OpStopping)), false},
		{"ttl: soft-deleted excluded", FilterTTL, row(withObserved(ObservedRunning), withDeleted()), false},

		{"running: RUNNING OK live", FilterRunning, row(withObserved(ObservedRunning)), true},
		{"running: STANDBY desired STANDBY excluded", FilterRunning, row(withObserved(ObservedStandby), withDesired(DesiredStandby)), false},
		{"running: STANDBY desired RUNNING counts (4.3 amended)", FilterRunning, row(withObserved(ObservedStandby)), true},
		{"running: ERROR excluded", FilterRunning, row(withObserved(ObservedRunning), withHealth(HealthError)), false},
		{"running: soft-deleted excluded", FilterRunning, row(withObserved(ObservedRunning), withDeleted()), false},

		{"unknown filter matches nothing", Filter(99), row(), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.match, tc.f.Match(tc.w))
		})
	}
}
