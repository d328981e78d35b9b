package pgstore_test

import (
	"context"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/refimpl/workspace/pgstore"
	"github.com/wsconverge/converge/refimpl/workspace/runner"
)

// blackhole is a TCP proxy to PostgreSQL that can cut the path without
// closing anything: after cut, bytes are neither forwarded nor refused,
// as in a network partition (neither end sees a reset; the server's TCP
// keepalives are answered by the proxy's kernel).
type blackhole struct {
	ln     net.Listener
	target string
	cutCh  chan struct{}
	done   chan struct{} // closed by close: a cut pipe's holding ends
	once   sync.Once
	mu     sync.Mutex
	conns  []net.Conn
}

func newBlackhole(t *testing.T, target string) *blackhole {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	b := &blackhole{ln: ln, target: target, cutCh: make(chan struct{}), done: make(chan struct{})}
	go b.serve()
	t.Cleanup(b.close)
	return b
}

func (b *blackhole) serve() {
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", b.target)
		if err != nil {
			c.Close()
			continue
		}
		b.mu.Lock()
		b.conns = append(b.conns, c, s)
		b.mu.Unlock()
		go b.pipe(c, s)
		go b.pipe(s, c)
	}
}

// pipe forwards until the path is cut, then holds what it read.
func (b *blackhole) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		select {
		case <-b.cutCh:
			<-b.done // held until the test's cleanup closes the sockets
			return
		default:
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (b *blackhole) cut() { b.once.Do(func() { close(b.cutCh) }) }

func (b *blackhole) close() {
	close(b.done)
	b.ln.Close()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.conns {
		c.Close()
	}
}

// TestPartitionedLeaderLosesTheLock is the partition drill for the leader
// lock: the leader reaches PostgreSQL through a path the test cuts; the
// server ends the leader's silent session after idle_session_timeout, the
// standby (on a direct path) is woken and takes the lock, and the leader's
// own heartbeat drops its lease. It reports the failover time and the
// dual-leader window (how long the cut-off leader still believed it led
// after the standby took over).
func TestPartitionedLeaderLosesTheLock(t *testing.T) {
	const idle = 1500 * time.Millisecond
	direct := newEnv(t)
	u, err := url.Parse(direct.dsn)
	require.NoError(t, err)
	hole := newBlackhole(t, u.Host)
	u.Host = hole.ln.Addr().String()
	opts := []pgstore.Option{pgstore.WithIdleSessionTimeout(idle), pgstore.WithCheckTimeout(time.Second)}
	far, err := pgstore.Open(context.Background(), u.String(), runner.Clock{}, opts...)
	require.NoError(t, err)
	t.Cleanup(far.Close)
	near, err := pgstore.Open(context.Background(), direct.dsn, runner.Clock{}, opts...)
	require.NoError(t, err)
	t.Cleanup(near.Close)

	ctx := context.Background()
	leader, standby := far.Leadership(), near.Leadership()
	t.Cleanup(func() { _ = standby.Close(ctx) })
	lease := acquire(t, leader, "far")
	_, ok, err := standby.TryAcquire(ctx, "near")
	require.NoError(t, err)
	require.False(t, ok)

	// Held across several idle timeouts, the lease stays: the heartbeat
	// keeps the session busy.
	time.Sleep(2 * idle)
	require.NoError(t, lease.Check(ctx))

	var lostAt time.Time
	lost := make(chan struct{})
	go func() {
		for lease.Check(ctx) == nil {
			time.Sleep(20 * time.Millisecond)
		}
		lostAt = time.Now()
		close(lost)
	}()
	cutAt := time.Now()
	hole.cut()

	// The standby runs as a coordinator does: it tries when woken, and
	// on its 1 s election retry otherwise.
	var took *pgstore.Lease
	for took == nil {
		require.Less(t, time.Since(cutAt), time.Minute, "the standby never took the lock")
		select {
		case <-standby.Vacated():
		case <-time.After(time.Second):
		}
		l, ok, err := standby.TryAcquire(ctx, "near")
		require.NoError(t, err)
		if ok {
			took = l.(*pgstore.Lease)
		}
	}
	tookAt := time.Now()
	require.Equal(t, lease.Epoch()+1, took.Epoch())
	select {
	case <-lost:
	case <-time.After(time.Minute):
		t.Fatal("the partitioned leader never noticed")
	}
	require.ErrorIs(t, lease.Check(ctx), contracts.ErrNotLeader)
	window := max(lostAt.Sub(tookAt), 0)
	t.Logf("partition drill: failover %s after the cut (idle_session_timeout %s); leader noticed %s after the cut; dual-leader window %s",
		tookAt.Sub(cutAt).Round(time.Millisecond), idle, lostAt.Sub(cutAt).Round(time.Millisecond), window.Round(time.Millisecond))
}
