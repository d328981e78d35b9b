package workspace

import (
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/refimpl/workspace/api"
	"github.com/wsconverge/converge/refimpl/workspace/coordinator"
)

type system struct{ opts coordinator.Options }

// NewSystem returns the reference implementation as a system under test.
func NewSystem() ports.System { return system{} }

// NewSystemWith returns the reference implementation with the given
// coordinator options (a logger, the election retry interval).
func NewSystemWith(opts coordinator.Options) ports.System { return system{opts: opts} }

func (system) Name() string { return "reference" }

func (s system) NewCoordinator(deps ports.Deps) (ports.Coordinator, error) {
	return coordinator.New(deps, s.opts), nil
}

func (s system) NewAPI(deps ports.Deps) (ports.API, error) {
	return api.New(deps), nil
}
