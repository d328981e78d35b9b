//go:build conformmutants

package realcli

import (
	"os"

	wsmutants "github.com/wsconverge/converge/scenarios/mutants/workspace"
)

// EnvMutant names the catalogue mutant a `converge serve` built with the
// conformmutants tag runs as (empty: the reference). It exists only in
// such a build, so the reference's normal code path has no mutant switch
// (docs/decisions/workspaces-conform.md, DR291).
const EnvMutant = "CONVERGE_MUTANT"

func init() {
	bendStack = func(st *stack) error {
		name := os.Getenv(EnvMutant)
		if name == "" {
			return nil
		}
		coord, api, err := wsmutants.DepsBend(name)
		if err != nil {
			return err
		}
		if coord != nil {
			st.coord = coord(st.coord)
		}
		if api != nil {
			st.api = api(st.api)
		}
		return nil
	}
}
