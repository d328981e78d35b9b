package workspace

import "github.com/wsconverge/converge/sim/engine"

// eventKind says what a queued event does when it runs.
type eventKind uint8

const (
	// evStep: one Step of a coordinator instance.
	evStep eventKind = iota
	// evUser: one action of the user workload on one workspace.
	evUser
	// evScript: a scripted function (scenario tests, fault plans).
	evScript
)

// event is the payload of one queued item (engine.Item): only the fields
// of its kind are set.
type event struct {
	kind eventKind

	inst *instance // evStep
	gen  int       // evStep, evUser: the generation it was scheduled for

	ws  *userWorkspace // evUser
	act action         // evUser

	name string     // evScript
	fn   func(*Sim) // evScript
}

// item is a queued event.
type item = engine.Item[event]
