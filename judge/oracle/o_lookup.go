package oracle

import (
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

const nameLookupFollowed = "o26-failed-lookup-followed"

// failedLookupFollowed: O26, a failed doc query is tried again or
// reconciled (ORACLE-SPEC 3.3.1: "Query OracleRequestDoc(id) (3 tries; if
// all fail: drop the event, TotalErrors++, and run R 5 s later)"; D9 "the
// doc query is tried 3 times (1 s, 2 s apart); then the event is dropped
// and R runs 5 s later"; 3.3.4 "R at start, after every re-subscription,
// 5 s after a dropped event", step 4 "a failed query is retried every
// 5 s"). A daemon that dropped an event without scheduling R lost the
// Register or Update for good (until a restart or a re-subscription), and
// O16b saw that only when the lost doc change mattered to a judged round.
//
// Every way the spec queries a doc ends a failure in one of two follow-ups:
// the same OracleRequestDoc again (the next try, 1 s or 2 s later; the
// watchdog on a later tick) or R's list (5 s after a dropped event or a
// failed R). So after a failed OracleRequestDoc(id) answer delivered to a
// running lifetime, an OracleRequestDoc(id) or an OracleRequestDocs query
// must be sent within 5 s + G. Not judged once the lifetime stops, nor
// under F2 (a hanging R may hold the next one).
//
// R's own list query is held to step 4 the same way (added by the third
// oracle audit: a daemon that retried a failed list after 30 s passed):
// after a failed OracleRequestDocs answer, another OracleRequestDocs query
// within 5 s + G. Only the list answers it; a doc query does not.
type failedLookupFollowed struct {
	life    *Life
	pending []failedLookup
}

// failedLookup is a failed doc query awaiting its follow-up.
type failedLookup struct {
	r    uint64
	list bool // R's OracleRequestDocs, not a doc query
	due  time.Time
	at   time.Time
	seq  int64
}

func (*failedLookupFollowed) Name() string     { return nameLookupFollowed }
func (*failedLookupFollowed) Contract() string { return "O26" }

func (c *failedLookupFollowed) Observe(s *State, e *history.Event, r *judge.Report) {
	if s.life != c.life {
		c.life, c.pending = s.life, nil
	}
	l := c.life
	if l == nil || (e.Life != 0 && e.Life != l.ID) {
		return
	}
	if len(c.pending) > 0 {
		c.expire(s, r, e.At)
	}
	switch {
	case e.RPC != nil && e.RPC.Phase == history.PhaseRecv && e.RPC.Query != nil && e.RPC.Query.Path == pathDocs:
		for range c.pending {
			exercise(s, r, c, "a failed doc query followed up")
		}
		c.pending = c.pending[:0]
	case e.RPC != nil && e.RPC.Phase == history.PhaseRecv && e.RPC.Query != nil && e.RPC.Query.Path == pathDoc:
		keep := c.pending[:0]
		for _, p := range c.pending {
			if !p.list && p.r == e.RPC.Query.RequestID {
				exercise(s, r, c, "a failed doc query followed up")
				continue
			}
			keep = append(keep, p)
		}
		c.pending = keep
	case s.Cur.Answer != nil && s.Cur.Answer.Call.Life == l && s.Cur.Answer.Call.Query != nil &&
		(s.Cur.Answer.Call.Query.Path == pathDoc || s.Cur.Answer.Call.Query.Path == pathDocs) &&
		s.Cur.Answer.Failed && !l.Ended() && l.StoppingAt.IsZero():
		a := s.Cur.Answer
		c.pending = append(c.pending, failedLookup{r: a.Call.Query.RequestID, list: a.Call.Query.Path == pathDocs, at: e.At, seq: e.Seq,
			due: e.At.Add(specDroppedEventReconcile + G + s.Tol)})
	}
}

// Finish judges the failures whose follow-up was due before the last
// record.
func (c *failedLookupFollowed) Finish(s *State, r *judge.Report) {
	if len(c.pending) > 0 {
		c.expire(s, r, s.Now.Add(time.Nanosecond))
	}
}

func (c *failedLookupFollowed) expire(s *State, r *judge.Report, now time.Time) {
	l := c.life
	keep := c.pending[:0]
	for _, p := range c.pending {
		switch {
		case !p.due.Before(now):
			keep = append(keep, p)
		case l != s.life || l.Ended() || !l.StoppingAt.IsZero() || s.faults.Touched(p.at.Add(-QuerySettle), 0, "F2"):
		case p.list:
			exercise(s, r, c, "a failed doc query followed up")
			r.Flag("", p.due, "a failed OracleRequestDocs query was not tried again within 5 s + G (3.3.4 step 4)", p.seq)
		default:
			exercise(s, r, c, "a failed doc query followed up")
			r.Flag(subj(p.r), p.due, fmt.Sprintf("a failed OracleRequestDoc query for request %d was neither tried again nor followed by R's list within 5 s + G (3.3.1, D9)",
				p.r), p.seq)
		}
	}
	c.pending = keep
}
