package workspace

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
	"github.com/wsconverge/converge/sim/engine"
)

// Sim is one simulated run: the world, the coordinator instances of the
// system under test, its API, the user workload and the event queue. It is
// single-threaded: every method must be called from one goroutine, between
// events (scenario code and scripted events run between them too).
type Sim struct {
	cfg   Config
	clock *wsfakes.Clock
	rec   *history.Recorder
	world *wsfakes.World
	api   *recordedAPI
	loop  engine.Loop[event]

	insts  []*instance
	byName map[string]*instance

	work *workload

	// ctx is the context of the run in progress (Background outside Run).
	ctx      context.Context
	apiCalls int
	acct     accounting
	edges    edges
	sinks    []func(history.Event)
	failures []string

	// plan is the run's explicit plan of faults (and scripted actions).
	plan   *Plan
	faults *faults
	// quiet: the quiet phase has begun (BeginQuiet), quietAt after that
	// much virtual time.
	quiet   bool
	quietAt time.Duration
	// played are the actions Play applied.
	played []Action
}

// instance is one coordinator instance, across its restarts.
type instance struct {
	name  string
	index int // 1-based: coord-1 is 1
	gen   int // incremented by every (re)start
	coord ports.Coordinator
	gate  *gate
	alive bool
	// pending is the queue sequence of its next Step event; an event with
	// another sequence is stale (a Step was run out of turn meanwhile).
	pending uint64
	// restartAfter, when positive, is how long after its next crash a
	// supervisor restarts it (a crash fault's own delay).
	restartAfter time.Duration
	// lastStep is when its latest Step began (stepped: it has run one),
	// whatever its generation: SPEC 3 "Steps" spaces two Steps of an
	// instance at least MinStepInterval apart, out of turn too (DR503).
	lastStep time.Time
	stepped  bool
}

// mayStepAt reports whether a Step of in at now keeps SPEC 3's spacing:
// none yet, or the previous one at least MinStepInterval before.
func (in *instance) mayStepAt(now time.Time) bool {
	return !in.stepped || !now.Before(in.lastStep.Add(MinStepInterval))
}

// New builds a run from cfg: the world on a virtual clock at cfg.Start, the
// coordinator instances (each first stepped at the start), the API and the
// workload. Nothing runs until RunFor, RunUntil or RunUntilCond.
func New(cfg Config) (*Sim, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Sim{
		cfg:    cfg,
		clock:  wsfakes.NewClock(cfg.Start),
		rec:    history.NewRecorder(),
		byName: make(map[string]*instance, cfg.Coordinators),
		ctx:    context.Background(),
	}
	s.loop.Clock, s.loop.Dispatch = s.clock, s.dispatch
	s.acct.init()
	s.edges.init()
	s.rec.Sink = s.sink
	s.world = wsfakes.NewWorld(s.clock, s.rec)
	s.faults = newFaults(s)
	s.world.SetHook(s.faults.hook)

	apiDeps := s.world.Deps(apiInstance)
	apiDeps.IDs = wsfakes.NewIDs(SubSeed(cfg.Seed, streamAPIIDs))
	apiDeps.Store = interleavedStore{apiDeps.Store, s.faults.il}
	apiDeps.Bus = interleavedBus{apiDeps.Bus, s.faults.il}
	apiDeps.IDs = interleavedIDs{apiDeps.IDs, s.faults.il}
	apiDeps.Limits = cfg.Limits
	apiDeps.Note = s.noter(apiInstance)
	api, err := cfg.System.NewAPI(apiDeps)
	if err != nil {
		return nil, fmt.Errorf("build the API of %s: %w", cfg.System.Name(), err)
	}
	s.api = &recordedAPI{api: api, s: s}

	for i := 1; i <= cfg.Coordinators; i++ {
		in := &instance{name: "coord-" + strconv.Itoa(i), index: i}
		s.insts = append(s.insts, in)
		s.byName[in.name] = in
		if err := s.start(in); err != nil {
			return nil, err
		}
	}
	s.work = newWorkload(s)
	s.plan = cfg.Plan.Clone()
	if s.plan == nil {
		s.plan = GeneratePlan(cfg.Seed, cfg.Faults, cfg.Duration)
	}
	for _, a := range s.plan.Actions {
		// A plan action runs after everything else due at its instant, as
		// Play applies it between events.
		s.loop.Q.Push(cfg.Start.Add(a.At).UnixNano(), true, event{kind: evScript, fn: func(s *Sim) {
			s.edges.strike(a.Kind, func() {
				if err := s.Apply(a); err != nil {
					s.Fail(err.Error())
				}
			})
		}})
	}
	cfg.Logger.Debug("sim built", "seed", cfg.Seed, "system", cfg.System.Name(),
		"workspaces", cfg.Workspaces, "coordinators", cfg.Coordinators)
	return s, nil
}

// start builds a fresh coordinator for in on a fresh view of the world (a
// new DB session) and schedules its first Step now.
func (s *Sim) start(in *instance) error {
	in.gen++
	g := newGate(in.name)
	deps := s.world.Deps(in.name)
	deps.IDs = wsfakes.NewIDs(SubSeed(s.cfg.Seed, streamCoordinatorIDs, uint64(in.index), uint64(in.gen)))
	deps.Limits = s.cfg.Limits
	deps.Note = s.noter(in.name)
	g.after = func(port, method, id string) error {
		if err := s.faults.lostResponse(in.name, port, method, id); err != nil {
			return err
		}
		s.faults.afterCall(in.name, port, method)
		return nil
	}
	coord, err := s.cfg.System.NewCoordinator(gateDeps(deps, g))
	if err != nil {
		return fmt.Errorf("build coordinator %s of %s: %w", in.name, s.cfg.System.Name(), err)
	}
	in.coord, in.gate, in.alive = coord, g, true
	in.pending = s.loop.Q.Push(s.clock.Now().UnixNano(), false, event{kind: evStep, inst: in, gen: in.gen})
	return nil
}

// noter records an implementation's notes (ports.Deps.Note: what a child
// process of the driver protocol wrote to standard error) as note events
// of instance.
func (s *Sim) noter(instance string) func(string) {
	return func(text string) {
		s.record(history.Event{Kind: history.KindNote, Instance: instance, Method: "note", Args: text})
	}
}

// sink receives every kept event of the recorder (under its lock: it must
// not record).
func (s *Sim) sink(e history.Event) {
	s.acct.add(&e)
	s.edges.add(&e)
	s.faults.observeSink(&e)
	for _, f := range s.sinks {
		f(e)
	}
}

// OnEvent registers f to receive every kept history event from now on (for
// checkers that follow a run as it goes). f runs under the recorder's lock
// and must not record events itself.
func (s *Sim) OnEvent(f func(history.Event)) { s.sinks = append(s.sinks, f) }

// record adds an event made by the simulator itself at the current time.
func (s *Sim) record(e history.Event) {
	e.At = s.clock.Now()
	s.rec.Add(e)
}

// ---- running ------------------------------------------------------------

// RunFor runs every event due within d from now, then moves the clock to
// now + d.
func (s *Sim) RunFor(d time.Duration) error {
	return s.RunUntil(s.clock.Now().Add(d))
}

// RunUntil runs every event due at or before t, in order, then moves the
// clock to t (if it is not past it already).
func (s *Sim) RunUntil(t time.Time) error {
	_, err := s.run(t, nil)
	return err
}

// RunUntilCond runs events until pred holds (checked before the first
// event and after each one) or limit of virtual time has passed. It
// reports whether pred held.
func (s *Sim) RunUntilCond(pred func(*Sim) bool, limit time.Duration) (bool, error) {
	return s.run(s.clock.Now().Add(limit), pred)
}

func (s *Sim) run(until time.Time, pred func(*Sim) bool) (bool, error) {
	var p func() bool
	if pred != nil {
		p = func() bool { return pred(s) }
	}
	ok, err := s.loop.RunUntil(s.ctx, until, p)
	if err != nil {
		return false, fmt.Errorf("seed %d at %s: %w", s.cfg.Seed, history.Offset(s.Elapsed()), err)
	}
	return ok, nil
}

func (s *Sim) dispatch(it *item) {
	ev := &it.P
	switch ev.kind {
	case evStep:
		if it.Seq != ev.inst.pending {
			return // superseded by a Step run out of turn
		}
		s.step(ev.inst, ev.gen)
	case evUser:
		s.work.act(ev.ws, ev.act, ev.gen)
	case evScript:
		if ev.name != "" {
			s.record(history.Event{Kind: history.KindNote, Method: ev.name})
		}
		ev.fn(s)
	}
}

// step runs one Step of in (if the event is for its current generation)
// and schedules the next, at least MinStepInterval later. An instance whose
// Step fails, or whose ports were crashed during it, is dropped.
func (s *Sim) step(in *instance, gen int) {
	if !in.alive || gen != in.gen {
		return
	}
	in.lastStep, in.stepped = s.clock.Now(), true
	next, err := in.coord.Step(s.ctx)
	switch {
	case in.gate.Crashed:
		s.drop(in, "crashed at port call "+strconv.FormatInt(in.gate.Calls, 10))
		return
	case err != nil:
		s.drop(in, "step failed: "+err.Error())
		return
	}
	now := s.clock.Now()
	if min := now.Add(MinStepInterval); next.Before(min) {
		next = min
	}
	in.pending = s.loop.Q.Push(next.UnixNano(), false, event{kind: evStep, inst: in, gen: in.gen})
}

// drop ends instance in as a crashed process: its ports fail from now on,
// it is never stepped again, and its DB session ends (as a dead process's
// connections do), releasing the leader lock if it held it. With
// Config.RestartDelay set, a fresh instance replaces it after the delay.
func (s *Sim) drop(in *instance, why string) {
	in.gate.Crashed = true
	in.alive = false
	s.record(history.Event{Kind: history.KindCrash, Instance: in.name, Method: "crash", Args: why})
	s.world.Store.KillSession(in.name)
	s.cfg.Logger.Info("coordinator instance dropped", "instance", in.name, "why", why, "at", s.clock.Now())
	d := s.cfg.RestartDelay
	if in.restartAfter > 0 {
		d, in.restartAfter = in.restartAfter, 0
	}
	if s.quiet && d <= 0 {
		// In the quiet phase a supervisor restarts every crashed instance.
		d = restartDelays[0]
	}
	if d > 0 {
		gen := in.gen
		s.After(d, "", func(s *Sim) {
			if in.alive || in.gen != gen {
				return // restarted meanwhile
			}
			if err := s.Restart(in.name); err != nil {
				s.Fail(err.Error())
			}
		})
	}
}

// ---- scripted control ---------------------------------------------------

func (s *Sim) mustInstance(name string) *instance {
	in, ok := s.byName[name]
	if !ok {
		panic(fmt.Sprintf("sim: no coordinator instance %q (have %v)", name, s.Instances()))
	}
	return in
}

// Crash drops coordinator instance name now: every port call it makes from
// now on fails with contracts.ErrCrashed, it is never stepped again, and
// its DB session ends. Crashing a dead instance does nothing. An unknown
// name panics (a bug in the calling script).
func (s *Sim) Crash(name string) {
	in := s.mustInstance(name)
	if in.alive {
		s.drop(in, "scripted")
	}
}

// CrashAtCall plans a crash of instance name at its k-th port call from now
// (k ≥ 1): that call and every later one fail with contracts.ErrCrashed,
// and the instance is dropped when the Step making the call returns.
func (s *Sim) CrashAtCall(name string, k int64) {
	in := s.mustInstance(name)
	if k < 1 {
		k = 1
	}
	in.gate.FailFrom = in.gate.Calls + k
	s.record(history.Event{Kind: history.KindFault, Instance: name, Method: "crash-at-call",
		Args: "call " + strconv.FormatInt(in.gate.FailFrom, 10)})
}

// Calls is the number of port calls instance name has made since it was
// last (re)started.
func (s *Sim) Calls(name string) int64 { return s.mustInstance(name).gate.Calls }

// Restart replaces instance name with a fresh coordinator from the system
// under test, on a fresh view of the world (a new DB session), first
// stepped now. A live instance is crashed first.
func (s *Sim) Restart(name string) error {
	in := s.mustInstance(name)
	if in.alive {
		s.drop(in, "crashed for a restart")
	}
	s.record(history.Event{Kind: history.KindCrash, Instance: name, Method: "restart",
		Args: "generation " + strconv.Itoa(in.gen+1)})
	s.cfg.Logger.Info("coordinator instance restarted", "instance", name, "at", s.clock.Now())
	return s.start(in)
}

// KillSession terminates instance name's DB session (pg_terminate_backend;
// the store records it as a fault): its leader lock is released and the
// instance keeps running, left to notice through its lease.
func (s *Sim) KillSession(name string) {
	s.mustInstance(name)
	s.world.Store.KillSession(name)
}

// Schedule runs fn at virtual time at (now, if at is past), after the
// events already due then. A non-empty name is recorded as a note when fn
// runs.
func (s *Sim) Schedule(at time.Time, name string, fn func(*Sim)) {
	if now := s.clock.Now(); at.Before(now) {
		at = now
	}
	s.loop.Q.Push(at.UnixNano(), false, event{kind: evScript, name: name, fn: fn})
}

// After runs fn d from now (see Schedule).
func (s *Sim) After(d time.Duration, name string, fn func(*Sim)) {
	s.Schedule(s.clock.Now().Add(d), name, fn)
}

// ---- accessors ----------------------------------------------------------

// API is the system's API service layer; every call through it is recorded.
func (s *Sim) API() ports.API { return s.api }

// World is the simulated reality.
func (s *Sim) World() *wsfakes.World { return s.world }

// History is the run's recorder.
func (s *Sim) History() *history.Recorder { return s.rec }

// Now is the virtual time.
func (s *Sim) Now() time.Time { return s.clock.Now() }

// Start is the virtual time the run started at.
func (s *Sim) Start() time.Time { return s.cfg.Start }

// Elapsed is the virtual time since the start.
func (s *Sim) Elapsed() time.Duration { return s.clock.Now().Sub(s.cfg.Start) }

// Config is the run's configuration, defaults filled in.
func (s *Sim) Config() Config { return s.cfg }

// Instances names every coordinator instance, live or not, in order.
func (s *Sim) Instances() []string {
	out := make([]string, len(s.insts))
	for i, in := range s.insts {
		out[i] = in.name
	}
	return out
}

// Alive reports whether instance name is running (not crashed).
func (s *Sim) Alive(name string) bool { return s.mustInstance(name).alive }

// Coordinator is instance name's current coordinator (a crashed one stays
// until a restart).
func (s *Sim) Coordinator(name string) ports.Coordinator { return s.mustInstance(name).coord }

// Leaders names the live instances that believe they lead, in order.
func (s *Sim) Leaders() []string {
	var out []string
	for _, in := range s.insts {
		if in.alive && in.coord.IsLeader() {
			out = append(out, in.name)
		}
	}
	return out
}

// Processed is the number of queued events run so far.
func (s *Sim) Processed() int64 { return s.loop.Processed }

// Timeline renders the last n kept history events (all if n ≤ 0), with
// virtual offsets from the start, leaving out routine listing calls
// (history.Routine) that would otherwise fill it.
func (s *Sim) Timeline(n int) []string {
	return history.Timeline(s.rec.Tail(n, notRoutine), s.cfg.Start)
}

func notRoutine(e *history.Event) bool { return !history.Routine(e) }

// Fail records a failure found by scenario code or a checker while the run
// goes on; Result lists it.
func (s *Sim) Fail(msg string) {
	s.failures = append(s.failures, msg)
	s.record(history.Event{Kind: history.KindNote, Method: "failure", Args: msg})
}

// Snapshot is the store's rows now, by id.
func (s *Sim) Snapshot() []contracts.Workspace { return s.world.Store.Snapshot() }

// containerRunning reports whether workspace id's container really runs.
func (s *Sim) containerRunning(id string) bool {
	_, running := s.world.Instances.State(id)
	return running
}
