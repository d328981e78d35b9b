package oracle

import (
	"fmt"
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
// Attempts are judged per result (issue 22): a daemon may keep several
// results of a request in submission side by side (one that runs again
// while its earlier results still retry), and each result's retries are
// its own. A result is an extraction of the lifetime (State's chains:
// its broadcasts carry its request, round and payload); its debt counts
// its attempts from the extraction on, from above: its own broadcasts,
// the failed or lost on-chain checks of its round (each result of that
// round counts them) and every failed or lost Account query of the
// lifetime (an attempt may fail at its resync, §3.5 "until a resync
// succeeds, attempts fail as transport errors"). An attempt that began (a
// broadcast of the result, an on-chain check of its round) settles the
// debt until it fails in turn.
//
// (a) The history shows a give-up by its consequence: a new execution of
// r while a result of r owes a retry, with fewer than six attempts made,
// although nothing let the job leave Completed but a give-up — no
// Complete (r, ≥ n) and no doc answer moved the model's nonce, r stayed
// ENABLED and assigned, its job was not removed. A give-up re-arms the
// job a minute later (D7), so only an execution that starts at least a
// minute after the answer the result owes a retry for, with no attempt of
// that result since, shows one; an earlier one is a new execution beside
// the result (O3's business), and the result's retry is still owed. (b)
// The next attempt of a result begins within the backoff after its
// answer.
type retriedNotGivenUp struct {
	life *Life
	// debts are the lifetime's results still followed, oldest first.
	debts []*retryDebt
	// owing counts the debts owed: most records find none.
	owing int
	// checks are the on-chain checks begun while several results of
	// their round owed a retry: the broadcast that follows one in the
	// critical section names the result it was an attempt of.
	checks []openCheck
	// spare are debts pruned and held by no check, for extracted to reuse
	// (a debt per extraction was an allocation per round).
	spare []*retryDebt
}

// openCheck is an on-chain check of (r, n) not yet known to be one
// result's attempt (call is its recv record); owed are the results that
// owed a retry when it began.
type openCheck struct {
	call  int64
	r, n  uint64
	owed  []*retryDebt
	found bool // answered "not submitted": a broadcast of its result follows
}

// retryDebt is one result's attempts so far, from its extraction.
type retryDebt struct {
	r uint64
	// key is the result's extraction record (Result.Seq).
	key      int64
	n        uint64    // the round (the execution's, until a broadcast names another)
	created  time.Time // the model job's CreatedAt when it was extracted
	attempts int       // an upper bound of the attempts made
	sent     bool      // a broadcast of the result was seen
	owed     bool      // the last attempt ended in a retryable answer
	why      string
	seq      int64     // the answer that left the retry owed
	at       time.Time // when the SUT learnt that answer (NonAckAt)
	transit  bool      // that answer was code 20 or "mempool is full"
	void     bool      // the result may have turned stale: no verdict
	done     bool      // acknowledged, found on chain, or given up as asked
	// due is when the next attempt must have begun (zero: not judged);
	// busy: another result may hold the critical section meanwhile;
	// checking: an on-chain check that may be its attempt is open.
	due      time.Time
	busy     bool
	checking int
}

func (*retriedNotGivenUp) Name() string     { return nameRetried }
func (*retriedNotGivenUp) Contract() string { return "O23" }
func (*retriedNotGivenUp) Reads() uint64 {
	return reads(classAnswer, classBroadcast, classCall, classGet, classGetDone, classFrame, classProc)
}

func (c *retriedNotGivenUp) Observe(s *State, e *history.Event, r *judge.Report) {
	if s.life != c.life {
		c.life, c.debts, c.owing, c.checks = s.life, c.debts[:0], 0, c.checks[:0]
	}
	l := c.life
	if l == nil || l.Ended() || !l.StoppingAt.IsZero() {
		c.debts, c.owing, c.checks = c.debts[:0], 0, c.checks[:0]
		return
	}
	if c.owing > 0 {
		c.checkStale(l) // the model as the records so far left it
		c.expire(s, r, e)
	}
	cur := &s.Cur
	switch {
	case cur.Get != nil && cur.Get.NewExec && cur.Get.Life == l:
		c.newExecution(s, r, cur.Get)
	case cur.GetDone != nil && cur.GetDone.Fetched && cur.GetDone.Err == nil:
		c.extracted(e, cur.GetDone)
	case cur.Bcast != nil && cur.Bcast.Msg != nil && cur.Bcast.Life == l:
		c.broadcast(s, r, cur.Bcast)
	case e.RPC != nil && e.RPC.Phase == history.PhaseRecv && e.RPC.Query != nil && e.RPC.Query.Path == pathSubmitData:
		c.check(s, r, e)
	case e.RPC != nil && e.RPC.Phase == history.PhaseRecv && e.RPC.Query != nil && e.RPC.Query.Path == pathAccount:
		for _, d := range c.debts {
			d.due = time.Time{} // perhaps an attempt's resync (3.5: after code 32)
		}
	case cur.Answer != nil && cur.Answer.Call.Life == l:
		c.answer(s, r, cur.Answer)
	case cur.Frame != nil:
		for _, en := range cur.Frame.Entries {
			for _, d := range c.debts {
				if d.r == en.RequestID && en.Nonce >= d.n {
					d.void = true
				}
			}
		}
	}
	c.prune()
}

// extracted follows a new result: the extraction a GET's end brings.
func (c *retriedNotGivenUp) extracted(e *history.Event, f *GetDoneFact) {
	x := f.Get.Exec
	if x == nil || x.InFlight != f.Get || f.Get.Life != c.life || x.N == 0 {
		return
	}
	var d *retryDebt
	if n := len(c.spare); n > 0 {
		d, c.spare = c.spare[n-1], c.spare[:n-1]
	} else {
		d = &retryDebt{}
	}
	*d = retryDebt{r: f.Get.R, key: e.Seq, n: x.N}
	if m := x.Model; m != nil && m.Job != nil {
		d.created = m.Job.CreatedAt
	}
	c.debts = append(c.debts, d)
}

// debtOf is the debt of the result a broadcast belongs to (nil: none
// followed, as for a payload no extraction explains).
func (c *retriedNotGivenUp) debtOf(r uint64, res *Result) *retryDebt {
	if res == nil || res.Phantom {
		return nil
	}
	for _, d := range c.debts {
		if d.r == r && d.key == res.Seq {
			return d
		}
	}
	return nil
}

// prune drops the debts no verdict can come of: void, or done and not
// owed; and, past maxResults, the oldest.
func (c *retriedNotGivenUp) prune() {
	keep := c.debts[:0]
	for _, d := range c.debts {
		if d.void {
			c.settle(d)
		}
		switch {
		case !d.void && (!d.done || d.owed):
			keep = append(keep, d)
		case d.checking == 0 && len(c.spare) < 4:
			c.spare = append(c.spare, d)
		}
	}
	clear(c.debts[len(keep):])
	c.debts = keep
	for len(c.debts) > maxResults {
		if c.debts[0].owed {
			c.owing--
		}
		c.debts = append(c.debts[:0], c.debts[1:]...)
	}
}

// checkStale voids the debts whose model job no longer awaits the round:
// gone (unassigned, removed), not ENABLED, past the round, or created anew.
func (c *retriedNotGivenUp) checkStale(l *Life) {
	for _, d := range c.debts {
		if !d.owed {
			continue
		}
		m := l.Model(d.r)
		if m == nil || m.Job == nil || m.Job.Status != oracle.StatusEnabled || m.Job.Nonce+1 != d.n ||
			!m.Job.CreatedAt.Equal(d.created) {
			d.void = true
		}
	}
}

// check follows an on-chain check of (r, n) that begins: an attempt of
// one result of that round. With one result owing a retry it is that
// one's; with several, the broadcast that follows it names the result
// (closeCheck), and until then none of them is judged.
func (c *retriedNotGivenUp) check(s *State, r *judge.Report, e *history.Event) {
	q := e.RPC.Query
	var owed []*retryDebt
	for _, d := range c.debts {
		switch {
		case d.r != q.RequestID || d.n != q.Nonce:
			c.busyBy(d)
		case d.owed:
			owed = append(owed, d)
		}
	}
	// A check that begins ends the open one of its round without a
	// broadcast: that one's result stopped there (stale, D3).
	c.closeCheck(q.RequestID, q.Nonce)
	switch len(owed) {
	case 0:
	case 1:
		c.retried(s, r, owed[0]) // this result's attempt, begun with its on-chain check
	default:
		for _, d := range owed {
			d.checking++
		}
		c.checks = append(c.checks, openCheck{call: e.Seq, r: q.RequestID, n: q.Nonce, owed: owed})
	}
}

// closeCheck ends the open checks of (r, n): a broadcast of the round
// followed (its result's, which its own debt settles), or another check
// began (none did); the other results still owe their retry.
func (c *retriedNotGivenUp) closeCheck(r, n uint64) {
	c.checks = slices.DeleteFunc(c.checks, func(k openCheck) bool {
		if k.r != r || k.n != n {
			return false
		}
		for _, d := range k.owed {
			d.checking--
		}
		return true
	})
}

// settleCheck ends the open check of call, whose answer leaves every
// result that owed a retry as retried: it found self's submission (each
// result counts as submitted at its check, D3), or it failed (an attempt
// of one of them, which one the records do not say).
func (c *retriedNotGivenUp) settleCheck(s *State, r *judge.Report, call int64, found bool) {
	i := slices.IndexFunc(c.checks, func(k openCheck) bool { return k.call == call })
	if i < 0 {
		return
	}
	k := &c.checks[i]
	if found {
		k.found = true // "not submitted": its result's broadcast follows
		return
	}
	for _, d := range k.owed {
		d.checking--
		if d.owed {
			c.retried(s, r, d)
		}
	}
	c.checks = slices.Delete(c.checks, i, i+1)
}

func (c *retriedNotGivenUp) broadcast(s *State, r *judge.Report, b *BcastFact) {
	d := c.debtOf(b.R, b.Chain)
	c.closeCheck(b.R, b.N)
	for _, o := range c.debts {
		if o != d {
			c.busyBy(o) // this broadcast may hold the critical section
		}
	}
	if d == nil {
		return
	}
	if d.n != b.N {
		d.n = b.N // a different round keeps the attempts counted, which only makes the bound larger
		c.settle(d)
	}
	if d.owed {
		c.retried(s, r, d)
	}
	d.sent = true
	d.attempts++
}

func (c *retriedNotGivenUp) retried(s *State, r *judge.Report, d *retryDebt) {
	c.settle(d)
	if d.transit {
		exercise(s, r, c, "a retry after code 20 or mempool is full")
	} else {
		exercise(s, r, c, "a retry after another retryable answer")
	}
}

func (c *retriedNotGivenUp) answer(s *State, r *judge.Report, a *AnswerFact) {
	call := a.Call
	switch {
	case call.Method == methodBroadcast && call.Submit != nil:
		d := c.debtOf(call.Submit.RequestID, call.Chain)
		if d == nil || d.n != call.Submit.Nonce {
			return
		}
		switch {
		case a.Lost:
			c.owe(d, a, "a broadcast without an answer", false)
		case a.Acked() || specBroadcastAction(a.Class) == oracle.ActionGiveUp:
			c.settle(d) // done, or a give-up the spec asks for (O20 follows it)
			d.done = true
		default:
			c.owe(d, a, "a "+a.Class.String()+" answer", a.Class == oracle.ClassTransient)
			c.arm(s, d, a)
		}
	case call.Query != nil && call.Query.Path == pathSubmitData:
		// An on-chain check names a round, not a result: with one result
		// of the round in submission it is that one's; with several, each
		// counts the failure (an upper bound) and none is held to a retry
		// it may not owe.
		q := call.Query
		c.settleCheck(s, r, call.Seq, !a.Lost && !a.Failed && !a.SelfSubmitted)
		var one *retryDebt
		n := 0
		for _, d := range c.debts {
			if d.r == q.RequestID && !d.done && !d.void && (d.n == q.Nonce || !d.sent) {
				one = d
				n++
			}
		}
		for _, d := range c.debts {
			if d.r != q.RequestID || d.done || d.void || d.n != q.Nonce && d.sent {
				continue
			}
			switch {
			case a.Lost || a.Failed:
				d.attempts++
				if n == 1 && d == one && d.n == q.Nonce {
					c.owe(d, a, "a failed on-chain check", false)
					if !a.Lost {
						c.arm(s, d, a)
					}
				}
			case a.SelfSubmitted:
				c.settle(d) // the result counts as submitted (D3)
				d.done = true
			}
		}
	case call.Query != nil && call.Query.Path == pathAccount && (a.Lost || a.Failed):
		for _, d := range c.debts {
			d.attempts++ // perhaps an attempt that failed at its resync
		}
	}
}

// owe leaves d's retry owed after answer a.
func (c *retriedNotGivenUp) owe(d *retryDebt, a *AnswerFact, why string, transit bool) {
	if !d.owed {
		c.owing++
	}
	d.owed, d.why, d.seq, d.at, d.transit, d.due = true, why, a.Seq, a.NonAckAt, transit, time.Time{}
}

// settle clears d's debt: an attempt began, or the result is done.
func (c *retriedNotGivenUp) settle(d *retryDebt) {
	if d.owed {
		c.owing--
	}
	d.owed, d.due = false, time.Time{}
}

// arm sets when the next attempt is due after answer a: the backoff
// before retry k, k the attempts made so far (counted from above, so the
// wait is the longest it can be), at its longest jitter, plus G. Not
// judged when another result's broadcast or on-chain check is in flight:
// that result may hold the critical section the attempt waits for (D23).
func (c *retriedNotGivenUp) arm(s *State, d *retryDebt, a *AnswerFact) {
	base, ok := specSubmitRetryBase(d.attempts)
	if !ok {
		return
	}
	_, hi := specJitterBounds(base)
	d.due, d.busy = a.NonAckAt.Add(hi+G+s.Tol), false
	for _, call := range s.calls {
		switch {
		case call.Life != c.life:
		case call.Submit != nil && c.debtOf(call.Submit.RequestID, call.Chain) != d,
			call.Query != nil && call.Query.Path == pathSubmitData && (call.Query.RequestID != d.r || call.Query.Nonce != d.n):
			d.busy = true
		}
	}
}

// busyBy marks d busy when it is owed: another result's broadcast or
// on-chain check began, which may hold the critical section.
func (c *retriedNotGivenUp) busyBy(d *retryDebt) {
	if d.owed {
		d.busy = true
	}
}

// expire judges the attempts that were due before e.
func (c *retriedNotGivenUp) expire(s *State, r *judge.Report, e *history.Event) {
	for _, d := range c.debts {
		if !d.owed || d.due.IsZero() || !d.due.Before(e.At) {
			continue
		}
		due := d.due
		d.due = time.Time{}
		if d.void || d.busy || d.checking > 0 || s.faults.Touched(due.Add(-time.Minute), 0, "F2") {
			continue
		}
		exercise(s, r, c, "a retry's backoff")
		r.Flag(subjN(d.r, d.n), due, fmt.Sprintf("no attempt for round %d of request %d began by %s after %s (the backoff before retry %d, at most 1.1 × %s, + G)",
			d.n, d.r, offset(s, due), d.why, d.attempts, mustBase(d.attempts)), d.seq)
	}
}

func mustBase(k int) time.Duration {
	b, _ := specSubmitRetryBase(k)
	return b
}

// newExecution judges the results of r a new execution shows given up:
// owed a retry with fewer than six attempts made, silent since, and the
// new execution a minute or more after the answer (the re-run a give-up
// arms, D7). A result so judged is followed no more.
func (c *retriedNotGivenUp) newExecution(s *State, r *judge.Report, g *GetFact) {
	for _, d := range c.debts {
		if d.r != g.R || !d.owed || d.void || d.attempts >= specSubmitAttempts ||
			s.Now.Before(d.at.Add(specSubmissionGaveUpRetry-s.Tol)) {
			continue
		}
		c.settle(d)
		d.done = true
		exercise(s, r, c, "a new execution while a retry was owed")
		r.Flag(subjN(g.R, d.n), s.Now,
			fmt.Sprintf("request %d runs again after %s to round %d with at most %d of %d attempts made: the round was given up, not retried (§3.5, D6)",
				g.R, d.why, d.n, d.attempts, specSubmitAttempts), d.seq)
	}
}
