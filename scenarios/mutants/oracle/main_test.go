package oracle

import (
	"os"
	"testing"

	oracled "github.com/wsconverge/converge/refimpl/oracle"
	oraclesim "github.com/wsconverge/converge/sim/oracle"
)

// TestMain registers the reference daemon for the runs whose Options
// name no System (the world imports none).
func TestMain(m *testing.M) {
	oraclesim.Register(oracled.NewSystem())
	os.Exit(m.Run())
}
