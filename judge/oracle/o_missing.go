package oracle

import (
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

const nameMissingQueried = "o28-missing-job-queried"

// missingQueried: O28, R looks up the jobs its list leaves out (ORACLE-SPEC
// 3.3.4 step 3: "Each existing job whose request is missing from the list:
// query OracleRequestDoc(r) and apply the Update rule (it stops running if
// no longer ENABLED; removed if unassigned or gone)"). Added by the third
// oracle audit: a daemon whose R skipped step 3 kept the job of a request
// paused, disabled or unassigned while its WebSocket was down (the Update
// frame lost), and no checker saw it: O11 judges what a doc answer says,
// and this daemon never asked.
//
// When a list answer is delivered to a lifetime whose model has a job for
// a request the list leaves out, an OracleRequestDoc query for it must be
// sent by the list's delivery + G for each listed doc twice (a creation's
// two queries) and G for each such job up to it (step 3 asks one at a
// time, after step 2). A doc answer for it delivered since (an event's
// lookup) serves as well. Not judged for a job the model created within G
// of the list (the daemon's creation may still be in flight), for one the
// model no longer has at the deadline, when F2 or F14 was active from
// QuerySettle before the list to the deadline (a query may hang or fail,
// and R runs again 5 s later), nor once the lifetime stops.
type missingQueried struct {
	life    *Life
	pending map[uint64]missingJob
	q       deadlines[*missingJob]
}

// missingJob is a job left out of a delivered list.
type missingJob struct {
	r       uint64
	at, due time.Time
	seq     int64
}

func (*missingQueried) Name() string     { return nameMissingQueried }
func (*missingQueried) Contract() string { return "O28" }

func (c *missingQueried) Observe(s *State, e *history.Event, r *judge.Report) {
	if s.life != c.life {
		c.life, c.pending, c.q = s.life, map[uint64]missingJob{}, deadlines[*missingJob]{}
	}
	l := c.life
	if l == nil {
		return
	}
	for _, p := range c.q.due(s.Now) {
		c.expire(s, r, p)
	}
	switch {
	case e.RPC != nil && e.RPC.Phase == history.PhaseRecv && e.RPC.Query != nil && e.RPC.Query.Path == pathDoc && e.Life == l.ID:
		c.answered(s, r, e.RPC.Query.RequestID)
	case s.Cur.Answer != nil && s.Cur.Answer.Call.Life == l && s.Cur.Answer.Call.Query != nil && !s.Cur.Answer.Failed:
		a := s.Cur.Answer
		switch a.Call.Query.Path {
		case pathDoc:
			c.answered(s, r, a.Call.Query.RequestID)
		case pathDocs:
			if l.Ended() || !l.StoppingAt.IsZero() {
				return
			}
			listed := map[uint64]bool{}
			for i := range a.Docs {
				listed[a.Docs[i].RequestID] = true
			}
			k := 0
			for _, q := range s.sortedReqs() {
				m := l.Model(q.R)
				if m == nil || m.Job == nil || listed[q.R] || e.At.Sub(m.Job.CreatedAt) < G {
					continue
				}
				if _, ok := c.pending[q.R]; ok {
					continue // still owed from an earlier list
				}
				k++
				p := &missingJob{r: q.R, at: e.At, seq: e.Seq, due: e.At.Add(G * time.Duration(2*len(a.Docs)+k))}
				c.pending[q.R] = *p
				c.q.push(p.due, p)
			}
		}
	}
}

// answered: request id was looked up (or its doc delivered).
func (c *missingQueried) answered(s *State, r *judge.Report, id uint64) {
	if _, ok := c.pending[id]; ok {
		delete(c.pending, id)
		exercise(s, r, c, "a job missing from R's list")
	}
}

// Finish judges the jobs whose lookup was due before the last record.
func (c *missingQueried) Finish(s *State, r *judge.Report) {
	for _, p := range c.q.due(s.Now.Add(time.Nanosecond)) {
		c.expire(s, r, p)
	}
}

func (c *missingQueried) expire(s *State, r *judge.Report, p *missingJob) {
	cur, ok := c.pending[p.r]
	if !ok || cur.seq != p.seq {
		return
	}
	delete(c.pending, p.r)
	l := c.life
	if l != s.life || l.Ended() || !l.StoppingAt.IsZero() || s.faults.Touched(p.at.Add(-QuerySettle), 0, "F2", "F14") {
		return
	}
	if m := l.Model(p.r); m == nil || m.Job == nil {
		return
	}
	exercise(s, r, c, "a job missing from R's list")
	r.Flag(subj(p.r), p.due, fmt.Sprintf("request %d's job was missing from R's list and no OracleRequestDoc query for it was sent within %s (3.3.4 step 3)",
		p.r, p.due.Sub(p.at)), p.seq)
}
