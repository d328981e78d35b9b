package oracle

import (
	"fmt"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
	"github.com/wsconverge/converge/refimpl/oracle/core"
	"github.com/wsconverge/converge/wire/keys"
)

// System is the reference daemon as a system under test: each lifetime a
// new core on the configuration, signer and random source the world
// gives (it satisfies sim/oracle's System).
type System struct{}

// NewSystem returns the reference daemon as a system under test.
func NewSystem() System { return System{} }

// Name is the reference's name in reports and replay files.
func (System) Name() string { return "reference" }

// New builds one lifetime's daemon.
func (System) New(cfg oracle.Config, signer keys.Signer, rnd ports.Rand) (ports.Daemon, error) {
	c, err := core.New(cfg, signer, rnd)
	if err != nil {
		return nil, fmt.Errorf("reference daemon: %w", err)
	}
	return c, nil
}
