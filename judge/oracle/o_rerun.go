package oracle

import (
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

const nameSubmittedNotRerun = "o27-submitted-round-not-rerun"

// submittedNotRerun: O27, a round the daemon was told it has submitted is
// not run again (ORACLE-SPEC 3.3.3: the create row "that submission
// present → Completed, now + 24 h", and the watchdog's "unchanged: now +
// 24 h"; 3.5: "if self is among the providers the result counts as
// submitted"; 3.8: "a round this provider already submitted (committed) is
// not submitted again"; D3, D14). Added by the third oracle audit: a
// daemon whose restart recovery ignored the on-chain check's answer
// created its job Pending and fetched the round again; the submitter's own
// check (D3) kept it from committing twice, so no checker saw it.
//
// Every path of the spec that asks OracleSubmitData{r, m} asks for the
// round its job is on (doc.nonce + 1 at a creation, result.Nonce in the
// submitter, Nonce + 1 in the watchdog), and an answer listing self leaves
// that job Completed: only a Complete, or R or the watchdog acting as one,
// moves it on, and then to round m + 1 or later. So once an answer listing
// self for (r, m) is delivered to a lifetime that has not been delivered
// round m's completion (a Complete entry (r, n ≥ m), a doc of r with nonce
// ≥ m, single or listed), no execution of r may start in that lifetime
// until such a delivery, or until the 24 h watchdog may run. Not judged
// when F2 or F14 was active within QuerySettle of the answer (a doc answer
// held back by a hanging or failing query may come after it and apply an
// older round), nor after the lifetime ends.
type submittedNotRerun struct {
	life *Life
	// known is the highest completed round of each request delivered to
	// the lifetime; told the rounds an answer said self submitted, beyond
	// known.
	known map[uint64]uint64
	told  map[uint64]toldSubmitted
}

// toldSubmitted is an OracleSubmitData answer listing self.
type toldSubmitted struct {
	m   uint64
	at  time.Time
	seq int64
}

func (*submittedNotRerun) Name() string     { return nameSubmittedNotRerun }
func (*submittedNotRerun) Contract() string { return "O27" }

func (c *submittedNotRerun) Observe(s *State, e *history.Event, r *judge.Report) {
	if s.life != c.life {
		c.life, c.known, c.told = s.life, map[uint64]uint64{}, map[uint64]toldSubmitted{}
	}
	l := c.life
	if l == nil {
		return
	}
	switch {
	case s.Cur.Frame != nil:
		f := s.Cur.Frame
		if f.Life == l && f.Routed && f.Sub == oracle.SubComplete {
			for _, x := range f.Entries {
				c.learn(x.RequestID, x.Nonce)
			}
		}
	case s.Cur.Answer != nil:
		a := s.Cur.Answer
		if a.Call.Life != l || a.Call.Query == nil || a.Failed {
			return
		}
		if a.Doc != nil {
			c.learn(a.Doc.RequestID, a.Doc.Nonce)
		}
		for i := range a.Docs {
			c.learn(a.Docs[i].RequestID, a.Docs[i].Nonce)
		}
		q := a.Call.Query
		if q.Path != pathSubmitData || !a.SelfSubmitted || q.Nonce <= c.known[q.RequestID] {
			return
		}
		if s.faults.Touched(e.At.Add(-QuerySettle), 0, "F2", "F14") {
			return
		}
		if t, ok := c.told[q.RequestID]; !ok || q.Nonce > t.m {
			c.told[q.RequestID] = toldSubmitted{m: q.Nonce, at: e.At, seq: e.Seq}
		}
		exercise(s, r, c, "an answer listing self's submission for a round not known complete")
	case s.Cur.Get != nil:
		g := s.Cur.Get
		if !g.NewExec || g.Life != l {
			return
		}
		t, ok := c.told[g.R]
		if !ok {
			return
		}
		if e.At.Sub(t.at) >= specCompleteWait || l.Ended() {
			delete(c.told, g.R)
			return
		}
		r.Flag(subj(g.R), e.At, fmt.Sprintf("an execution of request %d started after an OracleSubmitData answer said self's submission for round %d is on chain, with no completion of round %d delivered since: the job waits Completed (3.3.3, 3.5, D3)",
			g.R, t.m, t.m), t.seq, e.Seq)
		delete(c.told, g.R)
	}
}

// learn records that round n of request id is complete, as delivered.
func (c *submittedNotRerun) learn(id, n uint64) {
	if n > c.known[id] {
		c.known[id] = n
	}
	if t, ok := c.told[id]; ok && n >= t.m {
		delete(c.told, id)
	}
}
