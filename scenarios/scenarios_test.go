package scenarios

import (
	"fmt"
	"os"
	"testing"

	"github.com/wsconverge/converge/contracts/ports"
	wsref "github.com/wsconverge/converge/refimpl/workspace"
	wsmutants "github.com/wsconverge/converge/scenarios/mutants/workspace"
	"github.com/wsconverge/converge/sim/engine"
)

// scenarioSystem is the system the scenarios run against: the reference,
// or with CONVERGE_SCENARIO_MUTANT=<name> one of its deliberately broken
// variants (to see which scenarios catch it).
var scenarioSystem ports.System = wsref.NewSystem()

func TestMain(m *testing.M) {
	if name := os.Getenv("CONVERGE_SCENARIO_MUTANT"); name != "" {
		mut, err := wsmutants.Lookup(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		scenarioSystem = mut.System
	}
	// Out of the user's state directory (issue 23).
	os.Exit(engine.WithoutUserState(m.Run))
}

// TestScenario runs SPEC 6's scenarios against the reference.
func TestScenario(t *testing.T) {
	for _, sc := range Spec() {
		t.Run(sc.Name, func(t *testing.T) { sc.Run(t, scenarioSystem) })
	}
}
