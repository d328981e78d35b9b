package oracle

import (
	"time"

	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

// The classes of records the checkers tell apart (judge.Classes): a
// checker that acts only on some of them declares which (judge.Reader)
// and is not shown the others. Each class is one of the facts a record
// gives (State.before): a broadcast call, an answer, a GET, a GET's end,
// a frame.
const (
	// classOther: a record with no payload or more than one. Every
	// checker reads it, so that a malformed record is judged as before.
	classOther = iota
	classProc
	classBroadcast // an rpc recv of broadcast_tx_sync (Cur.Bcast)
	classCall      // any other rpc recv
	classAnswer    // an rpc done (Cur.Done, Cur.Answer)
	classFrame     // a ws frame (Cur.Frame)
	classWS        // any other ws record
	classCheckTx
	classBlock
	classDeliver
	classEvict
	classOp
	classPeer
	classGet     // a src recv (Cur.Get)
	classGetDone // a src done (Cur.GetDone)
	classFault
	classWhite
)

// Class is e's class.
func (world) Class(e *history.Event) int {
	if payloads(e) != 1 {
		return classOther
	}
	switch {
	case e.Proc != nil:
		return classProc
	case e.RPC != nil && e.RPC.Phase == history.PhaseRecv && e.RPC.Method == methodBroadcast:
		return classBroadcast
	case e.RPC != nil && e.RPC.Phase == history.PhaseRecv:
		return classCall
	case e.RPC != nil:
		return classAnswer
	case e.WS != nil && e.WS.Action == history.WSFrame:
		return classFrame
	case e.WS != nil:
		return classWS
	case e.CheckTx != nil:
		return classCheckTx
	case e.Block != nil:
		return classBlock
	case e.Deliver != nil:
		return classDeliver
	case e.Evict != nil:
		return classEvict
	case e.Op != nil:
		return classOp
	case e.Peer != nil:
		return classPeer
	case e.Src != nil && e.Src.Phase == history.PhaseRecv:
		return classGet
	case e.Src != nil:
		return classGetDone
	case e.Fault != nil:
		return classFault
	}
	return classWhite
}

// payloads counts e's payloads.
func payloads(e *history.Event) int {
	n := 0
	for _, set := range [...]bool{e.Proc != nil, e.RPC != nil, e.WS != nil, e.CheckTx != nil, e.Block != nil,
		e.Deliver != nil, e.Evict != nil, e.Op != nil, e.Peer != nil, e.Src != nil, e.Fault != nil, e.White != nil} {
		if set {
			n++
		}
	}
	return n
}

// reads is the set of classes given, and classOther.
func reads(classes ...int) uint64 {
	set := uint64(1) << classOther
	for _, c := range classes {
		set |= 1 << c
	}
	return set
}

// What each checker reads. A checker that judges deadlines as time passes
// (below) sleeps between them (judge.Sleeper).
func (*singleCommit) Reads() uint64     { return reads(classDeliver, classBroadcast, classProc) }
func (*nonceBounds) Reads() uint64      { return reads(classFrame, classBroadcast) }
func (*executionTiming) Reads() uint64  { return reads(classGet) }
func (*restartPeriod) Reads() uint64    { return reads(classAnswer, classFrame, classGet) }
func (*fetchRetries) Reads() uint64     { return reads(classGet, classGetDone, classProc) }
func (*submitRetries) Reads() uint64    { return reads(classAnswer, classBroadcast) }
func (*updateKeepsNonce) Reads() uint64 { return reads(classFrame, classGet, classBroadcast) }
func (*concurrency) Reads() uint64      { return reads(classGet, classBroadcast) }
func (*sequence) Reads() uint64         { return reads(classEvict, classBroadcast) }
func (*notRunning) Reads() uint64       { return reads(classAnswer, classGet, classBroadcast) }
func (*fidelity) Reads() uint64         { return reads(classGet, classBroadcast) }
func (*clientCloses) Reads() uint64     { return reads(classFault, classProc, classWS) }
func (*shutdownOrder) Reads() uint64    { return reads(classWhite) }
func (*liveness) Reads() uint64         { return reads(classProc, classBroadcast, classBlock) }
func (*wire) Reads() uint64             { return reads(classBroadcast, classCall, classWS, classProc) }

// Checkers that rebuild their state first thing when a new lifetime began
// (s.life is not theirs) and judge nothing as time passes. Between the
// record after a start and the next record of their classes they would
// do nothing but that rebuild, which replaces all they hold and which no
// record of another class reads: done at the next record they see, it
// leaves them as it would have. So they read only the records they act
// on.
func (*resubscribe) Reads() uint64       { return reads(classProc, classWS, classFrame) }
func (*resynced) Reads() uint64          { return reads(classAnswer, classBroadcast) }
func (*submittedNotRerun) Reads() uint64 { return reads(classFrame, classAnswer, classGet) }

// Checkers that also judge deadlines as time passes (judge.Sleeper): they
// read the records they act on, and are shown any other record only when
// the clock (State.Now) is past the time their Wake gives, before which
// their Observe would do nothing at it. A rebuild for a new lifetime, as
// above, may wait for the next record they see; a Wake from the state
// before that rebuild only shows them more records. The package's tests
// judge every history also with every checker shown every record
// (checkEveryRecord) and require the same report.
func (*resync) Reads() uint64                { return reads(classAnswer, classCall, classBroadcast) }
func (*healthProbe) Reads() uint64           { return reads(classGet, classCall) }
func (*shutdown) Reads() uint64              { return reads(classProc, classWhite, classGet, classBroadcast) }
func (*resubscribeReconciles) Reads() uint64 { return reads(classCall, classWS) }
func (*failedLookupFollowed) Reads() uint64  { return reads(classCall, classAnswer) }

// Wake: the Account-query gap is judged once it is longer than its bound.
func (c *resync) Wake(s *State) time.Time { return c.gap.wake(s, ResyncBound) }

// Wake: the status-call gap is judged once it is longer than its bound.
func (c *healthProbe) Wake(s *State) time.Time { return c.gap.wake(s, ProbeBound) }

// Wake: a signalled lifetime's exit is late past T_sd (Exited, set only by
// an exit record, is never unset; the signal that sets c.life is a proc
// record).
func (c *shutdown) Wake(s *State) time.Time {
	if c.life == nil || c.life.Exited || c.late {
		return judge.Forever
	}
	return c.at.Add(specShutdownBound(s.P.WorkerTimeout) + s.Tol)
}

// Wake: an owed reconciliation expires after its deadline (expire is asked
// when the deadline is before the record's time, which is never after the
// clock).
func (c *resubscribeReconciles) Wake(*State) time.Time {
	if !c.owed {
		return judge.Forever
	}
	return c.deadline
}

// Wake: a pending follow-up expires after its due time (expire is asked at
// the record's time, never after the clock).
func (c *failedLookupFollowed) Wake(*State) time.Time {
	w := judge.Forever
	for _, p := range c.pending {
		if p.due.Before(w) {
			w = p.due
		}
	}
	return w
}

// wake is when check may next flag the gap: once the clock is past the
// last call by more than the bound; never when it is flagged already or
// no gap is judged yet (only a call changes either).
func (g *gapWatch) wake(s *State, bound time.Duration) time.Time {
	if g.flagged || g.n <= g.skip {
		return judge.Forever
	}
	return g.last.Add(bound + s.Tol)
}

// The checkers that pursue rounds (pursuer.observe) expire a pursuit at
// the first record past its deadline, and otherwise act on GETs, their
// ends, broadcasts and answers; each reads those classes and what its own
// Observe acts on besides.
func (*completeHandled) Reads() uint64 { return pursuerReads | reads(classFrame) }
func (*restart) Reads() uint64         { return pursuerReads | reads(classProc, classDeliver, classFrame) }
func (*gaveUpRearmed) Reads() uint64   { return pursuerReads | reads(classFrame) }

// pursuerReads are the classes pursuer.observe acts on.
var pursuerReads = reads(classGet, classGetDone, classBroadcast, classAnswer)

// Wake: the first pursuit deadline queued (a stale entry, of a pursuit
// resolved or moved, only shows more records).
func (u *pursuer) Wake(*State) time.Time { return u.q.next() }

// missingQueried acts on doc queries and answers; recovery on faults,
// evictions, broadcasts, GET ends and blocks. Both expire what is due
// before the clock.
func (*missingQueried) Reads() uint64 { return reads(classCall, classAnswer) }
func (*recovery) Reads() uint64 {
	return reads(classFault, classEvict, classBroadcast, classGetDone, classBlock)
}

// Wake: the first deadline queued (a stale entry only shows more
// records).
func (c *missingQueried) Wake(*State) time.Time { return c.q.next() }

// Wake: the first deadline queued.
func (c *recovery) Wake(*State) time.Time { return c.q.next() }
