package workspace

import (
	"fmt"

	"github.com/wsconverge/converge/contracts/ports"
)

// DepsBend returns how mutant name bends the ports of one process of the
// reference: its coordinator instance's (coord) and its API service
// layer's (api), either nil when the mutant leaves them as given. It is
// how a catalogue mutant runs as a real process (a `converge serve` built
// with the conformmutants tag, judged black-box by `converge conform`):
// the reference's code is unchanged, only what its ports answer is bent.
// A mutant that wraps the built coordinator or API itself, rather than
// their ports, cannot run this way: the error says so.
func DepsBend(name string) (coord, api func(ports.Deps) ports.Deps, err error) {
	for _, e := range entries {
		if e.name != name {
			continue
		}
		b := &bend{name: "mutant:" + e.name}
		e.build(b)
		if b.wrap != nil || b.wrapAPI != nil {
			return nil, nil, fmt.Errorf("mutant %q wraps the built coordinator or API, not their ports: it cannot be bent into a process", name)
		}
		return b.coord, b.api, nil
	}
	_, err = Lookup(name)
	return nil, nil, err
}
