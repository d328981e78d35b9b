package decide

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

func TestStandbyTTLExpired(t *testing.T) {
	// A RUNNING workspace last accessed at t0 with the default 300 s TTL.
	base := []wsOpt{withObserved(contracts.ObservedRunning)}
	idle := contracts.Activity{}
	cases := []struct {
		name    string
		extra   []wsOpt
		a       contracts.Activity
		after   time.Duration
		expired bool
	}{
		{"4.4 standby: every condition holds → expired", nil, idle, sec(301), true},
		{"4.4 standby: soft-deleted → not", []wsOpt{withDeleted()}, idle, sec(301), false},
		{"4.4 standby: observed STANDBY → not", []wsOpt{withObserved(contracts.ObservedStandby)}, idle, sec(301), false},
		{"4.4 standby: observed PENDING → not", []wsOpt{withObserved(contracts.ObservedPending)}, idle, sec(301), false},
		{"4.4 standby: health ERROR → not", []wsOpt{withHealth(contracts.HealthError)}, idle, sec(301), false},
		{"4.4 standby: operation in progress → not", []wsOpt{withOp(contracts.OpStopping)}, idle, sec(301), false},
		{"4.4 standby: an open connection → not", nil, contracts.Activity{Connections: 1}, sec(301), false},
		{"4.4 standby: idle timer set → not", nil, contracts.Activity{IdleTimerSet: true}, sec(301), false},
		{"4.4 standby: exactly the TTL → not expired", nil, idle, sec(300), false},
		{"4.4 standby: within the TTL → not", nil, idle, sec(10), false},
		{"4.4 standby: a shorter TTL column is honoured", []wsOpt{func(w *contracts.Workspace) { w.StandbyTTLSeconds = 60 }}, idle, sec(61), true},
		{"4.4 standby: a longer TTL column is honoured", []wsOpt{func(w *contracts.Workspace) { w.StandbyTTLSeconds = 600 }}, idle, sec(301), false},
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
	base := []wsOpt{withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredStandby)}
	cases := []struct {
		name    string
		extra   []wsOpt
		after   time.Duration
		expired bool
	}{
		{"4.4 archive: every condition holds → expired", nil, sec(86401), true},
		{"4.4 archive: soft-deleted → not", []wsOpt{withDeleted()}, sec(86401), false},
		{"4.4 archive: observed RUNNING → not", []wsOpt{withObserved(contracts.ObservedRunning)}, sec(86401), false},
		{"4.4 archive: observed PENDING → not", []wsOpt{withObserved(contracts.ObservedPending)}, sec(86401), false},
		{"4.4 archive: health ERROR → not", []wsOpt{withHealth(contracts.HealthError)}, sec(86401), false},
		{"4.4 archive: operation in progress → not", []wsOpt{withOp(contracts.OpStarting)}, sec(86401), false},
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
	w := row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredStandby))
	d, ok := TTLDecision(w, contracts.Activity{Connections: 3, IdleTimerSet: true}, t0.Add(sec(86401)))
	require.True(t, ok)
	require.Equal(t, contracts.DesiredPending, d)
}

func TestTTLDecision(t *testing.T) {
	cases := []struct {
		name  string
		w     *contracts.Workspace
		after time.Duration
		want  contracts.DesiredState
		ok    bool
	}{
		{"4.4: standby TTL expired, desired RUNNING → ask STANDBY", row(withObserved(contracts.ObservedRunning)), sec(301), contracts.DesiredStandby, true},
		{"4.4: standby TTL expired, desired already STANDBY → no request", row(withObserved(contracts.ObservedRunning), withDesired(contracts.DesiredStandby)), sec(301), "", false},
		{"4.4: standby TTL expired, desired already PENDING → no request (never raises)", row(withObserved(contracts.ObservedRunning), withDesired(contracts.DesiredPending)), sec(301), "", false},
		{"4.4: archive TTL expired, desired STANDBY → ask PENDING", row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredStandby)), sec(86401), contracts.DesiredPending, true},
		{"4.4: archive TTL expired, desired already PENDING → no request", row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredPending)), sec(86401), "", false},
		{"4.4: nothing expired → no request", row(withObserved(contracts.ObservedRunning)), sec(300), "", false},
		{"4.4: STANDBY past the standby TTL but not the archive TTL → no request", row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredStandby)), sec(301), "", false},
		{"4.4: PENDING is never a TTL target", row(withDesired(contracts.DesiredRunning)), sec(100000), "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := TTLDecision(tc.w, contracts.Activity{}, t0.Add(tc.after))
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
	acts := []contracts.Activity{{}, {Connections: 1}, {Connections: -1}, {IdleTimerSet: true}, {Connections: 2, IdleTimerSet: true}}
	for _, o := range contracts.AllObserved {
		for _, h := range []contracts.HealthStatus{contracts.HealthOK, contracts.HealthError} {
			for _, op := range contracts.AllOperations {
				for _, d := range []contracts.DesiredState{contracts.DesiredRunning, contracts.DesiredStandby, contracts.DesiredPending} {
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
