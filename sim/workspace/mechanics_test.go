package workspace

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
	refapi "github.com/wsconverge/converge/refimpl/workspace/api"
	"github.com/wsconverge/converge/sim/engine"
)

// probe is a minimal real coordinator: each Step it takes or checks the
// leader lock and, while leading, lists the store. It remembers when it
// was stepped so the tests can see the simulator's scheduling.
type probe struct {
	deps     ports.Deps
	interval time.Duration
	lease    ports.Lease
	steps    []time.Time
	lastErr  error
}

func (c *probe) Step(ctx context.Context) (time.Time, error) {
	now := c.deps.Clock.Now()
	c.steps = append(c.steps, now)
	if c.lease == nil {
		l, ok, err := c.deps.Leadership.TryAcquire(ctx, c.deps.Instance)
		c.lastErr = err
		if errors.Is(err, contracts.ErrCrashed) {
			return time.Time{}, err
		}
		if ok {
			c.lease = l
		}
	} else if err := c.lease.Check(ctx); err != nil {
		c.lastErr = err
		if errors.Is(err, contracts.ErrCrashed) {
			return time.Time{}, err
		}
		c.lease = nil
	}
	if c.lease != nil {
		if _, err := c.deps.Store.List(ctx, contracts.FilterActive); err != nil {
			return time.Time{}, err
		}
	}
	return now.Add(c.interval), nil
}

func (c *probe) IsLeader() bool { return c.lease != nil }

func (c *probe) Close(ctx context.Context) error {
	if c.lease != nil {
		return c.lease.Release(ctx)
	}
	return nil
}

// probeSystem builds probes (and the reference API, which the probes never
// need but a System must have).
type probeSystem struct {
	interval time.Duration
	built    map[string][]*probe
}

func newProbeSystem(interval time.Duration) *probeSystem {
	return &probeSystem{interval: interval, built: map[string][]*probe{}}
}

func (p *probeSystem) Name() string { return "probe" }

func (p *probeSystem) NewCoordinator(d ports.Deps) (ports.Coordinator, error) {
	c := &probe{deps: d, interval: p.interval}
	p.built[d.Instance] = append(p.built[d.Instance], c)
	return c, nil
}

func (p *probeSystem) NewAPI(d ports.Deps) (ports.API, error) { return refapi.New(d), nil }

func (p *probeSystem) last(name string) *probe {
	b := p.built[name]
	return b[len(b)-1]
}

func newProbeSim(t *testing.T, interval time.Duration) (*Sim, *probeSystem) {
	t.Helper()
	sys := newProbeSystem(interval)
	s, err := New(Config{Seed: 1, System: sys, Workload: Workload{Disabled: true}})
	require.NoError(t, err)
	return s, sys
}

func eventsOf(s *Sim, kind history.Kind) []history.Event {
	var out []history.Event
	for _, e := range s.History().Events() {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func TestFirstInstanceLeadsAndStepsFollowTheirNext(t *testing.T) {
	s, sys := newProbeSim(t, time.Second)
	require.Equal(t, []string{"coord-1", "coord-2"}, s.Instances())
	require.NoError(t, s.RunFor(2500*time.Millisecond))

	require.Equal(t, []string{"coord-1"}, s.Leaders())
	require.Equal(t, "coord-1", s.World().Store.Holder())
	start := s.Start()
	want := []time.Time{start, start.Add(time.Second), start.Add(2 * time.Second)}
	require.Equal(t, want, sys.last("coord-1").steps)
	require.Equal(t, want, sys.last("coord-2").steps)
	require.Equal(t, start.Add(2500*time.Millisecond), s.Now(), "RunFor moves the clock to the end")
}

func TestStepsAreClampedToTheMinimumInterval(t *testing.T) {
	s, sys := newProbeSim(t, 0) // a coordinator that asks to run again at once
	require.NoError(t, s.RunFor(time.Second))
	steps := sys.last("coord-1").steps
	require.Len(t, steps, 11, "one step every 100 ms from 0 to 1 s inclusive")
	for i := 1; i < len(steps); i++ {
		require.Equal(t, MinStepInterval, steps[i].Sub(steps[i-1]))
	}
}

func TestCrashFailsPortsStopsStepsAndReleasesTheLock(t *testing.T) {
	s, sys := newProbeSim(t, time.Second)
	require.NoError(t, s.RunFor(500*time.Millisecond))
	old := sys.last("coord-1")
	epoch := s.World().Store.Epoch()

	s.Crash("coord-1")
	require.False(t, s.Alive("coord-1"))
	require.Empty(t, s.World().Store.Holder(), "a dead process's session ends")
	_, err := old.deps.Store.Get(context.Background(), "x")
	require.ErrorIs(t, err, contracts.ErrCrashed)
	_, _, err = old.deps.Leadership.TryAcquire(context.Background(), "coord-1")
	require.ErrorIs(t, err, contracts.ErrCrashed)
	crashes := eventsOf(s, history.KindCrash)
	require.Len(t, crashes, 1)
	require.Equal(t, "coord-1", crashes[0].Instance)

	stepsAtCrash := len(old.steps)
	require.NoError(t, s.RunFor(3*time.Second))
	require.Len(t, old.steps, stepsAtCrash, "a crashed instance is never stepped again")
	require.Equal(t, []string{"coord-2"}, s.Leaders())
	require.Equal(t, epoch+1, s.World().Store.Epoch())

	s.Crash("coord-1") // crashing a dead instance does nothing
	require.Len(t, eventsOf(s, history.KindCrash), 1)
	require.Panics(t, func() { s.Crash("coord-9") })
}

func TestRestartBuildsAFreshInstanceOnANewSession(t *testing.T) {
	s, sys := newProbeSim(t, time.Second)
	require.NoError(t, s.RunFor(500*time.Millisecond))
	s.Crash("coord-1")
	require.NoError(t, s.RunFor(time.Second))
	require.Equal(t, []string{"coord-2"}, s.Leaders())

	require.NoError(t, s.Restart("coord-1"))
	require.True(t, s.Alive("coord-1"))
	require.Len(t, sys.built["coord-1"], 2)
	fresh := sys.last("coord-1")
	require.NotSame(t, sys.built["coord-1"][0], fresh)
	require.NoError(t, s.RunFor(100*time.Millisecond))
	require.Equal(t, []time.Time{s.Start().Add(1500 * time.Millisecond)}, fresh.steps, "stepped at once")
	require.False(t, fresh.IsLeader(), "coord-2 still holds the lock")
	require.NoError(t, fresh.lastErr, "the new session works")

	// Restarting a live instance crashes it first.
	require.NoError(t, s.Restart("coord-2"))
	require.Len(t, sys.built["coord-2"], 2)
	require.NoError(t, s.RunFor(2*time.Second))
	require.Len(t, s.Leaders(), 1)
	var methods []string
	for _, e := range eventsOf(s, history.KindCrash) {
		methods = append(methods, e.Instance+":"+e.Method)
	}
	require.Equal(t, []string{"coord-1:crash", "coord-1:restart", "coord-2:crash", "coord-2:restart"}, methods)
}

func TestKillSessionLeavesTheInstanceRunningToNoticeIt(t *testing.T) {
	s, sys := newProbeSim(t, time.Second)
	require.NoError(t, s.RunFor(500*time.Millisecond))
	leader := sys.last("coord-1")
	require.True(t, leader.IsLeader())

	s.KillSession("coord-1")
	require.True(t, s.Alive("coord-1"))
	require.Empty(t, s.World().Store.Holder())
	require.True(t, leader.IsLeader(), "it has not noticed yet")

	require.NoError(t, s.RunFor(time.Second))
	require.False(t, leader.IsLeader(), "its lease check failed")
	require.ErrorIs(t, leader.lastErr, contracts.ErrNotLeader)
	require.Equal(t, []string{"coord-2"}, s.Leaders())
	require.True(t, s.Alive("coord-1"))
	require.Len(t, eventsOf(s, history.KindFault), 1)
}

func TestCrashAtCallDropsTheInstanceAtThatCall(t *testing.T) {
	s, sys := newProbeSim(t, time.Second)
	require.NoError(t, s.RunFor(500*time.Millisecond))
	before := s.Calls("coord-1")
	require.Positive(t, before)

	s.CrashAtCall("coord-1", 2) // the lease check succeeds, the List fails
	require.NoError(t, s.RunFor(time.Second))
	require.False(t, s.Alive("coord-1"))
	require.Equal(t, before+2, s.Calls("coord-1"))
	crash := eventsOf(s, history.KindCrash)
	require.Len(t, crash, 1)
	require.Contains(t, crash[0].Args, "crashed at port call")
	require.Len(t, sys.last("coord-1").steps, 2)
	require.NoError(t, s.RunFor(2*time.Second))
	require.Equal(t, []string{"coord-2"}, s.Leaders())
}

func TestScriptedEventsRunInTimeThenSchedulingOrder(t *testing.T) {
	s, _ := newProbeSim(t, time.Hour)
	var order []string
	at := s.Start().Add(time.Minute)
	s.Schedule(at, "second", func(*Sim) { order = append(order, "b") })
	s.After(30*time.Second, "", func(*Sim) { order = append(order, "a") })
	s.Schedule(at, "third", func(x *Sim) {
		order = append(order, "c")
		require.Equal(t, at, x.Now(), "the clock is at the event's time")
		x.After(0, "", func(*Sim) { order = append(order, "d") })
	})
	require.NoError(t, s.RunUntil(at))
	require.Equal(t, []string{"a", "b", "c", "d"}, order)
	notes := eventsOf(s, history.KindNote)
	require.Len(t, notes, 2)
	require.Equal(t, "second", notes[0].Method)
}

func TestRunUntilCondStopsWhenThePredicateHolds(t *testing.T) {
	s, _ := newProbeSim(t, time.Second)
	ok, err := s.RunUntilCond(func(x *Sim) bool { return x.Elapsed() >= 3*time.Second }, time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 3*time.Second, s.Elapsed(), "stops at the event that made it hold")

	ok, err = s.RunUntilCond(func(*Sim) bool { return false }, 10*time.Second)
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, 13*time.Second, s.Elapsed(), "runs out the limit")
}

func TestRunStopsOnCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, Config{Seed: 1, System: newProbeSystem(0), Workload: Workload{Disabled: true}, Duration: time.Hour})
	require.ErrorIs(t, err, context.Canceled)
}

func TestConfigValidation(t *testing.T) {
	_, err := New(Config{})
	require.ErrorContains(t, err, "System is required")
	for name, bad := range map[string]Config{
		"workspaces":   {Workspaces: -1},
		"huge fleet":   {Workspaces: MaxWorkspaces + 1},
		"duration":     {Duration: MaxDuration + time.Hour},
		"quiet":        {Quiet: -time.Second},
		"coordinators": {Coordinators: MaxCoordinators + 1},
		"fault rate":   {Faults: FaultMix{Kinds: FaultKinds(), Rate: math.NaN()}},
		"limits":       {Limits: contracts.Limits{MaxRunningPerUser: -1, MaxRunningGlobal: 3}},
		"deletes":      {Workload: Workload{DeletesPerDay: math.Inf(1)}},
		"plan kind":    {Duration: time.Hour, Plan: &Plan{Actions: []Action{{Kind: "meteor"}}}},
		"plan pick":    {Duration: time.Hour, Plan: &Plan{Actions: []Action{{Kind: FaultKillContainer, Pick: -1}}}},
		"plan time":    {Duration: time.Hour, Plan: &Plan{Actions: []Action{{Kind: FaultFlushRedis, At: 2 * time.Hour}}}},
		"plan percent": {Duration: time.Hour, Plan: &Plan{Actions: []Action{{Kind: FaultOutage, Method: "storage", Percent: 101}}}},
		"plan code":    {Duration: time.Hour, Plan: &Plan{Actions: []Action{{Kind: FaultOutage, Method: "storage", Code: "NOPE"}}}},
		"plan method":  {Duration: time.Hour, Plan: &Plan{Actions: []Action{{Kind: FaultOutage, Method: "moon.Land"}}}},
	} {
		bad.System = newProbeSystem(time.Second)
		_, err = New(bad)
		require.ErrorIs(t, err, engine.ErrBadInput, name)
	}

	s, err := New(Config{System: newProbeSystem(time.Second), Workspaces: 300})
	require.NoError(t, err)
	cfg := s.Config()
	require.Equal(t, DefaultStart, cfg.Start)
	require.Equal(t, DefaultCoordinators, cfg.Coordinators)
	require.Equal(t, contracts.Limits{MaxRunningPerUser: 2, MaxRunningGlobal: 300}, cfg.Limits)
	require.Equal(t, 100, cfg.Workload.Users)
}

func TestRestartDelayBringsACrashedInstanceBack(t *testing.T) {
	sys := newProbeSystem(time.Second)
	s, err := New(Config{Seed: 1, System: sys, Workload: Workload{Disabled: true}, RestartDelay: 10 * time.Second})
	require.NoError(t, err)
	require.NoError(t, s.RunFor(500*time.Millisecond))
	s.Crash("coord-1")
	require.NoError(t, s.RunFor(9*time.Second))
	require.False(t, s.Alive("coord-1"))
	require.NoError(t, s.RunFor(time.Second))
	require.True(t, s.Alive("coord-1"))
	require.Len(t, sys.built["coord-1"], 2)
	require.Equal(t, []time.Time{s.Start().Add(10500 * time.Millisecond)}, sys.last("coord-1").steps)

	// A script that restarts it first wins; the supervisor does not
	// restart it twice.
	s.Crash("coord-1")
	require.NoError(t, s.Restart("coord-1"))
	require.NoError(t, s.RunFor(time.Minute))
	require.Len(t, sys.built["coord-1"], 3)
}
