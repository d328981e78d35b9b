package oracle

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

const nameRetried = "o23-retried-not-given-up"

// retriedNotGivenUp: O23, a retryable answer is retried, not given up
// (ORACLE-SPEC 3.5: "code 20, or RPC error containing mempool is full |
// transient | retry", code 32 and code 11 "retry", "transport error,
// timeout, other RPC error | ambiguous | retry"; the attempt loop makes
// "at most 6 attempts" and only "giving up, or running out of attempts,
// applies submission gave up"; D6 "20 and transport errors → retry").
// O5 bounds the retries from above and O20 holds a give-up to its re-run;
// nothing held a daemon to retry at all, so one that gave up after a full
// mempool re-ran its job a minute later (D7) and every liveness check
// passed.
//
// The history shows such a give-up by its consequence: with a result of
// (r, n) whose last attempt ended in a retryable answer (or a lost one),
// the lifetime starts a new execution of r although nothing let the job
// leave Completed but a give-up — no Complete (r, ≥ n) and no doc answer
// moved the model's nonce, r stayed ENABLED and assigned, its job was not
// removed — and fewer than six attempts can have been made. The attempts
// are counted from above, from the execution's first GET on: the
// broadcasts of (r, n), the failed or lost on-chain checks of (r, n) and
// every failed or lost Account query of the lifetime (an attempt may fail
// at its resync,
// §3.5 "until a resync succeeds, attempts fail as transport errors"). An
// attempt that began (an on-chain check of (r, n) sent) settles the debt
// until it fails in turn.
type retriedNotGivenUp struct {
	life  *Life
	byReq map[uint64]*retryDebt
	// owing are the debts owed, by request: the few a record may touch.
	owing map[uint64]*retryDebt
	// spare is the debt newExecution last settled, which neither map
	// holds any more: the new execution's debt reuses it (a debt per
	// execution was an allocation per round).
	spare *retryDebt
}

// retryDebt is one execution's result and its attempts so far, from the
// execution's first GET.
type retryDebt struct {
	r        uint64
	n        uint64    // the round (the model's, until an attempt names another)
	created  time.Time // the model job's CreatedAt when the execution began
	attempts int       // an upper bound of the attempts made
	owed     bool      // the last attempt ended in a retryable answer
	why      string
	seq      int64 // the answer that left the retry owed
	transit  bool  // that answer was code 20 or "mempool is full"
	void     bool  // the result may have turned stale: no verdict
	// due is when the next attempt must have begun (zero: not judged);
	// busy: another result may hold the critical section meanwhile.
	due  time.Time
	busy bool
}

func (*retriedNotGivenUp) Name() string     { return nameRetried }
func (*retriedNotGivenUp) Contract() string { return "O23" }
func (*retriedNotGivenUp) Reads() uint64 {
	return reads(classAnswer, classBroadcast, classCall, classGet, classFrame, classProc)
}

func (c *retriedNotGivenUp) Observe(s *State, e *history.Event, r *judge.Report) {
	if s.life != c.life || c.byReq == nil {
		c.life, c.byReq, c.owing = s.life, map[uint64]*retryDebt{}, map[uint64]*retryDebt{}
	}
	l := c.life
	if l == nil || l.Ended() || !l.StoppingAt.IsZero() {
		clear(c.byReq)
		clear(c.owing)
		return
	}
	if len(c.owing) > 0 {
		c.checkStale(l) // the model as the records so far left it
		c.expire(s, r, e)
	}
	cur := &s.Cur
	switch {
	case cur.Get != nil && cur.Get.NewExec && cur.Get.Life == l:
		c.newExecution(s, r, cur.Get)
		if m := cur.Get.Model; m != nil && m.Job != nil {
			d := c.spare
			if d == nil {
				d = &retryDebt{}
			}
			c.spare = nil
			*d = retryDebt{r: cur.Get.R, n: m.Job.Nonce + 1, created: m.Job.CreatedAt}
			c.byReq[cur.Get.R] = d
		}
	case cur.Bcast != nil && cur.Bcast.Msg != nil && cur.Bcast.Life == l:
		c.busy(cur.Bcast.R)
		c.broadcast(s, r, cur.Bcast)
	case e.RPC != nil && e.RPC.Phase == history.PhaseRecv && e.RPC.Query != nil && e.RPC.Query.Path == pathSubmitData:
		c.busy(e.RPC.Query.RequestID)
		if d := c.debt(e.RPC.Query.RequestID, e.RPC.Query.Nonce); d != nil && d.owed {
			c.retried(s, r, d) // an attempt began with its on-chain check
		}
	case e.RPC != nil && e.RPC.Phase == history.PhaseRecv && e.RPC.Query != nil && e.RPC.Query.Path == pathAccount:
		for _, d := range c.owing {
			d.due = time.Time{} // perhaps an attempt's resync (3.5: after code 32)
		}
	case cur.Answer != nil && cur.Answer.Call.Life == l:
		c.answer(s, cur.Answer)
	case cur.Frame != nil:
		for _, en := range cur.Frame.Entries {
			if d := c.byReq[en.RequestID]; d != nil && en.Nonce >= d.n {
				d.void = true
			}
		}
	}
}

// checkStale voids the debts whose model job no longer awaits the round:
// gone (unassigned, removed), not ENABLED, past the round, or created anew.
func (c *retriedNotGivenUp) checkStale(l *Life) {
	for rq, d := range c.owing {
		m := l.Model(rq)
		if m == nil || m.Job == nil || m.Job.Status != oracle.StatusEnabled || m.Job.Nonce+1 != d.n ||
			!m.Job.CreatedAt.Equal(d.created) {
			d.void = true
		}
	}
}

func (c *retriedNotGivenUp) broadcast(s *State, r *judge.Report, b *BcastFact) {
	d := c.debt(b.R, b.N)
	if d == nil {
		return
	}
	if d.owed {
		c.retried(s, r, d)
	}
	d.attempts++
}

// debt is the debt of r's result, its round set to n: the one its
// execution began (a different round keeps the attempts counted, which
// only makes the bound larger).
func (c *retriedNotGivenUp) debt(r, n uint64) *retryDebt {
	d := c.byReq[r]
	if d != nil && d.n != n {
		d.n = n
		c.settle(d)
	}
	return d
}

func (c *retriedNotGivenUp) retried(s *State, r *judge.Report, d *retryDebt) {
	c.settle(d)
	if d.transit {
		exercise(s, r, c, "a retry after code 20 or mempool is full")
	} else {
		exercise(s, r, c, "a retry after another retryable answer")
	}
}

func (c *retriedNotGivenUp) answer(s *State, a *AnswerFact) {
	call := a.Call
	switch {
	case call.Method == methodBroadcast && call.Submit != nil:
		d := c.byReq[call.Submit.RequestID]
		if d == nil || d.n != call.Submit.Nonce {
			return
		}
		switch {
		case a.Lost:
			c.owe(d, a, "a broadcast without an answer", false)
		case a.Acked() || specBroadcastAction(a.Class) == oracle.ActionGiveUp:
			c.settle(d) // done, or a give-up the spec asks for (O20 follows it)
		default:
			c.owe(d, a, "a "+a.Class.String()+" answer", a.Class == oracle.ClassTransient)
			c.arm(s, d, a, call.Submit.RequestID)
		}
	case call.Query != nil && call.Query.Path == pathSubmitData:
		d := c.byReq[call.Query.RequestID]
		if d == nil || d.n != call.Query.Nonce {
			return
		}
		switch {
		case a.Lost || a.Failed:
			d.attempts++
			c.owe(d, a, "a failed on-chain check", false)
			if !a.Lost {
				c.arm(s, d, a, call.Query.RequestID)
			}
		case a.SelfSubmitted:
			c.settle(d) // the result counts as submitted (D3)
		}
	case call.Query != nil && call.Query.Path == pathAccount && (a.Lost || a.Failed):
		for _, d := range c.byReq {
			d.attempts++ // perhaps an attempt that failed at its resync
		}
	}
}

// owe leaves d's retry owed after answer a.
func (c *retriedNotGivenUp) owe(d *retryDebt, a *AnswerFact, why string, transit bool) {
	d.owed, d.why, d.seq, d.transit, d.due = true, why, a.Seq, transit, time.Time{}
	c.owing[d.r] = d
}

// settle clears d's debt: an attempt began, or the result is done.
func (c *retriedNotGivenUp) settle(d *retryDebt) {
	d.owed, d.due = false, time.Time{}
	delete(c.owing, d.r)
}

// arm sets when the next attempt is due after answer a: the backoff
// before retry k, k the attempts made so far (counted from above, so the
// wait is the longest it can be), at its longest jitter, plus G. Not
// judged when another result's broadcast or on-chain check is in flight:
// that result may hold the critical section the attempt waits for (D23).
func (c *retriedNotGivenUp) arm(s *State, d *retryDebt, a *AnswerFact, rq uint64) {
	base, ok := specSubmitRetryBase(d.attempts)
	if !ok {
		return
	}
	_, hi := specJitterBounds(base)
	d.due, d.busy = a.NonAckAt.Add(hi+G+s.Tol), false
	for _, call := range s.calls {
		switch {
		case call.Life != c.life:
		case call.Submit != nil && call.Submit.RequestID != rq,
			call.Query != nil && call.Query.Path == pathSubmitData && call.Query.RequestID != rq:
			d.busy = true
		}
	}
}

// busy marks the debts of requests other than rq: a broadcast or an
// on-chain check of rq began, which may hold the critical section.
func (c *retriedNotGivenUp) busy(rq uint64) {
	for r, d := range c.owing {
		if r != rq {
			d.busy = true
		}
	}
}

// expire judges the attempts that were due before e.
func (c *retriedNotGivenUp) expire(s *State, r *judge.Report, e *history.Event) {
	due := false
	for _, d := range c.owing {
		due = due || !d.due.IsZero() && d.due.Before(e.At)
	}
	if !due {
		return
	}
	for _, rq := range slices.Sorted(maps.Keys(c.owing)) {
		d := c.owing[rq]
		if d.due.IsZero() || !d.due.Before(e.At) {
			continue
		}
		due := d.due
		d.due = time.Time{}
		if d.void || d.busy || s.faults.Touched(due.Add(-time.Minute), 0, "F2") {
			continue
		}
		exercise(s, r, c, "a retry's backoff")
		r.Flag(subjN(rq, d.n), due, fmt.Sprintf("no attempt for round %d of request %d began by %s after %s (the backoff before retry %d, at most 1.1 × %s, + G)",
			d.n, rq, offset(s, due), d.why, d.attempts, mustBase(d.attempts)), d.seq)
	}
}

func mustBase(k int) time.Duration {
	b, _ := specSubmitRetryBase(k)
	return b
}

// newExecution judges the result of r the new execution ends.
func (c *retriedNotGivenUp) newExecution(s *State, r *judge.Report, g *GetFact) {
	d := c.byReq[g.R]
	if d == nil {
		return
	}
	delete(c.byReq, g.R)
	delete(c.owing, g.R)
	c.spare = d // judged below, then free
	if !d.owed || d.void || d.attempts >= specSubmitAttempts {
		return
	}
	exercise(s, r, c, "a new execution while a retry was owed")
	r.Flag(subjN(g.R, d.n), s.Now,
		fmt.Sprintf("request %d runs again after %s to round %d with at most %d of %d attempts made: the round was given up, not retried (§3.5, D6)",
			g.R, d.why, d.n, d.attempts, specSubmitAttempts), d.seq)
}
