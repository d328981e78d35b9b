package oracle

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
)

// The judge's own reading of ORACLE-SPEC's job rules: the assignment and
// the endpoint choice (§2.4, D8), readiness (§2.5, §3.3.2), the Submitter's
// stale check (§3.5 step 1), the job-transition table (§3.3.3, with §3.3.1,
// §3.3.4, D7, D9–D14) and the broadcast-answer table (§3.5, D3–D6),
// written from the text rather than called in package oracle, whose copy
// the reference daemon runs: a rule bent there must not bend the model
// that judges it. The shared part is vocabulary only: the job, the
// triggers, the rows, the effects and the classes are package oracle's
// types. spec_test.go holds package oracle's functions equal to these.

// specFetchFailureRetry is §2.8's fetch-failure retry: NextRunTime = now +
// 1 min after all four HTTP attempts failed.
const specFetchFailureRetry = time.Minute

// specJobID is a job's id and JobStore key, "req_{RequestID}" (§2.4, D8).
func specJobID(r uint64) string {
	return "req_" + strconv.FormatUint(r, 10)
}

// specAssignedIndex is AssignedIndex of §2.4: the position of the first
// entry of the account list equal to self, −1 when there is none.
func specAssignedIndex(accounts []string, self string) int {
	return slices.Index(accounts, self)
}

// specAssigned reports whether a doc gets (or keeps) a job: self is in its
// account list and it names an endpoint (§3.3.1 Register step 3 and Update
// steps 2–3, D8: no endpoints, no job). The doc's status does not enter:
// any status is stored, only ENABLED runs.
func specAssigned(doc oracle.RequestDoc, self string) bool {
	return len(doc.Endpoints) > 0 && specAssignedIndex(doc.AccountList, self) >= 0
}

// specSelectEndpoint is the endpoint a job fetches from and its index:
// endpoints[AssignedIndex mod len(endpoints)] (§2.4 URL and ParseRule,
// D8). ok is false when the doc is not assigned to self.
func specSelectEndpoint(doc oracle.RequestDoc, self string) (e oracle.Endpoint, index int, ok bool) {
	if !specAssigned(doc, self) {
		return oracle.Endpoint{}, 0, false
	}
	k := specAssignedIndex(doc.AccountList, self) % len(doc.Endpoints)
	return doc.Endpoints[k], k, true
}

// specSelectable is §2.5's last column: the tick may select a job whose
// ExecutionState is Pending, Scheduled, Failed or Cancelled, and never one
// that is Executing, Completed or Retrying. A status outside the table is
// not Retrying, Executing or Completed, so it counts as selectable, as the
// ready test of §3.3.2 reads (it excludes three states, it names no
// others).
func specSelectable(s oracle.ExecStatus) bool {
	switch s {
	case oracle.ExecExecuting, oracle.ExecCompleted, oracle.ExecRetrying:
		return false
	}
	return true
}

// specReady is ready(job, now) of §3.3.2: the request is ENABLED, the
// execution state is none of Executing, Retrying, Completed, and
// NextRunTime ≤ now (a job whose time is exactly now is ready).
func specReady(j *oracle.Job, now time.Time) bool {
	return j.Status == oracle.StatusEnabled && specSelectable(j.Exec.Status) && !now.Before(j.NextRunTime)
}

// specResultStale is the Submitter's stale check (§3.5 step 1): a result
// is stale unless its job exists, is ENABLED, still has self assigned, and
// waits for exactly the result's round (result.Nonce = job.Nonce + 1).
func specResultStale(j *oracle.Job, r oracle.JobResult, self string) bool {
	if j == nil || j.Status != oracle.StatusEnabled || specAssignedIndex(j.AccountList, self) < 0 {
		return true
	}
	return r.Nonce != j.Nonce+1
}

// specWatchdogDue is the watchdog row's guard (§3.3.3, D13): the job is
// Completed and its NextRunTime, set 24 h after its success, has come.
func specWatchdogDue(j *oracle.Job, now time.Time) bool {
	return j.Exec.Status == oracle.ExecCompleted && !now.Before(j.NextRunTime)
}

// specRoom is memory for the job a transition returns, with its effects,
// so that a caller keeping its jobs can take turns between rooms rather
// than have a new job per transition (the model transitions on every
// selection and execution end).
type specRoom struct {
	job     oracle.Job
	effects [2]oracle.Effect
	queued  oracle.QueueResult
	armed   oracle.ArmWatchdog
}

// holds reports whether j is the job the room holds.
func (r *specRoom) holds(j *oracle.Job) bool { return j == &r.job }

// specOutcome gathers one transition's rows and effects.
type specOutcome struct {
	room  *specRoom
	job   *oracle.Job // nil: no job (never created, or removed)
	rows  [2]oracle.Row
	nrows int
	nef   int
}

func (o *specOutcome) row(r oracle.Row) {
	o.rows[o.nrows] = r
	o.nrows++
}

func (o *specOutcome) effect(e oracle.Effect) {
	o.room.effects[o.nef] = e
	o.nef++
}

// specRowLists are the row lists a transition can give, shared by every
// outcome: one row, or an Update followed by what R or the watchdog did
// with the fresh doc.
var specRowLists = [...][]oracle.Row{
	{oracle.RowCreate}, {oracle.RowCreateSubmitted}, {oracle.RowSelect}, {oracle.RowEndSuperseded},
	{oracle.RowFetchFailed}, {oracle.RowParseFailed}, {oracle.RowSucceeded}, {oracle.RowGaveUp},
	{oracle.RowComplete}, {oracle.RowCompleteStale}, {oracle.RowUpdate}, {oracle.RowRemove},
	{oracle.RowWatchdogRerun}, {oracle.RowWatchdogWait},
	{oracle.RowUpdate, oracle.RowComplete}, {oracle.RowUpdate, oracle.RowWatchdogRerun},
	{oracle.RowUpdate, oracle.RowWatchdogWait},
}

// outcome is the oracle.Outcome the transition gave.
func (o *specOutcome) outcome() oracle.Outcome {
	out := oracle.Outcome{Job: o.job}
	rows := o.rows[:o.nrows]
	for _, l := range specRowLists {
		if slices.Equal(l, rows) {
			out.Rows = l[:len(l):len(l)]
			break
		}
	}
	if o.nef > 0 {
		out.Effects = o.room.effects[:o.nef:o.nef]
	}
	return out
}

// specTransition applies one trigger of §3.3.3's table to job (nil when
// the daemon has none for the request) at now: the judge's own reading of
// the table, the only writer of Nonce, NextRunTime and ExecutionState.
// The job it returns is written into room (a new room when nil), which
// must not hold job; room's earlier job and effects are gone. The input
// job is never modified, and no rule writes into its account list.
func specTransition(room *specRoom, job *oracle.Job, t oracle.Trigger, now time.Time) oracle.Outcome {
	if room == nil {
		room = new(specRoom)
	}
	o := &specOutcome{room: room}
	if job != nil {
		room.job = *job
		o.job = &room.job
	}
	switch t := t.(type) {
	case oracle.Create:
		// D9: a creation for a request that has a job is an Update.
		if o.job != nil {
			o.update(&t.Doc, t.Self, now)
		} else {
			o.create(t.Doc, t.Self, t.SelfSubmitted, t.LastBlockTime, now)
		}
	case oracle.Select:
		if o.job != nil && specReady(o.job, now) {
			o.tickSelects(now)
		}
	case oracle.ExecutionEnd:
		// Only an execution the job has (it is Executing) can end.
		if o.job != nil && o.job.Exec.Status == oracle.ExecExecuting {
			o.executionEnd(t, now)
		}
	case oracle.SubmissionGaveUp:
		// The row ends the wait of a Completed job for its result
		// (docs/decisions/oracle-3-daemon.md, DR234); a stale result changes nothing.
		if j := o.job; j != nil && j.Exec.Status == oracle.ExecCompleted && !specResultStale(j, t.Result, t.Self) {
			j.Exec.Status = oracle.ExecFailed
			j.Exec.Error, j.LastError = t.Reason, t.Reason
			j.NextRunTime = now.Add(specSubmissionGaveUpRetry)
			o.row(oracle.RowGaveUp)
		}
	case oracle.Complete:
		if o.job != nil {
			o.complete(t.Nonce, t.BlockTime, now)
		}
	case oracle.Update:
		if o.job != nil {
			o.update(t.Doc, t.Self, now)
		}
	case oracle.Reconcile:
		o.reconcile(t, now)
	case oracle.Watchdog:
		if o.job != nil && specWatchdogDue(o.job, now) {
			o.watchdog(t, now)
		}
	}
	return o.outcome()
}

// create is the two create rows (§3.3.3; D14 for NextRunTime): Nonce =
// doc.nonce; Completed until now + 24 h when self's submission for round
// doc.nonce + 1 is on chain, else Pending from now when doc.nonce = 0 or
// the chain has no DataSet, and from max(now, lastBT + Period) otherwise.
// A doc not assigned to self (or without endpoints) creates nothing.
func (o *specOutcome) create(doc oracle.RequestDoc, self string, submitted bool, lastBT, now time.Time) {
	ep, _, ok := specSelectEndpoint(doc, self)
	if !ok {
		return
	}
	j := &o.room.job
	*j = oracle.Job{
		ID:            specJobID(doc.RequestID),
		RequestID:     doc.RequestID,
		URL:           ep.URL,
		ParseRule:     ep.ParseRule,
		Nonce:         doc.Nonce,
		Period:        time.Duration(doc.Period) * time.Second,
		Status:        doc.Status,
		AccountList:   slices.Clone(doc.AccountList),
		AssignedIndex: specAssignedIndex(doc.AccountList, self),
		CreatedAt:     now,
		UpdatedAt:     now,
	}
	o.job = j
	if submitted {
		j.Exec.Status = oracle.ExecCompleted
		j.NextRunTime = now.Add(specCompleteWait)
		o.row(oracle.RowCreateSubmitted)
		o.arm()
		return
	}
	j.Exec.Status = oracle.ExecPending
	j.NextRunTime = now
	if doc.Nonce > 0 && !lastBT.IsZero() {
		j.NextRunTime = specLater(now, lastBT.Add(j.Period))
	}
	o.row(oracle.RowCreate)
}

// tickSelects is the "tick selects" row (§3.3.2, §3.3.3): Executing, with
// ExecNonce = Nonce. The selection time is the execution's StartedAt, and
// a new execution starts unsuperseded.
func (o *specOutcome) tickSelects(now time.Time) {
	x := &o.job.Exec
	x.Status = oracle.ExecExecuting
	x.ExecNonce = o.job.Nonce
	x.StartedAt = now
	x.Superseded = false
	o.row(oracle.RowSelect)
}

// executionEnd is the four rows of an execution's end (§3.3.3; §3.4 for an
// empty value; D12). A superseded execution, one of a request no longer
// ENABLED, or one dropped before its first GET leaves the job Pending with
// NextRunTime unchanged; otherwise a fetch failure re-runs after 1 min, a
// parse failure (an empty value is one) after 5 min, and a success queues
// JobResult(Nonce = ExecNonce + 1) and waits 24 h.
func (o *specOutcome) executionEnd(t oracle.ExecutionEnd, now time.Time) {
	j := o.job
	j.Exec.EndedAt = now
	if !t.StartedAt.IsZero() {
		j.LastRunAt = t.StartedAt
	}
	if j.Exec.Superseded || j.Status != oracle.StatusEnabled || t.Outcome == oracle.ExecDropped {
		j.Exec.Status = oracle.ExecPending
		j.Exec.Superseded = false
		o.row(oracle.RowEndSuperseded)
		return
	}
	outcome, reason := t.Outcome, t.Error
	if outcome == oracle.ExecSucceeded && t.Data == "" {
		outcome, reason = oracle.ExecParseFailed, "empty value"
	}
	switch outcome {
	case oracle.ExecFetchFailed, oracle.ExecParseFailed:
		j.Exec.Status = oracle.ExecFailed
		j.Exec.Error, j.LastError = reason, reason
		j.FailureCount++
		if outcome == oracle.ExecFetchFailed {
			j.NextRunTime = now.Add(specFetchFailureRetry)
			o.row(oracle.RowFetchFailed)
		} else {
			j.NextRunTime = now.Add(specParseFailureRetry)
			o.row(oracle.RowParseFailed)
		}
		return
	}
	j.Exec.Status = oracle.ExecCompleted
	j.Exec.Error = ""
	j.RunCount++
	j.NextRunTime = now.Add(specCompleteWait)
	started := t.StartedAt
	if started.IsZero() {
		started = j.Exec.StartedAt
	}
	o.row(oracle.RowSucceeded)
	o.room.queued = oracle.QueueResult{Result: oracle.JobResult{
		JobID:      j.ID,
		RequestID:  j.RequestID,
		Data:       t.Data,
		Nonce:      j.Exec.ExecNonce + 1,
		ExecutedAt: started,
		Duration:   now.Sub(started),
	}}
	o.effect(&o.room.queued)
	o.arm()
}

// arm notes the watchdog the job's NextRunTime now stands for (D13).
func (o *specOutcome) arm() {
	o.room.armed = oracle.ArmWatchdog{At: o.job.NextRunTime}
	o.effect(&o.room.armed)
}

// update is the Update rule (§3.3.1 Update steps 2–3, D10) on the job, and
// reports whether the job was kept: a doc still assigned with an endpoint
// sets URL, ParseRule, Period, Status, AccountList, AssignedIndex and
// UpdatedAt and nothing else; a doc gone (nil), unassigned or without
// endpoints removes the job, aborting an execution in flight. Either way
// queued results may have turned stale (§3.5 step 1).
func (o *specOutcome) update(doc *oracle.RequestDoc, self string, now time.Time) bool {
	j := o.job
	var (
		ep oracle.Endpoint
		ok bool
	)
	if doc != nil {
		ep, _, ok = specSelectEndpoint(*doc, self)
	}
	if !ok {
		o.row(oracle.RowRemove)
		if j.Exec.Status == oracle.ExecExecuting {
			o.effect(oracle.AbortExecution{})
		}
		o.effect(oracle.RecheckResults{})
		o.job = nil
		return false
	}
	j.URL, j.ParseRule = ep.URL, ep.ParseRule
	j.Period = time.Duration(doc.Period) * time.Second
	j.Status = doc.Status
	j.AccountList = slices.Clone(doc.AccountList)
	j.AssignedIndex = specAssignedIndex(doc.AccountList, self)
	j.UpdatedAt = now
	o.row(oracle.RowUpdate)
	o.effect(oracle.RecheckResults{})
	return true
}

// complete is the two Complete(n) rows (§3.3.1 Complete, D11, D12, D16):
// a round at or below Nonce changes nothing; a later one sets Nonce = n
// and NextRunTime = max(now, bt + Period), and the job is Pending, or
// keeps Executing marked Superseded. Queued results then turn stale.
func (o *specOutcome) complete(n uint64, bt, now time.Time) {
	j := o.job
	if n <= j.Nonce {
		o.row(oracle.RowCompleteStale)
		return
	}
	j.Nonce = n
	j.NextRunTime = specLater(now, bt.Add(j.Period))
	if j.Exec.Status == oracle.ExecExecuting {
		j.Exec.Superseded = true
	} else {
		j.Exec.Status = oracle.ExecPending
	}
	o.row(oracle.RowComplete)
	o.effect(oracle.RecheckResults{})
}

// reconcile is R's step 2 for one listed doc (§3.3.4): no job, an assigned
// doc is created (§3.3.3); a job is given the Update rule (which removes
// it when the doc is no longer assigned: docs/decisions/oracle-3-daemon.md, DR235) and, when
// the doc's nonce is ahead, acts as Complete(doc.nonce, lastBT), lastBT
// being now − Period when unknown (§3.3.3, below the table).
func (o *specOutcome) reconcile(t oracle.Reconcile, now time.Time) {
	if o.job == nil {
		o.create(t.Doc, t.Self, t.SelfSubmitted, t.LastBlockTime, now)
		return
	}
	if o.update(&t.Doc, t.Self, now) && t.Doc.Nonce > o.job.Nonce {
		o.complete(t.Doc.Nonce, specLastBT(t.LastBlockTime, o.job.Period, now), now)
	}
}

// watchdog is the watchdog row (§3.3.3, D13) for a due job: the fresh doc
// is applied by the Update rule first (docs/decisions/oracle-3-daemon.md, DR236); a doc ahead
// of Nonce acts as Complete(doc.nonce, lastBT); otherwise the job re-runs
// now (Failed) when self's submission for Nonce + 1 is missing on chain,
// else waits another 24 h.
func (o *specOutcome) watchdog(t oracle.Watchdog, now time.Time) {
	if !o.update(t.Doc, t.Self, now) {
		return
	}
	j := o.job
	switch {
	case t.Doc.Nonce > j.Nonce:
		o.complete(t.Doc.Nonce, specLastBT(t.LastBlockTime, j.Period, now), now)
	case !t.SelfSubmitted:
		j.Exec.Status = oracle.ExecFailed
		j.Exec.Error = "watchdog: own submission missing on chain"
		j.NextRunTime = now
		o.row(oracle.RowWatchdogRerun)
	default:
		j.NextRunTime = now.Add(specCompleteWait)
		o.row(oracle.RowWatchdogWait)
		o.arm()
	}
}

// specLastBT is the block time "as Complete" uses in R and the watchdog:
// OracleData's block_time, or now − Period when that is unknown (§3.3.3,
// below the table), so that NextRunTime comes out as now.
func specLastBT(lastBT time.Time, period time.Duration, now time.Time) time.Time {
	if lastBT.IsZero() {
		return now.Add(-period)
	}
	return lastBT
}

// specLater is max(a, b).
func specLater(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// The texts by which §3.5's table tells two RPC errors from the rest.
const (
	specRPCTxInCache   = "tx already exists in cache"
	specRPCMempoolFull = "mempool is full"
)

// specClassifyBroadcast is the response column of §3.5's table (D3–D6):
// no answer is ambiguous; an RPC error containing "tx already exists in
// cache" is an earlier admission, one containing "mempool is full" is
// transient, any other is ambiguous; code 0 is success, 19 an earlier
// admission, 32 a sequence mismatch, 11 out of gas, 13 an insufficient
// fee, 20 transient, and every other code a rejection.
func specClassifyBroadcast(r oracle.BroadcastReply) oracle.BroadcastClass {
	switch {
	case r.Transport:
		return oracle.ClassAmbiguous
	case r.RPCError && strings.Contains(r.RPCErrorText, specRPCTxInCache):
		return oracle.ClassAlreadyAdmitted
	case r.RPCError && strings.Contains(r.RPCErrorText, specRPCMempoolFull):
		return oracle.ClassTransient
	case r.RPCError:
		return oracle.ClassAmbiguous
	}
	switch r.Code {
	case 0:
		return oracle.ClassSuccess
	case 19:
		return oracle.ClassAlreadyAdmitted
	case 32:
		return oracle.ClassSequenceMismatch
	case 11:
		return oracle.ClassOutOfGas
	case 13:
		return oracle.ClassInsufficientFee
	case 20:
		return oracle.ClassTransient
	}
	return oracle.ClassRejected
}

// specRPCReply is the reply of a JSON-RPC error, its message and data
// read together (§4.3 puts the reason in data, CometBFT's message is
// "Internal error").
func specRPCReply(message, data string) oracle.BroadcastReply {
	return oracle.BroadcastReply{RPCError: true, RPCErrorText: strings.TrimSpace(message + " " + data)}
}

// specBroadcastAction is the "then" column of §3.5's table: success and
// an earlier admission are done (D3); an insufficient fee (D4) and a
// rejection (D6) give up; a sequence mismatch, out of gas (D5), a
// transient answer and an ambiguous one retry.
func specBroadcastAction(c oracle.BroadcastClass) oracle.BroadcastAction {
	switch c {
	case oracle.ClassSuccess, oracle.ClassAlreadyAdmitted:
		return oracle.ActionDone
	case oracle.ClassInsufficientFee, oracle.ClassRejected:
		return oracle.ActionGiveUp
	}
	return oracle.ActionRetry
}

// specAdjustsGas reports whether the answer raises the gas of the
// result's remaining attempts (§3.5 code 11 row, D5).
func specAdjustsGas(c oracle.BroadcastClass) bool { return c == oracle.ClassOutOfGas }
