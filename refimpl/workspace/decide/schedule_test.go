package decide

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

func TestFleetSummaryAdd(t *testing.T) {
	cases := []struct {
		name     string
		w        *contracts.Workspace
		ops      int
		diverged int
	}{
		{"3: converged, idle → counts nothing", row(withObserved(contracts.ObservedRunning)), 0, 0},
		{"3: operation in progress → counts an operation", row(withObserved(contracts.ObservedRunning), withOp(contracts.OpStopping), withDesired(contracts.DesiredRunning)), 1, 0},
		{"3: operation in progress and diverged → counts both", row(withOp(contracts.OpProvisioning)), 1, 1},
		{"3: healthy desired ≠ observed → diverged", row(withObserved(contracts.ObservedStandby)), 0, 1},
		{"3: ERROR desired ≠ observed → not diverged", row(withObserved(contracts.ObservedStandby), withHealth(contracts.HealthError)), 0, 0},
		{"3: terminal error_info (health still OK) → not diverged", row(withObserved(contracts.ObservedStandby), withTerminal()), 0, 0},
		{"3: soft-deleted desired ≠ observed → not diverged", row(withObserved(contracts.ObservedStandby), withDeleted(), withDesired(contracts.DesiredPending)), 0, 0},
		{"3: soft-deleted with an operation → counts the operation", row(withObserved(contracts.ObservedStandby), withDeleted(), withOp(contracts.OpArchiving)), 1, 0},
		{"3: ERROR with DELETING in progress → counts the operation", row(withHealth(contracts.HealthError), withDeleted(), withOp(contracts.OpDeleting)), 1, 0},
		{"3: observed DELETED → counts nothing", row(withObserved(contracts.ObservedDeleted), withDeleted(), withOp(contracts.OpDeleting)), 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var f FleetSummary
			f.Add(tc.w)
			require.Equal(t, FleetSummary{OperationsInProgress: tc.ops, Diverged: tc.diverged}, f)
		})
	}
}

func TestAdaptivePeriod(t *testing.T) {
	cases := []struct {
		name  string
		fleet []*contracts.Workspace
		want  time.Duration
	}{
		{"3: empty fleet → 30 s", nil, 30 * time.Second},
		{"3: all converged → 30 s", []*contracts.Workspace{row(withObserved(contracts.ObservedRunning)), row(withDesired(contracts.DesiredPending))}, 30 * time.Second},
		{"3: only ERROR and deleted rows diverge → 30 s", []*contracts.Workspace{row(withObserved(contracts.ObservedStandby), withHealth(contracts.HealthError)), row(withObserved(contracts.ObservedStandby), withDeleted())}, 30 * time.Second},
		{"3: one healthy diverged → 5 s", []*contracts.Workspace{row(withObserved(contracts.ObservedRunning)), row(withObserved(contracts.ObservedStandby))}, 5 * time.Second},
		{"3: an operation in progress → 2 s", []*contracts.Workspace{row(withObserved(contracts.ObservedRunning)), row(withObserved(contracts.ObservedStandby), withOp(contracts.OpStarting))}, 2 * time.Second},
		{"3: operation beats divergence → 2 s", []*contracts.Workspace{row(withObserved(contracts.ObservedStandby)), row(withOp(contracts.OpProvisioning))}, 2 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var f FleetSummary
			for _, w := range tc.fleet {
				f.Add(w)
			}
			require.Equal(t, tc.want, AdaptivePeriod(f))
		})
	}
	require.Equal(t, 60*time.Second, PeriodTTL, "4.4: TTL Manager every 60 s")
	require.Equal(t, time.Hour, PeriodGC, "4.5: Archive GC every hour")
}
