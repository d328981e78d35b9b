package core

import (
	"strconv"

	"github.com/wsconverge/converge/contracts/oracle"
)

// JobID is a job's id and JobStore key (D8): "req_{RequestID}".
func JobID(requestID uint64) string {
	return "req_" + strconv.FormatUint(requestID, 10)
}

// AssignedIndex is the position of the first entry of accounts equal to self,
// or -1 when self is not there (D8).
func AssignedIndex(accounts []string, self string) int {
	for i, a := range accounts {
		if a == self {
			return i
		}
	}
	return -1
}

// Assigned reports whether the daemon keeps a job for the doc: self is in its
// account list and it names at least one endpoint (D8, D9). The doc's status
// does not matter: a PAUSED or DISABLED doc keeps its job, which just does not
// run.
func Assigned(doc oracle.RequestDoc, self string) bool {
	return len(doc.Endpoints) > 0 && AssignedIndex(doc.AccountList, self) >= 0
}

// SelectEndpoint is the endpoint self fetches from: endpoints[AssignedIndex
// mod len(endpoints)] (D8). ok is false when the doc is not Assigned.
func SelectEndpoint(doc oracle.RequestDoc, self string) (e oracle.Endpoint, index int, ok bool) {
	i := AssignedIndex(doc.AccountList, self)
	if i < 0 || len(doc.Endpoints) == 0 {
		return oracle.Endpoint{}, 0, false
	}
	k := i % len(doc.Endpoints)
	return doc.Endpoints[k], k, true
}
