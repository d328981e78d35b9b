//go:build !linux

package pgstore

import (
	"syscall"
	"time"
)

// setUserTimeout is a no-op where TCP_USER_TIMEOUT does not exist; the
// keepalives still detect a dead peer.
func setUserTimeout(syscall.RawConn, time.Duration) error { return nil }
