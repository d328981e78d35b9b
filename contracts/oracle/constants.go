package oracle

import "time"

// The fixed constants of ORACLE-SPEC 2.8.
const (
	// TickInterval is the scheduler tick.
	TickInterval = time.Second

	// FetchAttempts is the number of HTTP attempts per execution (1 + 3
	// retries, D1); FetchRetryWait gives the waits between them.
	FetchAttempts = 4
	// FetchFailureRetry is how long after a failed fetch the job runs again.
	FetchFailureRetry = time.Minute
	// ParseFailureRetry is how long after a parse or extraction failure the job
	// runs again.
	ParseFailureRetry = 5 * time.Minute
	// SubmissionGaveUpRetry is how long after a submission that gave up the job
	// runs again (D7).
	SubmissionGaveUpRetry = time.Minute
	// CompleteWait is the watchdog delay after a successful execution (D13).
	CompleteWait = 24 * time.Hour

	// SubmitAttempts is the number of broadcasts per result (1 + 5 retries,
	// D2); SubmitRetryWait gives the waits between them.
	SubmitAttempts = 6
	// SubmitRetryCap caps the submission backoff before jitter.
	SubmitRetryCap = 30 * time.Second

	// SequenceResync is the period of the SequenceManager's Account query.
	SequenceResync = 5 * time.Minute
	// SequenceSyncRetry is how often a failed initial sequence sync is retried
	// (ORACLE-SPEC 3.1).
	SequenceSyncRetry = 5 * time.Second

	// HealthCheckInterval and HealthStatusTimeout are the health check's period
	// and its `status` call timeout.
	HealthCheckInterval = 30 * time.Second
	HealthStatusTimeout = 5 * time.Second
	// RecentEventWindow is how recent the last frame must be for a healthy
	// daemon.
	RecentEventWindow = 5 * time.Minute

	// RPCCallTimeout is the reference daemon's timeout for one RPC call.
	RPCCallTimeout = 10 * time.Second

	// DocQueryTries is how often the doc is queried for one event, with
	// DocQueryWaits between the tries (D9).
	DocQueryTries = 3
	// DroppedEventReconcile is how long after a dropped event reconciliation R
	// runs, and how often a failed R query is retried (ORACLE-SPEC 3.3.4).
	DroppedEventReconcile = 5 * time.Second

	// Denom is the fee denomination appended to gas.prices (D29).
	Denom = "agxn"
	// Bech32Prefix is the account address prefix.
	Bech32Prefix = "guru"
	// DefaultChainID is the chain the daemon is written for.
	DefaultChainID = "guru_631-1"
)

// DocQueryWaits are the waits before the 2nd and 3rd doc query of one event
// (D9).
var DocQueryWaits = [DocQueryTries - 1]time.Duration{time.Second, 2 * time.Second}

// ShutdownBound is T_sd: how long a graceful shutdown may take for a given
// worker.timeout_sec (ORACLE-SPEC 2.8).
func ShutdownBound(workerTimeout time.Duration) time.Duration {
	return workerTimeout + 10*time.Second
}
