package oracle

import (
	"fmt"
	"slices"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

const (
	nameShutdown      = "o14-shutdown"
	nameClientCloses  = "o14-client-closes"
	nameShutdownOrder = "o15-shutdown-order"
	nameLiveness      = "o16-liveness"
	nameRecovery      = "o16b-recovery"
	nameHealthProbe   = "o18-health-probe"
)

// The goroutine counts a white record carries (its Detail): the count
// before a lifetime starts (recorded before or after its start record),
// and the count once it has stopped; a final count is held to the latest
// baseline.
const (
	GoroutinesBaseline = "baseline"
	GoroutinesFinal    = "final"
)

// shutdown: O14. After SIGTERM or SIGINT at t_s: exit status 0 by t_s +
// T_sd; no execution start, no first broadcast and no retry after t_s +
// 1 s; no Go panic or fatal-error trace (at any time: a panic is never
// graceful); for the reference, the goroutine count back to its baseline.
// A lifetime whose re-subscription attempts ran out before t_s (Life.
// FatalAt) was already stopping for the fatal condition of ORACLE-SPEC
// 3.7, whose exit is non-zero (F1, D18): its status is not judged, the
// rest is.
type shutdown struct {
	life    *Life
	at      time.Time
	seq     int64
	late    bool
	base    int64
	baseSeq int64
	hasBase bool
}

func (*shutdown) Name() string     { return nameShutdown }
func (*shutdown) Contract() string { return "O14" }
func (c *shutdown) Observe(s *State, e *history.Event, r *judge.Report) {
	bound := specShutdownBound(s.P.WorkerTimeout) + s.Tol
	if c.life != nil && !c.life.Exited && !c.late && s.Now.After(c.at.Add(bound)) {
		c.late = true
		r.Flag(fmt.Sprintf("life %d", c.life.ID), c.at.Add(bound), fmt.Sprintf("no exit within T_sd = %s of %s", bound-s.Tol, c.life.Signal), c.seq)
	}
	signalLate := func(l *Life) bool { return l == c.life && e.At.After(c.at.Add(SignalGrace+s.Tol)) }
	switch {
	case e.Proc != nil:
		c.proc(s, e, r, bound)
	case e.White != nil && e.White.Point == history.WhiteGoroutines:
		c.goroutines(s, e, r)
	case s.Cur.Get != nil && signalLate(s.Cur.Get.Life):
		r.Flag(subj(s.Cur.Get.R), e.At, fmt.Sprintf("GET %s after %s", e.At.Sub(c.at), c.life.Signal), c.seq, e.Seq)
	case s.Cur.Bcast != nil && signalLate(s.Cur.Bcast.Life):
		r.Flag(subjN(s.Cur.Bcast.R, s.Cur.Bcast.N), e.At, fmt.Sprintf("broadcast %s after %s", e.At.Sub(c.at), c.life.Signal), c.seq, e.Seq)
	}
}

func (c *shutdown) proc(s *State, e *history.Event, r *judge.Report, bound time.Duration) {
	p := e.Proc
	l := s.life
	switch p.Action {
	case history.ProcSignal:
		if l == nil || l.Signal != "" || (p.Signal != "SIGTERM" && p.Signal != "SIGINT") {
			return
		}
		c.life, c.at, c.seq, c.late = l, e.At, e.Seq, false
		if l.getsIn > 0 {
			exercise(s, r, c, "signal during an HTTP attempt")
		}
	case history.ProcExit:
		if l == nil || l != c.life || l.Exited {
			return
		}
		if p.Status != 0 && (l.FatalAt.IsZero() || l.FatalAt.After(c.at)) {
			r.Flag(fmt.Sprintf("life %d", l.ID), e.At, fmt.Sprintf("%s after %s", p.ExitText(), l.Signal), c.seq, e.Seq)
		}
		if e.At.After(c.at.Add(bound)) && !c.late {
			c.late = true
			r.Flag(fmt.Sprintf("life %d", l.ID), e.At, fmt.Sprintf("exit %s after %s; T_sd is %s", e.At.Sub(c.at), l.Signal, bound-s.Tol), c.seq, e.Seq)
		}
	case history.ProcTrace:
		r.Flag("", e.At, fmt.Sprintf("a Go trace in the output: %q", p.Output), e.Seq)
	}
}

func (c *shutdown) goroutines(s *State, e *history.Event, r *judge.Report) {
	w := e.White
	switch w.Detail {
	case GoroutinesBaseline:
		c.base, c.baseSeq, c.hasBase = w.Value, e.Seq, true
	case GoroutinesFinal:
		if c.hasBase && w.Value > c.base {
			r.Flag("", e.At, fmt.Sprintf("%d goroutines after the stop; %d before the start", w.Value, c.base), c.baseSeq, e.Seq)
		}
	}
}

// clientCloses: O14 (SHOULD). After SIGTERM or SIGINT the daemon closes
// its WebSocket itself: the first close of its connections is the
// client's. A close that is the disconnect of an F1 fault starting at that
// instant is the world's doing, not the daemon's choice: it ends the
// question unjudged (the reference closes only at step 5 of 3.7, after the
// in-flight work, so a fault in that window would otherwise count).
type clientCloses struct {
	life   *Life
	seq    int64
	judged bool
	f1At   time.Time // the latest F1 start
}

func (*clientCloses) Name() string     { return nameClientCloses }
func (*clientCloses) Contract() string { return "O14" }
func (c *clientCloses) Observe(s *State, e *history.Event, r *judge.Report) {
	switch {
	case e.Fault != nil && e.Fault.ID == "F1" && e.Fault.Phase == history.FaultStart:
		c.f1At = e.At
	case e.Proc != nil && e.Proc.Action == history.ProcSignal && (e.Proc.Signal == "SIGTERM" || e.Proc.Signal == "SIGINT"):
		l := s.life
		if l == nil || l.Signal != "" {
			return
		}
		c.life, c.seq, c.judged = l, e.Seq, false
		for _, cn := range l.conns {
			if !cn.Closed {
				exercise(s, r, c, "graceful stop with the WebSocket open")
				return
			}
		}
		c.judged = true
	case e.WS != nil && e.WS.Action == history.WSClose && s.life == c.life && c.life != nil && !c.judged:
		cn := c.life.conns[e.WS.Conn]
		if cn == nil || cn.Closed {
			return
		}
		c.judged = true
		if e.WS.By != "client" && !e.At.Equal(c.f1At) {
			r.Flag(fmt.Sprintf("life %d", c.life.ID), e.At, fmt.Sprintf("after %s the WebSocket was closed by the %s first", c.life.Signal, e.WS.By),
				c.seq, e.Seq)
		}
	}
}

// The shutdown trace points of ORACLE-SPEC 3.7, with their order.
var (
	channelRank = map[string]int{"shutdownCh": 0, "EventCh": 1, "ErrorCh": 1, "ResultCh": 2, "submitSemaphore": 3, "fatalCh": 4}
	stopRank    = map[string]int{"watcher": 0, "scheduler": 1, "submitter": 2, "rpc-client": 3}
)

// shutdownOrder: O15 (white-box). Channels close in the order shutdownCh <
// {EventCh, ErrorCh} < ResultCh < submitSemaphore < fatalCh, ResultCh only
// after the task group drained, and components stop in the order watcher
// < scheduler < submitter < rpc-client.
type shutdownOrder struct {
	life    *Life
	closed  map[string]int64
	stopped map[string]int64
	drained int64
}

func (*shutdownOrder) Name() string     { return nameShutdownOrder }
func (*shutdownOrder) Contract() string { return "O15" }
func (c *shutdownOrder) Observe(s *State, e *history.Event, r *judge.Report) {
	if e.White == nil {
		return
	}
	if c.life != s.life || c.closed == nil {
		c.life, c.closed, c.stopped, c.drained = s.life, map[string]int64{}, map[string]int64{}, 0
	}
	w := e.White
	switch w.Point {
	case history.WhiteDrained:
		c.drained = e.Seq
	case history.WhiteClose:
		if w.Name == "shutdownCh" {
			exercise(s, r, c, "graceful stop")
		}
		if w.Name == "ResultCh" && c.drained == 0 {
			r.Flag("", e.At, "ResultCh closed before the task group drained", e.Seq)
		}
		c.order(s, e, r, channelRank, c.closed, "closed")
	case history.WhiteStop:
		c.order(s, e, r, stopRank, c.stopped, "stopped")
	}
}

func (c *shutdownOrder) order(s *State, e *history.Event, r *judge.Report, rank map[string]int, done map[string]int64, verb string) {
	name := e.White.Name
	k, ok := rank[name]
	if !ok {
		return
	}
	names := make([]string, 0, len(rank))
	for n := range rank {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		switch seq, was := done[n]; {
		case rank[n] < k && !was:
			r.Flag("", e.At, fmt.Sprintf("%s %s before %s", name, verb, n), e.Seq)
		case rank[n] > k && was:
			r.Flag("", e.At, fmt.Sprintf("%s %s after %s", name, verb, n), seq, e.Seq)
		}
	}
	if _, was := done[name]; !was {
		done[name] = e.Seq
	}
}

// roundBound is the O16 bound between consecutive Completes of a request
// with the given period and fetch time.
func (s *State) roundBound(period, fetch time.Duration) time.Duration {
	return period + 2*s.P.BlockInterval + BExec + fetch + BSub + time.Second + s.Tol
}

// healthySince reports whether nothing that excuses a slow round happened
// to request q since t: no fault (an F2 or F14 counted QuerySettle past its
// end), no stop, start or crash, no change of its doc, no misbehaving peer,
// no failed GET.
func (s *State) healthySince(q *Request, t time.Time) bool {
	return !s.faults.TouchedAny(t, 0) && !s.faults.Touched(t, QuerySettle, "F2", "F14") &&
		s.LastProc.Before(t) && q.DocAt.Before(t) && q.PeerTrouble.Before(t) && q.FailedGet.Before(t)
}

// liveness: O16. In the quiet phase, for each ENABLED assigned request not
// hit by F3 or F13, consecutive Completes are at most period + 2 ×
// block_interval + B_exec + fetch + B_sub + 1 s apart, and the SUT
// broadcasts for every round.
type liveness struct {
	rounds map[uint64]int
	bcast  map[uint64]uint64
	// owedSeq remembers, per request, the Complete an owed round was last
	// flagged after (one flag per silence).
	owedSeq map[uint64]int64
}

func (*liveness) Name() string     { return nameLiveness }
func (*liveness) Contract() string { return "O16" }
func (c *liveness) Observe(s *State, e *history.Event, r *judge.Report) {
	if c.rounds == nil {
		c.rounds, c.bcast, c.owedSeq = map[uint64]int{}, map[uint64]uint64{}, map[uint64]int64{}
	}
	switch {
	case e.Proc != nil && (e.Proc.Action == history.ProcSignal || e.Proc.Action == history.ProcExit):
		if s.life != nil && !s.life.Ended() {
			c.owed(s, r, e.At) // judged as things stood just before the stop or crash
		}
	case s.Cur.Bcast != nil && s.Cur.Bcast.Msg != nil:
		c.bcast[s.Cur.Bcast.R] = max(c.bcast[s.Cur.Bcast.R], s.Cur.Bcast.N)
	case e.Block != nil && !s.P.QuietFrom.IsZero() && !e.At.Before(s.P.QuietFrom):
		for i := range e.Block.Completes {
			c.round(s, e, r, &e.Block.Completes[i])
		}
	}
}

func (c *liveness) round(s *State, e *history.Event, r *judge.Report, cp *history.Complete) {
	q := s.req(cp.RequestID)
	if q.LastAt.Before(s.P.QuietFrom) || q.C+1 != cp.Nonce || !q.Hit.IsZero() || !s.runs(q.Doc) || !s.healthySince(q, q.LastAt) {
		return
	}
	var fetch time.Duration
	if m := s.life.Model(cp.RequestID); m != nil && m.Result != nil && m.Result.At.After(q.LastAt) && m.Result.Exec != nil {
		fetch = m.Result.Exec.Fetch()
	}
	bound := s.roundBound(time.Duration(q.Doc.Period)*time.Second, fetch)
	if gap := e.At.Sub(q.LastAt); gap > bound {
		r.Flag(subjN(cp.RequestID, cp.Nonce), e.At, fmt.Sprintf("rounds %d and %d completed %s apart; at most %s", cp.Nonce-1, cp.Nonce, gap, bound),
			q.LastSeq, e.Seq)
	}
	if !slices.Contains(cp.Providers, s.P.Self) && c.bcast[cp.RequestID] < cp.Nonce {
		r.Flag(subjN(cp.RequestID, cp.Nonce), e.At, fmt.Sprintf("round %d completed without self, which never broadcast for it", cp.Nonce), e.Seq)
	}
	c.rounds[cp.RequestID]++
	if c.rounds[cp.RequestID] >= 2 {
		exercise(s, r, c, "three rounds of a request in the quiet phase")
	}
}

// Finish judges the rounds still owed when the run ended, if the SUT was
// still running.
func (c *liveness) Finish(s *State, r *judge.Report) {
	if s.life != nil && !s.life.Ended() {
		c.owed(s, r, s.Now)
	}
}

// owed judges the rounds owed at end: a request that ran through the
// quiet phase must have completed one within the bound (plus a
// parse-failure backoff and a period when its last Complete predates the
// quiet phase).
func (c *liveness) owed(s *State, r *judge.Report, end time.Time) {
	if s.P.QuietFrom.IsZero() || !end.After(s.P.QuietFrom) {
		return
	}
	for _, q := range s.sortedReqs() {
		if c.owedSeq != nil && c.owedSeq[q.R] == q.LastSeq && q.LastSeq != 0 {
			continue
		}
		if !s.runs(q.Doc) || !q.Hit.IsZero() {
			continue
		}
		period := time.Duration(q.Doc.Period) * time.Second
		t0, extra := q.LastAt, time.Duration(0)
		if t0.Before(s.P.QuietFrom) {
			t0, extra = s.P.QuietFrom, specParseFailureRetry+period
		}
		if !s.healthySince(q, t0) {
			continue
		}
		var fetch time.Duration
		if m := s.life.Model(q.R); m != nil && m.Exec != nil {
			fetch = end.Sub(m.Exec.Start)
		}
		if bound := s.roundBound(period, fetch) + extra; end.Sub(t0) > bound {
			if c.owedSeq != nil {
				c.owedSeq[q.R] = q.LastSeq
			}
			r.Flag(subj(q.R), end, fmt.Sprintf("no round of request %d completed in the last %s of the quiet phase; at most %s",
				q.R, end.Sub(t0), bound), nonZero(q.LastSeq)...)
		}
	}
}

// recovery: O16b. O16 also holds after F1 and F14, within one reconcile;
// after F3 or F13, within 24 h + period (sim mode only): the SUT
// broadcasts for the open round (C + 1), or a round completes with self,
// within the allowance after the fault ends.
type recovery struct {
	byReq map[uint64]*recov
	q     deadlines[*recov]
}

type recov struct {
	R     uint64
	Fault string
	Since time.Time
	Seq   int64
	Base  time.Time
	Fetch time.Duration
	done  bool
}

func newRecovery() *recovery { return &recovery{byReq: map[uint64]*recov{}} }

func (*recovery) Name() string     { return nameRecovery }
func (*recovery) Contract() string { return "O16b" }

// reconcileAllowance is how long after F1 or F14 ends the SUT may take to
// reconcile: the longest re-subscription wait (or the 5 s of a dropped
// event's R, whichever is longer) and G for R's queries.
func (s *State) reconcileAllowance() time.Duration {
	_, hi := specJitterBounds(s.P.MaxDelay)
	return max(hi, specDroppedEventReconcile) + G
}

func (c *recovery) Observe(s *State, e *history.Event, r *judge.Report) {
	for _, p := range c.q.due(s.Now) {
		if !p.done && c.byReq[p.R] == p {
			c.expire(s, r, p)
		}
	}
	switch {
	case e.Fault != nil && e.Fault.Phase != history.FaultStart:
		rs, all := faultRequests(e.Fault)
		hit := func(q *Request) bool { return all || slices.Contains(rs, q.R) }
		switch {
		case e.Fault.ID == "F1":
			for _, q := range s.sortedReqs() {
				c.start(s, q, e, 0)
			}
		case e.Fault.ID == "F14":
			for _, q := range s.sortedReqs() {
				if hit(q) {
					c.start(s, q, e, 0)
				}
			}
		case e.Fault.ID == "F3" && s.P.Mode == ModeSim:
			for _, q := range s.sortedReqs() {
				if hit(q) {
					c.start(s, q, e, specCompleteWait)
				}
			}
		}
	case e.Evict != nil && e.Evict.Cause == history.EvictFault && e.Evict.Origin == history.OriginSUT && s.P.Mode == ModeSim:
		if t, ok := s.sutTxs[e.Evict.Hash]; ok {
			c.startAs(s, s.req(t.R), e, "F13", specCompleteWait)
		}
	case s.Cur.Bcast != nil && s.Cur.Bcast.Msg != nil && s.Cur.Bcast.Life == s.life:
		f := s.Cur.Bcast
		if p := c.byReq[f.R]; p != nil && e.At.After(p.Since) && f.N == f.C+1 {
			c.resolve(s, r, p)
		}
	case s.Cur.GetDone != nil && s.Cur.GetDone.Fetched && s.Cur.GetDone.Get.Exec != nil:
		g := s.Cur.GetDone.Get
		if p := c.byReq[g.R]; p != nil {
			p.Fetch = max(p.Fetch, e.At.Sub(g.Exec.Start))
		}
	case e.Block != nil:
		for _, cp := range e.Block.Completes {
			if p := c.byReq[cp.RequestID]; p != nil && e.At.After(p.Since) && slices.Contains(cp.Providers, s.P.Self) {
				c.resolve(s, r, p)
			}
		}
	}
}

func (c *recovery) start(s *State, q *Request, e *history.Event, extra time.Duration) {
	c.startAs(s, q, e, e.Fault.ID, extra)
}

func (c *recovery) startAs(s *State, q *Request, e *history.Event, fault string, extra time.Duration) {
	if !s.runs(q.Doc) {
		return
	}
	allow := s.reconcileAllowance()
	if extra > 0 {
		allow = extra
	}
	p := &recov{R: q.R, Fault: fault, Since: e.At, Seq: e.Seq,
		Base: e.At.Add(allow + s.roundBound(time.Duration(q.Doc.Period)*time.Second, 0))}
	if old := c.byReq[q.R]; old != nil {
		if old.Base.After(p.Base) {
			// A recovery still pending with a longer allowance (an F3 or
			// F13 waiting for the watchdog) is not cut short by a later F1
			// or F14: the later fault's reconcile need not recover it.
			return
		}
		old.done = true
	}
	c.byReq[q.R] = p
	c.q.push(p.Base, p)
}

func (c *recovery) resolve(s *State, r *judge.Report, p *recov) {
	p.done = true
	delete(c.byReq, p.R)
	exercise(s, r, c, recoveryPart(p.Fault))
}

// expire judges a recovery whose deadline came. A peer that misbehaved in
// the round still open (after the last Complete) excuses it as much as one
// that misbehaved after the fault: the round may wait on that peer, not
// on the SUT, which may have submitted before the fault ended. So does
// self's submission for the open round already committed (as in O13): the
// round then waits on the peers, whose lateness may only show later.
func (c *recovery) expire(s *State, r *judge.Report, p *recov) {
	q := s.req(p.R)
	after := p.Since.Add(time.Nanosecond)
	if s.faults.TouchedAny(after, 0) || s.LastProc.After(p.Since) || !q.DocAt.Before(after) && !q.DocAt.IsZero() ||
		q.PeerTrouble.After(p.Since) || q.PeerTrouble.After(q.LastAt) || len(q.Commits[q.C+1]) > 0 || q.FailedGet.After(p.Since) || !s.runs(q.Doc) || s.life == nil || s.life.Ended() {
		p.done = true
		delete(c.byReq, p.R)
		return
	}
	if m := s.life.Model(p.R); m != nil {
		// A model job waiting out a failure's backoff (a fetch or parse
		// failure, or a result given up, D7) past the fault is not slow
		// to recover: O3 and O10 judge that wait.
		e, _, _, failure, ok := m.NextStart(s.P.Self)
		// A result given up may be given up at its last answer other than
		// an acknowledgement (NextStart takes the first, for O3's bound).
		gaveUp := m.Result != nil && !m.Result.Acked && !m.Result.OnChain && !m.Result.NonAckAt.IsZero() &&
			m.Result.NonAckAt.Add(specSubmissionGaveUpRetry).After(p.Since)
		// A job that knows the chain's last Complete and has run the open
		// round waits for a Complete no reconcile can bring (the round is
		// open on chain): that wait is the watchdog's (D13), not a missed
		// event O16b's reconcile should recover.
		waits := m.Job != nil && m.Job.Nonce == q.C && m.Job.Exec.Status == oracle.ExecCompleted
		if ok && failure != "" && e.After(p.Since) || gaveUp || waits {
			p.done = true
			delete(c.byReq, p.R)
			return
		}
	}
	if m := s.life.Model(p.R); m != nil && m.Exec != nil && m.Exec.InFlight != nil {
		c.q.push(s.Now.Add(time.Second), p) // wait for the GET in flight: its fetch counts
		return
	}
	if d := p.Base.Add(p.Fetch); !d.Before(s.Now) {
		c.q.push(d, p)
		return
	}
	p.done = true
	delete(c.byReq, p.R)
	exercise(s, r, c, recoveryPart(p.Fault))
	r.Flag(subj(p.R), p.Base.Add(p.Fetch), fmt.Sprintf("no recovery of request %d within %s after %s", p.R, p.Base.Add(p.Fetch).Sub(p.Since), p.Fault),
		p.Seq)
}

// healthProbe: O18. While running, `status` is called every 30 s ± 3 s.
// The start's probe (§3.1 step 2) is not the health check: the gap from it
// to the first check covers the start-up, whose length the spec does not
// bound. The first GET of a lifetime ends that exemption: it shows that
// step 6 has run, which starts the scheduler and the 30 s health check
// together, so the first check is due within 33 s of it.
type healthProbe struct {
	life *Life
	gap  gapWatch
	// running: the lifetime's first GET has been seen.
	running bool
}

func (*healthProbe) Name() string     { return nameHealthProbe }
func (*healthProbe) Contract() string { return "O18" }
func (c *healthProbe) Observe(s *State, e *history.Event, r *judge.Report) {
	if s.life != c.life {
		c.life, c.gap, c.running = s.life, gapWatch{skip: 1}, false
	}
	if !c.running && s.Cur.Get != nil && s.Cur.Get.Life == s.life && s.life != nil {
		c.running = true
		if c.gap.n == 1 { // only the start's probe so far: judge from here
			c.gap.skip = 0
			c.gap.last, c.gap.lastSeq = e.At, e.Seq
		}
	}
	c.gap.check(s, r, ProbeBound, "status call")
	if e.RPC != nil && e.RPC.Phase == history.PhaseRecv && e.RPC.Method == methodStatus {
		if c.gap.call(s, e, r, ProbeBound, "status calls") {
			exercise(s, r, c, "a health-check interval")
		}
	}
}

// recoveryPart is the part of O16b's obligation a recovery after fault
// counts for (partRecoveryF1…).
func recoveryPart(fault string) string { return "recovery after " + fault }
