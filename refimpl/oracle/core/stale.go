package core

import "github.com/wsconverge/converge/contracts/oracle"

// ResultStale is the Submitter's stale check (ORACLE-SPEC 3.5 step 1), made
// before every attempt and again inside the sequence critical section: a
// result is stale when its job is gone, its request is not ENABLED, self is no
// longer assigned, or the round it is for is no longer the next one
// (result.Nonce ≠ job.Nonce + 1). A stale result is abandoned without a
// broadcast (D12).
func ResultStale(j *oracle.Job, r oracle.JobResult, self string) bool {
	return j == nil ||
		j.Status != oracle.StatusEnabled ||
		AssignedIndex(j.AccountList, self) < 0 ||
		r.Nonce != j.Nonce+1
}
