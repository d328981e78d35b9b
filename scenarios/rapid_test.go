package scenarios

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/invariant"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/refimpl"
	"github.com/wsconverge/converge/scenarios/mutants"
	"github.com/wsconverge/converge/sim"
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
// all drawn by the generators the simulator's plans use (sim.DrawAction).
type machine struct {
	s      *sim.Sim
	system ports.System
	// known counts the violations that are instances of a known issue of
	// the reference (sim.KnownIssues): logged, not failed on.
	known map[string]int
}

func newMachine(t *rapid.T, system ports.System) *machine {
	seed := rapid.Uint64Range(0, 1<<20).Draw(t, "seed")
	s, err := sim.New(sim.Config{
		Seed:         seed,
		System:       system,
		Coordinators: rapidCoordinators,
		Workload:     sim.Workload{Disabled: true},
		Limits:       contracts.Limits{MaxRunningPerUser: 2, MaxRunningGlobal: 3},
	})
	require.NoError(t, err)
	m := &machine{s: s, system: system, known: map[string]int{}}
	// The fleet starts with one workspace.
	m.play(t, sim.DrawAction(rapidSource{t}, sim.UserCreate))
	return m
}

func (m *machine) play(t *rapid.T, a sim.Action) {
	require.NoError(t, m.s.Play(a), "playing %s", a)
}

// User acts: one of the scripted user or administrator actions.
func (m *machine) User(t *rapid.T) {
	k := sim.DrawKind(rapidSource{t}, "user action", sim.UserKinds())
	if k == sim.UserCreate && len(m.s.Scripted()) >= rapidMaxWorkspaces {
		t.Skip("the fleet is full")
	}
	m.play(t, sim.DrawAction(rapidSource{t}, k))
}

// Fault strikes: one of the simulator's fault kinds.
func (m *machine) Fault(t *rapid.T) {
	k := sim.DrawKind(rapidSource{t}, "fault", sim.FaultKinds())
	m.play(t, sim.DrawAction(rapidSource{t}, k))
}

// Advance lets time pass (2 s to 3 h).
func (m *machine) Advance(t *rapid.T) {
	m.play(t, sim.DrawAction(rapidSource{t}, sim.Advance))
}

// Check judges the history so far and the world now: every contract's
// safety holds after every step (convergence is judged at the end).
func (m *machine) Check(t *rapid.T) {
	m.judge(t, m.s.Judge(true))
}

func (m *machine) judge(t *rapid.T, r *invariant.Report) {
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
	require.NoError(t, m.s.RunFor(sim.DefaultQuiet))
	m.judge(t, m.s.Judge(true))
}

func planLines(p *sim.Plan) []string {
	out := make([]string, len(p.Actions))
	for i, a := range p.Actions {
		out[i] = history.Offset(a.At) + " " + a.String()
	}
	return out
}

// saveReplay writes the failing sequence as a replay file for converge
// replay and returns its path.
func (m *machine) saveReplay(r *invariant.Report) string {
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
	f, err := sim.NewReplay(cfg, mutant, sim.Result{Hash: m.s.History().Hash(), Report: r})
	if err != nil {
		return "(not written: " + err.Error() + ")"
	}
	path := filepath.Join(os.TempDir(), "converge-replays", "rapid-"+sim.ReplayName(f.System, cfg.Seed))
	if err := sim.WriteReplay(path, f); err != nil {
		return "(not written: " + err.Error() + ")"
	}
	return path
}

// TestRapidStateMachine runs the reference through random sequences of
// user actions, faults and time advances on a small fleet, judging every
// contract after every step and convergence after a quiet phase. A failure
// shrinks to a minimal sequence; rapid saves it under testdata/rapid and
// replays every saved failure first on each later run.
func TestRapidStateMachine(t *testing.T) {
	known := map[string]int{}
	rapid.Check(t, func(t *rapid.T) {
		m := newMachine(t, refimpl.NewSystem())
		t.Repeat(rapid.StateMachineActions(m))
		m.finish(t)
		for k, n := range m.known {
			known[k] += n
		}
	})
	for k, n := range known {
		t.Logf("known issue %s: %d violation(s) seen (sim.KnownIssues; not failed on)", k, n)
	}
}

// TestRapidFindsAndShrinksAMutant checks the machine's power: against a
// mutant it must fail, and rapid must shrink the failure to a short
// sequence.
func TestRapidFindsAndShrinksAMutant(t *testing.T) {
	m, err := mutants.Lookup("no-retry-spacing")
	require.NoError(t, err)
	// This run is meant to fail: keep rapid from saving it as a failfile,
	// and bound its shrinking.
	for name, v := range map[string]string{"rapid.nofailfile": "true", "rapid.shrinktime": "4s"} {
		old := flag.Lookup(name).Value.String()
		require.NoError(t, flag.Set(name, v))
		defer func() { require.NoError(t, flag.Set(name, old)) }()
	}
	var rec failRecorder
	rapid.Check(&rec, func(t *rapid.T) {
		mm := newMachine(t, m.System)
		t.Repeat(rapid.StateMachineActions(mm))
		mm.finish(t)
	})
	require.True(t, rec.failed, "the mutant survived the state machine")
	out := rec.String()
	require.Contains(t, out, "retry-policy", out)
	// The shrunk sequence is short: a workspace, a failing provider, time.
	played := strings.Count(out[strings.LastIndex(out, "plan played:"):], "\n  +")
	require.LessOrEqual(t, played, 6, out)
}

// failRecorder is a rapid.TB that records a failure instead of failing the
// test (rapid.Check's output goes to it).
type failRecorder struct {
	failed bool
	log    strings.Builder
}

func (r *failRecorder) Helper()                    {}
func (r *failRecorder) Name() string               { return "TestRapidFindsAndShrinksAMutant/mutant" }
func (r *failRecorder) Logf(f string, args ...any) { fmt.Fprintf(&r.log, f+"\n", args...) }
func (r *failRecorder) Log(args ...any)            { fmt.Fprintln(&r.log, args...) }
func (r *failRecorder) Skipf(f string, args ...any) {
	panic("skip: " + fmt.Sprintf(f, args...))
}
func (r *failRecorder) Skip(args ...any)             { panic(fmt.Sprint(args...)) }
func (r *failRecorder) SkipNow()                     { panic("skip") }
func (r *failRecorder) Errorf(f string, args ...any) { r.failed = true; r.Logf(f, args...) }
func (r *failRecorder) Error(args ...any)            { r.failed = true; r.Log(args...) }
func (r *failRecorder) Fatalf(f string, args ...any) { r.failed = true; r.Logf(f, args...) }
func (r *failRecorder) Fatal(args ...any)            { r.failed = true; r.Log(args...) }
func (r *failRecorder) FailNow()                     { r.failed = true }
func (r *failRecorder) Fail()                        { r.failed = true }
func (r *failRecorder) Failed() bool                 { return r.failed }
func (r *failRecorder) String() string               { return r.log.String() }
