package oracle

import (
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/refimpl/oracle/core"
	"github.com/wsconverge/converge/wire/keys"
)

// Daemon is an oracle daemon as the world sees it: the ports of
// refimpl/oracle/core. Start begins a lifetime, Handle gives it one input
// at a time (time never going back), NextWake says when it wants a Wake.
// Replies and fetch results come by address (*core.Reply, *core.Fetched,
// in the world's memory and valid during the call only; core.ByValue
// gives the values).
type Daemon interface {
	Start(now time.Time) []core.Output
	Handle(now time.Time, in core.Input) []core.Output
	NextWake() (time.Time, bool)
}

// System builds a daemon for each lifetime of a run.
type System interface {
	// Name names the system in reports and replay files.
	Name() string
	// New builds one lifetime's daemon.
	New(cfg oracle.Config, signer keys.Signer, rnd core.Rand) (Daemon, error)
}

// Reference is the reference daemon, unmodified.
type Reference struct{}

// ReferenceName is the reference system's name.
const ReferenceName = "reference"

// Name implements System.
func (Reference) Name() string { return ReferenceName }

// New implements System.
func (Reference) New(cfg oracle.Config, signer keys.Signer, rnd core.Rand) (Daemon, error) {
	c, err := core.New(cfg, signer, rnd)
	if err != nil {
		return nil, fmt.Errorf("reference daemon: %w", err)
	}
	return c, nil
}
