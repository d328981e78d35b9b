package oracle_test

import (
	"os"
	"testing"

	oracled "github.com/wsconverge/converge/refimpl/oracle"
	oraclesim "github.com/wsconverge/converge/sim/oracle"
)

// The reference daemon is a System of the oracle world.
var _ oraclesim.System = oracled.NewSystem()

// TestMain registers the reference daemon, as the CLI does: the world
// imports none, and a run whose Options name no System judges it.
func TestMain(m *testing.M) {
	oraclesim.Register(oracled.NewSystem())
	os.Exit(m.Run())
}
