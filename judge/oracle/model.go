package oracle

import (
	"net/url"
	"slices"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
)

// Model is the checkers' model of one of the SUT's jobs in one lifetime
// (ORACLE-SPEC 5.1, E(r)): an oracle.Job moved only by specTransition,
// with the triggers read from what was delivered to the SUT — Complete
// frames, query answers, data-source outcomes, broadcast answers — plus the
// executions and results the records show.
type Model struct {
	R    uint64
	Life *Life
	// Job is the model job (nil: the SUT has none for the request, as far
	// as what it was told goes).
	Job *oracle.Job
	// ESeq is the record whose rule last set Job.NextRunTime, EWhy the rule,
	// EFailure "fetch failure" or "parse failure" when it was one.
	ESeq     int64
	EWhy     string
	EFailure string
	// FrameAt, FrameSeq: the last Register or Update frame for the request
	// delivered in this lifetime (a creation's E, lenient).
	FrameAt  time.Time
	FrameSeq int64
	// Doc is the latest doc an answer delivered to this lifetime.
	Doc *Doc
	// Answers are the doc answers still relevant to O11 and O12: the last
	// one delivered at or before now − G and every later one.
	Answers []DocAnswer
	// Exec is the open execution the model follows (its end moves the
	// model job); Last the one of those that ended last. Orphans are the
	// request's other open executions: a SUT that starts one while
	// another still runs (O3) keeps both, and each one's attempts are its
	// own (fetchchains.go).
	Exec    *Execution
	Last    *Execution
	Orphans []*Execution
	// suspects are the GETs read as early further attempts, which a later
	// GET of the request decides (resolveSuspects).
	suspects []*Suspect
	// Executions counts execution starts in this lifetime.
	Executions int
	// Result is the latest successful extraction the model's rules queued
	// (its E follows this one's answers).
	Result *Result
	// Results are the lifetime's results of the request still followed,
	// oldest first: every successful extraction (the model's and any
	// other execution's), and the chains of broadcasts no extraction
	// explains (phantoms). A broadcast belongs to the result of its
	// request, round and payload (chainFor): a result's retries are judged
	// per result whatever else the SUT runs beside it (issue 22).
	Results []*Result
	// free are results no longer followed and held by nothing (newResult
	// reuses them: a result per extraction was an allocation per round).
	free []*Result
	// Acked holds, by nonce, the acknowledgements (code 0 or 19) of this
	// lifetime.
	Acked map[uint64]Ack
	// docAhead: a single doc answer (not R's list) moved the model's nonce
	// past heldNonce, the nonce a daemon applying the Update rule to it
	// still holds (D10: an update never changes the nonce). A Complete
	// above heldNonce is then new to such a daemon, though stale to the
	// model: docNonce below.
	docAhead  bool
	heldNonce uint64

	// rooms hold the model job in turns (transition), roomRec the record
	// each was last written for; scratch is for what-if transitions.
	rooms   [2]specRoom
	roomRec [2]uint64
	scratch specRoom
}

// completeJob is the job a Complete(n) meets: the model's, or, when a doc
// answer moved the model's nonce past n and a daemon applying the Update
// rule would still hold an older one, that daemon's (lenient: the
// Complete re-arms the job as it would there).
func (m *Model) completeJob(j *oracle.Job, n uint64) *oracle.Job {
	if !m.docAhead || n <= m.heldNonce || n > j.Nonce {
		return j
	}
	held := *j
	held.Nonce = m.heldNonce
	return &held
}

// DocAnswer is one answer about a request's doc delivered to the SUT: the
// doc, or nil when the chain said it does not exist or it was missing
// from a list of ENABLED (or all) docs (Unlisted).
type DocAnswer struct {
	At       time.Time
	Seq      int64
	Doc      *Doc
	Unlisted bool
}

// Execution is one run of a job as the records show it: 1–4 GETs.
type Execution struct {
	Model    *Model
	Start    time.Time
	StartSeq int64
	Attempts int
	Failed   int
	InFlight *Get
	LastDone time.Time
	LastSeq  int64
	Path     string
	// N is the round the model's job was on when the execution began
	// (its Nonce + 1; 0 without a job), Alt the round a daemon that kept
	// an older nonce through a doc answer would submit (D10; 0: none).
	N, Alt uint64
	Ended  bool
	// Fetched: a GET answered 200 (the execution then ended, successfully
	// or with a parse failure).
	Fetched bool
	Value   string
	OK      bool // the value was extracted
	EndAt   time.Time
	EndSeq  int64

	// first is the memory of the execution's first GET (applyGet): one
	// allocation for both, as most executions make one GET.
	first Get
}

// Fetch is the time from the execution's first GET to its successful
// answer (zero until then).
func (x *Execution) Fetch() time.Duration {
	if !x.Fetched {
		return 0
	}
	return x.EndAt.Sub(x.Start)
}

// Result is a successful extraction: the JobResult the rules queued (or
// the value another execution of the request extracted), and the chain of
// its broadcasts.
type Result struct {
	Res  oracle.JobResult
	Exec *Execution
	At   time.Time
	Seq  int64
	// Alt is another round the SUT may submit it for: the round after the
	// nonce a daemon applying the Update rule kept (D10) when its
	// execution began (0: none).
	Alt uint64
	// Phantom: no extraction of this lifetime explains the chain; it holds
	// the broadcasts of one (r, n, raw_data) (Res.Data and Res.Nonce).
	Phantom bool
	// Sub is the chain of its broadcasts (O5); Sub.Count 0 before the
	// first.
	Sub Group
	// calls counts its broadcasts still unanswered (their Call holds it).
	calls int
	Acked bool
	// OnChain: the on-chain check found self's submission (it counts as
	// submitted, D3).
	OnChain bool
	// NonAckAt is the last time the SUT heard something other than an
	// acknowledgement while submitting it (a non-0/19 answer at its
	// delivery, a lost one at its t_recv, a failed on-chain check or
	// Account query): it may have given up there (D7).
	NonAckAt  time.Time
	NonAckSeq int64
	// FirstNonAckAt is the first such time: the earliest the SUT may have
	// given up, so the earliest E a give-up allows (lenient, D7).
	FirstNonAckAt  time.Time
	FirstNonAckSeq int64
}

// nonAck notes an answer other than an acknowledgement at at.
func (r *Result) nonAck(at time.Time, seq int64) {
	r.NonAckAt, r.NonAckSeq = at, seq
	if r.FirstNonAckAt.IsZero() {
		r.FirstNonAckAt, r.FirstNonAckSeq = at, seq
	}
}

// Group is the broadcasts of one result: one (r, n) and the result's
// payload (O5; chainFor).
type Group struct {
	N     uint64
	Count int
	// LastSeq is the last broadcast's recv record; LastAt when its answer
	// was delivered (its t_recv when lost); Answered whether it has one.
	LastSeq   int64
	LastRecv  time.Time
	LastAt    time.Time
	AnswerSeq int64
	Answered  bool
	LastGas   uint64
	// Terminal: an answer after which the result must not be broadcast
	// again (code 13 or another give-up code).
	Terminal    bool
	TerminalSeq int64
	TerminalMsg string
	// NeedGas is the least gas the next broadcast must carry after code
	// 11 (0: none).
	NeedGas    uint64
	NeedGasSeq int64
}

// retryFits reports whether a broadcast at at would be a retry of g that
// O5 allows: its last broadcast answered with a class that retries, fewer
// than six made, and the backoff since that answer waited out.
func (g *Group) retryFits(at time.Time, tol time.Duration) bool {
	if !g.Answered || g.Terminal || g.Count >= specSubmitAttempts {
		return false
	}
	base, ok := specSubmitRetryBase(g.Count)
	if !ok {
		return false
	}
	lo, _ := specJitterBounds(base)
	return !at.Before(g.LastAt.Add(lo - tol))
}

// Ack is an acknowledgement (code 0 or 19) of a broadcast of (r, n).
type Ack struct {
	At  time.Time
	Seq int64
	// ResultAt is when the acknowledged result was extracted (the
	// watchdog's clock, D13); zero when unknown.
	ResultAt time.Time
}

func (l *Life) model(r uint64) *Model {
	if l.jobs == nil {
		return nil
	}
	m := l.jobs.get(r)
	if m == nil {
		m = &Model{R: r, Life: l}
		l.jobs.set(r, m)
	}
	return m
}

// Model returns the lifetime's model of request r (nil when none).
func (l *Life) Model(r uint64) *Model {
	if l == nil || l.jobs == nil {
		return nil
	}
	return l.jobs.get(r)
}

// sortedModels lists the lifetime's models by request id.
func (l *Life) sortedModels() []*Model {
	if l.jobs == nil {
		return nil
	}
	return l.jobs.sorted()
}

// apply runs the transition table on the model job and keeps what the
// checkers need of the outcome: which record set NextRunTime and why, the
// queued result, an aborted execution.
func (m *Model) apply(t oracle.Trigger, now time.Time, seq int64, why string) oracle.Outcome {
	return m.take(m.transition(t, now), now, seq, why)
}

// transition applies t to the model job. The job after it goes in the
// room that does not hold the model job, unless a transition for the
// record being judged wrote it (the record's facts may point there);
// otherwise, and for a new job, it is allocated. A record's facts are all
// a checker keeps of a model job past its record (as values), so a room
// two transitions old is free: a new job per transition was a tenth of
// the oracle world's bytes.
func (m *Model) transition(t oracle.Trigger, now time.Time) oracle.Outcome {
	if j := m.Job; j != nil && m.Life != nil && m.Life.rec != nil {
		rec := *m.Life.rec
		for i := range m.rooms {
			if m.rooms[i].holds(j) || m.roomRec[i] == rec {
				continue
			}
			m.roomRec[i] = rec
			return specTransition(&m.rooms[i], j, t, now)
		}
	}
	return specTransition(nil, m.Job, t, now)
}

// factTransition is specTransition of j (the model's job, or a copy
// of it) for a fact of the record being judged, written into a room that
// holds neither j nor the model's job and that no transition of this
// record wrote; both rooms are then spent for the record, so the fact's
// jobs stay as they are while it is judged and applied (a Complete
// delivered was a new job per round). Without such a room the job is
// allocated as by Transition.
func (m *Model) factTransition(j *oracle.Job, t oracle.Trigger, now time.Time) oracle.Outcome {
	if m.Life != nil && m.Life.rec != nil {
		rec := *m.Life.rec
		for i := range m.rooms {
			if m.rooms[i].holds(j) || (m.Job != nil && m.rooms[i].holds(m.Job)) || m.roomRec[i] == rec {
				continue
			}
			m.roomRec[0], m.roomRec[1] = rec, rec
			return specTransition(&m.rooms[i], j, t, now)
		}
	}
	return specTransition(nil, j, t, now)
}

// take makes o, the outcome of a transition of the model job, the model's.
func (m *Model) take(o oracle.Outcome, now time.Time, seq int64, why string) oracle.Outcome {
	before := m.Job
	if len(o.Rows) == 0 {
		return o
	}
	m.Job = o.Job
	if o.Job == nil && before != nil && len(m.Acked) > 0 {
		// The job is gone (disabled, unassigned): a job created again later
		// starts afresh and may submit a round whose earlier submission
		// never committed (O5's "after an acknowledgement" is per job).
		m.Acked = map[uint64]Ack{}
	}
	if o.Job != nil && (before == nil || !o.Job.NextRunTime.Equal(before.NextRunTime)) {
		m.ESeq, m.EWhy, m.EFailure = seq, why, ""
		switch {
		case slices.Contains(o.Rows, oracle.RowFetchFailed):
			m.EFailure = "fetch failure"
		case slices.Contains(o.Rows, oracle.RowParseFailed):
			m.EFailure = "parse failure"
		}
	}
	for _, ef := range o.Effects {
		switch ef := ef.(type) {
		case *oracle.QueueResult:
			// A result per execution: the broadcasts of an earlier one may
			// still come (a call holds its result until answered).
			res := m.newResult()
			*res = Result{Res: ef.Result, Exec: m.Exec, At: now, Seq: seq}
			if m.Exec != nil {
				res.Alt = m.Exec.Alt
			}
			m.Result = res
			m.addResult(res)
		case oracle.AbortExecution:
			if m.Exec != nil {
				m.endExec(m.Exec, now, seq)
			}
		}
	}
	if j := m.Job; j != nil && j.Status != oracle.StatusEnabled && j.Exec.Status == oracle.ExecExecuting &&
		m.Exec != nil && m.Exec.InFlight == nil && m.Exec.Attempts > 0 {
		// The request stopped while its execution waits between attempts:
		// the daemon ends that execution when the wait ends, without a GET
		// (3.3.3 "execution ends, superseded: Status ≠ ENABLED", D12). The
		// model ends it now, so that a GET after the request runs again
		// starts a new execution, not attempt k + 1 of the old one (O4
		// would judge its spacing; docs/decisions/oracle-5-model.md, DR201).
		x := m.Exec
		m.take(m.transition(oracle.ExecutionEnd{Outcome: oracle.ExecDropped}, now), now, seq, why)
		m.endExec(x, now, seq)
	}
	return o
}

// ends reports whether x's end moves the model job: it is the model's
// own execution, or one beside it while the job is Executing (a daemon
// that runs a job's executions side by side ends the job with the first
// that ends; the table ignores an end once the job left Executing). When
// one beside it does, the model's own goes beside it in turn: the model
// follows no execution until the next one starts.
func (m *Model) ends(x *Execution) bool {
	if m.Exec == x {
		return true
	}
	if m.Job == nil || m.Job.Exec.Status != oracle.ExecExecuting || !slices.Contains(m.Orphans, x) {
		return false
	}
	if y := m.Exec; y != nil {
		m.Exec = nil
		m.Orphans = append(m.Orphans, y)
	}
	return true
}

func (m *Model) endExec(x *Execution, at time.Time, seq int64) {
	if !x.Ended {
		x.Ended, x.EndAt, x.EndSeq = true, at, seq
	}
	if m.Exec == x {
		m.Exec = nil
	}
	if i := slices.Index(m.Orphans, x); i >= 0 {
		m.Orphans = slices.Delete(m.Orphans, i, i+1)
		return // an execution the model did not follow
	}
	m.Last = x
}

// executionStarted moves the model job to Executing for an execution the SUT
// started at now.
func (m *Model) executionStarted(now time.Time, seq int64) {
	if m.Job == nil {
		return
	}
	if o := m.apply(oracle.Select{}, now, seq, "selected"); len(o.Rows) > 0 {
		return
	}
	// The SUT started an execution the rules would not have selected yet
	// (the checkers flag it); the model follows what it did, setting what
	// Select sets, so that the execution's end is judged as usual.
	j := m.Job.Clone()
	j.Exec.Status = oracle.ExecExecuting
	j.Exec.ExecNonce = j.Nonce
	j.Exec.StartedAt = now
	j.Exec.Superseded = false
	m.Job = &j
}

// NextStart is E(r): the earliest allowed start of the next execution by
// the model, the record that set it and why; ok is false when the model
// has no job. A Completed job waits for its watchdog, or, when the SUT may
// have given up submitting its result (an answer other than an
// acknowledgement), for that answer + 1 min (D7).
func (m *Model) NextStart(self string) (e time.Time, seq int64, why, failure string, ok bool) {
	j := m.Job
	if j == nil {
		return time.Time{}, 0, "", "", false
	}
	e, seq, why, failure = j.NextRunTime, m.ESeq, m.EWhy, m.EFailure
	if r := m.Result; j.Exec.Status == oracle.ExecCompleted && r != nil && !r.Acked && !r.OnChain && !r.NonAckAt.IsZero() {
		o := specTransition(&m.scratch, j, oracle.SubmissionGaveUp{Result: r.Res, Self: self}, r.FirstNonAckAt)
		if o.Job != nil && slices.Contains(o.Rows, oracle.RowGaveUp) && o.Job.NextRunTime.Before(e) {
			e, seq, why, failure = o.Job.NextRunTime, r.FirstNonAckSeq, "submission not acknowledged", "gave up"
		}
	}
	return e, seq, why, failure, true
}

// stops reports whether the model job no longer lets an open execution go
// on: gone, superseded by a Complete, not ENABLED, or no longer Executing.
func (m *Model) stops() bool {
	j := m.Job
	return j == nil || j.Exec.Superseded || j.Status != oracle.StatusEnabled || j.Exec.Status != oracle.ExecExecuting
}

// noteAnswer keeps a doc answer for O11 and O12, dropping the ones no
// longer needed at now.
func (m *Model) noteAnswer(a DocAnswer, now time.Time) {
	m.Answers = append(m.Answers, a)
	cut := now.Add(-G)
	keep := 0
	for i := range m.Answers {
		if !m.Answers[i].At.After(cut) {
			keep = i
		}
	}
	m.Answers = m.Answers[keep:]
}

// answersAt returns the answer the SUT must have acted on by t (the latest
// one delivered at or before t − G; nil when none) and the later ones it
// may be acting on.
func (m *Model) answersAt(t time.Time) (base *DocAnswer, later []DocAnswer) {
	cut := t.Add(-G)
	for i := range m.Answers {
		if m.Answers[i].At.After(cut) {
			return base, m.Answers[i:]
		}
		base = &m.Answers[i]
	}
	return base, nil
}

// ---- GETs ----

// GetFact is what a data-source GET of the SUT means.
type GetFact struct {
	R     uint64
	Path  string
	Life  *Life
	Model *Model
	// NewExec: the GET starts an execution (Exec, new); otherwise it is
	// attempt Attempt of Exec (an existing one).
	NewExec bool
	Attempt int
	Exec    *Execution
	// Overlap is another GET of the request still in flight in the
	// lifetime.
	Overlap *Get
	// A new execution: E and the record that set it (EKnown false when the
	// model has no job), whether E follows a failure, whether the previous
	// execution failed all its attempts (Streak), whether it is the
	// lifetime's first execution of the request.
	E        time.Time
	EKnown   bool
	ESeq     int64
	EWhy     string
	EFailure string
	Streak   *Execution
	First    bool
	// A retry: the previous attempt's end and the wait the rules ask for.
	PrevDone    time.Time
	PrevDoneSeq int64
	Wait        time.Duration
	// Early: a further attempt that came before its wait was over, read
	// as attempt Attempt of Exec until a later GET of the request says
	// whether it was a new execution beside Exec instead (Resolved).
	Early *Suspect
	// Resolved are the earlier early attempts this GET decides.
	Resolved []Resolution
	// Beside: Exec, a further attempt's execution, is not the one the
	// model follows but one the SUT runs beside it (fetchchains.go).
	Beside bool
}

func (s *State) getFact(e *history.Event) *GetFact {
	src := e.Src
	l := s.lifeOf(e)
	m := l.model(src.RequestID)
	f := &s.facts.get
	*f = GetFact{R: src.RequestID, Path: src.Path, Life: l, Model: m}
	if m == nil {
		f.NewExec, f.Attempt = true, 1
		return f
	}
	m.closeOrphans(e.At, s.Tol)
	d := s.decideGet(m, e.At, src.Path)
	if len(m.suspects) > 0 {
		d = s.resolveSuspects(m, e, d, f)
	}
	if x := d.exec; x != nil {
		f.Exec, f.Attempt, f.Beside = x, x.Attempts+1, x != m.Exec
		f.Wait, _ = specFetchRetryWait(f.Attempt)
		f.PrevDone, f.PrevDoneSeq = x.LastDone, x.LastSeq
		if d.early {
			f.Early = &Suspect{Life: l, R: src.RequestID, Exec: x, At: e.At, Seq: e.Seq, Attempt: f.Attempt, Wait: f.Wait,
				PrevDone: x.LastDone, PrevDoneSeq: x.LastSeq, pre: execPre{x.Attempts, x.Failed, x.LastDone, x.LastSeq}}
			if j := m.Job; j != nil {
				f.Early.N = j.Nonce + 1
			}
			if m.docAhead {
				f.Early.Alt = m.heldNonce + 1
			}
		}
		return f
	}
	f.Overlap = d.overlap
	f.NewExec, f.Attempt = true, 1
	f.Exec = &Execution{Model: m, Start: e.At, StartSeq: e.Seq, Path: src.Path}
	f.First = m.Executions == 0
	if l := m.Last; l != nil && m.Exec == nil && !l.Fetched && l.Failed >= specFetchAttempts {
		f.Streak = l
	}
	f.E, f.ESeq, f.EWhy, f.EFailure, f.EKnown = m.NextStart(s.P.Self)
	return f
}

func (s *State) applyGet(e *history.Event) {
	f := s.Cur.Get
	var g *Get
	if f.NewExec && f.Exec != nil {
		g = &f.Exec.first // an execution's first GET comes with it
	} else {
		g = &Get{}
	}
	*g = Get{Exchange: e.Src.Exchange, Seq: e.Seq, At: e.At, Life: f.Life, R: f.R, Path: f.Path}
	s.gets[g.Exchange] = g
	f.Life.getsIn++
	m := f.Model
	if m == nil {
		return
	}
	x := f.Exec
	if f.NewExec {
		switch old := m.Exec; {
		case old == nil:
		case f.Overlap != nil && !m.stops():
			// Two executions at once (O3): the one the model followed goes
			// on beside the new one, its further attempts its own.
			m.Orphans = append(m.Orphans, old)
		default:
			if old.InFlight == nil && m.Job != nil && m.Job.Exec.Status == oracle.ExecExecuting {
				m.apply(oracle.ExecutionEnd{Outcome: oracle.ExecDropped, StartedAt: old.Start}, e.At, e.Seq, "execution dropped")
			}
			m.endExec(old, old.LastDone, old.LastSeq)
		}
		m.Exec = x
		m.Executions++
		if j := m.Job; j != nil {
			x.N = j.Nonce + 1
		}
		if m.docAhead {
			x.Alt = m.heldNonce + 1
		}
		m.executionStarted(e.At, e.Seq)
	}
	if sp := f.Early; sp != nil {
		sp.Get = g
		m.suspects = append(m.suspects, sp)
	}
	x.Attempts++
	x.InFlight = g
	g.Exec = x
}

// GetDoneFact is what the end of a GET means.
type GetDoneFact struct {
	Get *Get
	// Fetched: status 200 with the body read. Then Value is the §3.4
	// rendering under Rule, or Err says why extraction failed.
	Fetched bool
	Rule    string
	Value   string
	Err     error
}

func (s *State) getDoneFact(e *history.Event) *GetDoneFact {
	g := s.gets[e.Src.Exchange]
	if g == nil {
		return nil
	}
	f := &s.facts.getDone
	*f = GetDoneFact{Get: g}
	src := e.Src
	f.Fetched = !src.Aborted && src.Status == 200 && src.Class != "reset" && src.Class != "hang"
	if !f.Fetched {
		return f
	}
	f.Rule = s.parseRule(g)
	// The body is read through one scratch copy (specExtractText keeps
	// none of it, its value being a substring of src.Body or a string of
	// its own): a copy per GET was 1 % of the oracle world's allocations.
	s.body = append(s.body[:0], src.Body...)
	f.Value, f.Err = specExtractText(src.Body, s.body, f.Rule)
	if f.Err == nil {
		s.req(src.RequestID).Fetched = f.Value
	}
	return f
}

// parseRule is the parse rule of the endpoint a GET hit, from the doc the
// lifetime last heard of (else the chain's).
func (s *State) parseRule(g *Get) string {
	var m *Model
	if g.Exec != nil {
		m = g.Exec.Model
	}
	for _, d := range []*Doc{docOf(m), s.chainDoc(g.R)} {
		if d == nil {
			continue
		}
		for i, p := range d.Paths {
			if p == g.Path {
				if s.rules == nil {
					s.rules = map[string]string{}
				}
				s.rules[g.Path] = d.Endpoints[i].ParseRule
				return d.Endpoints[i].ParseRule
			}
		}
	}
	// An execution's later attempts keep the endpoint it selected even
	// when an Update has since removed it: its rule is the one last known.
	return s.rules[g.Path]
}

func docOf(m *Model) *Doc {
	if m == nil {
		return nil
	}
	return m.Doc
}

func (s *State) chainDoc(r uint64) *Doc {
	if q := s.reqs.get(r); q != nil {
		return q.Doc
	}
	return nil
}

// urlPath is a URL's path ("" when it does not parse).
func urlPath(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Path
}

func (s *State) applyGetDone(e *history.Event) {
	f := s.Cur.GetDone
	if f == nil {
		return
	}
	g := f.Get
	delete(s.gets, g.Exchange)
	if g.Life.getsIn > 0 {
		g.Life.getsIn--
	}
	if !f.Fetched || f.Err != nil {
		s.req(g.R).FailedGet = e.At // the source failed or served something unusable
	}
	x := g.Exec
	if x == nil || x.InFlight != g {
		return
	}
	x.InFlight = nil
	x.LastDone, x.LastSeq = e.At, e.Seq
	m := x.Model
	switch {
	case f.Fetched:
		x.Fetched, x.Value, x.OK = true, f.Value, f.Err == nil
		x.EndAt, x.EndSeq = e.At, e.Seq
		if m.ends(x) {
			out := oracle.ExecutionEnd{Outcome: oracle.ExecSucceeded, Data: f.Value, StartedAt: x.Start}
			why := "fetch and extract succeeded"
			if f.Err != nil {
				out = oracle.ExecutionEnd{Outcome: oracle.ExecParseFailed, Error: f.Err.Error(), StartedAt: x.Start}
				why = "parse failed: " + f.Err.Error()
			}
			m.apply(out, e.At, e.Seq, why)
			if r := m.Result; r != nil && r.Seq == e.Seq && r.Exec != x {
				r.Exec, r.Alt = x, x.Alt // queued by an execution beside the model's own
			}
		}
		if x.OK && (m.Result == nil || m.Result.Exec != x || m.Result.Seq != e.Seq) {
			// An extraction the model's rules did not queue (the model let
			// go of the execution, or another ran beside it): the SUT may
			// still submit it, and its broadcasts are its own chain.
			r := m.newResult()
			*r = Result{Res: oracle.JobResult{RequestID: m.R, Data: f.Value, Nonce: x.N, ExecutedAt: x.Start}, Exec: x,
				At: e.At, Seq: e.Seq, Alt: x.Alt}
			m.addResult(r)
		}
		m.endExec(x, e.At, e.Seq)
	default:
		x.Failed++
		if x.Attempts >= specFetchAttempts {
			if m.ends(x) {
				m.apply(oracle.ExecutionEnd{Outcome: oracle.ExecFetchFailed, Error: "fetch failed", StartedAt: x.Start}, e.At, e.Seq,
					"fetch failed 4 times")
			}
			m.endExec(x, e.At, e.Seq)
		}
	}
}

// ---- broadcasts ----

// BcastFact is what a broadcast_tx_sync of the SUT means.
type BcastFact struct {
	Seq  int64
	At   time.Time
	Life *Life
	Tx   *history.Tx
	// Msg is the tx's first MsgSubmitOracleData (nil: none); R and N its
	// request and nonce.
	Msg  *history.Msg
	R, N uint64
	// Model is the lifetime's model of R; Chain the result the broadcast
	// belongs to (chainFor; nil: it starts a phantom chain), Group that
	// result's broadcasts before this one (nil: this one starts them).
	Model *Model
	Chain *Result
	Group *Group
	// Acked is the acknowledgement of (R, N) earlier in the lifetime.
	Acked *Ack
	// ExecStart is when the lifetime's last execution of R started (zero:
	// none).
	ExecStart time.Time
	// C is the chain's completed nonce of R when the broadcast arrived;
	// Seen the highest Complete nonce of R delivered to the SUT by t − G
	// (SeenSeq its frame); LowerJudged is false while F2 or F14 may still
	// hold frames back (O2).
	C           uint64
	Seen        uint64
	SeenSeq     int64
	LowerJudged bool
}

func (s *State) bcastFact(e *history.Event) *BcastFact {
	l := s.lifeOf(e)
	f := &s.facts.bcast
	*f = BcastFact{Seq: e.Seq, At: e.At, Life: l, Tx: e.RPC.Tx, Msg: submitMsg(e.RPC.Tx)}
	if f.Msg == nil {
		return f
	}
	f.R, f.N = f.Msg.RequestID, f.Msg.Nonce
	q := s.req(f.R)
	f.C = q.C
	f.Seen, f.SeenSeq = q.seen.by(e.At.Add(-G))
	f.LowerJudged = !s.faults.Touched(e.At, QuerySettle+G, "F2", "F14")
	m := l.model(f.R)
	if m == nil {
		return f
	}
	f.Model = m
	f.Chain = m.chainFor(f.N, f.Msg.RawData, e.At, s.Tol)
	if c := f.Chain; c != nil && c.Sub.Count > 0 {
		f.Group = &c.Sub
	}
	if a, ok := m.Acked[f.N]; ok {
		s.facts.acked = a
		f.Acked = &s.facts.acked
	}
	switch {
	case f.Chain != nil && f.Chain.Exec != nil:
		f.ExecStart = f.Chain.Exec.Start
	case m.Exec != nil:
		f.ExecStart = m.Exec.Start
	case m.Last != nil:
		f.ExecStart = m.Last.Start
	}
	return f
}

// noteBroadcast counts the broadcast in its result's chain, starting a
// phantom chain when no result explains it, and returns the chain.
func (m *Model) noteBroadcast(s *State, f *BcastFact) *Result {
	c := f.Chain
	if c == nil {
		c = m.newResult()
		*c = Result{Res: oracle.JobResult{RequestID: f.R, Data: f.Msg.RawData, Nonce: f.N}, At: f.At, Seq: f.Seq, Phantom: true}
		m.addResult(c)
	}
	c.calls++
	g := &c.Sub
	if g.Count == 0 {
		g.N = f.N
	}
	g.Count++
	g.LastSeq, g.LastRecv, g.Answered = f.Seq, f.At, false
	if f.Tx != nil {
		g.LastGas = f.Tx.GasLimit
	}
	return c
}

// AnswerFact is what the answer to an RPC call of the SUT means.
type AnswerFact struct {
	Call *Call
	At   time.Time
	Seq  int64
	Lost bool
	// Failed: no usable answer (lost, a JSON-RPC error, a non-zero ABCI
	// code other than "not found"); NotFound: code 18 on a doc,
	// submissions or aggregate query.
	Failed   bool
	NotFound bool
	// NonAckAt is when the SUT learnt the answer: its delivery, or the
	// call's t_recv when it was lost (the SUT's timeout is not known).
	NonAckAt time.Time
	// Class classifies a broadcast's answer (ORACLE-SPEC 3.5).
	Class oracle.BroadcastClass
	// Account, Docs (a list), Doc or NotFound, Submissions: a query's
	// decoded answer.
	Account     *history.Account
	Listed      bool
	Docs        []history.Doc
	Doc         *history.Doc
	Submissions []history.Submission
	// SelfSubmitted: an OracleSubmitData answer lists self.
	SelfSubmitted bool
}

// Acked reports whether a broadcast answer acknowledges the tx (code 0,
// code 19 or the cache's "already exists").
func (a *AnswerFact) Acked() bool {
	return a.Class == oracle.ClassSuccess || a.Class == oracle.ClassAlreadyAdmitted
}

func (s *State) answerFact(e *history.Event, c *Call) *AnswerFact {
	r := e.RPC
	a := &s.facts.answer
	*a = AnswerFact{Call: c, At: e.At, Seq: e.Seq, Lost: r.Lost || r.Result == nil, NonAckAt: e.At}
	if a.Lost {
		a.NonAckAt = c.At
	}
	res := r.Result
	switch {
	case a.Lost:
		a.Failed = true
	case res.ErrCode != 0:
		a.Failed = true
	case c.Method == methodQuery && res.Code != 0:
		// Code 18 on a doc, submissions or aggregate query is the chain's
		// "none" (the daemon reads it so too); anything else failed.
		if c.Query != nil && res.Code == specCodeNotFound &&
			(c.Query.Path == pathDoc || c.Query.Path == pathSubmitData || c.Query.Path == pathData) {
			a.NotFound = true
		} else {
			a.Failed = true
		}
	}
	switch c.Method {
	case methodBroadcast:
		switch {
		case a.Lost:
			a.Class = specClassifyBroadcast(oracle.BroadcastReply{Transport: true})
		case res.ErrCode != 0:
			a.Class = specClassifyBroadcast(specRPCReply(res.ErrMessage, res.ErrData))
		default:
			a.Class = specClassifyBroadcast(oracle.BroadcastReply{Code: res.Code})
		}
	case methodQuery:
		if a.Failed || a.NotFound || c.Query == nil {
			return a
		}
		v := res.Value
		if v == nil || v.DecodeErr != "" {
			a.Failed = true
			return a
		}
		switch c.Query.Path {
		case pathAccount:
			a.Account = v.Account
		case pathDocs:
			a.Listed, a.Docs = true, v.Docs
		case pathDoc:
			a.Doc = v.Doc
		case pathSubmitData:
			a.Submissions = v.Submissions
			for _, sub := range v.Submissions {
				if sub.Provider == s.P.Self {
					a.SelfSubmitted = true
				}
			}
		}
	}
	return a
}

func (s *State) applyBroadcastAnswer(e *history.Event, c *Call, a *AnswerFact) {
	if a.Acked() && c.Tx != nil && c.Tx.Signer == s.P.Self {
		s.acct.ack(c.Tx.Sequence, e.Seq)
	}
	if c.Submit == nil {
		return
	}
	r, n := c.Submit.RequestID, c.Submit.Nonce
	m := c.Life.Model(r)
	if m == nil {
		return
	}
	ch := c.Chain
	if ch != nil && ch.calls > 0 {
		ch.calls--
	}
	if ch != nil && ch.Sub.LastSeq == c.Seq {
		g := &ch.Sub
		g.Answered, g.LastAt, g.AnswerSeq = true, a.NonAckAt, e.Seq
		switch {
		case specBroadcastAction(a.Class) == oracle.ActionGiveUp:
			g.Terminal, g.TerminalSeq, g.TerminalMsg = true, e.Seq, a.Class.String()
		case specAdjustsGas(a.Class):
			g.NeedGas, g.NeedGasSeq = specAdjustGas(g.LastGas, s.P.GasAdjustment), e.Seq
		default:
			g.NeedGas = 0
		}
	}
	// The answer is the chain's; the model's result takes it too when it
	// is that chain, or when no extraction explains the chain but its round
	// is the model result's (a value the judge renders otherwise: O12's
	// business, not the model's).
	res := m.Result
	if ch != nil && ch != res && !(ch.Phantom && m.answers(res, n)) {
		res = nil
	}
	if a.Acked() {
		if ch != nil {
			ch.Acked = true
		}
		if m.Acked == nil {
			m.Acked = map[uint64]Ack{}
		}
		ack := Ack{At: e.At, Seq: e.Seq}
		switch {
		case ch != nil && !ch.Phantom:
			ack.ResultAt = ch.At
		case m.answers(res, n):
			ack.ResultAt = res.At
		}
		if m.answers(res, n) {
			res.Acked = true
		}
		m.Acked[n] = ack
		for k := range m.Acked {
			if k+2 < n {
				delete(m.Acked, k) // rounds long closed: O2 judges those nonces
			}
		}
		return
	}
	if ch != nil && ch != res {
		ch.nonAck(a.NonAckAt, e.Seq)
	}
	if m.answers(res, n) {
		res.nonAck(a.NonAckAt, e.Seq)
	}
}

// chainFor is the result a broadcast of round n carrying raw at at
// belongs to: an extraction of the lifetime with that payload for that
// round (roundOf), else the newest phantom chain of (n, raw); nil when
// none (the broadcast starts a phantom chain). A chain is (request,
// round, payload): the broadcasts of one result carry the value its
// execution extracted, so results submitted side by side are told apart
// whatever else runs. Two executions may extract the same value (a
// source's value changes once a second): among such results the
// broadcast is a retry one of them may make (retryFits), else the first
// broadcast of one that has made none, else the newest's — a correct
// daemon has one result of a round in submission, so only a daemon that
// runs a request again meets the choice, and it is read leniently.
func (m *Model) chainFor(n uint64, raw string, at time.Time, tol time.Duration) *Result {
	var fresh, newest *Result
	for i := len(m.Results) - 1; i >= 0; i-- {
		c := m.Results[i]
		if c.Phantom || !m.roundOf(c, n) || !sameValue(raw, c.Res.Data) {
			continue
		}
		switch {
		case c.Sub.Count > 0 && c.Sub.retryFits(at, tol):
			return c
		case c.Sub.Count == 0 && fresh == nil:
			fresh = c
		case newest == nil:
			newest = c
		}
	}
	switch {
	case fresh != nil:
		return fresh
	case newest != nil:
		return newest
	}
	for i := len(m.Results) - 1; i >= 0; i-- {
		c := m.Results[i]
		if c.Phantom && c.Res.Nonce == n && c.Res.Data == raw {
			return c
		}
	}
	return nil
}

// roundOf reports whether result c may be submitted for round n: its own
// round, the Alt round its execution began with, for the model's result
// the round a daemon holding an older nonce submits (answers), or an
// earlier round — the SUT had not yet handled a Complete the model
// applied when the execution began (frames held behind a doc query, D20;
// O2 judges the nonce). A later round is another result's: a value
// fetched for round n is not round n + 1's.
func (m *Model) roundOf(c *Result, n uint64) bool {
	return c.Res.Nonce >= n || c.Alt != 0 && c.Alt == n || c == m.Result && m.answers(c, n)
}

// maxResults bounds the results a model follows: a daemon that runs
// again and again keeps more than one result in submission, a correct one
// at most two (one going stale).
const maxResults = 256

// addResult follows a new result, dropping the ones two rounds or more
// behind the model job (no broadcast of them is a retry any daemon still
// owes) and, past maxResults, the oldest.
func (m *Model) addResult(c *Result) {
	if j := m.Job; j != nil {
		keep := m.Results[:0]
		for _, x := range m.Results {
			if max(x.Res.Nonce, x.Alt)+1 >= j.Nonce || x == m.Result {
				keep = append(keep, x)
			} else {
				m.release(x)
			}
		}
		clear(m.Results[len(keep):])
		m.Results = keep
	}
	if len(m.Results) >= maxResults {
		m.release(m.Results[0])
		m.Results = append(m.Results[:0], m.Results[1:]...)
	}
	m.Results = append(m.Results, c)
}

// newResult is a result to fill: one released, else a new one.
func (m *Model) newResult() *Result {
	if n := len(m.free); n > 0 {
		r := m.free[n-1]
		m.free = m.free[:n-1]
		return r
	}
	return &Result{}
}

// release lets newResult reuse a result the model no longer follows,
// unless something still holds it (an unanswered broadcast's call, or the
// model as its own result).
func (m *Model) release(r *Result) {
	if r.calls == 0 && r != m.Result && len(m.free) < 4 {
		m.free = append(m.free, r)
	}
}

// answers reports whether a broadcast of round n is the submission of
// result res: its round, or, while a doc answer holds the model's nonce
// ahead (docAhead), the round a daemon applying the Update rule still
// submits (heldNonce + 1; D10 keeps its nonce). That daemon's give-up then
// re-arms its job at the answer + 1 min as the model's would (D7): without
// this the model saw no answer to its own result and held E at the 24 h
// watchdog (docs/decisions/oracle-5-model.md, DR201).
func (m *Model) answers(res *Result, n uint64) bool {
	return res != nil && (res.Res.Nonce == n || m.docAhead && n == m.heldNonce+1)
}

func (s *State) applyQueryAnswer(e *history.Event, c *Call, a *AnswerFact) {
	q := c.Query
	l := c.Life
	switch q.Path {
	case pathAccount:
		if a.Account != nil && !a.Failed && (a.Account.Address == s.P.Self || a.Account.Address == "") {
			s.acct.account(a.Account.Sequence, e.Seq)
			return
		}
		if a.Failed && l.jobs != nil {
			// A failed resync fails the attempt holding the critical section
			// (docs/decisions/oracle-5-model.md, DR83): any unacknowledged result may give up here.
			for _, m := range l.sortedModels() {
				if r := m.Result; r != nil && !r.Acked && !r.OnChain {
					r.nonAck(a.NonAckAt, e.Seq)
				}
			}
		}
	case pathDocs:
		if !a.Listed {
			return
		}
		if l.ListAt.IsZero() {
			l.ListAt, l.ListSeq, l.ListDocs = e.At, e.Seq, len(a.Docs)
		}
		listed := map[uint64]bool{}
		for i := range a.Docs {
			d := &a.Docs[i]
			listed[d.RequestID] = true
			s.learnDoc(d, e.At)
			if m := l.model(d.RequestID); m != nil {
				s.docAnswer(m, d, e, "listed")
			}
		}
		if l.jobs != nil && (q.Status == 0 || oracle.RequestStatus(q.Status) == oracle.StatusEnabled) {
			for _, m := range l.sortedModels() {
				if !listed[m.R] && (m.Job != nil || m.Doc != nil) {
					m.noteAnswer(DocAnswer{At: e.At, Seq: e.Seq, Unlisted: true}, s.Now)
				}
			}
		}
	case pathDoc:
		m := l.model(q.RequestID)
		if m == nil {
			return
		}
		switch {
		case a.NotFound:
			m.Doc = nil
			m.noteAnswer(DocAnswer{At: e.At, Seq: e.Seq}, s.Now)
			m.apply(oracle.Update{Doc: nil, Self: s.P.Self}, e.At, e.Seq, "doc not found")
		case a.Doc != nil:
			s.learnDoc(a.Doc, e.At)
			s.docAnswer(m, a.Doc, e, "doc answer")
		}
	case pathSubmitData:
		m := l.Model(q.RequestID)
		if m == nil || m.Result == nil || m.Result.Res.Nonce != q.Nonce {
			return
		}
		switch {
		case a.SelfSubmitted:
			m.Result.OnChain = true
		case a.Failed:
			m.Result.nonAck(a.NonAckAt, e.Seq)
		}
	}
}

// docAnswer moves the model with a doc delivered to the lifetime: create
// the job (E = the triggering frame's delivery, or this answer's; lenient),
// or apply the Update rule and, when the doc's nonce is ahead, act as a
// Complete at the answer's delivery (lenient) — reconciliation R's step 2,
// whose pure rule covers both.
func (s *State) docAnswer(m *Model, d *history.Doc, e *history.Event, why string) {
	m.Doc = s.doc(d)
	m.noteAnswer(DocAnswer{At: e.At, Seq: e.Seq, Doc: m.Doc}, s.Now)
	doc := m.Doc.RD
	if m.Job == nil {
		at, seq, by := e.At, e.Seq, why
		if !m.FrameAt.IsZero() && why != "listed" {
			at, seq, by = m.FrameAt, m.FrameSeq, "created on a frame"
		}
		m.apply(oracle.Reconcile{Doc: doc, Self: s.P.Self}, at, seq, by)
		return
	}
	before := m.Job
	if held := m.completeJob(m.Job, doc.Nonce); why == "listed" && held != m.Job {
		// A daemon that kept heldNonce through a doc answer (D10) meets R's
		// list as a Complete it has not seen (3.3.4 step 2): the job is
		// re-armed there, as for a Complete frame (completeJob).
		m.take(specTransition(nil, held, oracle.Reconcile{Doc: doc, Self: s.P.Self}, e.At), e.At, e.Seq, why)
	} else {
		m.apply(oracle.Reconcile{Doc: doc, Self: s.P.Self}, e.At, e.Seq, why)
	}
	switch {
	case why == "listed":
		m.docAhead = false // R's step 2 takes the doc's nonce
	case m.Job != nil && m.Job.Nonce > before.Nonce:
		if !m.docAhead {
			m.docAhead, m.heldNonce = true, before.Nonce
		}
		if m.Job.Exec.Superseded && !before.Exec.Superseded {
			// A daemon applying the Update rule lets the execution in
			// flight end with its result (O12 then judges its value).
			nj := *m.Job
			nj.Exec.Superseded = false
			m.Job = &nj
		}
	}
	// A daemon that holds a Complete frame until an earlier frame's doc
	// query is answered (the core queues frames, D20) applies the new
	// period to that Complete: a shorter period may move E earlier than the
	// model, which applied the Complete at its delivery (lenient; O10's
	// pursuit follows a longer one).
	if j := m.Job; j != nil && before != nil && j.Period < before.Period && j.Exec.Status == oracle.ExecPending &&
		j.Nonce == before.Nonce && m.EWhy == "Complete delivered" {
		nj := *j
		nj.NextRunTime = j.NextRunTime.Add(j.Period - before.Period)
		m.Job = &nj
	}
}

// ---- frames ----

// FrameFact is what an event frame delivered to the SUT means.
type FrameFact struct {
	Life   *Life
	Routed bool
	Sub    oracle.Subscription
	// IDs of a Register or Update frame; Entries of a Complete frame, and
	// for each the outcome of the Complete on the lifetime's model job
	// (Jobs[i] is nil when the model has none).
	IDs     []uint64
	Entries []oracle.CompleteEntry
	Before  []*oracle.Job
	After   []oracle.Outcome
}

func (s *State) frameFact(e *history.Event) *FrameFact {
	fr := e.WS.Frame
	f := &s.facts.frame
	*f = FrameFact{Life: s.lifeOf(e)}
	sub, ok := specRoute(e.WS.Query, fr.Events)
	if !ok {
		return f
	}
	f.Routed, f.Sub = true, sub
	// The lists are the state's scratch (s.frame): no checker keeps them
	// past the record, and new ones were four allocations per block.
	sc := &s.frame
	switch sub {
	case oracle.SubRegister:
		sc.ids = specAppendRequestIDs(sc.ids[:0], fr.Events, specKeyRegisterID)
		f.IDs = sc.ids
	case oracle.SubUpdate:
		sc.ids = specAppendRequestIDs(sc.ids[:0], fr.Events, specKeyUpdateID)
		f.IDs = sc.ids
	case oracle.SubComplete:
		sc.entries = specAppendCompleteEntries(sc.entries[:0], fr.Events)
		n := len(sc.entries)
		sc.before = slices.Grow(sc.before[:0], n)[:n]
		sc.after = slices.Grow(sc.after[:0], n)[:n]
		clear(sc.before)
		clear(sc.after)
		f.Entries, f.Before, f.After = sc.entries, sc.before, sc.after
		cur := sc.moved // jobs moved by earlier entries of the frame
		clear(cur)
		for i, c := range f.Entries {
			m := f.Life.Model(c.RequestID)
			if m == nil || m.Job == nil {
				continue
			}
			j := m.Job
			if k, ok := cur[c.RequestID]; ok {
				j = k
			}
			if j == nil {
				continue
			}
			j = m.completeJob(j, c.Nonce)
			f.Before[i] = j
			f.After[i] = m.factTransition(j, oracle.Complete{Nonce: c.Nonce, BlockTime: c.BlockTime}, e.At)
			if len(f.After[i].Rows) > 0 {
				if cur == nil {
					cur = map[uint64]*oracle.Job{}
					sc.moved = cur
				}
				cur[c.RequestID] = f.After[i].Job
			}
		}
	}
	return f
}

func (s *State) applyFrame(e *history.Event, l *Life, f *FrameFact) {
	for _, r := range f.IDs {
		if m := l.model(r); m != nil {
			m.FrameAt, m.FrameSeq = e.At, e.Seq
		}
	}
	for i, c := range f.Entries {
		s.req(c.RequestID).seen.add(e.At, c.Nonce, e.Seq)
		if m := l.Model(c.RequestID); m != nil && f.Before[i] != nil {
			m.take(f.After[i], e.At, e.Seq, "Complete delivered")
			if m.Job != nil && m.Job.Nonce == c.Nonce {
				m.docAhead = false // every reading of the doc answer agrees again
			}
		}
	}
}
