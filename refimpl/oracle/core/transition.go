package core

import (
	"slices"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
)

// Transition applies one trigger to a job (nil when the daemon has none for
// the request) at time now, following ORACLE-SPEC 3.3.3 — the only writer of
// NextRunTime, Nonce and ExecutionState. The input job is never modified.
// The job returned shares its AccountList with the input until a rule
// replaces it: no rule writes into a job's list, an Update sets a copy of
// the doc's.
func Transition(job *oracle.Job, t oracle.Trigger, now time.Time) oracle.Outcome {
	return transition(nil, job, t, now)
}

// Room is memory for the job a transition returns (TransitionIn): a
// caller that keeps its jobs can take turns between two rooms instead of
// a new job per transition (a job is a third of a kilobyte, copied on
// every tick's selection and every execution's end, in the daemon and
// again in the checkers' model).
type Room struct{ n nextJob }

// Holds reports whether j is the job the room holds.
func (r *Room) Holds(j *oracle.Job) bool { return j == &r.n.job }

// TransitionIn is Transition with the job it returns (for an existing
// job) written into room, which must not hold job; room's earlier job is
// gone. The outcome's rows are never the room's (a trace may keep them);
// its effects are, until the room's next transition. A new job (Create,
// Reconcile on none) is allocated as by Transition.
func TransitionIn(room *Room, job *oracle.Job, t oracle.Trigger, now time.Time) oracle.Outcome {
	o := transition(&room.n, job, t, now)
	o.Rows = sharedRows(o.Rows)
	return o
}

// rowSlices are the one-row lists, shared by every outcome of one row.
var rowSlices = [...][]oracle.Row{{oracle.RowCreate}, {oracle.RowCreateSubmitted}, {oracle.RowSelect}, {oracle.RowEndSuperseded}, {oracle.RowFetchFailed},
	{oracle.RowParseFailed}, {oracle.RowSucceeded}, {oracle.RowGaveUp}, {oracle.RowComplete}, {oracle.RowCompleteStale}, {oracle.RowUpdate}, {oracle.RowRemove},
	{oracle.RowWatchdogRerun}, {oracle.RowWatchdogWait}}

// sharedRows is rows in memory no room owns: a shared one-row list, or a
// copy.
func sharedRows(rows []oracle.Row) []oracle.Row {
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

func transition(room *nextJob, job *oracle.Job, t oracle.Trigger, now time.Time) oracle.Outcome {
	var cur *oracle.Job
	o := &draft{}
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
	case oracle.Create:
		if cur != nil {
			o.update(&t.Doc, t.Self, now)
		} else {
			o.create(t.Doc, t.Self, t.SelfSubmitted, t.LastBlockTime, now)
		}
	case oracle.Select:
		if cur != nil && Ready(cur, now) {
			cur.Exec.Status = oracle.ExecExecuting
			cur.Exec.ExecNonce = cur.Nonce
			cur.Exec.StartedAt = now
			cur.Exec.Superseded = false
			o.Rows = append(o.Rows, oracle.RowSelect)
		}
	case oracle.ExecutionEnd:
		if cur != nil && cur.Exec.Status == oracle.ExecExecuting {
			o.executionEnd(t, now, n)
		}
	case oracle.SubmissionGaveUp:
		if cur != nil && cur.Exec.Status == oracle.ExecCompleted && !ResultStale(cur, t.Result, t.Self) {
			cur.Exec.Status = oracle.ExecFailed
			cur.Exec.Error = t.Reason
			cur.LastError = t.Reason
			cur.NextRunTime = now.Add(oracle.SubmissionGaveUpRetry)
			o.Rows = append(o.Rows, oracle.RowGaveUp)
		}
	case oracle.Complete:
		if cur != nil {
			o.complete(t.Nonce, t.BlockTime, now)
		}
	case oracle.Update:
		if cur != nil {
			o.update(t.Doc, t.Self, now)
		}
	case oracle.Reconcile:
		if cur == nil {
			if Assigned(t.Doc, t.Self) {
				o.create(t.Doc, t.Self, t.SelfSubmitted, t.LastBlockTime, now)
			}
			break
		}
		if o.update(&t.Doc, t.Self, now) && t.Doc.Nonce > o.Job.Nonce {
			o.complete(t.Doc.Nonce, blockTimeOr(t.LastBlockTime, o.Job.Period, now), now)
		}
	case oracle.Watchdog:
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
			o.Job.Exec.Status = oracle.ExecFailed
			o.Job.Exec.Error = "watchdog: own submission missing on chain"
			o.Job.NextRunTime = now
			o.Rows = append(o.Rows, oracle.RowWatchdogRerun)
		default:
			o.Job.NextRunTime = now.Add(oracle.CompleteWait)
			o.Rows = append(o.Rows, oracle.RowWatchdogWait)
			o.Effects = append(o.Effects, &oracle.ArmWatchdog{At: o.Job.NextRunTime})
		}
	}
	if len(o.Rows) == 0 {
		o.Rows = nil
	}
	if len(o.Effects) == 0 {
		o.Effects = nil
	}
	return oracle.Outcome(*o)
}

// draft is an Outcome while a transition builds it: the rows of the
// table are its methods.
type draft oracle.Outcome

// nextJob is the job a transition returns with room for the rows and the
// effects transitions have (two for a successful execution's end: the
// result and the watchdog): one allocation where there were three (a
// transition runs for every tick's selection and every execution's end,
// in the daemon and again in the checkers' model).
type nextJob struct {
	job     oracle.Job
	rows    [2]oracle.Row
	effects [2]oracle.Effect
	queued  oracle.QueueResult
	armed   oracle.ArmWatchdog
}

// WatchdogDue reports whether the D13 watchdog should run for the job: it is
// Completed and its NextRunTime (set 24 h after the success) has come.
func WatchdogDue(j oracle.Job, now time.Time) bool {
	return j.Exec.Status == oracle.ExecCompleted && !j.NextRunTime.After(now)
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

func (o *draft) create(doc oracle.RequestDoc, self string, submitted bool, lastBT time.Time, now time.Time) {
	ep, _, ok := SelectEndpoint(doc, self)
	if !ok {
		return
	}
	j := oracle.Job{
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
		j.Exec.Status = oracle.ExecCompleted
		j.NextRunTime = now.Add(oracle.CompleteWait)
		o.Rows = append(o.Rows, oracle.RowCreateSubmitted)
		o.Effects = append(o.Effects, &oracle.ArmWatchdog{At: j.NextRunTime})
	} else {
		j.Exec.Status = oracle.ExecPending
		j.NextRunTime = now
		if doc.Nonce > 0 && !lastBT.IsZero() {
			j.NextRunTime = later(now, lastBT.Add(j.Period))
		}
		o.Rows = append(o.Rows, oracle.RowCreate)
	}
	o.Job = &j
}

// update applies the Update rule and reports whether the job was kept.
func (o *draft) update(doc *oracle.RequestDoc, self string, now time.Time) bool {
	j := o.Job
	ep, _, ok := SelectEndpoint(derefDoc(doc), self)
	if doc == nil || !ok {
		o.Rows = append(o.Rows, oracle.RowRemove)
		if j.Exec.Status == oracle.ExecExecuting {
			o.Effects = append(o.Effects, oracle.AbortExecution{})
		}
		o.Effects = append(o.Effects, oracle.RecheckResults{})
		o.Job = nil
		return false
	}
	j.URL, j.ParseRule = ep.URL, ep.ParseRule
	j.Period = doc.PeriodDuration()
	j.Status = doc.Status
	j.AccountList = slices.Clone(doc.AccountList)
	j.AssignedIndex = AssignedIndex(doc.AccountList, self)
	j.UpdatedAt = now
	o.Rows = append(o.Rows, oracle.RowUpdate)
	o.Effects = append(o.Effects, oracle.RecheckResults{})
	return true
}

func (o *draft) complete(n uint64, bt time.Time, now time.Time) {
	j := o.Job
	if n <= j.Nonce {
		o.Rows = append(o.Rows, oracle.RowCompleteStale)
		return
	}
	j.Nonce = n
	j.NextRunTime = later(now, bt.Add(j.Period))
	if j.Exec.Status == oracle.ExecExecuting {
		j.Exec.Superseded = true
	} else {
		j.Exec.Status = oracle.ExecPending
	}
	o.Rows = append(o.Rows, oracle.RowComplete)
	o.Effects = append(o.Effects, oracle.RecheckResults{})
}

// executionEnd applies an execution's end to o.Job, which n holds.
func (o *draft) executionEnd(t oracle.ExecutionEnd, now time.Time, n *nextJob) {
	j := o.Job
	j.Exec.EndedAt = now
	if !t.StartedAt.IsZero() {
		j.LastRunAt = t.StartedAt
	}
	if j.Exec.Superseded || j.Status != oracle.StatusEnabled || t.Outcome == oracle.ExecDropped {
		j.Exec.Status = oracle.ExecPending
		j.Exec.Superseded = false
		o.Rows = append(o.Rows, oracle.RowEndSuperseded)
		return
	}
	outcome, reason := t.Outcome, t.Error
	if outcome == oracle.ExecSucceeded && t.Data == "" {
		// ORACLE-SPEC 3.4: an empty value is a parse failure.
		outcome, reason = oracle.ExecParseFailed, "empty value"
	}
	switch outcome {
	case oracle.ExecFetchFailed:
		j.Exec.Status = oracle.ExecFailed
		j.Exec.Error, j.LastError = reason, reason
		j.FailureCount++
		j.NextRunTime = now.Add(oracle.FetchFailureRetry)
		o.Rows = append(o.Rows, oracle.RowFetchFailed)
	case oracle.ExecParseFailed:
		j.Exec.Status = oracle.ExecFailed
		j.Exec.Error, j.LastError = reason, reason
		j.FailureCount++
		j.NextRunTime = now.Add(oracle.ParseFailureRetry)
		o.Rows = append(o.Rows, oracle.RowParseFailed)
	default:
		j.Exec.Status = oracle.ExecCompleted
		j.Exec.Error = ""
		j.RunCount++
		j.NextRunTime = now.Add(oracle.CompleteWait)
		started := t.StartedAt
		if started.IsZero() {
			started = j.Exec.StartedAt
		}
		o.Rows = append(o.Rows, oracle.RowSucceeded)
		n.queued = oracle.QueueResult{Result: oracle.JobResult{
			JobID:      j.ID,
			RequestID:  j.RequestID,
			Data:       t.Data,
			Nonce:      j.Exec.ExecNonce + 1,
			ExecutedAt: started,
			Duration:   now.Sub(started),
		}}
		n.armed = oracle.ArmWatchdog{At: j.NextRunTime}
		o.Effects = append(o.Effects, &n.queued, &n.armed)
	}
}

func derefDoc(d *oracle.RequestDoc) oracle.RequestDoc {
	if d == nil {
		return oracle.RequestDoc{}
	}
	return *d
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
