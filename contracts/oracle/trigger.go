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
