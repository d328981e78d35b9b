package oracle

import (
	"fmt"
	"slices"
	"time"
)

// RequestStatus is a request document's status (ORACLE-SPEC 2.2). The numbers
// are the protobuf enum values.
type RequestStatus int32

const (
	StatusUnspecified RequestStatus = 0
	StatusEnabled     RequestStatus = 1
	StatusPaused      RequestStatus = 2
	StatusDisabled    RequestStatus = 3
)

func (s RequestStatus) String() string {
	switch s {
	case StatusUnspecified:
		return "UNSPECIFIED"
	case StatusEnabled:
		return "ENABLED"
	case StatusPaused:
		return "PAUSED"
	case StatusDisabled:
		return "DISABLED"
	}
	return fmt.Sprintf("RequestStatus(%d)", int32(s))
}

// Endpoint is one data source of a request: a URL and a dot path into the JSON
// body it serves.
type Endpoint struct {
	URL       string
	ParseRule string
}

// RequestDoc is the part of a chain's OracleRequestDoc the daemon reads
// (ORACLE-SPEC 2.1). oracle_type, name, description and aggregation_rule are
// left out: the daemon ignores them.
type RequestDoc struct {
	RequestID   uint64
	Period      uint32 // seconds between rounds
	AccountList []string
	Quorum      uint32
	Endpoints   []Endpoint
	Status      RequestStatus
	Nonce       uint64 // last completed round, 0 = none yet
}

// PeriodDuration is the doc's period as a duration.
func (d RequestDoc) PeriodDuration() time.Duration {
	return time.Duration(d.Period) * time.Second
}

// ExecStatus is ExecutionState.Status (ORACLE-SPEC 2.5).
type ExecStatus int

const (
	ExecPending   ExecStatus = 0 // waiting for NextRunTime
	ExecScheduled ExecStatus = 1 // reserved, unused
	ExecExecuting ExecStatus = 2 // selected: queued for a slot or in flight
	ExecCompleted ExecStatus = 3 // a result was produced; waiting for Complete
	ExecFailed    ExecStatus = 4 // the last execution or submission failed
	ExecCancelled ExecStatus = 5 // reserved, unused
	ExecRetrying  ExecStatus = 6 // reserved, unused
)

func (s ExecStatus) String() string {
	switch s {
	case ExecPending:
		return "Pending"
	case ExecScheduled:
		return "Scheduled"
	case ExecExecuting:
		return "Executing"
	case ExecCompleted:
		return "Completed"
	case ExecFailed:
		return "Failed"
	case ExecCancelled:
		return "Cancelled"
	case ExecRetrying:
		return "Retrying"
	}
	return fmt.Sprintf("ExecStatus(%d)", int(s))
}

// Selectable reports whether the tick may select a job in this state
// (ORACLE-SPEC 2.5): every status but Executing, Completed and Retrying.
func (s ExecStatus) Selectable() bool {
	return s != ExecExecuting && s != ExecCompleted && s != ExecRetrying
}

// ExecutionState is a job's execution bookkeeping (ORACLE-SPEC 2.4).
type ExecutionState struct {
	Status    ExecStatus
	StartedAt time.Time // when the tick selected the job
	EndedAt   time.Time // when the last execution ended
	Error     string    // why the last execution or submission failed
	// ExecNonce is Job.Nonce captured when the tick selected the job; the
	// execution's result is for round ExecNonce + 1.
	ExecNonce uint64
	// Superseded is set when a Complete arrives while the job is Executing: the
	// execution's result is discarded and its end moves the job to Pending.
	Superseded bool
}

// Job is the daemon's in-memory record of one assigned request
// (ORACLE-SPEC 2.4). Jobs are values: every transition returns a new one and
// never modifies the slices of its input.
type Job struct {
	ID            string // JobID(RequestID)
	RequestID     uint64
	URL           string
	ParseRule     string
	Nonce         uint64 // last completed round known to the daemon
	NextRunTime   time.Time
	Period        time.Duration
	Status        RequestStatus
	AccountList   []string
	AssignedIndex int // first position of self in AccountList
	Exec          ExecutionState

	// Bookkeeping only: no rule reads these.
	CreatedAt    time.Time
	UpdatedAt    time.Time
	LastRunAt    time.Time
	RunCount     uint64
	FailureCount uint64
	LastError    string
}

// Clone returns a copy of j that shares no slice with it.
func (j Job) Clone() Job {
	j.AccountList = slices.Clone(j.AccountList)
	return j
}

// JobResult is a successful execution's value on its way to the Submitter
// (ORACLE-SPEC 2.6). Failed executions never produce one.
type JobResult struct {
	JobID      string
	RequestID  uint64
	Data       string // the rendered value, never empty
	Nonce      uint64 // the round it is for: ExecNonce + 1
	ExecutedAt time.Time
	Duration   time.Duration
}
