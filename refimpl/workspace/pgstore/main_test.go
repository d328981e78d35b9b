package pgstore_test

import (
	"os"
	"testing"

	"github.com/wsconverge/converge/refimpl/testenv"
)

// TestMain shares one PostgreSQL server between the package's tests; each
// test gets a database of its own.
func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }
