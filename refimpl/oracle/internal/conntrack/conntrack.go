// Package conntrack gives an HTTP client whose connections can all be
// closed at once. http.Transport.CloseIdleConnections only closes the
// connections that are idle at that instant; one that is handed back to
// the pool a moment later stays open, with its two goroutines, until the
// idle timeout. A daemon that must leave no goroutine behind when it stops
// closes every connection its transport ever dialled instead.
package conntrack

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// Client is an *http.Client whose dialled connections are tracked.
type Client struct {
	*http.Client
	mu     sync.Mutex
	conns  map[*conn]struct{}
	closed bool
}

// New is a client with the default transport's settings.
func New() *Client {
	c := &Client{conns: map[*conn]struct{}{}}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := &conn{Conn: nc, owner: c}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed {
			_ = nc.Close()
			return nil, net.ErrClosed
		}
		c.conns[tc] = struct{}{}
		return tc, nil
	}
	c.Client = &http.Client{Transport: t}
	return c
}

// Close closes every connection the client has open and refuses new ones.
func (c *Client) Close() {
	c.CloseIdleConnections()
	c.mu.Lock()
	c.closed = true
	conns := c.conns
	c.conns = map[*conn]struct{}{}
	c.mu.Unlock()
	for tc := range conns {
		_ = tc.Conn.Close()
	}
}

// Open is how many connections are open (tests).
func (c *Client) Open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.conns)
}

type conn struct {
	net.Conn
	owner *Client
	once  sync.Once
}

func (tc *conn) Close() error {
	tc.once.Do(func() {
		tc.owner.mu.Lock()
		delete(tc.owner.conns, tc)
		tc.owner.mu.Unlock()
	})
	return tc.Conn.Close()
}
