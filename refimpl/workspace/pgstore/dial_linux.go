package pgstore

import (
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// setUserTimeout sets TCP_USER_TIMEOUT: unacknowledged data fails the
// connection after d instead of after minutes of retransmissions.
func setUserTimeout(c syscall.RawConn, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(d.Milliseconds()))
	})
	if err != nil {
		return fmt.Errorf("tcp_user_timeout: %w", err)
	}
	if serr != nil {
		return fmt.Errorf("tcp_user_timeout: %w", serr)
	}
	return nil
}
