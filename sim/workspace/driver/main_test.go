package driver

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/wsconverge/converge/sim/workspace/driver/drivertest"
)

// childEnv names the fake child the test binary plays when it is started
// as a child process (children_test.go).
const childEnv = "CONVERGE_DRIVER_TEST_CHILD"

func TestMain(m *testing.M) {
	if name := os.Getenv(childEnv); name != "" {
		os.Exit(runChild(name))
	}
	code := m.Run()
	drivertest.Cleanup()
	// No goroutine of the driver's (a child's reader, its watchdog) may
	// outlive the tests (issue 24 item 5).
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
