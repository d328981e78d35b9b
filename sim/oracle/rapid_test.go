package oracle_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/judge"
	oracled "github.com/wsconverge/converge/refimpl/oracle"
	oraclemutants "github.com/wsconverge/converge/scenarios/mutants/oracle"
	"github.com/wsconverge/converge/sim/engine/failrec"
	oraclesim "github.com/wsconverge/converge/sim/oracle"
)

// machine is the oracle world as a rapid state machine: each action
// advances the virtual clock, injects a fault of the catalogue or has the
// moderator act; the run then ends with a quiet phase and a graceful stop
// and every checker judges it.
type machine struct {
	s      *oraclesim.Session
	played []string
}

func newMachine(t *rapid.T, system oraclesim.System) *machine {
	s, err := oraclesim.NewSession(oraclesim.Options{Seed: rapid.Uint64Range(1, 1<<20).Draw(t, "seed"), System: system,
		Requests: rapid.IntRange(1, 5).Draw(t, "requests"), QuietPhase: 3 * time.Minute})
	if err != nil {
		t.Fatalf("new session: %v", err)
	}
	return &machine{s: s}
}

func (m *machine) Advance(t *rapid.T) {
	d := time.Duration(rapid.IntRange(1, 60).Draw(t, "seconds")) * time.Second
	m.played = append(m.played, "advance "+d.String())
	if err := m.s.Advance(context.Background(), d); err != nil {
		t.Fatalf("advance: %v", err)
	}
}

func (m *machine) Fault(t *rapid.T) {
	id := rapid.SampledFrom(oraclesim.Catalogue).Draw(t, "fault")
	seed := rapid.Uint64().Draw(t, "fault seed")
	m.played = append(m.played, "fault "+id)
	if err := m.s.Inject(id, seed); err != nil {
		t.Fatalf("inject %s: %v", id, err)
	}
}

func (m *machine) Op(t *rapid.T) {
	m.played = append(m.played, "op")
	if err := m.s.Operate(rapid.Uint64().Draw(t, "op seed")); err != nil {
		t.Fatalf("operate: %v", err)
	}
}

// Check has nothing to judge between actions: the checkers judge the
// whole run at the end.
func (m *machine) Check(*rapid.T) {}

// finish ends the run and fails with the violated checkers: a message
// that is the same whenever the same actions are replayed.
func (m *machine) finish(t *rapid.T) {
	res, err := m.s.Finish(context.Background())
	if err != nil {
		t.Fatalf("finish: %v", err)
	}
	var violated []string
	for _, c := range res.Report.Checkers() {
		if res.Report.Verdict(c) == judge.Violated {
			violated = append(violated, c)
		}
	}
	if len(violated) > 0 {
		t.Fatalf("violated: %s\nplan played:\n  + %s", strings.Join(violated, " "), strings.Join(m.played, "\n  + "))
	}
}

// TestRapidOracleReference: the reference daemon passes random sequences
// of time, faults and moderator actions.
func TestRapidOracleReference(t *testing.T) {
	// A fixed seed and number of runs: the same sequences every time (no
	// flaky test); CONVERGE_RAPID_ORACLE_SEED explores others.
	seed := os.Getenv("CONVERGE_RAPID_ORACLE_SEED")
	if seed == "" {
		seed = "1"
	}
	failrec.SetFlags(t, map[string]string{"rapid.seed": seed, "rapid.checks": "60"})
	rapid.Check(t, func(t *rapid.T) {
		m := newMachine(t, oracled.NewSystem())
		t.Repeat(rapid.StateMachineActions(m))
		m.finish(t)
	})
}

// TestRapidOracleFindsAndShrinksAMutant: against a daemon that does not
// resync on code 32 the machine must fail, and rapid must shrink the
// failure to a few actions (one of them the fault that causes a code 32).
func TestRapidOracleFindsAndShrinksAMutant(t *testing.T) {
	mut, ok := oraclemutants.ByName("no-resync-on-32")
	require.True(t, ok)
	// This run is meant to fail: keep rapid from saving it as a failfile,
	// and fix its seed and shrink budget so the search is deterministic.
	failrec.SetFlags(t, map[string]string{"rapid.nofailfile": "true", "rapid.shrinktime": "10m", "rapid.seed": "3"})
	rec := &failrec.Recorder{TestName: "TestRapidOracleFindsAndShrinksAMutant/mutant"}
	rapid.Check(rec, func(t *rapid.T) {
		m := newMachine(t, mut)
		t.Repeat(rapid.StateMachineActions(m))
		m.finish(t)
	})
	require.True(t, rec.Failed(), "the mutant survived the state machine")
	out := rec.String()
	require.Contains(t, out, "o9-resync", out)
	plan := out[strings.LastIndex(out, "plan played:"):]
	require.LessOrEqual(t, strings.Count(plan, "\n  +"), 4, out)
	require.Regexp(t, `fault F(9|11)`, plan, out)
}
