package oracle

import (
	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

const nameGaveUp = "o20-gave-up-rearmed"

// gaveUpRearmed: O20. A submission that gives up re-arms its job: "the job
// becomes Failed with NextRunTime = now + 1 min and the same nonce"
// (ORACLE-SPEC 3.3.3 row "submission gave up", 3.5 "Giving up, or running
// out of attempts, applies submission gave up", D4: "the job is re-armed at
// +1 min so that a corrected min gas price lets it recover", D7). O3 holds
// the re-run to no earlier than that; nothing held it to happen, so a
// daemon whose give-up left the job waiting for a Complete that can no
// longer come (its own submission missing) stalled the request for the 24 h
// watchdog unseen.
//
// The history shows a give-up for sure in two cases: a delivered answer
// whose class gives up (code 13, or a rejecting code), and a delivered
// non-acknowledging answer to the sixth broadcast of one result (the
// attempts are then spent: attempts ≥ broadcasts). With d its delivery, an
// execution of r then starts in [d + 60 s, d + 60 s + B_exec]. Not judged
// when the result is stale by then or becomes so (a Complete (r, ≥ n)
// delivered, r stopped or unassigned) and under the exclusions every
// pursuit shares (a stop or crash, F2 or F14, F15, more ENABLED assigned
// requests than pool_size, a failed source). A lost answer is not judged:
// the SUT's timeout is not in the history.
type gaveUpRearmed struct {
	pursuer
}

func newGaveUpRearmed() *gaveUpRearmed {
	c := &gaveUpRearmed{pursuer: newPursuer()}
	c.void = func(s *State, p *pursuit) string {
		if seen, _ := s.req(p.R).seen.by(s.Now); seen >= p.N {
			return "Complete"
		}
		return ""
	}
	return c
}

func (*gaveUpRearmed) Name() string     { return nameGaveUp }
func (*gaveUpRearmed) Contract() string { return "O20" }
func (c *gaveUpRearmed) Observe(s *State, e *history.Event, r *judge.Report) {
	cur := &s.Cur
	if g := cur.Get; g != nil && g.NewExec {
		if p := c.byReq[g.R]; p != nil && p.Life == g.Life && p.Stage == stageExec {
			exercise(s, r, c, "a re-run after a give-up")
			c.resolve(s, r, p, true) // O3 judges a start before E
		}
	}
	c.observe(s, e, r)
	if f := cur.Frame; f != nil {
		for _, en := range f.Entries {
			if p := c.byReq[en.RequestID]; p != nil && en.Nonce >= p.N {
				c.drop(p) // superseded: O10 judges what follows
			}
		}
	}
	if a := cur.Answer; a != nil && a.Call.Method == methodBroadcast {
		c.answer(s, e, a)
	}
}

// answer starts a pursuit when a for certain made the SUT give up.
func (c *gaveUpRearmed) answer(s *State, e *history.Event, a *AnswerFact) {
	call, l := a.Call, a.Call.Life
	if call.Submit == nil || a.Lost || a.Acked() || l != s.life || l.Ended() || !l.StoppingAt.IsZero() {
		return
	}
	rq, n := call.Submit.RequestID, call.Submit.Nonce
	m := l.Model(rq)
	if m == nil || m.Job == nil || m.Job.Status != oracle.StatusEnabled || m.Job.Nonce+1 != n {
		return
	}
	if call.Chain == nil || call.Chain.Sub.LastSeq != call.Seq {
		return
	}
	g := &call.Chain.Sub // the result the answer ends (per result: a chain beside it goes on)
	if specBroadcastAction(a.Class) != oracle.ActionGiveUp && g.Count < specSubmitAttempts {
		return
	}
	if seen, _ := s.req(rq).seen.by(e.At); seen >= n {
		return
	}
	eAt := e.At.Add(specSubmissionGaveUpRetry)
	c.start(&pursuit{R: rq, Life: l, N: n, Since: e.At, Seq: e.Seq, E: eAt, Deadline: eAt.Add(BExec + s.Tol),
		What: "the submission gave up (" + a.Class.String() + ")"})
}
