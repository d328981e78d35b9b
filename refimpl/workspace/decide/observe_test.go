package decide

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

// Observations by what exists.
var (
	obsNothing          = contracts.Observation{}
	obsVolume           = contracts.Observation{VolumeExists: true}
	obsStopped          = contracts.Observation{ContainerExists: true, VolumeExists: true}
	obsRunning          = contracts.Observation{ContainerExists: true, ContainerRunning: true, VolumeExists: true}
	obsOrphanContainer  = contracts.Observation{ContainerExists: true}
	obsRunningNoVolume  = contracts.Observation{ContainerExists: true, ContainerRunning: true}
	allObservationKinds = []contracts.Observation{obsNothing, obsVolume, obsStopped, obsRunning, obsOrphanContainer, obsRunningNoVolume}
)

func TestObserveStatus(t *testing.T) {
	cases := []struct {
		name    string
		deleted bool
		o       contracts.Observation
		want    contracts.ObservedStatus
	}{
		{"4.1 status rule 1: deleted, no container, no volume → DELETED", true, obsNothing, contracts.ObservedDeleted},
		{"4.1 status rule 1 fails on a volume: deleted with volume → STANDBY (rule 3)", true, obsVolume, contracts.ObservedStandby},
		{"4.1 status rule 1 fails on a stopped container: deleted, container only → PENDING (rule 4)", true, obsOrphanContainer, contracts.ObservedPending},
		{"4.1 status rule 1 fails on a running container: deleted → RUNNING (rule 2)", true, obsRunning, contracts.ObservedRunning},
		{"4.1 status rule 2: running container and volume → RUNNING, not STANDBY (rules 2 and 3 match)", false, obsRunning, contracts.ObservedRunning},
		{"4.1 status rule 2: running container without volume → RUNNING", false, obsRunningNoVolume, contracts.ObservedRunning},
		{"4.1 status rule 3: volume, no container → STANDBY", false, obsVolume, contracts.ObservedStandby},
		{"4.1 status rule 3: volume and stopped container → STANDBY", false, obsStopped, contracts.ObservedStandby},
		{"4.1 status rule 4: nothing, not deleted → PENDING", false, obsNothing, contracts.ObservedPending},
		{"4.1 status rule 4: stopped container without volume → PENDING", false, obsOrphanContainer, contracts.ObservedPending},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, ObserveStatus(tc.deleted, tc.o))
		})
	}
}

func TestObserveHealth(t *testing.T) {
	now := t0.Add(time.Minute)
	cases := []struct {
		name    string
		w       *contracts.Workspace
		o       contracts.Observation
		want    contracts.HealthStatus
		setInfo bool
	}{
		{"4.1 health rule 1: terminal error_info → ERROR", row(withObserved(contracts.ObservedStandby), withTerminal()), obsVolume, contracts.HealthError, false},
		{"4.1 health rule 1 before rule 2: terminal error_info and container without volume → ERROR, no new info", row(withTerminal()), obsOrphanContainer, contracts.HealthError, false},
		{"4.1 health rule 2: container without volume, error_info null → ERROR and set info once", row(withOp(contracts.OpStarting), withCount(1)), obsRunningNoVolume, contracts.HealthError, true},
		{"4.1 health rule 2: stopped container without volume → ERROR", row(), obsOrphanContainer, contracts.HealthError, true},
		{"4.1 health rule 2: error_info already set (retried) → ERROR, info untouched", row(withError(false, t0)), obsOrphanContainer, contracts.HealthError, false},
		{"4.1 health rule 3: container and volume → OK", row(), obsRunning, contracts.HealthOK, false},
		{"4.1 health rule 3: volume only → OK", row(), obsVolume, contracts.HealthOK, false},
		{"4.1 health rule 3: nothing → OK", row(), obsNothing, contracts.HealthOK, false},
		{"4.1 health rule 3: retried error_info is not terminal → OK", row(withHealth(contracts.HealthError), withError(false, t0)), obsVolume, contracts.HealthOK, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, info := ObserveHealth(tc.w, tc.o, now)
			require.Equal(t, tc.want, h)
			if !tc.setInfo {
				require.Nil(t, info)
				return
			}
			require.NotNil(t, info)
			require.Equal(t, contracts.ReasonMismatch, info.Reason)
			require.True(t, info.IsTerminal)
			require.Equal(t, contracts.ViolationContainerWithoutVolume, info.Context["violation"])
			require.Equal(t, now, info.OccurredAt)
			require.Equal(t, tc.w.Operation, info.Operation)
			require.Equal(t, tc.w.ErrorCount, info.ErrorCount)
			require.NotEmpty(t, info.Message)
			// The write is the C3 exception and nothing more.
			p := contracts.Patch{HealthStatus: contracts.Some(h), ErrorInfo: contracts.Some(info)}
			requireAllowed(t, contracts.CompHealthMonitor, tc.w, p)
		})
	}
}

func TestObservationPatch(t *testing.T) {
	now := t0.Add(time.Minute)
	cases := []struct {
		name string
		w    *contracts.Workspace
		o    contracts.Observation
		cols []contracts.Column
		want contracts.Workspace // the row after the patch (UpdatedAt aside)
	}{
		{
			"4.1: nothing changed → observed_at only",
			row(withObserved(contracts.ObservedStandby)), obsVolume,
			[]contracts.Column{contracts.ColObservedAt},
			*row(withObserved(contracts.ObservedStandby)),
		},
		{
			"4.1: status changed → observed_status and observed_at",
			row(withObserved(contracts.ObservedStandby)), obsRunning,
			[]contracts.Column{contracts.ColObservedStatus, contracts.ColObservedAt},
			*row(withObserved(contracts.ObservedRunning)),
		},
		{
			"4.1: health back to OK → health_status and observed_at",
			row(withObserved(contracts.ObservedStandby), withHealth(contracts.HealthError)), obsVolume,
			[]contracts.Column{contracts.ColHealthStatus, contracts.ColObservedAt},
			*row(withObserved(contracts.ObservedStandby)),
		},
		{
			"4.1: soft-deleted and gone → DELETED",
			row(withObserved(contracts.ObservedPending), withDeleted()), obsNothing,
			[]contracts.Column{contracts.ColObservedStatus, contracts.ColObservedAt},
			*row(withObserved(contracts.ObservedDeleted), withDeleted()),
		},
		{
			"4.1 + C3: container without volume → status, health, observed_at and the one-time error_info",
			row(withObserved(contracts.ObservedStandby)), obsRunningNoVolume,
			[]contracts.Column{contracts.ColObservedStatus, contracts.ColHealthStatus, contracts.ColObservedAt, contracts.ColErrorInfo},
			*row(withObserved(contracts.ObservedRunning), withHealth(contracts.HealthError)),
		},
		{
			"4.1: already ERROR with a terminal info → observed_at only",
			row(withObserved(contracts.ObservedStandby), withHealth(contracts.HealthError), withTerminal()), obsVolume,
			[]contracts.Column{contracts.ColObservedAt},
			*row(withObserved(contracts.ObservedStandby), withHealth(contracts.HealthError), withTerminal()),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := ObservationPatch(tc.w, tc.o, now)
			requireColumns(t, p, tc.cols...)
			require.Equal(t, now, p.ObservedAt.V)
			requireAllowed(t, contracts.CompHealthMonitor, tc.w, p)
			got := tc.w.Clone()
			p.Apply(&got, now)
			want := tc.want
			want.ObservedAt, want.UpdatedAt = now, now
			if p.ErrorInfo.Set {
				want.ErrorInfo = p.ErrorInfo.V
			}
			require.Equal(t, want, got)
		})
	}
}

func TestObservationPatchAlwaysStampsObservedAt(t *testing.T) {
	now := t0.Add(time.Hour)
	for _, o := range allObservationKinds {
		for _, s := range contracts.AllObserved {
			for _, deleted := range []bool{false, true} {
				w := row(withObserved(s))
				if deleted {
					withDeleted()(w)
				}
				p := ObservationPatch(w, o, now)
				require.True(t, p.ObservedAt.Set)
				require.Equal(t, now, p.ObservedAt.V)
				require.False(t, p.Operation.Set, "never writes operation")
				require.False(t, p.DesiredState.Set, "never writes desired_state")
				require.Equal(t, p.ObservedStatus.Set, ObserveStatus(deleted, o) != s)
			}
		}
	}
}

// ObservesOnly answers exactly what ObservationPatch's mask says, for every
// observation of every kind of row.
func TestObservesOnlyAgreesWithObservationPatch(t *testing.T) {
	now := t0.Add(time.Hour)
	infos := []*contracts.ErrorInfo{nil, {Reason: contracts.ReasonMismatch, IsTerminal: true}, {Reason: "Transient"}}
	for _, o := range allObservationKinds {
		for _, s := range contracts.AllObserved {
			for _, h := range []contracts.HealthStatus{contracts.HealthOK, contracts.HealthError} {
				for _, info := range infos {
					for _, deleted := range []bool{false, true} {
						w := row(withObserved(s))
						w.HealthStatus, w.ErrorInfo = h, info
						if deleted {
							withDeleted()(w)
						}
						p := ObservationPatch(w, o, now)
						require.Equal(t, p.Mask() == contracts.MaskObservedAt, ObservesOnly(w, o), "%+v %s %s %+v deleted %v", o, s, h, info, deleted)
					}
				}
			}
		}
	}
}

// TestObservationCond: the HealthMonitor's write that records error_info
// applies only while error_info is null (C3's exception); its other
// writes are unconditioned.
func TestObservationCond(t *testing.T) {
	now := t0.Add(time.Minute)
	for _, w := range []*contracts.Workspace{row(), row(withError(false, t0)), row(withTerminal()), row(withObserved(contracts.ObservedRunning))} {
		for _, o := range allObservationKinds {
			p := ObservationPatch(w, o, now)
			require.Equal(t, contracts.Cond{ErrorInfoNull: p.ErrorInfo.Set}, ObservationCond(p))
		}
	}
	p := ObservationPatch(row(withObserved(contracts.ObservedRunning)), obsOrphanContainer, now)
	require.True(t, p.ErrorInfo.Set, "a container without its volume records error_info")
	require.Equal(t, contracts.Cond{ErrorInfoNull: true}, ObservationCond(p))
	require.Equal(t, contracts.Cond{}, ObservationCond(ObservationPatch(row(), obsVolume, now)))
}
