package scenarios

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	wsref "github.com/wsconverge/converge/refimpl/workspace"
	wsmutants "github.com/wsconverge/converge/scenarios/mutants/workspace"
	"github.com/wsconverge/converge/sim/engine/failrec"
)

// TestRapidStateMachine runs the reference through random sequences of
// user actions, faults and time advances on a small fleet, judging every
// contract after every step and convergence after a quiet phase. A failure
// shrinks to a minimal sequence; rapid saves it under testdata/rapid and
// replays every saved failure first on each later run.
func TestRapidStateMachine(t *testing.T) {
	PinRapidSeed(t)
	dir := t.TempDir()
	known := map[string]int{}
	rapid.Check(t, func(t *rapid.T) {
		m := newMachine(t, wsref.NewSystem(), dir)
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
	m, err := wsmutants.Lookup("no-retry-spacing")
	require.NoError(t, err)
	// This run is meant to fail: keep rapid from saving it as a failfile.
	// A fixed seed and a shrink budget that is never the binding limit make
	// the search and its shrinking deterministic: how short the sequence
	// gets must not depend on how loaded the machine is.
	// Seed 3 finds and shrinks the failure in about 6 s (seed 2 took 64 s,
	// seed 4 over 100 s: the search is as strong, the wait is not).
	seed := os.Getenv("CONVERGE_RAPID_MUTANT_SEED")
	if seed == "" {
		seed = "3"
	}
	failrec.SetFlags(t, map[string]string{"rapid.nofailfile": "true", "rapid.shrinktime": "10m", "rapid.seed": seed})
	rec := &failrec.Recorder{TestName: "TestRapidFindsAndShrinksAMutant/mutant"}
	dir := t.TempDir()
	rapid.Check(rec, func(t *rapid.T) {
		mm := newMachine(t, m.System, dir)
		t.Repeat(rapid.StateMachineActions(mm))
		mm.finish(t)
	})
	require.True(t, rec.Failed(), "the mutant survived the state machine")
	out := rec.String()
	require.Contains(t, out, "retry-policy", out)
	// The shrunk sequence is short: a workspace, a failing provider, time.
	played := strings.Count(out[strings.LastIndex(out, "plan played:"):], "\n  +")
	require.LessOrEqual(t, played, 6, out)
}
