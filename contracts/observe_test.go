package contracts

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Observations by what exists.
var (
	obsNothing          = Observation{}
	obsVolume           = Observation{VolumeExists: true}
	obsStopped          = Observation{ContainerExists: true, VolumeExists: true}
	obsRunning          = Observation{ContainerExists: true, ContainerRunning: true, VolumeExists: true}
	obsOrphanContainer  = Observation{ContainerExists: true}
	obsRunningNoVolume  = Observation{ContainerExists: true, ContainerRunning: true}
	allObservationKinds = []Observation{obsNothing, obsVolume, obsStopped, obsRunning, obsOrphanContainer, obsRunningNoVolume}
)

func TestObserveStatus(t *testing.T) {
	cases := []struct {
		name    string
		deleted bool
		o       Observation
		want    ObservedStatus
	}{
		{"4.1 status rule 1: deleted, no container, no volume → DELETED", true, obsNothing, ObservedDeleted},
		{"4.1 status rule 1 fails on a volume: deleted with volume → STANDBY (rule 3)", true, obsVolume, ObservedStandby},
		{"4.1 status rule 1 fails on a stopped container: deleted, container only → PENDING (rule 4)", true, obsOrphanContainer, ObservedPending},
		{"4.1 status rule 1 fails on a running container: deleted → RUNNING (rule 2)", true, obsRunning, ObservedRunning},
		{"4.1 status rule 2: running container and volume → RUNNING, not STANDBY (rules 2 and 3 match)", false, obsRunning, ObservedRunning},
		{"4.1 status rule 2: running container without volume → RUNNING", false, obsRunningNoVolume, ObservedRunning},
		{"4.1 status rule 3: volume, no container → STANDBY", false, obsVolume, ObservedStandby},
		{"4.1 status rule 3: volume and stopped container → STANDBY", false, obsStopped, ObservedStandby},
		{"4.1 status rule 4: nothing, not deleted → PENDING", false, obsNothing, ObservedPending},
		{"4.1 status rule 4: stopped container without volume → PENDING", false, obsOrphanContainer, ObservedPending},
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
		w       *Workspace
		o       Observation
		want    HealthStatus
		setInfo bool
	}{
		{"4.1 health rule 1: terminal error_info → ERROR", row(withObserved(ObservedStandby), withTerminal()), obsVolume, HealthError, false},
		{"4.1 health rule 1 before rule 2: terminal error_info and container without volume → ERROR, no new info", row(withTerminal()), obsOrphanContainer, HealthError, false},
		{"4.1 health rule 2: container without volume, error_info null → ERROR and set info once", row(withOp(OpStarting), withCount(1)), obsRunningNoVolume, HealthError, true},
		{"4.1 health rule 2: stopped container without volume → ERROR", row(), obsOrphanContainer, HealthError, true},
		{"4.1 health rule 2: error_info already set (retried) → ERROR, info untouched", row(withError(false, t0)), obsOrphanContainer, HealthError, false},
		{"4.1 health rule 3: container and volume → OK", row(), obsRunning, HealthOK, false},
		{"4.1 health rule 3: volume only → OK", row(), obsVolume, HealthOK, false},
		{"4.1 health rule 3: nothing → OK", row(), obsNothing, HealthOK, false},
		{"4.1 health rule 3: retried error_info is not terminal → OK", row(withHealth(HealthError), withError(false, t0)), obsVolume, HealthOK, false},
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
			require.Equal(t, ReasonMismatch, info.Reason)
			require.True(t, info.IsTerminal)
			require.Equal(t, ViolationContainerWithoutVolume, info.Context["violation"])
			require.Equal(t, now, info.OccurredAt)
			require.Equal(t, tc.w.Operation, info.Operation)
			require.Equal(t, tc.w.ErrorCount, info.ErrorCount)
			require.NotEmpty(t, info.Message)
			// The write is the C3 exception and nothing more.
			p := Patch{HealthStatus: Some(h), ErrorInfo: Some(info)}
			requireAllowed(t, CompHealthMonitor, tc.w, p)
		})
	}
}

func TestObservationPatch(t *testing.T) {
	now := t0.Add(time.Minute)
	cases := []struct {
		name string
		w    *Workspace
		o    Observation
		cols []Column
		want Workspace // the row after the patch (UpdatedAt aside)
	}{
		{
			"4.1: nothing changed → observed_at only",
			row(withObserved(ObservedStandby)), obsVolume,
			[]Column{ColObservedAt},
			*row(withObserved(ObservedStandby)),
		},
		{
			"4.1: status changed → observed_status and observed_at",
			row(withObserved(ObservedStandby)), obsRunning,
			[]Column{ColObservedStatus, ColObservedAt},
			*row(withObserved(ObservedRunning)),
		},
		{
			"4.1: health back to OK → health_status and observed_at",
			row(withObserved(ObservedStandby), withHealth(HealthError)), obsVolume,
			[]Column{ColHealthStatus, ColObservedAt},
			*row(withObserved(ObservedStandby)),
		},
		{
			"4.1: soft-deleted and gone → DELETED",
			row(withObserved(ObservedPending), withDeleted()), obsNothing,
			[]Column{ColObservedStatus, ColObservedAt},
			*row(withObserved(ObservedDeleted), withDeleted()),
		},
		{
			"4.1 + C3: container without volume → status, health, observed_at and the one-time error_info",
			row(withObserved(ObservedStandby)), obsRunningNoVolume,
			[]Column{ColObservedStatus, ColHealthStatus, ColObservedAt, ColErrorInfo},
			*row(withObserved(ObservedRunning), withHealth(HealthError)),
		},
		{
			"4.1: already ERROR with a terminal info → observed_at only",
			row(withObserved(ObservedStandby), withHealth(HealthError), withTerminal()), obsVolume,
			[]Column{ColObservedAt},
			*row(withObserved(ObservedStandby), withHealth(HealthError), withTerminal()),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := ObservationPatch(tc.w, tc.o, now)
			requireColumns(t, p, tc.cols...)
			require.Equal(t, now, p.ObservedAt.V)
			requireAllowed(t, CompHealthMonitor, tc.w, p)
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
		for _, s := range AllObserved {
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
	infos := []*ErrorInfo{nil, {Reason: ReasonMismatch, IsTerminal: true}, {Reason: "Transient"}}
	for _, o := range allObservationKinds {
		for _, s := range AllObserved {
			for _, h := range []HealthStatus{HealthOK, HealthError} {
				for _, info := range infos {
					for _, deleted := range []bool{false, true} {
						w := row(withObserved(s))
						w.HealthStatus, w.ErrorInfo = h, info
						if deleted {
							withDeleted()(w)
						}
						p := ObservationPatch(w, o, now)
						require.Equal(t, p.Mask() == MaskObservedAt, ObservesOnly(w, o), "%+v %s %s %+v deleted %v", o, s, h, info, deleted)
					}
				}
			}
		}
	}
}
