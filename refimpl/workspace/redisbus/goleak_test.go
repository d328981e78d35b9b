package redisbus_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine the bus started (a
// subscription's reader, the client's pool) is still running when they end
// (issue 24 item 5).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
