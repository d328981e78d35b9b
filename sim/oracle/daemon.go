package oracle

import (
	"errors"
	"sync"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
	"github.com/wsconverge/converge/wire/keys"
)

// System builds a daemon for each lifetime of a run: the daemon under
// test, driven through the messages of contracts/oracle/ports. The world
// never builds one itself: the program hands it one (Options.System), or
// registers it (Register).
type System interface {
	// Name names the system in reports and replay files.
	Name() string
	// New builds one lifetime's daemon.
	New(cfg oracle.Config, signer keys.Signer, rnd ports.Rand) (ports.Daemon, error)
}

// ReferenceName is the name of the system a run judges when its Options
// name none: the reference daemon, as the program registers it
// (refimpl/oracle's NewSystem).
const ReferenceName = "reference"

// errNoSystem: a run without a daemon to judge.
var errNoSystem = errors.New("no daemon to run: Options.System is nil and no system is registered as " +
	`"` + ReferenceName + `" (register the reference: oraclesim.Register(oracled.NewSystem()))`)

// registry holds the systems programs registered, by name.
var registry struct {
	sync.RWMutex
	systems map[string]System
}

// Register makes sys known by its name: a run whose Options name no
// System runs the one registered as ReferenceName, and Lookup finds a
// replay file's system by the name it records. The programs that judge a
// daemon register it (the CLI and the tests register the reference);
// a later registration under a name replaces the earlier one.
func Register(sys System) {
	registry.Lock()
	defer registry.Unlock()
	if registry.systems == nil {
		registry.systems = map[string]System{}
	}
	registry.systems[sys.Name()] = sys
}

// Lookup is the system registered under name.
func Lookup(name string) (System, bool) {
	registry.RLock()
	defer registry.RUnlock()
	sys, ok := registry.systems[name]
	return sys, ok
}
