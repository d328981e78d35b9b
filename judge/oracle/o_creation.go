package oracle

import (
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

const nameCreationChecks = "o25-creation-checks-chain"

// creationChecksChain: O25, a job is created only after the on-chain check
// (ORACLE-SPEC 3.3.3: "A creation first queries OracleSubmitData{r,
// doc.nonce + 1, provider: ""}", the create rows' guard "self's
// submission for (r, doc.nonce + 1) absent on chain"; D3 "at every job
// creation, the daemon checks on chain"; D14). A daemon that skipped the
// check for a doc with nonce 0 ("nothing can be on chain yet") re-ran,
// after a restart, a first round it had already submitted; the submitter's
// own check kept it from committing twice, so no checker saw it.
//
// The evidence needs little of when the daemon created its job: a
// request's first execution in a lifetime must come after an
// OracleSubmitData query for that request sent in the lifetime, and the
// first execution of a job the model created anew (removed, then assigned
// again) after one sent since the previous job's last execution. Which
// nonce the query names is the daemon's business (O13 and O1 judge
// duplicates).
type creationChecksChain struct {
	life *Life
	reqs map[uint64]*creationSeen
}

// creationSeen is what O25 knows of one request in the lifetime.
type creationSeen struct {
	checked time.Time // the last OracleSubmitData query for it (zero: none)
	ran     time.Time // its last execution start (zero: none)
	created time.Time // the model job's CreatedAt at that start
}

func (*creationChecksChain) Name() string     { return nameCreationChecks }
func (*creationChecksChain) Contract() string { return "O25" }
func (*creationChecksChain) Reads() uint64    { return reads(classCall, classGet) }

func (c *creationChecksChain) Observe(s *State, e *history.Event, r *judge.Report) {
	if s.life != c.life {
		c.life, c.reqs = s.life, map[uint64]*creationSeen{}
	}
	if c.life == nil {
		return
	}
	switch g := s.Cur.Get; {
	case e.RPC != nil && e.RPC.Phase == history.PhaseRecv && e.RPC.Query != nil && e.RPC.Query.Path == pathSubmitData:
		c.seen(e.RPC.Query.RequestID).checked = e.At
	case g != nil && g.NewExec && g.Life == c.life && g.Model != nil && g.Model.Job != nil:
		q := c.seen(g.R)
		first, created := q.ran.IsZero(), g.Model.Job.CreatedAt
		// A job created anew since its last execution (removed, then
		// assigned again): the check must come after that execution.
		fresh := first || !created.Equal(q.created)
		checked := !q.checked.IsZero() && (first || q.checked.After(q.ran))
		q.ran, q.created = e.At, created
		if !fresh {
			return
		}
		exercise(s, r, c, "a job's first execution")
		if !checked {
			r.Flag(subj(g.R), e.At, fmt.Sprintf("first execution of request %d's job with no OracleSubmitData query for it before: a creation checks the chain (3.3.3, D3)",
				g.R), e.Seq)
		}
	}
}

func (c *creationChecksChain) seen(r uint64) *creationSeen {
	q := c.reqs[r]
	if q == nil {
		q = &creationSeen{}
		c.reqs[r] = q
	}
	return q
}
