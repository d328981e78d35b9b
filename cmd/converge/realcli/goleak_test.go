package realcli

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine serve started (its
// HTTP server, its shutdown watcher) or a real service's client is still
// running when they end (docs/decisions/lint.md, DR354).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
