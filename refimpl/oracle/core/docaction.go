package core

import (
	"slices"

	"github.com/wsconverge/converge/contracts/oracle"
)

// DocAction is what a fresh doc means for the request's job (ORACLE-SPEC
// 3.3.1, 3.3.4, D9).
type DocAction int

const (
	// DocIgnore: no job, and the doc is not assigned (or does not exist).
	DocIgnore DocAction = iota
	// DocCreate: no job, and the doc is assigned: query the chain, then
	// Transition with Create.
	DocCreate
	// DocUpdate: the job exists and the doc is still assigned: Transition with
	// Update (a Register on an existing job is an Update, D9).
	DocUpdate
	// DocRemove: the job exists but self left the account list, the doc has no
	// endpoint, or the doc is gone: Transition with Update removes it.
	DocRemove
)

func (a DocAction) String() string {
	switch a {
	case DocIgnore:
		return "ignore"
	case DocCreate:
		return "create"
	case DocUpdate:
		return "update"
	case DocRemove:
		return "remove"
	}
	return "DocAction(?)"
}

// DecideDoc is the per-document decision shared by Register, Update and
// reconciliation R: job is the existing job or nil, doc the fresh doc or nil
// when the chain says it does not exist. The doc's status does not matter
// here: any status is stored, only ENABLED runs.
func DecideDoc(job *oracle.Job, doc *oracle.RequestDoc, self string) DocAction {
	assigned := doc != nil && Assigned(*doc, self)
	switch {
	case job == nil && assigned:
		return DocCreate
	case job == nil:
		return DocIgnore
	case assigned:
		return DocUpdate
	default:
		return DocRemove
	}
}

// ReconcileNeeds says which queries reconciliation R makes for one listed doc
// before Transition with Reconcile (ORACLE-SPEC 3.3.3, 3.3.4):
//   - submitted: OracleSubmitData{r, doc.nonce + 1, ""}, to create the job;
//   - lastBT: OracleData{r}, to create a job for a doc with nonce > 0, or to
//     act as Complete when doc.nonce > job.Nonce.
//
// When a query needed for a creation fails, no job is created and R retries
// later; a failed OracleData query for acting as Complete just leaves
// LastBlockTime zero.
func ReconcileNeeds(job *oracle.Job, doc oracle.RequestDoc, self string) (submitted, lastBT bool) {
	switch DecideDoc(job, &doc, self) {
	case DocCreate:
		return true, doc.Nonce > 0
	case DocUpdate:
		return false, doc.Nonce > job.Nonce
	}
	return false, false
}

// MissingFromList is R's step 3: the request ids of the jobs whose request is
// not in the listed docs, ascending. Each is queried alone
// (OracleRequestDoc) and Transition with Update applies the answer.
func MissingFromList(jobs []oracle.Job, listed []oracle.RequestDoc) []uint64 {
	in := make(map[uint64]bool, len(listed))
	for _, d := range listed {
		in[d.RequestID] = true
	}
	var missing []uint64
	for _, j := range jobs {
		if !in[j.RequestID] {
			missing = append(missing, j.RequestID)
		}
	}
	slices.Sort(missing)
	return slices.Compact(missing)
}
