package core_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
	"github.com/wsconverge/converge/refimpl/oracle/core"
	"github.com/wsconverge/converge/wire/abciquery"
	"github.com/wsconverge/converge/wire/cometrpc"
)

// Frames are routed by their query; the others are dropped and counted
// (§3.2).
func TestFrameRouting(t *testing.T) {
	for _, tc := range []struct {
		name      string
		frame     ports.Frame
		processed uint64
		errors    uint64
	}{
		{"unknown query", ports.Frame{Query: "tm.event='Tx'", Events: map[string][]string{"tm.event": {"Tx"}}}, 0, 1},
		{"no events", ports.Frame{Query: oracle.QueryComplete}, 0, 1},
		{"undecodable data", ports.Frame{Query: oracle.QueryComplete, Events: map[string][]string{}, Err: errors.New("bad data")}, 0, 1},
		{"complete without entries", ports.Frame{Query: oracle.QueryComplete, Events: map[string][]string{"tm.event": {"NewBlock"}}}, 1, 0},
		{"register with a bad id", ports.Frame{Query: oracle.QueryRegister, Events: map[string][]string{oracle.KeyRegisterID: {"x"}}}, 1, 1},
		{"complete with uneven lists", ports.Frame{Query: oracle.QueryComplete, Events: map[string][]string{
			oracle.KeyCompleteID: {"1", "2"}, oracle.KeyCompleteNonce: {"1"}, oracle.KeyCompleteBlockTime: {"1", "2"}}}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t).startRunning()
			before := w.c.Metrics()
			f := tc.frame
			f.Conn = w.conn
			w.handle(f)
			m := w.c.Metrics()
			require.Equal(t, tc.processed, m.EventsProcessed-before.EventsProcessed)
			require.Equal(t, tc.errors, m.TotalErrors-before.TotalErrors)
		})
	}
}

// One Register frame can carry several ids; each is handled in order.
// Frames of a connection no longer in use are ignored.
func TestRegisterFrameWithSeveralIDs(t *testing.T) {
	w := newWorld(t).startRunning()
	w.withDoc(doc(3)).withDoc(doc(4, accounts(peer1))).withDoc(doc(5))
	w.register(3, 4, 5)
	require.NotNil(t, w.job(3))
	require.Nil(t, w.job(4), "not assigned")
	require.NotNil(t, w.job(5))
	var order []uint64
	for _, tr := range outputsOf[*ports.Trace](w) {
		if tr.Kind == ports.TraceJob {
			order = append(order, tr.RequestID)
		}
	}
	require.Equal(t, []uint64{3, 5}, order)

	w.handle(ports.Frame{Conn: w.conn + 100, Query: oracle.QueryRegister, Events: map[string][]string{oracle.KeyRegisterID: {"9"}}})
	require.Equal(t, uint64(1), w.c.Metrics().EventsProcessed)
}

// A dropped WebSocket is dialled again after min(2^k s, max_delay) ± 10 %,
// re-subscribed with new request ids, and R runs after the
// re-subscription (D25).
func TestReconnectAndReconcile(t *testing.T) {
	w := newWorld(t).withDoc(doc(1)).startRunning()
	old := w.conn
	oldSubs := outputsOf[ports.Subscribe](w)
	lists := len(w.queriesOf(abciquery.PathDocs))

	w.handle(ports.ConnClosed{Conn: old, Err: errors.New("EOF")})
	require.Len(t, outputsOf[ports.Dial](w), 1, "no dial before the backoff")
	w.advance(1100 * time.Millisecond)
	dials := stampsOf[ports.Dial](w)
	require.Len(t, dials, 2)
	wait := dials[1].at.Sub(t0)
	require.GreaterOrEqual(t, wait, 900*time.Millisecond)
	require.LessOrEqual(t, wait, 1100*time.Millisecond)

	subs := outputsOf[ports.Subscribe](w)[len(oldSubs):]
	require.Len(t, subs, 3)
	for i, s := range subs {
		require.Equal(t, w.conn, s.Conn)
		require.NotEqual(t, old, s.Conn)
		require.Equal(t, oracle.Subscriptions[i].Query(), s.Query)
		require.Greater(t, s.ID, oldSubs[2].ID, "new ids")
	}
	require.Len(t, w.queriesOf(abciquery.PathDocs), lists+1, "R after re-subscription")

	// A Complete missed while disconnected is caught up by R.
	w.chain.Complete(1, 1, t0)
	w.handle(ports.ConnClosed{Conn: w.conn})
	w.advance(2 * time.Second)
	require.Equal(t, uint64(1), w.job(1).Nonce)
}

// retry.max_attempts consecutive failed attempts are fatal: the daemon
// shuts down and exits non-zero. The waits double up to max_delay.
func TestReconnectExhaustionIsFatal(t *testing.T) {
	w := newWorld(t, func(c *oracle.Config) { c.Retry.MaxAttempts = 4; c.Retry.MaxDelaySec = 3 }).startRunning()
	w.refuse = 100
	w.handle(ports.ConnClosed{Conn: w.conn})
	w.advance(time.Minute)

	dials := stampsOf[ports.Dial](w)[1:]
	require.Len(t, dials, 4)
	prev := t0
	for k, d := range dials {
		base := min(time.Second<<k, 3*time.Second)
		lo, hi := core.JitterBounds(base)
		gap := d.at.Sub(prev)
		require.GreaterOrEqual(t, gap, lo, "wait before attempt %d", k)
		require.LessOrEqual(t, gap, hi, "wait before attempt %d", k)
		prev = d.at
	}
	exits := outputsOf[ports.Exit](w)
	require.Len(t, exits, 1)
	require.Equal(t, 1, exits[0].Code)
	require.Equal(t, oracle.HealthFatal, w.c.Metrics().HealthStatus)
	require.Equal(t, prev, stampsOf[ports.Exit](w)[0].at)
}

// A failed subscribe closes the connection and counts as a failed attempt;
// a success resets the count.
func TestSubscribeFailure(t *testing.T) {
	w := newWorld(t).startRunning()
	w.hold = func(o ports.Output) bool { _, ok := o.(ports.Subscribe); return ok }
	first := w.conn
	w.handle(ports.ConnClosed{Conn: first})
	w.advance(2 * time.Second)
	second := w.conn
	require.NotEqual(t, first, second)
	w.reply(func(o ports.Output) bool { _, ok := o.(ports.Subscribe); return ok },
		func(id ports.ID) ports.Input {
			return ports.Reply{ID: id, RPCError: cometrpc.ErrInternal("already subscribed")}
		})
	require.Contains(t, outputsOf[ports.CloseConn](w), ports.CloseConn{Conn: second})
	require.Equal(t, uint64(1), w.c.Metrics().TotalErrors)

	w.held = nil
	w.hold = func(ports.Output) bool { return false }
	w.advance(3 * time.Second)
	require.Greater(t, w.conn, second)
	require.Empty(t, outputsOf[ports.Exit](w))
}
