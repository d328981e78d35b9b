package driver

import (
	"os"
	"testing"

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
	os.Exit(code)
}
