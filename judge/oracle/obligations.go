package oracle

import (
	"fmt"

	"github.com/wsconverge/converge/judge"
)

// situations states each checker's obligation, from ORACLE-SPEC 5.3: the
// situation that has to arise in a run for its verdict to be evidence, the
// one it counts (Stream.Coverage names the variants it met). A checker
// added to All needs a sentence here (TestEveryCheckerStatesItsObligation).
var situations = map[string]string{
	nameSingleCommit:          "a broadcast of (r, n), or a restart or stop, while an earlier tx of it is admitted and not yet committed, failed or evicted",
	nameNonceBounds:           "a Complete delivered while a result of that round is queued or in retry, or a resumption after a restart",
	nameExecutionTiming:       "overlapping GETs, or an execution after a fetch failure, a parse failure or a give-up",
	nameRestartPeriod:         "a restart less than one period after a Complete",
	nameFetchRetries:          "two or more failed attempts in one execution",
	nameSubmitRetries:         "a broadcast answered with code 32, 11, 13 or 19",
	nameUpdateKeepsNonce:      "an Update while awaiting Complete, or a broadcast after a bogus-nonce update",
	nameConcurrency:           "more ready jobs than pool_size, or an execution start during another's retry wait",
	nameSequence:              "F9 (a same-key intruder) active, or the first broadcast after an F13 eviction",
	nameResync:                "a broadcast answered with code 32",
	nameCompleteHandled:       "a frame with two or more Completes, each pursued to its next broadcast",
	nameNotRunning:            "a disable or an unassignment while a request runs",
	nameFidelity:              "a request with two or more endpoints that lists self at index ≥ 1",
	nameRestart:               "a stop or crash between a tx's admission and its commit",
	nameShutdown:              "a SIGTERM or SIGINT during an HTTP attempt",
	nameClientCloses:          "a graceful stop with the WebSocket open",
	nameShutdownOrder:         "a graceful stop, traced white-box (the reference's trace)",
	nameLiveness:              "three or more rounds of a request in the quiet phase",
	nameRecovery:              "a recovery after F1 or F14 (and F3, F13 in sim mode)",
	nameWire:                  "a request or a subscription the daemon sends",
	nameHealthProbe:           "a health-check interval of a lifetime that ran 60 s or more",
	nameResubscribe:           "a connection attempt after a failure, or a non-zero exit of a running lifetime",
	nameGaveUp:                "a re-run after a give-up",
	nameResynced:              "a broadcast after an Account answer with no acknowledgement since",
	nameResubscribeReconciles: "a re-subscription of a lifetime that had its three subscriptions once",
	nameRetried:               "a retry after a retryable answer, or a new execution while a retry was owed",
	nameDocEvents:             "a Register or Update id looked up",
	nameCreationChecks:        "a job's first execution",
	nameLookupFollowed:        "a failed doc query followed up",
	nameSubmittedNotRerun:     "an answer listing self's submission for a round not known to be complete",
	nameMissingQueried:        "a job missing from R's list",
}

// Obligations lists every checker's obligation, in report order.
func Obligations() []judge.Obligation {
	cs := All()
	out := make([]judge.Obligation, 0, len(cs))
	for _, c := range cs {
		s, ok := situations[c.Name()]
		if !ok {
			s = fmt.Sprintf("(no obligation stated for %s)", c.Name())
		}
		out = append(out, judge.Obligation{Checker: c.Name(), Contract: c.Contract(), Situation: s})
	}
	return out
}
