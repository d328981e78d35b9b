package driver

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/sim/workspace/driver/wire"
)

// ExecPrefix starts the default name of a System: "exec:" and the
// command ("exec:python3 coordinator.py"), which is how a replay file
// names it.
const ExecPrefix = "exec:"

// DefaultTimeout is how long the harness waits, in wall-clock time, for
// each message of a child before it kills it.
const DefaultTimeout = 30 * time.Second

// Options configure a System.
type Options struct {
	// Command is the child's command line (argv): the harness starts it
	// once per coordinator instance (again on every restart) and once
	// per API process. ShellCommand makes one from a shell string.
	Command []string
	// Name is the system's name in reports and replay files (default
	// "exec:" and the command).
	Name string
	// Dir is the child's working directory (default: the harness's).
	Dir string
	// Env is the child's environment (nil: the harness's).
	Env []string
	// Timeout is how long the harness waits, in wall-clock time, for each
	// message of the child (default DefaultTimeout). It only ever fires
	// on a child that hangs: a healthy child answers in microseconds.
	Timeout time.Duration
	// TranscriptCap is how many bytes of each run's transcript are kept
	// as text, to show where two runs part (default
	// DefaultTranscriptCap).
	TranscriptCap int
	// Protocol is the highest protocol version the harness offers
	// (default wire.Version; 1 runs every child as version 1).
	Protocol int
	// CrashLoop is how many children of a run may fail the same way in a
	// row (at start-up, or at the same message) before the run stops
	// with one report of the loop (default DefaultCrashLoop; negative:
	// never).
	CrashLoop int
}

// ShellCommand is the command line that runs s with /bin/sh, for a
// command given as one string ("python3 coordinator.py --bug x").
func ShellCommand(s string) []string { return []string{"/bin/sh", "-c", s} }

// System is a ports.System whose coordinators and API are child
// processes speaking the driver protocol (docs/driver-protocol.md). Each
// port call a child makes is served through the ports the simulator
// hands NewCoordinator and NewAPI, so the simulator records, gates and
// judges it exactly as it does an implementation running in process.
//
// A System drives one simulated run at a time (a run begins with
// NewAPI, as in sim.New, and ends the children of the run before it):
// make one System per concurrent run. Close ends every child.
type System struct {
	opts Options
	name string
	reg  *registry
	seed maphash.Seed

	mu        sync.Mutex
	runs      int
	cur, prev *run
	// cancel, while Check runs, ends the run in progress at a crash loop,
	// and loop is the Check's first.
	cancel func()
	loop   *crashLoop
}

// run is one simulated run's children, transcript and failures.
type run struct {
	sys        *System
	n          int
	transcript *transcript
	coords     map[string]*session
	gens       map[string]int
	api        *api
	// quiet counts the quiet steps the harness took for the children.
	quiet atomic.Int64
	// rowChanges counts the rows sent as their changes (version 3).
	rowChanges atomic.Int64

	// failures are the run's protocol failures by kind; lastKind and
	// streak the kind of the last one and the children it happened to in
	// a row; loop, once set, stops the run (failure.go). Under sys.mu.
	failures []*failure
	lastKind string
	streak   []string
	loop     *crashLoop
}

// New builds a System over opts.Command.
func New(opts Options) (*System, error) {
	if len(opts.Command) == 0 || opts.Command[0] == "" {
		return nil, errors.New("driver: no command to run")
	}
	if opts.Timeout < 0 {
		return nil, fmt.Errorf("driver: timeout %s is negative", opts.Timeout)
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.TranscriptCap <= 0 {
		opts.TranscriptCap = DefaultTranscriptCap
	}
	switch {
	case opts.Protocol == 0:
		opts.Protocol = wire.Version
	case opts.Protocol < wire.MinVersion || opts.Protocol > wire.Version:
		return nil, fmt.Errorf("driver: protocol version %d: this harness speaks %s", opts.Protocol, versions(wire.Version))
	}
	if opts.CrashLoop == 0 {
		opts.CrashLoop = DefaultCrashLoop
	}
	opts.Command = slices.Clone(opts.Command)
	name := opts.Name
	if name == "" {
		name = ExecPrefix + commandString(opts.Command)
	}
	s := &System{opts: opts, name: name, reg: &registry{procs: map[*proc]struct{}{}}, seed: maphash.MakeSeed()}
	// Children of a System nobody closed end when it is collected.
	runtime.AddCleanup(s, func(r *registry) { r.killAll() }, s.reg)
	return s, nil
}

// commandString is argv as a shell command line: a ShellCommand's
// string, or each argument quoted as it needs.
func commandString(argv []string) string {
	if len(argv) == 3 && argv[0] == "/bin/sh" && argv[1] == "-c" {
		return argv[2]
	}
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " ")
}

// Name is the system's name.
func (s *System) Name() string { return s.name }

// SerialAPI reports that the API lives in a child process: the simulator
// cannot stop its requests at their port calls, so an api-race runs them
// one after another (wssim.SerialAPI).
func (s *System) SerialAPI() bool { return true }

// Command is the child's command line.
func (s *System) Command() []string { return slices.Clone(s.opts.Command) }

// NewAPI begins a run: it ends the previous run's children and starts the
// first API process (later ones start when API calls overlap).
func (s *System) NewAPI(deps ports.Deps) (ports.API, error) {
	r := s.beginRun()
	a := &api{run: r, deps: deps}
	r.api = a
	sess, err := a.start(context.Background())
	if err != nil {
		return nil, err
	}
	a.idle = append(a.idle, sess)
	return a, nil
}

// NewCoordinator starts a child for coordinator instance deps.Instance,
// ending the instance's previous child (a restart).
func (s *System) NewCoordinator(deps ports.Deps) (ports.Coordinator, error) {
	r := s.current()
	if err := r.stopped(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	old := r.coords[deps.Instance]
	r.gens[deps.Instance]++
	gen := r.gens[deps.Instance]
	s.mu.Unlock()
	if old != nil {
		old.stop()
	}
	sess, err := newSession(context.Background(), r, label(deps.Instance, gen), wire.RoleCoordinator, deps)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	r.coords[deps.Instance] = sess
	s.mu.Unlock()
	return &coordinator{s: sess}, nil
}

func (s *System) beginRun() *run {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil {
		s.cur.stopAll()
	}
	s.runs++
	s.prev = s.cur
	var like *transcript
	if s.prev != nil {
		like = s.prev.transcript
	}
	s.cur = &run{sys: s, n: s.runs, transcript: newTranscript(s.seed, s.opts.TranscriptCap, like),
		coords: map[string]*session{}, gens: map[string]int{}}
	if s.cancel != nil && s.loop != nil {
		// The double of a run a crash loop stopped, under Check: it
		// would only loop again.
		s.cur.loop = s.loop
	}
	return s.cur
}

// current is the run in progress (one is begun if NewCoordinator comes
// first).
func (s *System) current() *run {
	s.mu.Lock()
	r := s.cur
	s.mu.Unlock()
	if r == nil {
		return s.beginRun()
	}
	return r
}

// stopAll kills every child of the run; s.mu is held.
func (r *run) stopAll() {
	for _, name := range sortedKeys(r.coords) {
		r.coords[name].stop()
	}
	if r.api != nil {
		r.api.stopAll()
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Failures lists the protocol failures of the run in progress (or last
// run): children that broke the protocol, exited or hung. Each kind of
// failure is listed once, with the children it happened to; a crash
// loop (Options.CrashLoop) comes first. It has the shape of a sim.Config
// check: add it to Config.Checks (Judged does).
func (s *System) Failures() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return nil
	}
	return s.cur.reports()
}

// CrashLoop is the report of the crash loop that stopped the run in
// progress (or the last run), or "" when none did.
func (s *System) CrashLoop() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil || s.cur.loop == nil {
		return ""
	}
	return s.cur.loop.String()
}

// beginCheck begins (cancel set) or ends (nil) a Check: a crash loop
// then cancels its runs, and is kept for checkLoop.
func (s *System) beginCheck(cancel func()) {
	s.mu.Lock()
	s.cancel, s.loop = cancel, nil
	s.mu.Unlock()
}

// checkLoop is the first crash loop of the Check in progress (nil: none).
func (s *System) checkLoop() *crashLoop {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loop
}

// Divergence describes the first protocol message where the last two runs
// differ ("" when they agree or there were not two runs): after a
// nondeterministic double run, it names the child that answered the same
// conversation differently, and both versions of its message.
func (s *System) Divergence() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prev == nil || s.cur == nil {
		return ""
	}
	return firstDifference(s.prev.transcript, s.cur.transcript)
}

// Messages is the number of protocol messages of the run in progress (or
// last run).
func (s *System) Messages() int {
	return int(s.ofRun(func(r *run) int64 { return int64(r.transcript.Len()) }))
}

// Bytes is the number of bytes the run in progress (or last run) sent
// both ways through its children's pipes.
func (s *System) Bytes() int64 { return s.ofRun(func(r *run) int64 { return r.transcript.Bytes() }) }

// QuietSteps is the number of steps of the run in progress (or last run)
// the harness took for its coordinators, from their wake-ups, without a
// message (protocol version 2).
func (s *System) QuietSteps() int { return int(s.ofRun(func(r *run) int64 { return r.quiet.Load() })) }

// RowChanges is the number of rows the run in progress (or last run) sent
// its children as their changes (protocol version 3).
func (s *System) RowChanges() int {
	return int(s.ofRun(func(r *run) int64 { return r.rowChanges.Load() }))
}

// ofRun is a count of the run in progress (or last run), 0 before any.
func (s *System) ofRun(count func(r *run) int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return 0
	}
	return count(s.cur)
}

// Close ends every child of the System, and waits (at most the timeout)
// until each has exited.
func (s *System) Close() error {
	s.mu.Lock()
	if s.cur != nil {
		s.cur.stopAll()
	}
	s.mu.Unlock()
	s.reg.killAll()
	deadline := time.After(s.opts.Timeout)
	for _, p := range s.reg.live() {
		select {
		case <-p.exited:
		case <-deadline:
			return nil
		}
	}
	return nil
}

// registry holds every live child of a System, to end them all.
type registry struct {
	mu    sync.Mutex
	procs map[*proc]struct{}
}

func (g *registry) add(p *proc) {
	g.mu.Lock()
	g.procs[p] = struct{}{}
	g.mu.Unlock()
	go func() {
		<-p.exited
		g.mu.Lock()
		delete(g.procs, p)
		g.mu.Unlock()
	}()
}

// live returns the children not yet reaped.
func (g *registry) live() []*proc {
	g.mu.Lock()
	defer g.mu.Unlock()
	procs := make([]*proc, 0, len(g.procs))
	for p := range g.procs {
		procs = append(procs, p)
	}
	return procs
}

func (g *registry) killAll() {
	for _, p := range g.live() {
		p.kill()
	}
}

// ---- the coordinator -----------------------------------------------------

// coordinator is one coordinator instance: Step is one exchange with its
// child.
type coordinator struct{ s *session }

var _ ports.Coordinator = (*coordinator)(nil)

// Step takes one step of the instance. When the child's wake-up covers
// now, the harness takes it (wake.go) and the child hears of it only if
// one of the calls answered otherwise: then, and at any other step, it
// sends step {now} (with those answers) and serves the child's calls
// until it says when it next wants to run. An error means the child is
// dead: crashed by the simulator, failed (its Step returned an error),
// or broke the protocol.
func (c *coordinator) Step(ctx context.Context) (time.Time, error) {
	s := c.s
	if s.dead != nil {
		return time.Time{}, s.dead
	}
	if err := s.run.stopped(); err != nil {
		s.stop()
		return time.Time{}, err
	}
	now := s.deps.Clock.Now()
	quiet, next, answers, err := s.wakeStep(ctx, now)
	switch {
	case err != nil:
		return time.Time{}, s.fail(err)
	case quiet:
		s.run.quiet.Add(1)
		return next, nil
	}
	s.wake = nil
	var req []byte
	if answers != nil {
		req = wire.AppendStepAnswers(nil, wire.T(now), answers)
	} else {
		req = wire.AppendStep(nil, wire.T(now))
	}
	m, err := s.exchange(ctx, req, wire.TDone)
	if err != nil {
		return time.Time{}, err
	}
	if m.Leader != nil {
		s.leader = *m.Leader
	}
	if m.Error != nil {
		stepErr, invalid := m.Error.Err()
		if invalid != nil {
			return time.Time{}, s.fail(fmt.Errorf("done: %w", invalid))
		}
		// The child says it is dead, as an in-process Step would by
		// returning an error.
		s.stop()
		return time.Time{}, stepErr
	}
	switch {
	case m.Next == nil:
		return time.Time{}, s.fail(errors.New(`a step's done has no "next": when should it run again?`))
	case m.Leader == nil:
		return time.Time{}, s.fail(errors.New(`a step's done has no "leader": does the instance believe it leads?`))
	}
	if m.Wake != nil {
		w, err := s.declareWake(m.Wake)
		if err != nil {
			return time.Time{}, s.fail(fmt.Errorf("done: %w", err))
		}
		s.wake = w
	}
	return m.Next.Time, nil
}

// IsLeader is what the child last said (with a call or a done).
func (c *coordinator) IsLeader() bool { return c.s.leader }

// Close sends close {now}, serves the calls of the child's shutdown, then
// ends its input and waits for it to exit.
func (c *coordinator) Close(ctx context.Context) error {
	s := c.s
	if s.dead != nil {
		return nil
	}
	req, err := s.request(wire.FromHarness{Type: wire.TClose})
	if err != nil {
		return err
	}
	m, err := s.exchange(ctx, req, wire.TDone)
	if err != nil {
		return err
	}
	s.leader = false
	s.close()
	if m.Error != nil {
		closeErr, invalid := m.Error.Err()
		if invalid != nil {
			return fmt.Errorf("driver: %s: close: %w", s.label, invalid)
		}
		return closeErr
	}
	return nil
}
