package core_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
	"github.com/wsconverge/converge/wire/abciquery"
)

// A round: Register → job → GET at the next tick → broadcast of
// (r, Nonce + 1) with the rendered value → Completed, no re-execution →
// Complete → next GET at bt + period.
func TestRoundTrip(t *testing.T) {
	w := newWorld(t).startRunning()
	w.withDoc(doc(1))
	w.register(1)
	require.Equal(t, []oracle.Row{oracle.RowCreate}, w.rows(1))
	w.advance(time.Second)
	require.Len(t, w.fetchesOf(1), 1)
	subs := w.broadcasts()
	require.Len(t, subs, 1)
	require.Equal(t, submission{at: t0.Add(time.Second), r: 1, n: 1, raw: "1.25", sequence: 0, gas: 70000}, subs[0])
	require.Equal(t, oracle.ExecCompleted, w.job(1).Exec.Status)
	require.Equal(t, uint64(1), w.c.Metrics().TxSubmitted)
	require.Equal(t, uint64(1), w.c.Metrics().JobsCompleted)

	// Completed blocks re-execution until the Complete.
	w.advance(time.Minute)
	require.Len(t, w.fetchesOf(1), 1)

	bt := w.now.Add(-4 * time.Second)
	w.chain.Commit()
	w.chain.Complete(1, 1, bt)
	w.complete(completeEntry{1, 1, bt})
	require.Equal(t, uint64(1), w.job(1).Nonce)
	require.Equal(t, bt.Add(10*time.Second), w.job(1).NextRunTime, "bt + period")
	w.advance(5 * time.Second)
	require.Len(t, w.fetchesOf(1), 1)
	w.advance(time.Second)
	fetches := w.fetchesOf(1)
	require.Len(t, fetches, 2)
	subs = w.broadcasts()
	require.Len(t, subs, 2)
	require.Equal(t, uint64(2), subs[1].n)
	require.Equal(t, uint64(1), subs[1].sequence, "L moved on after the success")
}

// Complete(n) applies only n > Nonce (D11); NextRunTime is max(now, bt +
// period) (D16); every entry of a frame is handled.
func TestCompleteEntries(t *testing.T) {
	w := newWorld(t).withDoc(doc(1)).withDoc(doc(2, period(30))).startRunning()
	w.advance(time.Second) // both submit round 1
	require.Len(t, w.broadcasts(), 2)

	old := t0.Add(-time.Hour)
	w.complete(completeEntry{1, 1, old}, completeEntry{2, 3, t0})
	require.Equal(t, uint64(1), w.job(1).Nonce)
	require.Equal(t, w.now, w.job(1).NextRunTime, "a block time in the past is clamped to now")
	require.Equal(t, uint64(3), w.job(2).Nonce, "missed rounds are accepted as is")
	require.Equal(t, t0.Add(30*time.Second), w.job(2).NextRunTime)

	w.complete(completeEntry{2, 3, t0}, completeEntry{2, 2, t0})
	require.Equal(t, uint64(3), w.job(2).Nonce)
	require.Equal(t, []oracle.Row{oracle.RowCreate, oracle.RowSelect, oracle.RowSucceeded, oracle.RowComplete,
		oracle.RowCompleteStale, oracle.RowCompleteStale}, w.rows(2))
}

// D14: a job created for a doc with nonce > 0 waits for the last
// aggregate's block time + period; one whose next round already holds
// self's submission is Completed and only the watchdog wakes it.
func TestCreationFacts(t *testing.T) {
	w := newWorld(t)
	w.withDoc(doc(1, nonce(5)))
	w.chain.Complete(1, 5, t0.Add(-3*time.Second))
	w.withDoc(doc(2, nonce(2)))
	w.chain.SetSubmitted(2, 3, self, "9")
	w.startRunning()

	require.Equal(t, t0.Add(7*time.Second), w.job(1).NextRunTime)
	require.Equal(t, []oracle.Row{oracle.RowCreateSubmitted}, w.rows(2))
	w.advance(8 * time.Second)
	fetches := w.fetchesOf(1)
	require.Len(t, fetches, 1)
	require.Equal(t, t0.Add(7*time.Second), fetches[0].at)
	require.Empty(t, w.fetchesOf(2))
	require.Equal(t, uint64(6), w.broadcasts()[0].n)
}

// A Register for an existing job is an Update (D9): it never resets the
// job; an Update changes URL, ParseRule, Period, Status, AccountList and
// AssignedIndex only, and never the nonce or the schedule (D10), whatever
// nonce the event carries.
func TestRegisterAndUpdateNeverReset(t *testing.T) {
	w := newWorld(t).withDoc(doc(1)).startRunning()
	w.advance(time.Second)
	before := *w.job(1)
	require.Equal(t, oracle.ExecCompleted, before.Exec.Status)

	w.register(1) // a duplicated Register frame (F4)
	w.withDoc(doc(1, period(20), accounts(peer1, self), func(d *oracle.RequestDoc) {
		d.Endpoints = []oracle.Endpoint{{URL: url(1, 0), ParseRule: "a"}, {URL: url(1, 1), ParseRule: "data.price"}}
	}))
	w.update(1) // the frame says nonce 999
	after := *w.job(1)
	require.Equal(t, before.Nonce, after.Nonce)
	require.Equal(t, before.NextRunTime, after.NextRunTime)
	require.Equal(t, before.Exec, after.Exec)
	require.Equal(t, 1, after.AssignedIndex)
	require.Equal(t, url(1, 1), after.URL)
	require.Equal(t, 20*time.Second, after.Period)
	w.advance(time.Minute)
	require.Len(t, w.fetchesOf(1), 1, "no re-execution before the Complete")

	// The next round uses the new endpoint and period.
	w.complete(completeEntry{1, 1, w.now})
	w.advance(20 * time.Second)
	fetches := w.fetchesOf(1)
	require.Len(t, fetches, 2)
	require.Equal(t, url(1, 1), fetches[1].out.(ports.Fetch).URL)
	require.Equal(t, w.now, fetches[1].at)
	for _, s := range w.broadcasts() {
		require.NotEqual(t, uint64(1000), s.n)
	}
}

// An Update that removes self (or the doc's endpoints) removes the job; an
// execution in flight is aborted at once and its result discarded.
func TestUpdateRemovesJobAndAbortsExecution(t *testing.T) {
	w := newWorld(t).withDoc(doc(1)).startRunning()
	w.hold = isFetch(1)
	w.advance(time.Second)
	require.Len(t, w.held, 1)
	fetch := w.held[0].(ports.Fetch)

	w.withDoc(doc(1, accounts(peer1, peer2)))
	w.update(1)
	require.Nil(t, w.job(1))
	require.Contains(t, outputsOf[ports.AbortFetch](w), ports.AbortFetch{ID: fetch.ID})
	require.Empty(t, w.held, "the abort answered the GET")
	w.advance(time.Minute)
	require.Empty(t, w.broadcasts())
	require.Len(t, w.fetchesOf(1), 1)

	// Re-assigned later: the job comes back with the on-chain check.
	w.hold = func(ports.Output) bool { return false }
	w.withDoc(doc(1))
	w.update(1)
	require.NotNil(t, w.job(1))
	w.advance(time.Second)
	require.Len(t, w.broadcasts(), 1)
}

// A PAUSED request keeps its job but does not run; ENABLED again, it runs.
// A job still queued for a slot when its request stops is dropped before
// any GET.
func TestPausedDoesNotRun(t *testing.T) {
	w := newWorld(t, poolSize(1)).withDoc(doc(1)).withDoc(doc(2)).startRunning()
	w.hold = isFetch(1)
	w.advance(time.Second)
	require.Len(t, w.fetchesOf(1), 1)
	require.Empty(t, w.fetchesOf(2), "queued for the one slot")

	w.withDoc(doc(2, status(oracle.StatusPaused)))
	w.update(2)
	require.Equal(t, oracle.ExecPending, w.job(2).Exec.Status, "dropped at once")
	w.release(isFetch(1))
	w.advance(time.Minute)
	require.Empty(t, w.fetchesOf(2))

	w.withDoc(doc(2))
	w.update(2)
	w.advance(time.Second)
	require.Len(t, w.fetchesOf(2), 1)
}

// A Complete during an execution supersedes it (D12): its result is
// discarded and the job runs again for the new round.
func TestCompleteSupersedesExecution(t *testing.T) {
	w := newWorld(t).withDoc(doc(1)).startRunning()
	w.hold = isFetch(1)
	w.advance(time.Second)
	require.Len(t, w.held, 1)

	w.complete(completeEntry{1, 1, w.now.Add(-10 * time.Second)})
	require.True(t, w.job(1).Exec.Superseded)
	w.hold = func(ports.Output) bool { return false }
	w.release(isFetch(1))
	require.Empty(t, w.broadcasts(), "the superseded result is discarded")
	require.Equal(t, oracle.ExecPending, w.job(1).Exec.Status)

	w.advance(time.Second)
	subs := w.broadcasts()
	require.Len(t, subs, 1)
	require.Equal(t, uint64(2), subs[0].n)
}

// A superseded execution waiting to retry a failed GET ends at once.
func TestCompleteEndsRetryWait(t *testing.T) {
	w := newWorld(t).withDoc(doc(1)).startRunning()
	w.sources[url(1, 0)] = func(int) (int, string, error) { return 503, "", nil }
	w.advance(time.Second)
	require.Len(t, w.fetchesOf(1), 1)
	w.complete(completeEntry{1, 1, w.now})
	require.Equal(t, oracle.ExecPending, w.job(1).Exec.Status)
	require.Contains(t, w.rows(1), oracle.RowEndSuperseded)
}

// Events are handled one at a time (D19): the second frame waits for the
// first frame's doc queries.
func TestEventsAreSequential(t *testing.T) {
	w := newWorld(t).startRunning()
	w.withDoc(doc(1)).withDoc(doc(2))
	w.hold = isQuery(abciquery.PathDoc)
	w.register(1)
	w.register(2)
	require.Len(t, w.held, 1, "the second frame waits")
	w.hold = func(ports.Output) bool { return false }
	w.release(isQuery(abciquery.PathDoc))
	require.NotNil(t, w.job(1))
	require.NotNil(t, w.job(2))
	require.Equal(t, uint64(2), w.c.Metrics().EventsProcessed)
}

// The doc query of an event is tried 3 times, 1 s and 2 s apart; then the
// event is dropped and R runs 5 s later (D9). A failed creation query
// drops the event the same way.
func TestDroppedEventReconciles(t *testing.T) {
	t.Run("doc query", func(t *testing.T) {
		w := newWorld(t).startRunning()
		w.withDoc(doc(1))
		w.chain.FailQueries(abciquery.PathDoc, 3)
		lists := len(w.queriesOf(abciquery.PathDocs))
		start := w.now
		w.register(1)
		w.advance(10 * time.Second)
		docQueries := w.queriesOf(abciquery.PathDoc)
		require.Len(t, docQueries, 3)
		require.Equal(t, []time.Time{start, start.Add(time.Second), start.Add(3 * time.Second)},
			[]time.Time{docQueries[0].at, docQueries[1].at, docQueries[2].at})
		list := w.queriesOf(abciquery.PathDocs)
		require.Len(t, list, lists+1)
		require.Equal(t, start.Add(8*time.Second), list[lists].at)
		require.NotNil(t, w.job(1), "R created the job")
		require.Equal(t, uint64(1), w.c.Metrics().TotalErrors, "one dropped event")
	})
	t.Run("creation query", func(t *testing.T) {
		w := newWorld(t).startRunning()
		w.withDoc(doc(1))
		w.chain.FailQueries(abciquery.PathSubmitData, 1)
		w.register(1)
		require.Nil(t, w.job(1))
		w.advance(5 * time.Second)
		require.NotNil(t, w.job(1))
	})
}

// The tick selects ready jobs by (NextRunTime, RequestID) and marks them
// Executing at once; with more than pool_size ready the rest wait for a
// slot, already Executing, and are never selected twice (D19, D30).
func TestSelectionOrderAndPool(t *testing.T) {
	w := newWorld(t, poolSize(2))
	for r := uint64(1); r <= 2; r++ {
		w.withDoc(doc(r, nonce(1)))
		w.chain.Complete(r, 1, t0.Add(-9*time.Second)) // ready at t0 + 1 s
	}
	w.hold = func(o ports.Output) bool { _, ok := o.(ports.Fetch); return ok }
	w.startRunning()
	w.advance(500 * time.Millisecond)
	w.withDoc(doc(4)).register(4) // ready at t0 + 0.5 s
	w.advance(200 * time.Millisecond)
	w.withDoc(doc(3)).register(3) // ready at t0 + 0.7 s
	w.advance(300 * time.Millisecond)
	var order []uint64
	for _, f := range outputsOf[ports.Fetch](w) {
		order = append(order, f.RequestID)
	}
	require.Equal(t, []uint64{4, 3}, order, "two slots, earliest NextRunTime first")
	for r := uint64(1); r <= 4; r++ {
		require.Equal(t, oracle.ExecExecuting, w.job(r).Exec.Status, "request %d", r)
	}
	w.advance(3 * time.Second)
	for r := uint64(1); r <= 4; r++ {
		require.Equal(t, 1, countRows(w.rows(r), oracle.RowSelect), "selected once: request %d", r)
	}
	require.Len(t, outputsOf[ports.Fetch](w), 2)
	w.release(isFetch(4))
	w.release(isFetch(3))
	order = order[:0]
	for _, f := range outputsOf[ports.Fetch](w) {
		order = append(order, f.RequestID)
	}
	require.Equal(t, []uint64{4, 3, 1, 2}, order, "then by request id")
}

func countRows(rows []oracle.Row, r oracle.Row) int {
	n := 0
	for _, x := range rows {
		if x == r {
			n++
		}
	}
	return n
}

// The watchdog (D13) wakes a Completed job 24 h after its success: the
// chain moved on → as Complete; self's submission missing → run the round
// again; present → wait another 24 h; the doc gone → remove.
func TestWatchdog(t *testing.T) {
	setup := func(t *testing.T) *world {
		w := newWorld(t).withDoc(doc(1)).startRunning()
		w.advance(time.Second)
		require.Len(t, w.broadcasts(), 1)
		return w
	}
	t.Run("chain moved on", func(t *testing.T) {
		w := setup(t)
		w.chain.Complete(1, 3, t0.Add(time.Hour))
		w.advance(24*time.Hour + 2*time.Second)
		require.Contains(t, w.rows(1), oracle.RowComplete)
		require.Equal(t, uint64(3), w.job(1).Nonce)
		require.Len(t, w.fetchesOf(1), 2)
		require.Equal(t, uint64(4), w.broadcasts()[1].n)
	})
	t.Run("own submission missing", func(t *testing.T) {
		w := setup(t) // never committed: evicted from the mempool
		w.chain.SetSequence(self, 0)
		w.advance(24*time.Hour + 2*time.Second)
		require.Contains(t, w.rows(1), oracle.RowWatchdogRerun)
		require.Len(t, w.fetchesOf(1), 2)
		subs := w.broadcasts()
		require.Len(t, subs, 2)
		require.Equal(t, uint64(1), subs[1].n, "the same round again")
	})
	t.Run("own submission on chain", func(t *testing.T) {
		w := setup(t)
		w.chain.Commit()
		w.advance(24 * time.Hour)
		require.Contains(t, w.rows(1), oracle.RowWatchdogWait)
		require.Len(t, w.fetchesOf(1), 1)
		require.Equal(t, oracle.ExecCompleted, w.job(1).Exec.Status)
		require.Equal(t, t0.Add(48*time.Hour+time.Second), w.job(1).NextRunTime)
	})
	t.Run("doc gone", func(t *testing.T) {
		w := setup(t)
		w.chain.DeleteDoc(1)
		w.advance(24 * time.Hour)
		require.Nil(t, w.job(1))
	})
}
