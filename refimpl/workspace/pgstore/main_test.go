package pgstore_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/wsconverge/converge/refimpl/testenv"
)

// TestMain shares one PostgreSQL server between the package's tests; each
// test gets a database of its own. Once the server is gone, no goroutine
// the store started (a listener, a pool's) may still run (issue 24 item 5).
func TestMain(m *testing.M) {
	code := testenv.Run(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
