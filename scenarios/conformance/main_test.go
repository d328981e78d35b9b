package conformance_test

import (
	"os"
	"testing"

	"github.com/wsconverge/converge/sim/engine"
)

// TestMain keeps the tests out of the user's state directory.
func TestMain(m *testing.M) { os.Exit(engine.WithoutUserState(m.Run)) }
