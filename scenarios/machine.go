package scenarios

import (
	"flag"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

// rapidSource draws a plan's randomness from rapid, so that a failing
// sequence shrinks: fewer steps, simpler actions, smaller choices.
type rapidSource struct{ t *rapid.T }

func (s rapidSource) IntN(label string, n int) int {
	return rapid.IntRange(0, n-1).Draw(s.t, label)
}

// Limits of the state machine's world.
const (
	rapidMaxWorkspaces = 4
	rapidCoordinators  = 2
)

// machine is the state machine: a small fleet (1–4 workspaces, 2
// coordinators) driven by scripted user actions, faults and time advances,
// all drawn by the generators the simulator's plans use (wssim.DrawAction).
type machine struct {
	s         *wssim.Sim
	system    ports.System
	replayDir string
	// known counts the violations that are instances of a known issue of
	// the reference (wssim.KnownIssues): logged, not failed on.
	known map[string]int
}

// newMachine starts a sequence on system; a failing sequence's replay file
// goes to replayDir ("": ReplayDir()).
func newMachine(t *rapid.T, system ports.System, replayDir string) *machine {
	seed := rapid.Uint64Range(0, 1<<20).Draw(t, "seed")
	s, err := wssim.New(wssim.Config{
		Seed:         seed,
		System:       system,
		Coordinators: rapidCoordinators,
		Workload:     wssim.Workload{Disabled: true},
		Limits:       contracts.Limits{MaxRunningPerUser: 2, MaxRunningGlobal: 3},
	})
	require.NoError(t, err)
	m := &machine{s: s, system: system, known: map[string]int{}, replayDir: replayDir}
	// The fleet starts with one workspace.
	m.play(t, wssim.DrawAction(rapidSource{t}, wssim.UserCreate))
	return m
}

func (m *machine) play(t *rapid.T, a wssim.Action) {
	require.NoError(t, m.s.Play(a), "playing %s", a)
}

// User acts: one of the scripted user or administrator actions.
func (m *machine) User(t *rapid.T) {
	k := wssim.DrawKind(rapidSource{t}, "user action", wssim.UserKinds())
	if k == wssim.UserCreate && len(m.s.Scripted()) >= rapidMaxWorkspaces {
		t.Skip("the fleet is full")
	}
	m.play(t, wssim.DrawAction(rapidSource{t}, k))
}

// Fault strikes: one of the simulator's fault kinds.
func (m *machine) Fault(t *rapid.T) {
	k := wssim.DrawKind(rapidSource{t}, "fault", wssim.FaultKinds())
	m.play(t, wssim.DrawAction(rapidSource{t}, k))
}

// Advance lets time pass (2 s to 3 h).
func (m *machine) Advance(t *rapid.T) {
	m.play(t, wssim.DrawAction(rapidSource{t}, wssim.Advance))
}

// Check judges the history so far and the world now: every contract's
// safety holds after every step (convergence is judged at the end).
func (m *machine) Check(t *rapid.T) {
	m.judge(t, m.s.Judge(true))
}

func (m *machine) judge(t *rapid.T, r *wsjudge.Report) {
	var bad []string
	for i, v := range r.Violations {
		if k := m.s.Known(v); k != "" {
			m.known[k]++
			continue
		}
		line := v.String()
		if i < 3 {
			line += "\n    " + strings.Join(m.s.Evidence(v), "\n    ")
		}
		bad = append(bad, line)
	}
	if len(bad) > 0 {
		t.Fatalf("%d contract violation(s) at %s:\n  %s\nplan played:\n  %s\nreplay: converge replay %s",
			len(bad), history.Offset(m.s.Elapsed()), strings.Join(bad, "\n  "), strings.Join(planLines(m.s.Played()), "\n  "), m.saveReplay(r))
	}
}

// finish runs the quiet phase and judges everything, convergence included.
func (m *machine) finish(t *rapid.T) {
	require.NoError(t, m.s.BeginQuiet())
	require.NoError(t, m.s.RunFor(wssim.DefaultQuiet))
	m.judge(t, m.s.Judge(true))
}

func planLines(p *wssim.Plan) []string {
	out := make([]string, len(p.Actions))
	for i, a := range p.Actions {
		out[i] = history.Offset(a.At) + " " + a.String()
	}
	return out
}

// saveReplay writes the failing sequence as a replay file for converge
// replay and returns its path.
func (m *machine) saveReplay(r *wsjudge.Report) string {
	cfg := m.s.Config()
	cfg.Plan = m.s.Played()
	cfg.Duration = m.s.Elapsed()
	if at, ok := m.s.QuietAt(); ok {
		cfg.Duration, cfg.Quiet = at, m.s.Elapsed()-at
	}
	mutant := ""
	if name := m.system.Name(); strings.HasPrefix(name, "mutant:") {
		mutant = strings.TrimPrefix(name, "mutant:")
	}
	f, err := wssim.NewReplay(cfg, mutant, wssim.Result{Hash: m.s.History().Hash(), Report: r})
	if err != nil {
		return "(not written: " + err.Error() + ")"
	}
	dir := m.replayDir
	if dir == "" {
		if dir, err = ReplayDir(); err != nil {
			return "(not written: " + err.Error() + ")"
		}
	}
	path, err := wssim.SaveReplay(dir, f)
	if err != nil {
		return "(not written: " + err.Error() + ")"
	}
	return path
}

var replayDir struct {
	once sync.Once
	dir  string
	err  error
}

// ReplayDir is where a test run's replay files go unless it names a
// directory: one directory under os.TempDir per test process
// (converge-replays-*), made when the first file is written and kept
// afterwards, so that a failure's file can be replayed. Never the user's
// home: `go test` must not leave files there (the CLI's per-user default,
// engine.DefaultReplayDir, is for people running converge).
func ReplayDir() (string, error) {
	replayDir.once.Do(func() {
		replayDir.dir, replayDir.err = os.MkdirTemp("", "converge-replays-")
	})
	return replayDir.dir, replayDir.err
}

// StateMachine runs rapid's state machine against the systems newSystem
// builds (a fresh one per sequence): random sequences of scripted user
// actions, faults and time advances on a small fleet, drawn by the
// generators the simulator's plans use; every checker judges the history
// and the world after every step, and convergence after a quiet phase at
// the end. A failure shrinks to a minimal sequence, is written as a replay
// file (converge replay FILE reruns it; into ReplayDir) and, by rapid, as a failfile under
// testdata/rapid that later runs replay first. rapid's -rapid.checks flag
// sets the number of sequences (default 100).
//
// The sequences come from a fixed seed (DefaultRapidSeed) unless the run
// names one with -rapid.seed, so that a CI run judges the same sequences
// every time and cannot fail by chance; explore others with
// -rapid.seed=N.
func StateMachine(t *testing.T, newSystem func() ports.System) {
	t.Helper()
	StateMachineIn(t, "", newSystem)
}

// StateMachineIn is StateMachine writing a failing sequence's replay file
// into replayDir ("": ReplayDir()).
func StateMachineIn(t *testing.T, replayDir string, newSystem func() ports.System) {
	t.Helper()
	PinRapidSeed(t)
	rapid.Check(t, func(t *rapid.T) {
		m := newMachine(t, newSystem(), replayDir)
		t.Repeat(rapid.StateMachineActions(m))
		m.finish(t)
	})
}

// DefaultRapidSeed is the rapid seed StateMachine uses when the run names
// none.
const DefaultRapidSeed = 1

// PinRapidSeed sets rapid's seed to DefaultRapidSeed for the rest of t
// unless -rapid.seed already holds another value (given on the command
// line).
func PinRapidSeed(t *testing.T) {
	t.Helper()
	f := flag.Lookup("rapid.seed")
	if f == nil || f.Value.String() != f.DefValue {
		return
	}
	if err := f.Value.Set(strconv.Itoa(DefaultRapidSeed)); err != nil {
		t.Fatalf("pin the rapid seed: %v", err)
	}
	t.Cleanup(func() { _ = f.Value.Set(f.DefValue) })
}
