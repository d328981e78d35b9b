package oracle

import (
	"fmt"
	"strconv"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/contracts/record"
	"github.com/wsconverge/converge/judge"
)

// A pursuit follows one round the SUT owes for a request (O10, O13): an
// execution that starts by a deadline, then, once it has fetched and
// extracted, a broadcast of nonce N (at least N when AtLeast) within B_sub
// of the extraction. It is dropped without a verdict when an exclusion
// holds (a stop or crash, an excluded fault, more ENABLED assigned requests
// than pool_size, the request stopped or its source failed) and replaced
// when a newer round supersedes it.
type pursuit struct {
	R       uint64
	Life    *Life
	N       uint64
	AtLeast bool
	// Since is when the obligation began (the exclusions look from there),
	// Seq the record that began it, E the execution's expected start.
	Since time.Time
	Seq   int64
	E     time.Time
	What  string
	// Deadline is the current stage's; zero while waiting for an older
	// execution (Wait) to end.
	Deadline time.Time
	Stage    stage
	Exec     *Execution
	Wait     *Execution
	Multi    bool
	// Period is the request's period E was computed with (0: unknown); a
	// doc answer lengthening it moves the deadline (a daemon may apply the
	// new period to a Complete it held, D20).
	Period time.Duration
	done   bool
}

type stage int

const (
	stageExec   stage = iota // waiting for an execution to start
	stageFetch               // waiting for the execution to fetch and extract
	stageSubmit              // waiting for the broadcast
)

// pursuer keeps one checker's pursuits, one per request.
type pursuer struct {
	byReq map[uint64]*pursuit
	q     deadlines[*pursuit]
	// void reports why a pursuit can no longer be judged ("" when it can).
	void func(s *State, p *pursuit) string
	// resolved is told each pursuit judged (ok: kept, else violated).
	resolved func(s *State, r *judge.Report, p *pursuit, ok bool)
}

func newPursuer() pursuer { return pursuer{byReq: map[uint64]*pursuit{}} }

func (u *pursuer) start(p *pursuit) {
	if old := u.byReq[p.R]; old != nil {
		old.done = true
	}
	u.byReq[p.R] = p
	u.q.push(p.Deadline, p)
}

func (u *pursuer) drop(p *pursuit) {
	p.done = true
	if u.byReq[p.R] == p {
		delete(u.byReq, p.R)
	}
}

func (u *pursuer) resolve(s *State, r *judge.Report, p *pursuit, ok bool) {
	u.drop(p)
	if u.resolved != nil {
		u.resolved(s, r, p, ok)
	}
}

// observe moves the pursuits on with record e: first the deadlines that
// passed before it, then what e itself does.
func (u *pursuer) observe(s *State, e *history.Event, r *judge.Report) {
	for _, p := range u.q.due(s.Now) {
		if p.done || p.Deadline.IsZero() || !p.Deadline.Before(s.Now) {
			continue
		}
		u.expire(s, r, p)
	}
	c := &s.Cur
	switch {
	case c.Get != nil && c.Get.NewExec:
		if p := u.byReq[c.Get.R]; p != nil && p.Life == c.Get.Life && p.Stage == stageExec {
			p.Stage, p.Exec, p.Deadline = stageFetch, c.Get.Exec, time.Time{}
		}
	case c.GetDone != nil:
		u.getDone(s, e, r, c.GetDone)
	case c.Bcast != nil && c.Bcast.Msg != nil:
		f := c.Bcast
		if p := u.byReq[f.R]; p != nil && p.Life == f.Life && (f.N == p.N || p.AtLeast && f.N > p.N) {
			u.resolve(s, r, p, true)
		}
	case c.Answer != nil && c.Answer.SelfSubmitted:
		q := c.Answer.Call.Query
		if p := u.byReq[q.RequestID]; p != nil && p.Life == c.Answer.Call.Life && (q.Nonce == p.N || p.AtLeast && q.Nonce > p.N) {
			u.resolve(s, r, p, true) // the on-chain check found self's submission (D3)
		}
	}
	if a := c.Answer; a != nil && a.Call.Query != nil {
		u.docStops(s, a)
	}
}

// docStops drops the pursuits a doc answer supersedes: the request is no
// longer ENABLED, no longer assigns self, or does not exist; or, for R's
// list, the round is already complete. The round is
// then no longer owed, even if a later answer lets the request run again
// (a new job, with its own E).
func (u *pursuer) docStops(s *State, a *AnswerFact) {
	stop := func(id uint64, d *history.Doc) {
		if p := u.byReq[id]; p != nil && p.Life == a.Call.Life && (d == nil || !s.doc(d).Runs) {
			u.drop(p)
		}
	}
	switch {
	case a.NotFound && a.Call.Query.Path == pathDoc:
		stop(a.Call.Query.RequestID, nil)
	case a.Doc != nil:
		stop(a.Doc.RequestID, a.Doc)
	case a.Listed:
		for i := range a.Docs {
			d := &a.Docs[i]
			stop(d.RequestID, d)
			// R acts as a Complete when the listed nonce is ahead (3.3.4
			// step 2): a round it shows complete is superseded, as by a
			// Complete frame (D12).
			if p := u.byReq[d.RequestID]; p != nil && p.Life == a.Call.Life && d.Nonce >= p.N {
				u.drop(p)
			}
		}
	}
}

func (u *pursuer) getDone(s *State, e *history.Event, r *judge.Report, f *GetDoneFact) {
	x := f.Get.Exec
	if x == nil {
		return
	}
	p := u.byReq[x.Model.R]
	if p == nil {
		return
	}
	switch x {
	case p.Wait:
		p.Wait = nil
		p.Deadline = later(p.E, e.At).Add(BExec + s.Tol)
		u.q.push(p.Deadline, p)
	case p.Exec:
		switch {
		case !f.Fetched || f.Err != nil:
			u.drop(p) // the source failed: O3 and O4 judge what follows
		default:
			p.Stage = stageSubmit
			p.Deadline = e.At.Add(BSub + s.Tol)
			u.q.push(p.Deadline, p)
		}
	}
}

func (u *pursuer) expire(s *State, r *judge.Report, p *pursuit) {
	if why := u.voidReason(s, p); why != "" {
		u.drop(p)
		return
	}
	switch p.Stage {
	case stageExec:
		if m := p.Life.Model(p.R); p.Period > 0 && m != nil && m.Job != nil && m.Job.Period > p.Period {
			p.Deadline, p.Period = p.Deadline.Add(m.Job.Period-p.Period), m.Job.Period
			u.q.push(p.Deadline, p)
			return
		}
		if m := p.Life.Model(p.R); m != nil && m.Exec != nil && m.Exec.InFlight != nil {
			// An older execution (superseded) still has a GET in flight: the
			// new one may start only once it ends (D12).
			p.Wait, p.Deadline = m.Exec, time.Time{}
			return
		}
		r.Flag(subjN(p.R, p.N), p.Deadline, fmt.Sprintf("no execution of request %d started between E = %s and E + B_exec after %s",
			p.R, offset(s, p.E), p.What), p.Seq)
	case stageSubmit:
		r.Flag(subjN(p.R, p.N), p.Deadline, fmt.Sprintf("no broadcast of round %d within B_sub of the extraction at %s after %s",
			p.N, offset(s, p.Exec.EndAt), p.What), p.Seq, p.Exec.EndSeq)
	default:
		return
	}
	u.resolve(s, r, p, false)
}

// voidReason is why p can no longer be judged, "" when it can: the
// exclusions every pursuit shares, then the checker's own.
func (u *pursuer) voidReason(s *State, p *pursuit) string {
	switch m := p.Life.Model(p.R); {
	case p.Life != s.life || p.Life.Ended() || !p.Life.StoppingAt.IsZero():
		return "stop or crash" // or the reference's own shutdown after a fatal condition
	case s.faults.Touched(p.Since, QuerySettle, "F2", "F14"):
		return "F2 or F14"
	case s.faults.Touched(p.Since, 0, "F15", overPool):
		return "F15 or more ENABLED assigned requests than pool_size"
	case m == nil || m.Job == nil || m.Job.Status != oracle.StatusEnabled:
		return "request stopped"
	case s.req(p.R).FailedGet.After(p.Since) || s.req(p.R).FailedGet.Equal(p.Since):
		return "source failed"
	}
	if u.void != nil {
		return u.void(s, p)
	}
	return ""
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// subj names a request; subjN a round of it.
// subj and subjN are fmt.Sprintf("r=%d", r) and ("r=%d n=%d", r, n) in
// one allocation: the checkers name a subject for most records.
func subj(r uint64) string {
	var buf [24]byte
	return string(strconv.AppendUint(append(buf[:0], "r="...), r, 10))
}

func subjN(r, n uint64) string {
	var buf [48]byte
	b := strconv.AppendUint(append(buf[:0], "r="...), r, 10)
	return string(strconv.AppendUint(append(b, " n="...), n, 10))
}

func offset(s *State, t time.Time) string { return record.Offset(t.Sub(s.Begin)) }
