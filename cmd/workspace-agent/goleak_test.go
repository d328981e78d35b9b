package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine its code started is
// still running when they end (issue 24 item 5).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
