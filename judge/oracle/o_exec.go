package oracle

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

const (
	nameExecutionTiming = "o3-execution-timing"
	nameRestartPeriod   = "o3b-restart-period"
	nameFetchRetries    = "o4-fetch-retries"
	nameConcurrency     = "o7-concurrency"
	nameFidelity        = "o12-fidelity"
)

// executionTiming: O3. Every execution of r starts at ≥ E(r) − tol, and at
// most one execution of r is in flight at a time.
type executionTiming struct{}

func (*executionTiming) Name() string     { return nameExecutionTiming }
func (*executionTiming) Contract() string { return "O3" }
func (c *executionTiming) Observe(s *State, e *history.Event, r *judge.Report) {
	f := s.Cur.Get
	if f == nil {
		return
	}
	if f.Overlap != nil {
		exercise(s, r, c, "overlapping GETs")
		r.Flag(subj(f.R), e.At, fmt.Sprintf("a GET of request %d while another (started %s) is in flight: two executions at once",
			f.R, offset(s, f.Overlap.At)), f.Overlap.Seq, e.Seq)
	}
	for _, res := range f.Resolved {
		if !res.Split {
			continue
		}
		// The GET read as an early attempt was an execution of its own:
		// the execution it was read into took this GET on time.
		sp := res.S
		exercise(s, r, c, "an execution started during another's retry wait")
		r.Flag(subj(sp.R), sp.At, fmt.Sprintf("a GET of request %d started an execution while the one begun at %s waited to retry (its attempt %d came at %s): two executions at once",
			sp.R, offset(s, sp.Exec.Start), sp.Attempt, offset(s, e.At)), sp.PrevDoneSeq, sp.Seq, e.Seq)
	}
	if !f.NewExec || !f.EKnown {
		return
	}
	switch f.EFailure {
	case "fetch failure":
		exercise(s, r, c, partAfterFetch)
	case "parse failure":
		exercise(s, r, c, partAfterParse)
	case "gave up":
		exercise(s, r, c, partAfterGiveUp)
	}
	// Frames delivered while a doc query may be held by F2 or F14 may
	// still wait behind that query in the daemon (frames are handled one at
	// a time, D20), so the model's order of events is not the daemon's: E
	// is not judged then, as O2's lower bound is not.
	held := s.faults.Touched(e.At, QuerySettle+G, "F2", "F14")
	if !held && e.At.Before(f.E.Add(-s.Tol)) {
		r.Flag(subj(f.R), e.At, fmt.Sprintf("execution of request %d started %s before E = %s (%s)",
			f.R, f.E.Sub(e.At), offset(s, f.E), f.EWhy), f.ESeq, e.Seq)
	}
}

// restartPeriod: O3b. After a (re)start, the first execution of r is no
// earlier than lastBT(r) + period − tol, with lastBT and period as the
// chain had them when the lifetime's first list answer was delivered.
type restartPeriod struct {
	life  *Life
	bound map[uint64]restartBound
}

type restartBound struct {
	at    time.Time
	seq   int64
	nonce uint64 // the round completed last when the list was answered
}

func (*restartPeriod) Name() string     { return nameRestartPeriod }
func (*restartPeriod) Contract() string { return "O3b" }
func (c *restartPeriod) Observe(s *State, e *history.Event, r *judge.Report) {
	cur := &s.Cur
	switch {
	case cur.Answer != nil && cur.Answer.Listed && cur.Answer.Call.Life.ListAt.IsZero():
		l := cur.Answer.Call.Life
		c.life, c.bound = l, map[uint64]restartBound{}
		for _, d := range cur.Answer.Docs {
			q := s.req(d.RequestID)
			if !s.doc(&d).Assigned || max(q.C, d.Nonce) == 0 || q.LastBT.IsZero() {
				continue
			}
			b := restartBound{at: q.LastBT.Add(time.Duration(d.Period) * time.Second), seq: q.LastSeq, nonce: max(q.C, d.Nonce)}
			c.bound[d.RequestID] = b
			if l.ID >= 2 && l.Start.Before(b.at) {
				exercise(s, r, c, "restart less than a period after a Complete")
			}
		}
	case cur.Frame != nil && cur.Frame.Life == c.life:
		// A round completed since the list (peers can complete one
		// without self) sets a new lastBT, delivered with the Complete:
		// from there O3's E, built from that Complete, is the bound.
		for _, en := range cur.Frame.Entries {
			if b, ok := c.bound[en.RequestID]; ok && en.Nonce > b.nonce {
				delete(c.bound, en.RequestID)
			}
		}
	case cur.Get != nil && cur.Get.NewExec && cur.Get.First && cur.Get.Life == c.life:
		b, ok := c.bound[cur.Get.R]
		if ok && e.At.Before(b.at.Add(-s.Tol)) {
			r.Flag(subj(cur.Get.R), e.At, fmt.Sprintf("first execution of request %d in lifetime %d, %s before lastBT + period = %s",
				cur.Get.R, c.life.ID, b.at.Sub(e.At), offset(s, b.at)), b.seq, c.life.StartSeq, e.Seq)
		}
	}
}

// fetchRetries: O4. Within one execution at most 4 GETs, attempt k+1
// starting ≥ t_done(k) + 2^(k−1) s − tol; after 4 failed attempts the
// next GET is a new execution and waits for its E. Neither is judged while F2 or
// F14 may hold frames back: a Complete delivered earlier but handled only
// once a doc query gives up ends an execution in its retry wait (D12), and
// the daemon's next GET then starts a new execution the model, which
// applied the Complete at its delivery, takes for attempt k+1.
//
// The spacing is judged per execution (fetchchains.go, issue 22): an
// early attempt is flagged once the window in which a later GET could
// show it a new execution beside the one it was read into is over (or
// the lifetime or the run ended).
type fetchRetries struct {
	pending []earlyAttempt
}

// earlyAttempt is a GET read as an early attempt, waiting for a later GET
// of the request to decide it; judged is false under F2 or F14 at its
// time.
type earlyAttempt struct {
	s      *Suspect
	judged bool
}

func (*fetchRetries) Name() string     { return nameFetchRetries }
func (*fetchRetries) Contract() string { return "O4" }
func (c *fetchRetries) Observe(s *State, e *history.Event, r *judge.Report) {
	if d := s.Cur.GetDone; d != nil && !d.Fetched && d.Get.Exec != nil && d.Get.Exec.Failed == 1 && d.Get.Exec.InFlight == d.Get {
		exercise(s, r, c, "two failed attempts in one execution")
	}
	if len(c.pending) > 0 && e.Proc != nil && e.Proc.Action == history.ProcStart {
		c.judgeAll(s, r) // a lifetime is over: no later GET of it decides
	}
	f := s.Cur.Get
	if f == nil {
		return
	}
	for _, res := range f.Resolved {
		for i, p := range c.pending {
			if p.s == res.S {
				c.pending = slices.Delete(c.pending, i, i+1)
				if !res.Split {
					c.judge(s, r, p)
				} // else a new execution beside the one it was read into: O3's
				break
			}
		}
	}
	switch {
	case f.Early != nil:
		c.pending = append(c.pending, earlyAttempt{s: f.Early,
			judged: !s.faults.Touched(e.At, QuerySettle+G, "F2", "F14")}) // a held Complete may have ended the execution in its wait (D12)
	case f.NewExec && f.Streak != nil && f.EKnown && e.At.Before(f.E.Add(-s.Tol)) &&
		!s.faults.Touched(e.At, QuerySettle+G, "F2", "F14"): // E unjudged there, as in O3
		r.Flag(subj(f.R), e.At, fmt.Sprintf("a 5th GET of request %d after 4 failed attempts, %s before its next execution may start",
			f.R, f.E.Sub(e.At)), f.Streak.LastSeq, e.Seq)
	}
}

// Finish judges the early attempts no later GET decided.
func (c *fetchRetries) Finish(s *State, r *judge.Report) { c.judgeAll(s, r) }

func (c *fetchRetries) judgeAll(s *State, r *judge.Report) {
	for _, p := range c.pending {
		c.judge(s, r, p)
	}
	c.pending = c.pending[:0]
}

// judge flags an early attempt that stands.
func (c *fetchRetries) judge(s *State, r *judge.Report, p earlyAttempt) {
	if !p.judged {
		return
	}
	sp := p.s
	r.Flag(subj(sp.R), sp.At, fmt.Sprintf("attempt %d of request %d's execution came %s after attempt %d ended; the wait is %s",
		sp.Attempt, sp.R, sp.At.Sub(sp.PrevDone), sp.Attempt-1, sp.Wait), sp.PrevDoneSeq, sp.Seq)
}

// concurrency: O7. In-flight GETs ≤ pool_size; in-flight broadcasts ≤
// pool_size (the reference: ≤ 1). Executions in flight, their retry waits
// included, ≤ pool_size as well (ORACLE-SPEC 3.4 "at most
// worker.pool_size executions in flight, waits included", D30; added by the
// second oracle audit: a daemon that freed an execution's slot while it
// waited to retry started more executions than the task group holds). A
// wait is known once the execution's next attempt starts (D1 lets a daemon
// end an execution after fewer attempts, so a failed GET alone does not
// show one); each execution start within it is then counted again with
// the waits known to span it. Not judged where O4's spacing is not: under
// F2 or F14 a held Complete may have ended the execution in its wait.
type concurrency struct {
	life   *Life
	starts []execStart
	waits  [][2]time.Time
}

// execStart is an execution's first GET and the GETs in flight with it.
type execStart struct {
	at      time.Time
	seq     int64
	gets    int
	flagged bool
}

// execWindow is how long execution starts and waits are kept: longer than
// the longest wait (4 s).
const execWindow = 10 * time.Second

func (*concurrency) Name() string     { return nameConcurrency }
func (*concurrency) Contract() string { return "O7" }
func (c *concurrency) Observe(s *State, e *history.Event, r *judge.Report) {
	switch {
	case s.Cur.Get != nil:
		l := s.Cur.Get.Life
		if n := l.getsIn + 1; n > s.P.PoolSize {
			r.Flag(subj(s.Cur.Get.R), e.At, fmt.Sprintf("%d GETs in flight; worker.pool_size is %d", n, s.P.PoolSize),
				append(s.getsOf(l), e.Seq)...)
		} else if n == s.P.PoolSize && c.moreReady(s, l, s.Cur.Get.R, e.At) {
			exercise(s, r, c, partCrowd)
		}
		c.executions(s, e, r, s.Cur.Get)
	case s.Cur.Bcast != nil:
		l := s.Cur.Bcast.Life
		limit := 1
		if s.P.External {
			limit = s.P.PoolSize
		}
		if n := l.bcIn + 1; n > limit {
			r.Flag(bcastSubject(s.Cur.Bcast), e.At, fmt.Sprintf("%d broadcasts in flight; at most %d", n, limit), append(s.callsOf(l, methodBroadcast), e.Seq)...)
		}
	}
}

// executions keeps the lifetime's recent execution starts and known waits,
// and judges the starts a newly known wait spans.
func (c *concurrency) executions(s *State, e *history.Event, r *judge.Report, f *GetFact) {
	if f.Life != c.life {
		c.life, c.starts, c.waits = f.Life, nil, nil
	}
	for len(c.starts) > 0 && e.At.Sub(c.starts[0].at) > execWindow {
		c.starts = c.starts[1:]
	}
	for len(c.waits) > 0 && e.At.Sub(c.waits[0][1]) > execWindow {
		c.waits = c.waits[1:]
	}
	for _, res := range f.Resolved {
		if res.Split {
			// The early GET was a new execution, not the end of a wait: the
			// wait it closed is the other execution's, known now in full.
			c.waits = slices.DeleteFunc(c.waits, func(w [2]time.Time) bool {
				return w[0].Equal(res.S.PrevDone) && w[1].Equal(res.S.At)
			})
		}
	}
	if f.NewExec {
		c.starts = append(c.starts, execStart{at: e.At, seq: e.Seq, gets: f.Life.getsIn + 1})
		return
	}
	from := f.PrevDone
	if from.IsZero() || s.faults.Touched(from, QuerySettle+G, "F2", "F14") || f.Beside {
		// An execution beside the model's own (the SUT runs two of a
		// request at once, O3) takes a GET on time by a lenient reading:
		// it may be a new execution, and its "wait" none (issue 22).
		return
	}
	c.waits = append(c.waits, [2]time.Time{from, e.At})
	for i := range c.starts {
		st := &c.starts[i]
		if st.flagged || !st.at.After(from) || !st.at.Before(e.At) {
			continue
		}
		n := st.gets
		for _, w := range c.waits {
			if w[0].Before(st.at) && w[1].After(st.at) {
				n++
			}
		}
		exercise(s, r, c, partStartInRetry)
		if n > s.P.PoolSize {
			st.flagged = true
			r.Flag(subj(f.R), st.at, fmt.Sprintf("%d executions in flight, retry waits included; worker.pool_size is %d", n, s.P.PoolSize),
				st.seq, f.PrevDoneSeq, e.Seq)
		}
	}
}

// moreReady reports whether another request's model job is ready at t
// while the task group is full.
func (c *concurrency) moreReady(s *State, l *Life, except uint64, t time.Time) bool {
	for _, m := range l.sortedModels() {
		if m.R != except && m.Job != nil && specReady(m.Job, t) {
			return true
		}
	}
	return false
}

// getsOf lists the records of a lifetime's GETs in flight, in order.
func (s *State) getsOf(l *Life) []int64 {
	var out []int64
	for _, g := range s.gets {
		if g.Life == l {
			out = append(out, g.Seq)
		}
	}
	slices.Sort(out)
	return out
}

// callsOf lists the records of a lifetime's calls of a method in flight.
func (s *State) callsOf(l *Life, method string) []int64 {
	var out []int64
	for _, c := range s.calls {
		if c.Life == l && c.Method == method {
			out = append(out, c.Seq)
		}
	}
	slices.Sort(out)
	return out
}

// fidelity: O12. Each execution GETs endpoints[i mod m] (i = self's
// index); each broadcast's raw_data is the §3.4 rendering of the body its
// execution fetched (numbers compared as float64, JSON semantically). A
// broadcast is its result's (chainFor: the same request, round and
// payload), so a daemon that submits several results of one round side
// by side is judged against each one's own extraction, not the latest
// (issue 22).
type fidelity struct{}

func (*fidelity) Name() string     { return nameFidelity }
func (*fidelity) Contract() string { return "O12" }
func (c *fidelity) Observe(s *State, e *history.Event, r *judge.Report) {
	switch {
	case s.Cur.Get != nil:
		c.endpoint(s, e, r, s.Cur.Get)
	case s.Cur.Bcast != nil && s.Cur.Bcast.Msg != nil:
		f := s.Cur.Bcast
		if f.Chain != nil && !f.Chain.Phantom {
			return // the value an execution of this lifetime extracted for its round (chainFor)
		}
		res := (*Result)(nil)
		if f.Model != nil {
			res = f.Model.Result
			for i := len(f.Model.Results) - 1; res == nil && i >= 0; i-- {
				if c := f.Model.Results[i]; !c.Phantom {
					res = c
				}
			}
		}
		switch {
		case res == nil:
			r.Flag(subjN(f.R, f.N), e.At, fmt.Sprintf("broadcast of %q for request %d with no successful GET behind it in this lifetime",
				f.Msg.RawData, f.R), e.Seq)
		case !sameValue(f.Msg.RawData, res.Res.Data) && !fetchedLately(s, f.R, f.Model, f.Msg.RawData):
			r.Flag(subjN(f.R, f.N), e.At, fmt.Sprintf("raw_data %q, but the body fetched renders as %q", f.Msg.RawData, res.Res.Data),
				res.Seq, e.Seq)
		}
	}
}

// fetchedLately reports whether raw is the value the model's open or last
// execution, or the request's last successful GET, extracted: when frames
// held behind a doc query (D20) leave the model's job behind the daemon's,
// the broadcast may carry an execution the model did not make its result.
func fetchedLately(s *State, r uint64, m *Model, raw string) bool {
	if q := s.Req(r); q != nil && q.Fetched != "" && sameValue(raw, q.Fetched) {
		return true
	}
	for _, x := range []*Execution{m.Exec, m.Last} {
		if x != nil && x.Fetched && x.OK && sameValue(raw, x.Value) {
			return true
		}
	}
	return false
}

func (c *fidelity) endpoint(s *State, e *history.Event, r *judge.Report, f *GetFact) {
	var docs []*Doc
	if m := f.Model; m != nil {
		base, later := m.answersAt(e.At)
		if base != nil && base.Doc != nil {
			docs = append(docs, base.Doc)
		}
		for i := range later {
			if later[i].Doc != nil {
				docs = append(docs, later[i].Doc)
			}
		}
	}
	if len(docs) == 0 {
		if d := s.chainDoc(f.R); d != nil {
			docs = append(docs, d)
		}
	}
	var allowed []string
	exercised := false
	for _, d := range docs {
		rd := d.RD
		_, k, ok := specSelectEndpoint(rd, s.P.Self)
		if !ok {
			continue
		}
		allowed = append(allowed, d.Paths[k])
		if specAssignedIndex(rd.AccountList, s.P.Self) >= 1 && len(rd.Endpoints) >= 2 {
			exercised = true
		}
	}
	if len(allowed) == 0 {
		return // nothing assigns the request: O11's business
	}
	if exercised && f.NewExec {
		exercise(s, r, c, "self at index ≥ 1 with ≥ 2 endpoints")
	}
	if slices.Contains(allowed, f.Path) || !f.NewExec && f.Exec != nil && f.Exec.Path == f.Path {
		return
	}
	r.Flag(subj(f.R), e.At, fmt.Sprintf("GET of %s, but self's endpoint is %s", f.Path, strings.Join(allowed, " or ")), e.Seq)
}

// sameValue compares a submitted value with the expected rendering:
// equal text, equal float64 numbers, or equal JSON values.
func sameValue(got, want string) bool {
	if got == want {
		return true
	}
	if g, err1 := strconv.ParseFloat(got, 64); err1 == nil {
		w, err2 := strconv.ParseFloat(want, 64)
		return err2 == nil && g == w
	}
	var g, w any
	if json.Unmarshal([]byte(got), &g) != nil || json.Unmarshal([]byte(want), &w) != nil {
		return false
	}
	switch g.(type) {
	case map[string]any, []any:
		return reflect.DeepEqual(g, w)
	}
	return false
}
