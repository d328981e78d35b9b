package oracle

import (
	"fmt"
	"slices"

	"github.com/wsconverge/converge/judge"
)

// The parts of the situations ORACLE-SPEC 5.3 states as several (DR614):
// each is the variant its checker counts (exercise), so the two cannot
// drift apart.
const (
	partRetryInFlight   = "retry with a submission in flight"
	partRestartInFlight = "restart with a submission in flight"
	partAfterFetch      = "next execution after a fetch failure"
	partAfterParse      = "next execution after a parse failure"
	partAfterGiveUp     = "next execution after a give-up"
	partCode32          = "code 32"
	partCode11          = "code 11"
	partCode13          = "code 13"
	partCode19          = "code 19"
	partUpdateAwaiting  = "update while awaiting Complete"
	partBogusNonce      = "broadcast after a bogus-nonce update"
	partCrowd           = "more ready jobs than pool_size"
	partStartInRetry    = "an execution start during a retry wait"
	partResubscribeWait = "a re-subscription wait"
	partNonZeroExit     = "a non-zero exit"
	partRecoveryF1      = "recovery after F1"
	partRecoveryF14     = "recovery after F14"
	partRecoveryF3      = "recovery after F3"
	partRecoveryF13     = "recovery after F13"
)

// obligation is a checker's obligation as §5.3 states it: the sentence,
// the parts that must each arise in every mode, and those that must also
// arise in sim mode only (§5.3's "in sim mode": the black-box judge does
// not count them, DR616).
type obligation struct {
	situation string
	parts     []string
	simParts  []string
}

// situations states each checker's obligation, from ORACLE-SPEC 5.3: the
// situation that has to arise in a run for its verdict to be evidence, the
// one it counts (Stream.Coverage names the variants it met), and its
// parts where §5.3 lists several that must each arise (DR613). A checker
// added to All needs a sentence here (TestEveryCheckerStatesItsObligation).
var situations = map[string]obligation{
	nameSingleCommit: {situation: "a broadcast of (r, n) while an earlier tx of it is admitted and not yet committed, failed or evicted; " +
		"and a restart or stop with such a tx", parts: []string{partRetryInFlight, partRestartInFlight}},
	nameNonceBounds: {situation: "a Complete delivered while a result of that round is queued or in retry, or a resumption after a restart"},
	nameExecutionTiming: {situation: "an execution after a fetch failure, one after a parse failure, and one whose E came from a give-up",
		parts: []string{partAfterFetch, partAfterParse, partAfterGiveUp}},
	nameRestartPeriod: {situation: "a restart less than one period after a Complete"},
	nameFetchRetries:  {situation: "two or more failed attempts in one execution"},
	nameSubmitRetries: {situation: "broadcasts answered with codes 32, 11, 13 and 19, each seen",
		parts: []string{partCode32, partCode11, partCode13, partCode19}},
	nameUpdateKeepsNonce: {situation: "an Update while awaiting Complete, and a broadcast after a bogus-nonce update",
		parts: []string{partUpdateAwaiting, partBogusNonce}},
	nameConcurrency: {situation: "more ready jobs than pool_size, and an execution start during another's retry wait",
		parts: []string{partCrowd, partStartInRetry}},
	nameSequence:        {situation: "F9 (a same-key intruder) active, or the first broadcast after an F13 eviction"},
	nameResync:          {situation: "a broadcast answered with code 32"},
	nameCompleteHandled: {situation: "a frame with two or more Completes, each pursued to its next broadcast"},
	nameNotRunning:      {situation: "a disable or an unassignment while a request runs"},
	nameFidelity:        {situation: "a request with two or more endpoints that lists self at index ≥ 1"},
	nameRestart:         {situation: "a stop or crash between a tx's admission and its commit"},
	nameShutdown:        {situation: "a SIGTERM or SIGINT during an HTTP attempt"},
	nameClientCloses:    {situation: "a graceful stop with the WebSocket open"},
	nameShutdownOrder:   {situation: "a graceful stop, traced white-box (the reference's trace)"},
	nameLiveness:        {situation: "three or more rounds of a request in the quiet phase"},
	nameRecovery: {situation: "a recovery after F1 and one after F14 (and after F3 and F13 in sim mode)",
		parts: []string{partRecoveryF1, partRecoveryF14}, simParts: []string{partRecoveryF3, partRecoveryF13}},
	nameWire:        {situation: "a request or a subscription the daemon sends"},
	nameHealthProbe: {situation: "a health-check interval of a lifetime that ran 60 s or more"},
	nameResubscribe: {situation: "a connection attempt after a failure, and a non-zero exit of a running lifetime",
		parts: []string{partResubscribeWait, partNonZeroExit}},
	nameGaveUp:                {situation: "a re-run after a give-up"},
	nameResynced:              {situation: "a broadcast after an Account answer with no acknowledgement since"},
	nameResubscribeReconciles: {situation: "a re-subscription of a lifetime that had its three subscriptions once"},
	nameRetried:               {situation: "a retry after a retryable answer, or a new execution while a retry was owed"},
	nameDocEvents:             {situation: "a Register or Update id looked up"},
	nameCreationChecks:        {situation: "a job's first execution"},
	nameLookupFollowed:        {situation: "a failed doc query followed up"},
	nameSubmittedNotRerun:     {situation: "an answer listing self's submission for a round not known to be complete"},
	nameMissingQueried:        {situation: "a job missing from R's list"},
}

// Obligations lists every checker's obligation in sim mode, in report
// order.
func Obligations() []judge.Obligation { return ObligationsIn(ModeSim) }

// ObligationsIn lists every checker's obligation in mode, in report
// order: in black-box mode without the parts §5.3 requires in sim mode
// only.
func ObligationsIn(mode Mode) []judge.Obligation {
	cs := All()
	out := make([]judge.Obligation, 0, len(cs))
	for _, c := range cs {
		o, ok := situations[c.Name()]
		if !ok {
			o.situation = fmt.Sprintf("(no obligation stated for %s)", c.Name())
		}
		parts := slices.Clone(o.parts)
		if mode == ModeSim {
			parts = append(parts, o.simParts...)
		}
		out = append(out, judge.Obligation{Checker: c.Name(), Contract: c.Contract(), Situation: o.situation, Parts: parts})
	}
	return out
}
