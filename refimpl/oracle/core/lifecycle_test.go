package core_test

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"google.golang.org/protobuf/proto"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
	"github.com/wsconverge/converge/refimpl/oracle/core"
	"github.com/wsconverge/converge/wire/abciquery"
	"github.com/wsconverge/converge/wire/keys"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
)

func TestNewRefusesBadInput(t *testing.T) {
	cfg := oracle.DefaultConfig(t.TempDir())
	rnd := rand.New(rand.NewPCG(1, 1))
	signer := keys.StandInSigner{Key: selfKey}

	bad := cfg
	bad.Gas.Prices = "1agxn"
	_, err := core.New(bad, signer, rnd)
	require.ErrorContains(t, err, "gas.prices")

	_, err = core.New(cfg, keys.StandInSigner{}, rnd)
	require.ErrorIs(t, err, keys.ErrNoKey)

	_, err = core.New(cfg, signer, nil)
	require.Error(t, err)
}

// The start follows §3.1 and D28: dial, one status probe, the sequence
// sync, the three subscriptions byte for byte, then the load (R listing
// ENABLED docs only), then the loops.
func TestStartOrder(t *testing.T) {
	w := newWorld(t).withDoc(doc(1))
	w.startRunning()

	var kinds []string
	for _, s := range w.outs {
		switch o := s.out.(type) {
		case ports.Dial:
			kinds = append(kinds, "dial")
		case ports.StatusCall:
			kinds = append(kinds, "status")
		case ports.Subscribe:
			kinds = append(kinds, "subscribe "+o.Query)
			require.Equal(t, w.conn, o.Conn)
		case ports.QueryCall:
			kinds = append(kinds, o.Path)
		case *ports.Trace:
			if o.Kind == ports.TraceStep {
				kinds = append(kinds, "step "+o.Name)
			}
		}
	}
	require.Equal(t, []string{
		"dial", "status", "step " + ports.StepConnected,
		abciquery.PathAccount,
		"subscribe " + oracle.QueryRegister, "subscribe " + oracle.QueryUpdate, "subscribe " + oracle.QueryComplete,
		"step " + ports.StepSubscribed,
		abciquery.PathDocs, abciquery.PathSubmitData,
		"step " + ports.StepLoaded, "step " + ports.StepRunning,
	}, kinds)

	// R lists ENABLED docs only (D27).
	list := w.queriesOf(abciquery.PathDocs)[0].out.(ports.QueryCall)
	var req oraclev1.QueryOracleRequestDocsRequest
	require.NoError(t, proto.Unmarshal(list.Data, &req))
	require.Equal(t, oraclev1.RequestStatus_REQUEST_STATUS_ENABLED, req.GetStatus())

	// The first tick, 1 s later, runs the loaded job.
	require.Empty(t, w.fetchesOf(1))
	w.advance(time.Second)
	require.Len(t, w.fetchesOf(1), 1)
	require.Equal(t, t0.Add(time.Second), w.fetchesOf(1)[0].at)
}

// A failed connect or status probe ends the daemon with a non-zero exit,
// after the §3.7 steps.
func TestStartFailures(t *testing.T) {
	t.Run("dial refused", func(t *testing.T) {
		w := newWorld(t)
		w.refuse = 1
		w.start()
		exits := outputsOf[ports.Exit](w)
		require.Len(t, exits, 1)
		require.Equal(t, 1, exits[0].Code)
		require.Contains(t, exits[0].Reason, "connect")
		require.Empty(t, outputsOf[ports.StatusCall](w))
		require.Empty(t, outputsOf[ports.Subscribe](w))
	})
	t.Run("status probe fails", func(t *testing.T) {
		w := newWorld(t)
		w.hold = func(o ports.Output) bool { _, ok := o.(ports.StatusCall); return ok }
		w.start()
		w.reply(func(o ports.Output) bool { _, ok := o.(ports.StatusCall); return ok },
			func(id ports.ID) ports.Input { return ports.Reply{ID: id, Err: errors.New("connection refused")} })
		exits := outputsOf[ports.Exit](w)
		require.Len(t, exits, 1)
		require.Equal(t, 1, exits[0].Code)
		require.Contains(t, exits[0].Reason, "status probe")
		require.Empty(t, outputsOf[ports.Subscribe](w), "nothing after a failed probe")
		require.Empty(t, w.queriesOf(pathAccount))
		require.Equal(t, oracle.HealthFatal, w.c.Metrics().HealthStatus)
		// The closed connection is given back.
		require.Contains(t, outputsOf[ports.CloseConn](w), ports.CloseConn{Conn: w.conn})
		// Nothing is handled after the exit.
		require.Nil(t, w.c.Handle(w.now, ports.Wake{}))
	})
}

// Until the list query of the load succeeds it is retried every 5 s, and
// frames that arrive meanwhile wait; they are handled after the load, in
// arrival order (D15, D28, §3.3.4 step 4).
func TestLoadRetriesAndBuffersFrames(t *testing.T) {
	w := newWorld(t).withDoc(doc(1)).withDoc(doc(2))
	w.chain.FailQueries(abciquery.PathDocs, 2)
	w.start()
	require.False(t, w.traced(ports.TraceStep, ports.StepRunning))
	require.Len(t, w.queriesOf(abciquery.PathDocs), 1)

	// Request 1 completes round 4 while the daemon is still loading; the
	// frame waits.
	w.chain.Complete(1, 4, t0)
	w.complete(completeEntry{1, 4, t0})
	require.Equal(t, uint64(0), w.c.Metrics().EventsProcessed)

	w.advance(5 * time.Second)
	require.Len(t, w.queriesOf(abciquery.PathDocs), 2)
	require.False(t, w.traced(ports.TraceStep, ports.StepRunning))
	w.advance(5 * time.Second)
	require.Len(t, w.queriesOf(abciquery.PathDocs), 3)
	require.True(t, w.traced(ports.TraceStep, ports.StepRunning))
	require.Equal(t, uint64(1), w.c.Metrics().EventsProcessed)
	require.Equal(t, uint64(2), w.c.Metrics().TotalErrors)

	// The load created job 1 with the chain's nonce 4; the buffered frame
	// was then a stale Complete.
	require.Equal(t, []oracle.Row{oracle.RowCreate, oracle.RowCompleteStale}, w.rows(1))
}

// No broadcast is made before the first sequence sync succeeds (§3.1
// step 3); the initial sync is retried every 5 s.
func TestNoBroadcastBeforeSequenceSync(t *testing.T) {
	w := newWorld(t).withDoc(doc(1))
	w.chain.FailQueries(abciquery.PathAccount, 100)
	w.startRunning()
	w.advance(4 * time.Second)
	require.Len(t, w.fetchesOf(1), 1, "the job runs")
	require.Empty(t, w.broadcasts(), "but nothing is broadcast")
	require.GreaterOrEqual(t, len(w.queriesOf(abciquery.PathAccount)), 2)

	// Once the account answers, the pending result goes out with its
	// sequence.
	w.chain.ClearFailures(abciquery.PathAccount)
	w.advance(20 * time.Second)
	subs := w.broadcasts()
	require.Len(t, subs, 1)
	require.Equal(t, uint64(1), subs[0].n)
	require.Equal(t, "1.25", subs[0].raw)
	require.Equal(t, uint64(0), subs[0].sequence)
}

// Restart recovery (§3.8): after a crash, R gives every assigned request a
// job without submitting a round twice, whether the crash came after the
// commit or between admission and commit.
func TestRestartRecovery(t *testing.T) {
	t.Run("submission committed", func(t *testing.T) {
		w := newWorld(t).withDoc(doc(1)).startRunning()
		w.advance(time.Second)
		require.Len(t, w.broadcasts(), 1)
		w.chain.Commit()

		n := w.restart().startRunning()
		require.Equal(t, []oracle.Row{oracle.RowCreateSubmitted}, n.rows(1))
		n.advance(time.Hour)
		require.Empty(t, n.fetchesOf(1))
		require.Empty(t, n.broadcasts())
	})
	t.Run("crash between admission and commit", func(t *testing.T) {
		w := newWorld(t).withDoc(doc(1)).startRunning()
		w.advance(time.Second)
		require.Len(t, w.broadcasts(), 1) // admitted, in the mempool

		n := w.restart().startRunning()
		require.Equal(t, []oracle.Row{oracle.RowCreate}, n.rows(1))
		n.hold = isQuery(abciquery.PathSubmitData)
		n.advance(time.Second)
		n.chain.Commit() // the block commits the first process's tx
		n.hold = func(ports.Output) bool { return false }
		n.release(isQuery(abciquery.PathSubmitData))
		require.Empty(t, n.broadcasts(), "the on-chain check found the committed round")
		require.Len(t, n.results(ports.ResultOnChain), 1)
	})
	t.Run("restart less than a period after a Complete", func(t *testing.T) {
		w := newWorld(t).withDoc(doc(1, period(30))).startRunning()
		w.advance(time.Second)
		w.chain.Commit()
		w.chain.Complete(1, 1, w.now)
		w.complete(completeEntry{1, 1, w.now})
		w.advance(5 * time.Second)

		n := w.restart().startRunning()
		n.advance(30 * time.Second)
		fetches := n.fetchesOf(1)
		require.Len(t, fetches, 1)
		require.Equal(t, t0.Add(31*time.Second), fetches[0].at, "lastBT + period (D14)")
		require.Equal(t, uint64(2), n.broadcasts()[0].n)
	})
}
