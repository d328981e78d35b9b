package pgstore

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"syscall"
	"time"
)

// dialFunc dials with short TCP keepalives and TCP_USER_TIMEOUT, so a dead
// peer is noticed within seconds even while a connection waits (a leader
// lock check, a listener waiting for notifications). writes, when given,
// counts the requests sent on each connection.
func (o options) dialFunc(writes *atomic.Int64) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{
		Timeout: 5 * time.Second,
		KeepAliveConfig: net.KeepAliveConfig{
			Enable:   true,
			Idle:     o.keepIdle,
			Interval: o.keepInterval,
			Count:    o.keepCount,
		},
		Control: func(network, _ string, c syscall.RawConn) error {
			switch network {
			case "tcp", "tcp4", "tcp6":
				return setUserTimeout(c, o.userTimeout)
			}
			return nil
		},
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, fmt.Errorf("dial %s %s: %w", network, addr, err)
		}
		if writes == nil {
			return c, nil
		}
		return &countingConn{Conn: c, writes: writes}, nil
	}
}

// countingConn counts the writes on a connection: pgx sends each request
// (a query, a pipelined batch) with one write, so this counts round trips.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}
