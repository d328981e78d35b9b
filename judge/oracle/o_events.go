package oracle

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

const (
	nameUpdateKeepsNonce = "o6-update-keeps-nonce"
	nameCompleteHandled  = "o10-complete-handled"
	nameNotRunning       = "o11-not-running"
)

// updateKeepsNonce: O6. After an Update delivered while r awaits Complete
// that keeps the job (self still assigned, ≥ 1 endpoint), no execution of
// r starts before the next Complete or the watchdog; a bogus message nonce
// in an update is never used. An execution is not judged when an F2 or F14
// window was open within QuerySettle of the Update: a Complete delivered
// before it may still wait behind a doc query (D19), and the daemon then
// applies it after the Update, as the next Complete.
type updateKeepsNonce struct {
	arms map[uint64]*updateArm
}

// updateArm is an Update delivered while its request awaited Complete.
type updateArm struct {
	life  *Life
	nonce uint64    // the job's nonce then
	until time.Time // the watchdog
	at    time.Time // the Update's delivery
	seq   int64
}

func (*updateKeepsNonce) Name() string     { return nameUpdateKeepsNonce }
func (*updateKeepsNonce) Contract() string { return "O6" }
func (c *updateKeepsNonce) Observe(s *State, e *history.Event, r *judge.Report) {
	if c.arms == nil {
		c.arms = map[uint64]*updateArm{}
	}
	cur := &s.Cur
	switch {
	case cur.Frame != nil && cur.Frame.Routed && cur.Frame.Sub == oracle.SubUpdate:
		for _, id := range cur.Frame.IDs {
			m := cur.Frame.Life.Model(id)
			if m == nil || !awaitsComplete(m) || !s.assigned(s.chainDoc(id)) {
				continue
			}
			c.arms[id] = &updateArm{life: cur.Frame.Life, nonce: m.Job.Nonce, until: m.Job.NextRunTime, at: e.At, seq: e.Seq}
			exercise(s, r, c, partUpdateAwaiting)
		}
	case cur.Get != nil && cur.Get.NewExec:
		a := c.arms[cur.Get.R]
		m := cur.Get.Model
		if a == nil || a.life != cur.Get.Life || m == nil || m.Job == nil || m.Job.Nonce != a.nonce || !e.At.Before(a.until.Add(-s.Tol)) {
			return
		}
		if cur.Get.EFailure == "gave up" && !e.At.Before(cur.Get.E.Add(-s.Tol)) {
			return // the SUT may have given up submitting: it re-runs after 1 min (D7)
		}
		delete(c.arms, cur.Get.R)
		if s.faults.Touched(a.at.Add(-QuerySettle), QuerySettle, "F2", "F14") {
			return // a Complete held behind a doc query may have come after the Update
		}
		r.Flag(subj(cur.Get.R), e.At, fmt.Sprintf("execution of request %d after an Update, with no Complete since (round %d was awaiting it)",
			cur.Get.R, a.nonce+1), a.seq, e.Seq)
	case cur.Bcast != nil && cur.Bcast.Msg != nil:
		f := cur.Bcast
		q := s.req(f.R)
		if len(q.Bogus) == 0 {
			return
		}
		exercise(s, r, c, partBogusNonce)
		for _, b := range q.Bogus {
			// Only a nonce ahead of the chain's round betrays the bogus
			// value: once the rounds have caught up with it, n = bogus + 1
			// may be a late but honest round (O2 judges lateness).
			if f.N == b.N+1 && f.N > f.C+1 {
				r.Flag(subjN(f.R, f.N), e.At, fmt.Sprintf("broadcast for round %d = the bogus update nonce %d + 1; the chain's round is %d",
					f.N, b.N, f.C+1), b.Seq, e.Seq)
				break
			}
		}
	}
}

// awaitsComplete reports whether the model job waits for a Complete: a
// successful extraction whose submission the SUT has no reason to give up.
func awaitsComplete(m *Model) bool {
	if m.Job == nil || m.Job.Exec.Status != oracle.ExecCompleted {
		return false
	}
	res := m.Result
	return res == nil || res.Acked || res.OnChain || res.NonAckAt.IsZero()
}

// completeHandled: O10. For each Complete (r, n) delivered with r ENABLED
// and assigned: an execution of r starts in [E, E + B_exec], E =
// max(delivery, bt + period), then a broadcast (r, n + 1) follows within
// B_sub of its successful extraction, unless superseded first — for every
// entry of a multi-Complete frame. Not judged while F2, F14 or F15 is
// active, across a stop or crash, with more ENABLED assigned requests than
// pool_size, or when the source fails.
type completeHandled struct {
	pursuer
}

func newCompleteHandled() *completeHandled {
	c := &completeHandled{pursuer: newPursuer()}
	c.resolved = func(s *State, r *judge.Report, p *pursuit, ok bool) {
		if p.Multi {
			exercise(s, r, c, "frame with several Completes")
		}
	}
	return c
}

func (*completeHandled) Name() string     { return nameCompleteHandled }
func (*completeHandled) Contract() string { return "O10" }
func (c *completeHandled) Observe(s *State, e *history.Event, r *judge.Report) {
	c.observe(s, e, r)
	f := s.Cur.Frame
	if f == nil || len(f.Entries) == 0 {
		return
	}
	l := f.Life
	if l.Ended() || l.ListAt.IsZero() || e.At.Before(l.ListAt.Add(G)) ||
		s.faults.Touched(e.At, QuerySettle, "F2", "F14") || s.faults.Touched(e.At, 0, "F15", overPool) {
		return
	}
	for i, en := range f.Entries {
		j, o := f.Before[i], f.After[i]
		if j == nil || en.Nonce <= j.Nonce || j.Status != oracle.StatusEnabled || o.Job == nil {
			continue
		}
		eAt := o.Job.NextRunTime
		c.start(&pursuit{R: en.RequestID, Life: l, N: en.Nonce + 1, Since: e.At, Seq: e.Seq, E: eAt,
			Deadline: eAt.Add(BExec + s.Tol), Multi: len(f.Entries) >= 2, What: fmt.Sprintf("Complete %d", en.Nonce), Period: o.Job.Period})
	}
}

// notRunning: O11. No execution start and no broadcast for r at t when the
// latest doc answer for r delivered by t − G says r is not ENABLED, self ∉
// account_list, or r does not exist (and no answer since says otherwise);
// none at all for requests self was never assigned to.
type notRunning struct{}

func (*notRunning) Name() string     { return nameNotRunning }
func (*notRunning) Contract() string { return "O11" }
func (c *notRunning) Observe(s *State, e *history.Event, r *judge.Report) {
	cur := &s.Cur
	switch {
	case cur.Answer != nil && cur.Answer.Call.Method == methodQuery && cur.Answer.Call.Query != nil:
		c.exercised(s, r, cur.Answer)
	case cur.Get != nil && cur.Get.NewExec:
		c.judge(s, e, r, cur.Get.R, cur.Get.Model, "execution")
	case cur.Bcast != nil && cur.Bcast.Msg != nil:
		c.judge(s, e, r, cur.Bcast.R, cur.Bcast.Model, "broadcast")
	}
}

// exercised counts an answer that stops a request the lifetime runs.
func (c *notRunning) exercised(s *State, r *judge.Report, a *AnswerFact) {
	l := a.Call.Life
	stops := func(id uint64, d *history.Doc) {
		if m := l.Model(id); m != nil && m.Job != nil && m.Job.Status == oracle.StatusEnabled && (d == nil || !s.doc(d).Runs) {
			exercise(s, r, c, "disable or unassignment while running")
		}
	}
	switch {
	case a.NotFound && a.Call.Query.Path == pathDoc:
		stops(a.Call.Query.RequestID, nil)
	case a.Doc != nil:
		stops(a.Doc.RequestID, a.Doc)
	case a.Listed:
		for i := range a.Docs {
			stops(a.Docs[i].RequestID, &a.Docs[i])
		}
	}
}

func (c *notRunning) judge(s *State, e *history.Event, r *judge.Report, id uint64, m *Model, what string) {
	if q := s.Req(id); q == nil || !q.EverAssigned {
		r.Flag(subj(id), e.At, fmt.Sprintf("%s for request %d, which never listed self", what, id), e.Seq)
		return
	}
	if m == nil {
		return
	}
	base, later := m.answersAt(e.At)
	if base == nil || s.answerLets(base) || slices.ContainsFunc(later, func(a DocAnswer) bool { return s.answerLets(&a) }) {
		return
	}
	r.Flag(subj(id), e.At, fmt.Sprintf("%s for request %d, whose doc %s (answer delivered at %s)", what, id, s.answerSays(base),
		offset(s, base.At)), base.Seq, e.Seq)
}

// answerLets reports whether a doc answer lets the request run.
func (s *State) answerLets(a *DocAnswer) bool { return a.Doc != nil && s.runs(a.Doc) }

func (s *State) answerSays(a *DocAnswer) string {
	switch {
	case a.Unlisted:
		return "was missing from the list"
	case a.Doc == nil:
		return "does not exist"
	case oracle.RequestStatus(a.Doc.Status) != oracle.StatusEnabled:
		return "is " + oracle.RequestStatus(a.Doc.Status).String()
	case !s.assigned(a.Doc):
		return "does not assign self"
	}
	return "lets it run"
}

// sortBy sorts xs by a key.
func sortBy[T any, K cmp.Ordered](xs []T, key func(T) K) {
	slices.SortFunc(xs, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
}
