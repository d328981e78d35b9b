package oracle

import (
	"slices"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
)

// Fetch attempts are judged per execution, an execution being a chain of
// GETs of one request: a GET is the next attempt of an open execution
// when it has that execution's URL and comes after its failed GET, its
// wait over (ORACLE-SPEC 5.1 "Executions", 3.4 "All attempts of one
// execution use the URL … the job had when the execution got its slot").
// A correct daemon has one execution of a request open at a time, and
// §5.1's reading — the next GET is the open execution's next attempt —
// is the only one. A daemon that starts an execution while another of
// the same request is in flight or waits to retry (issue 22: one that
// runs a request every tick whatever runs) has two, and each one's
// attempts are its own: O4 judges each chain's spacing, O3 the second
// execution.
//
// A GET that comes before the open execution's wait is over is read as
// §5.1 reads it, an early attempt (O4), while the execution's attempt
// could still come on time (until G past the wait): if a GET of the
// request in that window would otherwise be a violation of its own (an
// early attempt of the merged chain, a GET beside one in flight, an
// execution before E) and is, split apart, the attempt on time of the
// execution or of the early GET's own chain, the early GET was a new
// execution beside it (O3) and the two are split apart, the GETs read
// into the merged chain since going to the new one.
// Otherwise, once the window is over, the early attempt stands. Without
// this look a daemon that fetches again every tick while an execution
// waits to retry reads as one whose retries come early.

// Suspect is a GET read as a further attempt of an open execution
// although it came before that execution's wait was over.
type Suspect struct {
	Life *Life
	R    uint64
	// Exec is the execution the GET was read into; Get the GET.
	Exec *Execution
	Get  *Get
	At   time.Time
	Seq  int64
	// Attempt, Wait, PrevDone: the attempt it was read as, the wait the
	// rules ask for before it and the end of the attempt before.
	Attempt     int
	Wait        time.Duration
	PrevDone    time.Time
	PrevDoneSeq int64
	// N, Alt are the rounds of the model job at the GET: a new
	// execution's, if it was one.
	N, Alt uint64
	pre    execPre
}

// execPre is an execution's attempts just before a suspect GET.
type execPre struct {
	attempts, failed int
	lastDone         time.Time
	lastSeq          int64
}

// Resolution is how a later GET of the request decided a suspect: Split
// when the suspect GET was a new execution beside the one it was read
// into (the later GET being an attempt on time once the two are apart),
// else the early attempt stands (its window is over).
type Resolution struct {
	S     *Suspect
	Split bool
	// By is the deciding GET's record.
	By int64
}

// due is when x's next attempt may come: its last failed GET's end plus
// the wait before that attempt.
func (x *Execution) due() time.Time {
	w, _ := specFetchRetryWait(x.Attempts + 1)
	return x.LastDone.Add(w)
}

// getDecision is what a GET is: the next attempt of exec (early when its
// wait is not over), or a new execution (exec nil), beside the GET in
// flight overlap when there is one.
type getDecision struct {
	exec    *Execution
	early   bool
	overlap *Get
}

// decideGet reads a GET of path at at against the model's open
// executions. The model's own is read as §5.1 does (the next attempt,
// early or late, unless the model let go of it and E has come); another
// takes a GET only on time (after its wait, within G past it). A GET
// that no open execution takes on time while one of them has a GET in
// flight is a new execution beside it; one that only comes early for an
// open execution is read as that one's early attempt.
func (s *State) decideGet(m *Model, at time.Time, path string) getDecision {
	var inFlight *Get
	if x := m.Exec; x != nil && x.InFlight != nil {
		inFlight = x.InFlight
	}
	var early *Execution
	if x := m.Exec; x != nil && x.InFlight == nil && x.Attempts < specFetchAttempts {
		takes := true
		if m.stops() {
			// The model job let go of the execution (a Complete, a stop): a
			// GET once its next E has come is a new execution, an earlier
			// one a further attempt of the old.
			if e0, _, _, _, ok := m.NextStart(s.P.Self); !ok || !at.Before(e0.Add(-s.Tol)) {
				takes = false
			}
		}
		if takes {
			if !at.Before(x.due().Add(-s.Tol)) {
				return getDecision{exec: x}
			}
			early = x
		}
	}
	var onTime *Execution
	executing := m.Job != nil && m.Job.Exec.Status == oracle.ExecExecuting
	for _, x := range m.Orphans {
		switch {
		case x.InFlight != nil:
			if inFlight == nil {
				inFlight = x.InFlight
			}
		case x.Path != path || x.Attempts >= specFetchAttempts:
		case at.Before(x.due().Add(-s.Tol)):
			// Read as its early attempt only while the job runs: once
			// another execution ended the job, an early GET is a new
			// execution (O3), not an attempt no rule lets come.
			if executing && (early == nil || x.due().Before(early.due())) {
				early = x
			}
		case !at.After(x.due().Add(G+s.Tol)) && (onTime == nil || x.LastDone.After(onTime.LastDone)):
			onTime = x
		}
	}
	switch {
	case onTime != nil:
		return getDecision{exec: onTime}
	case inFlight != nil:
		return getDecision{overlap: inFlight}
	case early != nil:
		return getDecision{exec: early, early: true}
	}
	return getDecision{}
}

// closeOrphans drops the other executions no GET can continue any more:
// ended, out of attempts, past their wait by more than G, or let go by
// the model (the job gone, superseded, not ENABLED, or on another round).
// One with a GET in flight stays until its GET ends (a GET beside it is
// an overlap).
func (m *Model) closeOrphans(at time.Time, tol time.Duration) {
	j := m.Job
	m.Orphans = slices.DeleteFunc(m.Orphans, func(x *Execution) bool {
		switch {
		case x.InFlight != nil:
			return false
		case x.Ended, x.Attempts >= specFetchAttempts, at.After(x.due().Add(G + tol)):
			return true
		}
		return j == nil || j.Exec.Superseded || j.Status != oracle.StatusEnabled || x.N != 0 && x.N != j.Nonce+1
	})
}

// resolveSuspects decides the model's suspects with the GET e, read as d
// so far: a suspect whose execution takes e on time, where d is a
// violation of its own, was a new execution (split); one whose window is
// over stands; any other waits. It returns e's reading after the splits.
func (s *State) resolveSuspects(m *Model, e *history.Event, d getDecision, f *GetFact) getDecision {
	s.resolved = s.resolved[:0]
	for i := 0; i < len(m.suspects); {
		sp := m.suspects[i]
		switch {
		case s.costly(m, e, d) && (sp.takes(e.At, e.Src.Path, s.Tol) || sp.splitTakes(e.At, e.Src.Path, s.Tol)):
			s.split(m, sp)
			d = s.decideGet(m, e.At, e.Src.Path)
			s.resolved = append(s.resolved, Resolution{S: sp, Split: true, By: e.Seq})
		case e.At.After(sp.windowEnd(s.Tol)):
			s.resolved = append(s.resolved, Resolution{S: sp, By: e.Seq})
		default:
			i++
			continue
		}
		m.suspects = slices.Delete(m.suspects, i, i+1)
	}
	f.Resolved = s.resolved
	return d
}

// costly reports whether GET e, read as d, is a violation of its own: an
// early attempt, a GET beside one in flight, or an execution before E.
func (s *State) costly(m *Model, e *history.Event, d getDecision) bool {
	switch {
	case d.early || d.overlap != nil:
		return true
	case d.exec != nil:
		return false
	}
	e0, _, _, _, known := m.NextStart(s.P.Self)
	held := s.faults.Touched(e.At, QuerySettle+G, "F2", "F14")
	return known && !held && e.At.Before(e0.Add(-s.Tol))
}

// preDue is when the suspect's execution, as it was before the suspect
// GET, could take its next attempt.
func (sp *Suspect) preDue() time.Time {
	w, _ := specFetchRetryWait(sp.pre.attempts + 1)
	return sp.pre.lastDone.Add(w)
}

// windowEnd is the last moment that execution takes an attempt on time.
func (sp *Suspect) windowEnd(tol time.Duration) time.Time { return sp.preDue().Add(G + tol) }

// takes reports whether the suspect's execution, as it was before the
// suspect GET, would take a GET of path at at on time.
func (sp *Suspect) takes(at time.Time, path string, tol time.Duration) bool {
	if sp.pre.attempts >= specFetchAttempts || path != sp.Exec.Path {
		return false
	}
	return !at.Before(sp.preDue().Add(-tol)) && !at.After(sp.windowEnd(tol))
}

// splitTakes reports whether the execution the suspect GET would start
// once split off (it and the GETs read into the merged chain since)
// would take a GET of path at at on time.
func (sp *Suspect) splitTakes(at time.Time, path string, tol time.Duration) bool {
	x := sp.Exec
	n := x.Attempts - sp.pre.attempts
	if path != x.Path || x.InFlight != nil || x.Ended || n <= 0 || n >= specFetchAttempts {
		return false
	}
	w, _ := specFetchRetryWait(n + 1)
	due := x.LastDone.Add(w)
	return !at.Before(due.Add(-tol)) && !at.After(due.Add(G+tol))
}

// split makes the suspect GET the first attempt of an execution of its
// own, and gives the execution it was read into back its state before
// it: both are then open (or the new one ended with the GET's answer),
// the model following the one it followed.
func (s *State) split(m *Model, sp *Suspect) {
	x, p := sp.Exec, sp.pre
	b := &Execution{Model: m, Start: sp.At, StartSeq: sp.Seq, Path: x.Path, N: sp.N, Alt: sp.Alt,
		Attempts: x.Attempts - p.attempts, Failed: x.Failed - p.failed, InFlight: x.InFlight,
		LastDone: x.LastDone, LastSeq: x.LastSeq, Ended: x.Ended, Fetched: x.Fetched, Value: x.Value, OK: x.OK,
		EndAt: x.EndAt, EndSeq: x.EndSeq}
	for _, g := range []*Get{sp.Get, b.InFlight} {
		if g != nil && g.Exec == x {
			g.Exec = b
		}
	}
	ended := x.Ended
	x.Attempts, x.Failed, x.LastDone, x.LastSeq = p.attempts, p.failed, p.lastDone, p.lastSeq
	x.InFlight, x.Ended, x.Fetched, x.Value, x.OK, x.EndAt, x.EndSeq = nil, false, false, "", false, time.Time{}, 0
	for _, r := range m.Results {
		if r.Exec == x && r.Seq >= sp.Seq {
			r.Exec = b // the GET's extraction is the new execution's
		}
	}
	for _, o := range m.suspects {
		if o != sp && o.Exec == x && o.Seq > sp.Seq {
			// A later early GET read into x is one of b's now.
			o.Exec = b
			o.pre.attempts -= p.attempts
			o.pre.failed -= p.failed
			o.Attempt -= p.attempts
			o.Wait, _ = specFetchRetryWait(o.Attempt)
		}
	}
	if ended {
		// x ended with the suspect GET's answer: that answer was b's, and
		// x, open again, goes on beside what the model follows.
		if m.Last == x {
			m.Last = b
		}
		if m.Exec != x && !slices.Contains(m.Orphans, x) {
			m.Orphans = append(m.Orphans, x)
		}
	}
	if !b.Ended {
		m.Orphans = append(m.Orphans, b)
	}
}
