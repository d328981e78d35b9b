package cli

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/wsconverge/converge/sim/engine"
)

// TestMain keeps the tests out of the user's state directory, where the
// CLI writes replay files by default (issue 23: 47 files per make test),
// and fails them if a goroutine the CLI started (the server's, a
// campaign's workers) outlives them (issue 24 item 5).
func TestMain(m *testing.M) {
	os.Exit(engine.WithoutUserState(func() int {
		code := m.Run()
		if code == 0 {
			if err := goleak.Find(); err != nil {
				fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
				code = 1
			}
		}
		return code
	}))
}
