package core_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
	"github.com/wsconverge/converge/refimpl/oracle/oracledtest"
)

// shutdownTrace is the §3.7 trace points in the order they came.
func shutdownTrace(w *world) []string {
	var got []string
	for _, tr := range outputsOf[*ports.Trace](w) {
		switch tr.Kind {
		case ports.TraceClose, ports.TraceStop:
			got = append(got, tr.Kind.String()+" "+tr.Name)
		case ports.TraceDrained:
			got = append(got, "drained")
		case ports.TraceStep:
			if tr.Name == ports.StepStopping || tr.Name == ports.StepJoined {
				got = append(got, "step "+tr.Name)
			}
		}
	}
	return got
}

var wantShutdown = []string{
	"step " + ports.StepStopping,
	"close " + ports.ChanShutdown,
	"close " + ports.ChanEvent, "close " + ports.ChanError, "stop " + ports.CompWatcher,
	"drained", "close " + ports.ChanResult, "stop " + ports.CompScheduler,
	"close " + ports.ChanSemaphore, "stop " + ports.CompSubmitter,
	"stop " + ports.CompRPCClient,
	"step " + ports.StepJoined,
	"close " + ports.ChanFatal,
}

// A stop runs §3.7 in order (O15) and exits 0; the subscriptions are
// cancelled and the connection closed by the daemon.
func TestShutdownOrder(t *testing.T) {
	w := newWorld(t).withDoc(doc(1)).startRunning()
	w.advance(1500 * time.Millisecond)
	conn := w.conn
	w.handle(ports.Stop{})
	require.Equal(t, wantShutdown, shutdownTrace(w))
	exits := outputsOf[ports.Exit](w)
	require.Equal(t, []ports.Exit{{Code: 0, Reason: "stop requested"}}, exits)
	require.Len(t, outputsOf[ports.UnsubscribeAll](w), 1)
	require.Equal(t, []ports.CloseConn{{Conn: conn}}, outputsOf[ports.CloseConn](w))
	require.Equal(t, oracle.HealthStopped, w.c.Metrics().HealthStatus)
	_, next := w.c.NextWake()
	require.False(t, next, "no timer after the exit")

	// A second stop, or anything else, is ignored.
	require.Nil(t, w.c.Handle(w.now, ports.Stop{}))
}

// Step 3 waits for a GET in flight (the task group drains), and nothing
// starts after the stop: no retry, no broadcast of its result (D22, O14).
func TestShutdownWaitsForGET(t *testing.T) {
	w := newWorld(t).withDoc(doc(1)).withDoc(doc(2)).startRunning()
	w.sources[url(2, 0)] = func(int) (int, string, error) { return 500, "", nil }
	w.hold = isFetch(1)
	w.advance(1500 * time.Millisecond) // 1's GET in flight, 2 in a retry wait
	w.handle(ports.Stop{})
	trace := shutdownTrace(w)
	require.Equal(t, wantShutdown[:5], trace, "waiting for the GET")
	require.Empty(t, outputsOf[ports.Exit](w))

	w.now = w.now.Add(20 * time.Second)
	w.release(isFetch(1))
	require.Equal(t, wantShutdown, shutdownTrace(w))
	require.Len(t, outputsOf[ports.Exit](w), 1)
	require.Len(t, w.fetchesOf(1), 1)
	require.Len(t, w.fetchesOf(2), 1, "no retry after the stop")
	require.Empty(t, w.broadcasts(), "no broadcast after the stop")
}

// Step 4 waits for a broadcast in flight; queued results and results in a
// backoff wait are dropped.
func TestShutdownWaitsForBroadcast(t *testing.T) {
	w := newWorld(t).withDoc(doc(1)).withDoc(doc(2)).withDoc(doc(3)).startRunning()
	w.chain.Script(oracledtest.Answer{Code: oracle.CodeMempoolIsFull})
	broadcasts := 0
	w.hold = func(o ports.Output) bool {
		if isBroadcast(o) {
			broadcasts++
			return broadcasts == 2
		}
		return false
	}
	w.advance(time.Second) // 1: code 20, in backoff; 2: broadcast held; 3: waiting for the lock
	require.Len(t, w.held, 1)
	w.handle(ports.Stop{})
	require.Equal(t, wantShutdown[:8], shutdownTrace(w), "waiting for the broadcast")
	w.release(isBroadcast)
	require.Equal(t, wantShutdown, shutdownTrace(w))
	require.Len(t, outputsOf[ports.BroadcastCall](w), 2)
	require.Len(t, w.results(ports.ResultDropped), 2)
	require.Len(t, w.results(ports.ResultSubmitted), 1)
	w.advance(time.Minute)
	require.Len(t, outputsOf[ports.BroadcastCall](w), 2)
}

// A stop while the daemon is still loading, or a fatal condition, runs the
// same steps; the fatal one exits 1.
func TestShutdownEarlyAndFatal(t *testing.T) {
	t.Run("while loading", func(t *testing.T) {
		w := newWorld(t)
		w.hold = isQuery("/guru.oracle.v1.Query/OracleRequestDocs")
		w.start()
		w.handle(ports.Stop{})
		require.Equal(t, wantShutdown, shutdownTrace(w))
		require.Equal(t, 0, outputsOf[ports.Exit](w)[0].Code)
	})
	t.Run("fatal", func(t *testing.T) {
		w := newWorld(t, func(c *oracle.Config) { c.Retry.MaxAttempts = 1 }).startRunning()
		w.refuse = 1
		w.handle(ports.ConnClosed{Conn: w.conn, Err: errors.New("EOF")})
		w.advance(2 * time.Second)
		require.Equal(t, wantShutdown, shutdownTrace(w))
		require.Equal(t, 1, outputsOf[ports.Exit](w)[0].Code)
		require.Empty(t, outputsOf[ports.UnsubscribeAll](w), "no connection left to unsubscribe on")
	})
}

// The health check calls `status` every 30 s with a 5 s timeout; the
// status is healthy with recent frames, degraded without a frame for 5
// minutes, unhealthy when `status` fails; it never stops the daemon (D21).
func TestHealthCheck(t *testing.T) {
	w := newWorld(t).startRunning()
	w.advance(90 * time.Second)
	calls := stampsOf[ports.StatusCall](w)[1:] // the first is the start probe
	require.Len(t, calls, 3)
	for i, c := range calls {
		require.Equal(t, t0.Add(time.Duration(i+1)*30*time.Second), c.at)
		require.Equal(t, 5*time.Second, c.out.(ports.StatusCall).Timeout)
	}
	require.Equal(t, oracle.HealthDegraded, w.c.Metrics().HealthStatus, "no frame yet")

	w.complete()
	w.advance(30 * time.Second)
	require.Equal(t, oracle.HealthHealthy, w.c.Metrics().HealthStatus)

	w.hold = func(o ports.Output) bool { _, ok := o.(ports.StatusCall); return ok }
	w.advance(30 * time.Second)
	w.reply(func(o ports.Output) bool { _, ok := o.(ports.StatusCall); return ok },
		func(id ports.ID) ports.Input { return ports.Reply{ID: id, Err: errors.New("timeout")} })
	require.Equal(t, oracle.HealthUnhealthy, w.c.Metrics().HealthStatus)
	require.Empty(t, outputsOf[ports.Exit](w))

	var changes []oracle.HealthStatus
	for _, tr := range outputsOf[*ports.Trace](w) {
		if tr.Kind == ports.TraceHealth {
			changes = append(changes, tr.Health)
		}
	}
	require.Equal(t, []oracle.HealthStatus{oracle.HealthDegraded, oracle.HealthHealthy, oracle.HealthUnhealthy}, changes)
}

// The same inputs give the same outputs: the core reads no clock and no
// randomness but the source it is given.
func TestDeterministic(t *testing.T) {
	run := func() []ports.Output {
		w := newWorld(t).withDoc(doc(1)).withDoc(doc(2)).startRunning()
		for i := 0; i < 4; i++ {
			w.chain.Script(oracledtest.Answer{Code: oracle.CodeMempoolIsFull})
		}
		w.advance(time.Minute)
		w.handle(ports.ConnClosed{Conn: w.conn})
		w.advance(time.Minute)
		w.handle(ports.Stop{})
		var outs []ports.Output
		for _, s := range w.outs {
			outs = append(outs, s.out)
		}
		return outs
	}
	a, b := run(), run()
	require.Equal(t, a, b)
	require.Greater(t, len(a), 50)
}
