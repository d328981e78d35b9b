package oracle

import (
	"fmt"
	"sort"
	"time"

	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

const (
	nameSingleCommit = "o1-single-commit"
	nameNonceBounds  = "o2-nonce-bounds"
	nameRestart      = "o13-restart"
)

// singleCommit: O1. At most one committed MsgSubmitOracleData per
// (request, nonce, provider = self), across restarts.
type singleCommit struct{}

func (*singleCommit) Name() string     { return nameSingleCommit }
func (*singleCommit) Contract() string { return "O1" }
func (c *singleCommit) Observe(s *State, e *history.Event, r *judge.Report) {
	switch {
	case e.Deliver != nil && e.Deliver.Code == 0:
		for _, m := range e.Deliver.Msgs {
			if m.Type != specTypeURLSubmit || m.Provider != s.P.Self {
				continue
			}
			if prev := s.req(m.RequestID).Commits[m.Nonce]; len(prev) > 0 {
				r.Flag(subjN(m.RequestID, m.Nonce), e.At, fmt.Sprintf("self's submission for round %d committed a second time (first in tx %s at %s)",
					m.Nonce, history.ShortHash(prev[0].Hash), offset(s, prev[0].At)), prev[0].Seq, e.Seq)
			}
		}
	case s.Cur.Bcast != nil && s.Cur.Bcast.Msg != nil:
		f := s.Cur.Bcast
		if s.txRounds[[2]uint64{f.R, f.N}] > 0 {
			exercise(s, r, c, partRetryInFlight)
		}
	case e.Proc != nil && (e.Proc.Action == history.ProcStart && s.lives > 0 || e.Proc.Action == history.ProcSignal):
		if len(s.sutTxs) > 0 {
			exercise(s, r, c, partRestartInFlight)
		}
	}
}

// inFlight reports whether a tx of the SUT matching ok is broadcast and
// not yet committed, failed or evicted.
func (s *State) inFlight(ok func(sutTx) bool) bool {
	for _, t := range s.sutTxs {
		if ok(t) {
			return true
		}
	}
	return false
}

// nonceBounds: O2. Every broadcast for r carries n with
// C_seen(r, t − G) + 1 ≤ n ≤ C(r, t) + 1 (the lower bound not judged while
// F2 or F14 may hold frames back), n ≥ 1, and provider = authority = self.
type nonceBounds struct{}

func (*nonceBounds) Name() string     { return nameNonceBounds }
func (*nonceBounds) Contract() string { return "O2" }
func (c *nonceBounds) Observe(s *State, e *history.Event, r *judge.Report) {
	switch {
	case s.Cur.Frame != nil:
		for _, en := range s.Cur.Frame.Entries {
			m := s.Cur.Frame.Life.Model(en.RequestID)
			if m != nil && m.Result != nil && !m.Result.Acked && !m.Result.OnChain && en.Nonce >= m.Result.Res.Nonce {
				exercise(s, r, c, "Complete while a result waits")
			}
		}
	case s.Cur.Bcast != nil && s.Cur.Bcast.Msg != nil:
		f := s.Cur.Bcast
		if msg, ev := nonceProblem(s, f); msg != "" {
			r.Flag(subjN(f.R, f.N), e.At, msg, append(ev, e.Seq)...)
		}
	}
}

// nonceProblem says what is wrong with a broadcast's nonce and addresses
// under O2 ("" when nothing), with the records that show it.
func nonceProblem(s *State, f *BcastFact) (string, []int64) {
	m := f.Msg
	switch {
	case f.N < 1:
		return "broadcast for nonce 0", nil
	case m.Provider != s.P.Self || m.Signer != s.P.Self:
		return fmt.Sprintf("broadcast with provider %s and authority %s, not self %s",
			history.ShortAddr(m.Provider), history.ShortAddr(m.Signer), history.ShortAddr(s.P.Self)), nil
	case f.N > f.C+1:
		return fmt.Sprintf("broadcast for round %d while the chain's completed nonce is %d", f.N, f.C), nil
	case f.LowerJudged && f.N < f.Seen+1:
		return fmt.Sprintf("broadcast for round %d although Complete %d was delivered more than G before", f.N, f.Seen), []int64{f.SeenSeq}
	}
	return "", nil
}

// restart: O13. After a restart, O1 and O2 hold across the boundary, and
// every ENABLED assigned request gets a broadcast for C + 1 within
// max(t_L, lastBT + period) + B_exec + fetch + B_sub, unless self's
// submission for C + 1 is already committed (no F2 or F14 active).
type restart struct {
	pursuer
	// sawComplete marks the requests a lifetime has seen a Complete frame
	// for (its nonces then come from the frames, O2's business).
	sawComplete map[uint64]int
}

func newRestart() *restart {
	c := &restart{pursuer: newPursuer(), sawComplete: map[uint64]int{}}
	c.void = func(s *State, p *pursuit) string {
		q := s.req(p.R)
		switch {
		case q.C >= p.N:
			return "round completed without self"
		case len(q.Commits[p.N]) > 0:
			return "self's submission committed"
		}
		return ""
	}
	c.resolved = func(s *State, r *judge.Report, p *pursuit, ok bool) { exercise(s, r, c, "resumption after a restart") }
	return c
}

func (*restart) Name() string     { return nameRestart }
func (*restart) Contract() string { return "O13" }
func (c *restart) Observe(s *State, e *history.Event, r *judge.Report) {
	c.observe(s, e, r)
	cur := &s.Cur
	switch {
	case e.Proc != nil && (e.Proc.Action == history.ProcSignal || e.Proc.Action == history.ProcExit):
		if l := s.life; l != nil && !l.Ended() && s.inFlight(func(t sutTx) bool { return t.Admitted && t.Life == l.ID }) {
			exercise(s, r, c, "stop or crash between admission and commit")
		}
	case e.Deliver != nil && e.Deliver.Code == 0:
		c.crossCommit(s, e, r)
	case cur.Frame != nil:
		for _, en := range cur.Frame.Entries {
			c.sawComplete[en.RequestID] = cur.Frame.Life.ID
		}
	case cur.Bcast != nil && cur.Bcast.Msg != nil && cur.Bcast.Life.ID >= 2 && c.sawComplete[cur.Bcast.R] != cur.Bcast.Life.ID:
		if msg, ev := nonceProblem(s, cur.Bcast); msg != "" {
			r.Flag(subjN(cur.Bcast.R, cur.Bcast.N), e.At, "after the restart: "+msg, append(ev, cur.Bcast.Life.StartSeq, e.Seq)...)
		}
	case cur.Answer != nil && cur.Answer.Listed && cur.Answer.Call.Life.ListAt.IsZero():
		c.resume(s, e, cur.Answer)
	}
}

// crossCommit flags a round self committed twice from two lifetimes.
func (c *restart) crossCommit(s *State, e *history.Event, r *judge.Report) {
	life := 0
	if t, ok := s.sutTxs[e.Deliver.Hash]; ok {
		life = t.Life
	}
	for _, m := range e.Deliver.Msgs {
		if m.Type != specTypeURLSubmit || m.Provider != s.P.Self {
			continue
		}
		for _, prev := range s.req(m.RequestID).Commits[m.Nonce] {
			if prev.Life != 0 && life != 0 && prev.Life != life {
				r.Flag(subjN(m.RequestID, m.Nonce), e.At, fmt.Sprintf("round %d committed by lifetime %d and again by lifetime %d",
					m.Nonce, prev.Life, life), prev.Seq, e.Seq)
				break
			}
		}
	}
}

// resume starts, at a restarted lifetime's first list answer (t_L), a
// pursuit for every ENABLED assigned request it lists.
func (c *restart) resume(s *State, e *history.Event, a *AnswerFact) {
	l := a.Call.Life
	if l.ID < 2 || s.faults.Touched(l.Start, QuerySettle, "F2", "F14") || s.faults.Touched(l.Start, 0, overPool) {
		return
	}
	docs := append([]history.Doc(nil), a.Docs...)
	sort.Slice(docs, func(i, j int) bool { return docs[i].RequestID < docs[j].RequestID })
	for i := range docs {
		d := &docs[i]
		if !s.doc(d).Runs {
			continue
		}
		q := s.req(d.RequestID)
		cn := max(q.C, d.Nonce)
		if len(q.Commits[cn+1]) > 0 {
			continue
		}
		eAt := e.At
		if cn > 0 && !q.LastBT.IsZero() {
			eAt = later(eAt, q.LastBT.Add(time.Duration(d.Period)*time.Second))
		}
		c.start(&pursuit{R: d.RequestID, Life: l, N: cn + 1, AtLeast: true, Since: l.Start, Seq: e.Seq, E: eAt,
			Deadline: eAt.Add(BExec + s.Tol), What: fmt.Sprintf("the restart of lifetime %d", l.ID)})
	}
}
