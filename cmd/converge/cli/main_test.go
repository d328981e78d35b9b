package cli

import (
	"os"
	"testing"

	"github.com/wsconverge/converge/sim/engine"
)

// TestMain keeps the tests out of the user's state directory, where the
// CLI writes replay files by default (issue 23: 47 files per make test).
func TestMain(m *testing.M) { os.Exit(engine.WithoutUserState(m.Run)) }
