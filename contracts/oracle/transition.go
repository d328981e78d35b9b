package oracle

import (
	"slices"
	"time"
)

// Row names a row of the job-transition table (ORACLE-SPEC 3.3.3). An Outcome
// lists the rows a trigger applied, so a trace can say why a job changed.
type Row string

const (
	RowCreate          Row = "create"
	RowCreateSubmitted Row = "create, own submission on chain"
	RowSelect          Row = "tick selects"
	RowEndSuperseded   Row = "execution ends, superseded"
	RowFetchFailed     Row = "fetch failed"
	RowParseFailed     Row = "parse or extract failed"
	RowSucceeded       Row = "fetch and extract succeeded"
	RowGaveUp          Row = "submission gave up"
	RowComplete        Row = "Complete(n), n > Nonce"
	RowCompleteStale   Row = "Complete(n), n ≤ Nonce"
	RowUpdate          Row = "Update, job kept"
	RowRemove          Row = "Update, job removed"
	RowWatchdogRerun   Row = "watchdog, own submission missing"
	RowWatchdogWait    Row = "watchdog, own submission on chain"
)

// Trigger is an input of the transition table. The concrete triggers are
// Create, Select, ExecutionEnd, SubmissionGaveUp, Complete, Update, Reconcile
// and Watchdog.
type Trigger interface{ isTrigger() }

// Create is the creation of a job for an assigned doc, by a Register, an
// Update or reconciliation R (D9). Before it the daemon queries
// OracleSubmitData{r, doc.nonce + 1, ""} and, when doc.nonce > 0,
// OracleData{r}; when either query fails no job is created and the event
// counts as dropped (R retries it). On an existing job, Create acts as an
// Update (D9: a Register never resets a job).
type Create struct {
	Doc  RequestDoc
	Self string
	// SelfSubmitted: self is among the providers of round doc.nonce + 1 on
	// chain.
	SelfSubmitted bool
	// LastBlockTime is data_set.block_time of OracleData{r}; the zero time
	// when doc.nonce = 0 or the chain has no DataSet (D14).
	LastBlockTime time.Time
}

// Select is the tick selecting a ready job (ORACLE-SPEC 3.3.2).
type Select struct{}

// ExecOutcome is how an execution ended.
type ExecOutcome int

const (
	// ExecSucceeded: a GET succeeded and the value was extracted.
	ExecSucceeded ExecOutcome = iota
	// ExecFetchFailed: all four HTTP attempts failed.
	ExecFetchFailed
	// ExecParseFailed: the body was fetched but parsing or extraction failed.
	ExecParseFailed
	// ExecDropped: the execution never made a GET (MayStartExecution was
	// false when its slot came).
	ExecDropped
)

// ExecutionEnd is the end of the job's execution. A result of a removed job
// is discarded by passing a nil job.
type ExecutionEnd struct {
	Outcome   ExecOutcome
	Data      string    // the extracted value, for ExecSucceeded
	Error     string    // why it failed, for the bookkeeping
	StartedAt time.Time // the execution's first GET
}

// SubmissionGaveUp is the Submitter giving up on a result: a terminal code,
// or all six attempts used (ORACLE-SPEC 3.5, D7).
type SubmissionGaveUp struct {
	Result JobResult
	Self   string
	Reason string
}

// Complete is one entry of a Complete frame, or R or the watchdog acting
// "as Complete" (ORACLE-SPEC 3.3.1, D11, D16).
type Complete struct {
	Nonce     uint64
	BlockTime time.Time
}

// Update is a fresh doc for an existing job, from an Update event, a Register
// on an existing job, or R's step 3. Doc is nil when the chain says the doc
// does not exist. It changes URL, ParseRule, Period, Status, AccountList and
// AssignedIndex only (D10), or removes the job when self left the account
// list, the doc has no endpoint, or the doc is gone. On an absent job it does
// nothing: use DecideDoc, and Create for an assigned doc.
type Update struct {
	Doc  *RequestDoc
	Self string
}

// Reconcile is reconciliation R's step 2 for one listed doc (ORACLE-SPEC
// 3.3.4): create the job if absent (with the facts of Create), otherwise
// apply the Update rule and, when doc.nonce > job.Nonce, act as
// Complete(doc.nonce, LastBlockTime). ReconcileNeeds says which queries to
// make first.
type Reconcile struct {
	Doc           RequestDoc
	Self          string
	SelfSubmitted bool // as in Create; only read when the job is created
	// LastBlockTime is data_set.block_time of OracleData{r}, or the zero time
	// when the chain has none or the query failed (then now − Period is used
	// for acting as Complete).
	LastBlockTime time.Time
}

// Watchdog is the D13 check of a Completed job whose NextRunTime has come
// (WatchdogDue). The daemon queries the doc first; if doc.nonce > job.Nonce it
// queries OracleData{r} for LastBlockTime (zero when that fails), otherwise it
// queries OracleSubmitData{r, job.Nonce + 1, ""} for SelfSubmitted. The
// Update rule is applied with the fresh doc first; Doc is nil when the chain
// says the doc does not exist. When the doc or OracleSubmitData query fails,
// the daemon does not call Transition: the job stays due and the watchdog
// runs again on a later tick.
type Watchdog struct {
	Doc           *RequestDoc
	Self          string
	LastBlockTime time.Time
	SelfSubmitted bool // self's submission for job.Nonce + 1 is on chain
}

func (Create) isTrigger()           {}
func (Select) isTrigger()           {}
func (ExecutionEnd) isTrigger()     {}
func (SubmissionGaveUp) isTrigger() {}
func (Complete) isTrigger()         {}
func (Update) isTrigger()           {}
func (Reconcile) isTrigger()        {}
func (Watchdog) isTrigger()         {}

// Effect is something the daemon must do because of a transition, as data.
type Effect interface{ isEffect() }

// QueueResult: put the result on the result queue for the Submitter. It
// is an effect by address (*QueueResult), as is ArmWatchdog: a successful
// execution's end writes both into the memory of the job it returns
// rather than boxing each on the heap.
type QueueResult struct{ Result JobResult }

// ArmWatchdog: the job waits for Complete until At, then the watchdog runs
// (D13). WatchdogDue gives the same answer from the job itself.
type ArmWatchdog struct{ At time.Time }

// AbortExecution: the job was removed while Executing; abort its execution at
// once and discard its result.
type AbortExecution struct{}

// RecheckResults: results of this job that are queued or in a backoff wait
// may have turned stale; re-run ResultStale on them now and abandon the stale
// ones, freeing their slots (D12).
type RecheckResults struct{}

func (*QueueResult) isEffect()   {}
func (*ArmWatchdog) isEffect()   {}
func (AbortExecution) isEffect() {}
func (RecheckResults) isEffect() {}

// Outcome is the result of a trigger: the rows applied (none when the guard
// did not hold and nothing changed), the job after them (nil when there is no
// job: never created, or removed) and the effects.
type Outcome struct {
	Rows    []Row
	Job     *Job
	Effects []Effect
}

// Removed reports whether the trigger removed the job.
func (o Outcome) Removed() bool {
	return slices.Contains(o.Rows, RowRemove)
}

// Transition applies one trigger to a job (nil when the daemon has none for
// the request) at time now, following ORACLE-SPEC 3.3.3 — the only writer of
// NextRunTime, Nonce and ExecutionState. The input job is never modified.
// The job returned shares its AccountList with the input until a rule
// replaces it: no rule writes into a job's list, an Update sets a copy of
// the doc's.
func Transition(job *Job, t Trigger, now time.Time) Outcome {
	return transition(nil, job, t, now)
}

// Room is memory for the job a transition returns (TransitionIn): a
// caller that keeps its jobs can take turns between two rooms instead of
// a new job per transition (a job is a third of a kilobyte, copied on
// every tick's selection and every execution's end, in the daemon and
// again in the checkers' model).
type Room struct{ n nextJob }

// Holds reports whether j is the job the room holds.
func (r *Room) Holds(j *Job) bool { return j == &r.n.job }

// TransitionIn is Transition with the job it returns (for an existing
// job) written into room, which must not hold job; room's earlier job is
// gone. The outcome's rows are never the room's (a trace may keep them);
// its effects are, until the room's next transition. A new job (Create,
// Reconcile on none) is allocated as by Transition.
func TransitionIn(room *Room, job *Job, t Trigger, now time.Time) Outcome {
	o := transition(&room.n, job, t, now)
	o.Rows = sharedRows(o.Rows)
	return o
}

// rowSlices are the one-row lists, shared by every outcome of one row.
var rowSlices = [...][]Row{{RowCreate}, {RowCreateSubmitted}, {RowSelect}, {RowEndSuperseded}, {RowFetchFailed},
	{RowParseFailed}, {RowSucceeded}, {RowGaveUp}, {RowComplete}, {RowCompleteStale}, {RowUpdate}, {RowRemove},
	{RowWatchdogRerun}, {RowWatchdogWait}}

// sharedRows is rows in memory no room owns: a shared one-row list, or a
// copy.
func sharedRows(rows []Row) []Row {
	if len(rows) == 0 {
		return nil
	}
	if len(rows) == 1 {
		for _, s := range rowSlices {
			if s[0] == rows[0] {
				return s[:1:1]
			}
		}
	}
	return slices.Clone(rows)
}

func transition(room *nextJob, job *Job, t Trigger, now time.Time) Outcome {
	var cur *Job
	o := &Outcome{}
	n := room
	if job != nil {
		if n == nil {
			n = &nextJob{}
		}
		n.job = *job
		cur = &n.job
		o.Job, o.Rows, o.Effects = cur, n.rows[:0], n.effects[:0]
	}
	switch t := t.(type) {
	case Create:
		if cur != nil {
			o.update(&t.Doc, t.Self, now)
		} else {
			o.create(t.Doc, t.Self, t.SelfSubmitted, t.LastBlockTime, now)
		}
	case Select:
		if cur != nil && Ready(cur, now) {
			cur.Exec.Status = ExecExecuting
			cur.Exec.ExecNonce = cur.Nonce
			cur.Exec.StartedAt = now
			cur.Exec.Superseded = false
			o.Rows = append(o.Rows, RowSelect)
		}
	case ExecutionEnd:
		if cur != nil && cur.Exec.Status == ExecExecuting {
			o.executionEnd(t, now, n)
		}
	case SubmissionGaveUp:
		if cur != nil && cur.Exec.Status == ExecCompleted && !ResultStale(cur, t.Result, t.Self) {
			cur.Exec.Status = ExecFailed
			cur.Exec.Error = t.Reason
			cur.LastError = t.Reason
			cur.NextRunTime = now.Add(SubmissionGaveUpRetry)
			o.Rows = append(o.Rows, RowGaveUp)
		}
	case Complete:
		if cur != nil {
			o.complete(t.Nonce, t.BlockTime, now)
		}
	case Update:
		if cur != nil {
			o.update(t.Doc, t.Self, now)
		}
	case Reconcile:
		if cur == nil {
			if Assigned(t.Doc, t.Self) {
				o.create(t.Doc, t.Self, t.SelfSubmitted, t.LastBlockTime, now)
			}
			break
		}
		if o.update(&t.Doc, t.Self, now) && t.Doc.Nonce > o.Job.Nonce {
			o.complete(t.Doc.Nonce, blockTimeOr(t.LastBlockTime, o.Job.Period, now), now)
		}
	case Watchdog:
		if cur == nil || !WatchdogDue(*cur, now) {
			break
		}
		if !o.update(t.Doc, t.Self, now) {
			break
		}
		switch {
		case t.Doc.Nonce > o.Job.Nonce:
			o.complete(t.Doc.Nonce, blockTimeOr(t.LastBlockTime, o.Job.Period, now), now)
		case !t.SelfSubmitted:
			o.Job.Exec.Status = ExecFailed
			o.Job.Exec.Error = "watchdog: own submission missing on chain"
			o.Job.NextRunTime = now
			o.Rows = append(o.Rows, RowWatchdogRerun)
		default:
			o.Job.NextRunTime = now.Add(CompleteWait)
			o.Rows = append(o.Rows, RowWatchdogWait)
			o.Effects = append(o.Effects, &ArmWatchdog{At: o.Job.NextRunTime})
		}
	}
	if len(o.Rows) == 0 {
		o.Rows = nil
	}
	if len(o.Effects) == 0 {
		o.Effects = nil
	}
	return *o
}

// nextJob is the job a transition returns with room for the rows and the
// effects transitions have (two for a successful execution's end: the
// result and the watchdog): one allocation where there were three (a
// transition runs for every tick's selection and every execution's end,
// in the daemon and again in the checkers' model).
type nextJob struct {
	job     Job
	rows    [2]Row
	effects [2]Effect
	queued  QueueResult
	armed   ArmWatchdog
}

// WatchdogDue reports whether the D13 watchdog should run for the job: it is
// Completed and its NextRunTime (set 24 h after the success) has come.
func WatchdogDue(j Job, now time.Time) bool {
	return j.Exec.Status == ExecCompleted && !j.NextRunTime.After(now)
}

// blockTimeOr is the lastBT R and the watchdog use when acting as Complete:
// the DataSet's block time, or now − period when it is unknown (so that
// NextRunTime becomes now).
func blockTimeOr(lastBT time.Time, period time.Duration, now time.Time) time.Time {
	if lastBT.IsZero() {
		return now.Add(-period)
	}
	return lastBT
}

func (o *Outcome) create(doc RequestDoc, self string, submitted bool, lastBT time.Time, now time.Time) {
	ep, _, ok := SelectEndpoint(doc, self)
	if !ok {
		return
	}
	j := Job{
		ID:            JobID(doc.RequestID),
		RequestID:     doc.RequestID,
		URL:           ep.URL,
		ParseRule:     ep.ParseRule,
		Nonce:         doc.Nonce,
		Period:        doc.PeriodDuration(),
		Status:        doc.Status,
		AccountList:   slices.Clone(doc.AccountList),
		AssignedIndex: AssignedIndex(doc.AccountList, self),
		CreatedAt:     now,
		UpdatedAt:     now,
	}
	if submitted {
		j.Exec.Status = ExecCompleted
		j.NextRunTime = now.Add(CompleteWait)
		o.Rows = append(o.Rows, RowCreateSubmitted)
		o.Effects = append(o.Effects, &ArmWatchdog{At: j.NextRunTime})
	} else {
		j.Exec.Status = ExecPending
		j.NextRunTime = now
		if doc.Nonce > 0 && !lastBT.IsZero() {
			j.NextRunTime = later(now, lastBT.Add(j.Period))
		}
		o.Rows = append(o.Rows, RowCreate)
	}
	o.Job = &j
}

// update applies the Update rule and reports whether the job was kept.
func (o *Outcome) update(doc *RequestDoc, self string, now time.Time) bool {
	j := o.Job
	ep, _, ok := SelectEndpoint(derefDoc(doc), self)
	if doc == nil || !ok {
		o.Rows = append(o.Rows, RowRemove)
		if j.Exec.Status == ExecExecuting {
			o.Effects = append(o.Effects, AbortExecution{})
		}
		o.Effects = append(o.Effects, RecheckResults{})
		o.Job = nil
		return false
	}
	j.URL, j.ParseRule = ep.URL, ep.ParseRule
	j.Period = doc.PeriodDuration()
	j.Status = doc.Status
	j.AccountList = slices.Clone(doc.AccountList)
	j.AssignedIndex = AssignedIndex(doc.AccountList, self)
	j.UpdatedAt = now
	o.Rows = append(o.Rows, RowUpdate)
	o.Effects = append(o.Effects, RecheckResults{})
	return true
}

func (o *Outcome) complete(n uint64, bt time.Time, now time.Time) {
	j := o.Job
	if n <= j.Nonce {
		o.Rows = append(o.Rows, RowCompleteStale)
		return
	}
	j.Nonce = n
	j.NextRunTime = later(now, bt.Add(j.Period))
	if j.Exec.Status == ExecExecuting {
		j.Exec.Superseded = true
	} else {
		j.Exec.Status = ExecPending
	}
	o.Rows = append(o.Rows, RowComplete)
	o.Effects = append(o.Effects, RecheckResults{})
}

// executionEnd applies an execution's end to o.Job, which n holds.
func (o *Outcome) executionEnd(t ExecutionEnd, now time.Time, n *nextJob) {
	j := o.Job
	j.Exec.EndedAt = now
	if !t.StartedAt.IsZero() {
		j.LastRunAt = t.StartedAt
	}
	if j.Exec.Superseded || j.Status != StatusEnabled || t.Outcome == ExecDropped {
		j.Exec.Status = ExecPending
		j.Exec.Superseded = false
		o.Rows = append(o.Rows, RowEndSuperseded)
		return
	}
	outcome, reason := t.Outcome, t.Error
	if outcome == ExecSucceeded && t.Data == "" {
		// ORACLE-SPEC 3.4: an empty value is a parse failure.
		outcome, reason = ExecParseFailed, "empty value"
	}
	switch outcome {
	case ExecFetchFailed:
		j.Exec.Status = ExecFailed
		j.Exec.Error, j.LastError = reason, reason
		j.FailureCount++
		j.NextRunTime = now.Add(FetchFailureRetry)
		o.Rows = append(o.Rows, RowFetchFailed)
	case ExecParseFailed:
		j.Exec.Status = ExecFailed
		j.Exec.Error, j.LastError = reason, reason
		j.FailureCount++
		j.NextRunTime = now.Add(ParseFailureRetry)
		o.Rows = append(o.Rows, RowParseFailed)
	default:
		j.Exec.Status = ExecCompleted
		j.Exec.Error = ""
		j.RunCount++
		j.NextRunTime = now.Add(CompleteWait)
		started := t.StartedAt
		if started.IsZero() {
			started = j.Exec.StartedAt
		}
		o.Rows = append(o.Rows, RowSucceeded)
		n.queued = QueueResult{Result: JobResult{
			JobID:      j.ID,
			RequestID:  j.RequestID,
			Data:       t.Data,
			Nonce:      j.Exec.ExecNonce + 1,
			ExecutedAt: started,
			Duration:   now.Sub(started),
		}}
		n.armed = ArmWatchdog{At: j.NextRunTime}
		o.Effects = append(o.Effects, &n.queued, &n.armed)
	}
}

func derefDoc(d *RequestDoc) RequestDoc {
	if d == nil {
		return RequestDoc{}
	}
	return *d
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
