package contracts

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestStandbyTTLExpired(t *testing.T) {
	// A RUNNING workspace last accessed at t0 with the default 300 s TTL.
	base := []wsOpt{withObserved(ObservedRunning)}
	idle := Activity{}
	cases := []struct {
		name    string
		extra   []wsOpt
		a       Activity
		after   time.Duration
		expired bool
	}{
		{"4.4 standby: every condition holds → expired", nil, idle, sec(301), true},
		{"4.4 standby: soft-deleted → not", []wsOpt{withDeleted()}, idle, sec(301), false},
		{"4.4 standby: observed STANDBY → not", []wsOpt{withObserved(ObservedStandby)}, idle, sec(301), false},
		{"4.4 standby: observed PENDING → not", []wsOpt{withObserved(ObservedPending)}, idle, sec(301), false},
		{"4.4 standby: health ERROR → not", []wsOpt{withHealth(HealthError)}, idle, sec(301), false},
		{"4.4 standby: operation in progress → not", []wsOpt{withOp(OpStopping)}, idle, sec(301), false},
		{"4.4 standby: an open connection → not", nil, Activity{Connections: 1}, sec(301), false},
		{"4.4 standby: idle timer set → not", nil, Activity{IdleTimerSet: true}, sec(301), false},
		{"4.4 standby: exactly the TTL → not expired", nil, idle, sec(300), false},
		{"4.4 standby: within the TTL → not", nil, idle, sec(10), false},
		{"4.4 standby: a shorter TTL column is honoured", []wsOpt{func(w *Workspace) { w.StandbyTTLSeconds = 60 }}, idle, sec(61), true},
		{"4.4 standby: a longer TTL column is honoured", []wsOpt{func(w *Workspace) { w.StandbyTTLSeconds = 600 }}, idle, sec(301), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := row(append(append([]wsOpt{}, base...), tc.extra...)...)
			require.Equal(t, tc.expired, StandbyTTLExpired(w, tc.a, t0.Add(tc.after)))
		})
	}
}

func TestArchiveTTLExpired(t *testing.T) {
	// A STANDBY workspace last accessed at t0 with the default 86400 s TTL.
	base := []wsOpt{withObserved(ObservedStandby), withDesired(DesiredStandby)}
	cases := []struct {
		name    string
		extra   []wsOpt
		after   time.Duration
		expired bool
	}{
		{"4.4 archive: every condition holds → expired", nil, sec(86401), true},
		{"4.4 archive: soft-deleted → not", []wsOpt{withDeleted()}, sec(86401), false},
		{"4.4 archive: observed RUNNING → not", []wsOpt{withObserved(ObservedRunning)}, sec(86401), false},
		{"4.4 archive: observed PENDING → not", []wsOpt{withObserved(ObservedPending)}, sec(86401), false},
		{"4.4 archive: health ERROR → not", []wsOpt{withHealth(HealthError)}, sec(86401), false},
		{"4.4 archive: operation in progress → not", []wsOpt{withOp(OpStarting)}, sec(86401), false},
		{"4.4 archive: exactly the TTL → not expired", nil, sec(86400), false},
		{"4.4 archive: within the TTL → not", nil, sec(3600), false},
		{"4.4 archive: a recent last_access_at postpones it", []wsOpt{withLastAccess(t0.Add(time.Hour))}, sec(86401), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := row(append(append([]wsOpt{}, base...), tc.extra...)...)
			require.Equal(t, tc.expired, ArchiveTTLExpired(w, t0.Add(tc.after)))
		})
	}
}

func TestArchiveTTLIgnoresConnections(t *testing.T) {
	// The archive rule reads no activity: only last_access_at.
	w := row(withObserved(ObservedStandby), withDesired(DesiredStandby))
	d, ok := TTLDecision(w, Activity{Connections: 3, IdleTimerSet: true}, t0.Add(sec(86401)))
	require.True(t, ok)
	require.Equal(t, DesiredPending, d)
}

func TestTTLDecision(t *testing.T) {
	cases := []struct {
		name  string
		w     *Workspace
		after time.Duration
		want  DesiredState
		ok    bool
	}{
		{"4.4: standby TTL expired, desired RUNNING → ask STANDBY", row(withObserved(ObservedRunning)), sec(301), DesiredStandby, true},
		{"4.4: standby TTL expired, desired already STANDBY → no request", row(withObserved(ObservedRunning), withDesired(DesiredStandby)), sec(301), "", false},
		{"4.4: standby TTL expired, desired already PENDING → no request (never raises)", row(withObserved(ObservedRunning), withDesired(DesiredPending)), sec(301), "", false},
		{"4.4: archive TTL expired, desired STANDBY → ask PENDING", row(withObserved(ObservedStandby), withDesired(DesiredStandby)), sec(86401), DesiredPending, true},
		{"4.4: archive TTL expired, desired already PENDING → no request", row(withObserved(ObservedStandby), withDesired(DesiredPending)), sec(86401), "", false},
		{"4.4: nothing expired → no request", row(withObserved(ObservedRunning)), sec(300), "", false},
		{"4.4: STANDBY past the standby TTL but not the archive TTL → no request", row(withObserved(ObservedStandby), withDesired(DesiredStandby)), sec(301), "", false},
		{"4.4: PENDING is never a TTL target", row(withDesired(DesiredRunning)), sec(100000), "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := TTLDecision(tc.w, Activity{}, t0.Add(tc.after))
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, d)
			if ok {
				_, err := CheckDesiredChange(tc.w, d)
				require.Nil(t, err, "the TTL request passes the API's rules")
			}
		})
	}
}

func TestTTLDueSelectsEveryDecision(t *testing.T) {
	// TTLDue is TTLDecision without the activity: true whenever some
	// activity makes TTLDecision ask for a change, false only when none
	// does.
	acts := []Activity{{}, {Connections: 1}, {Connections: -1}, {IdleTimerSet: true}, {Connections: 2, IdleTimerSet: true}}
	for _, o := range AllObserved {
		for _, h := range []HealthStatus{HealthOK, HealthError} {
			for _, op := range AllOperations {
				for _, d := range []DesiredState{DesiredRunning, DesiredStandby, DesiredPending} {
					for _, del := range []bool{false, true} {
						for _, after := range []time.Duration{sec(10), sec(300), sec(301), sec(86400), sec(86401)} {
							w := row(withObserved(o), withHealth(h), withOp(op), withDesired(d))
							if del {
								withDeleted()(w)
							}
							now := t0.Add(after)
							some := false
							for _, a := range acts {
								_, ok := TTLDecision(w, a, now)
								some = some || ok
							}
							require.Equal(t, some, TTLDue(w, now), "%+v after %s", w, after)
						}
					}
				}
			}
		}
	}
}
