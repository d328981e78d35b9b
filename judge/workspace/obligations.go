package workspace

import (
	"fmt"

	"github.com/wsconverge/converge/judge"
)

// situations states each checker's obligation: the situation that has to
// arise in a run for its verdict to be evidence, the one it counts with
// Report.Exercise. A checker added to All needs a sentence here
// (TestEveryCheckerStatesItsObligation).
var situations = map[string]string{
	"c1-completion-observed": "a reconciler write completes an operation (operation back to NONE without a terminal error)",
	"c1-observation-truth":   "the HealthMonitor writes observed_status after the leader listed containers and volumes (or after a failed listing)",
	"observed-at":            "at the end, a workspace not DELETED created before the first of the leader's last observation passes",
	"c3-single-writer":       "an insert or an applied write of a workspace row",
	"c4-non-preemptive":      "a reconciler claims an operation (sets one other than the running one)",
	"c5-one-level":           "a reconciler claims or completes an operation",
	"operation-choice":       "a reconciler claims an operation on a row whose operation is NONE",
	"c6-container-volume":    "a container without its volume, flagged ERROR at a HealthMonitor pass",
	"c7-archive-idempotent":  "a successful archive call, or a RESTORING completed",
	"restore-marker":         "a reconciler stores home_ctx.restore_marker while RESTORING",
	"c8-ordering":            "a volume deleted while ARCHIVING",
	"c9-gc-protection":       "a GC pass (the leader lists the objects) meets a protected archive, or the GC deletes an unprotected one",
	"gc-meta-with-archive":   "the GC deletes one of an archive and its .meta while the other exists",
	"gc-deletes-orphans":     "an orphaned archive or .meta, timed by the GC, is owed its deletion after 2 h or deleted",
	"gc-deletes-when-due":    "a GC pass of the lock holder, nothing disturbing it, meets an orphan whose timer, known from the history, is 2 h old (its due pass)",
	"c10-single-leader":      "a leadership acquired after another (a failover or a re-election)",
	"c10-write-epoch":        "a coordinator write (a HealthMonitor or StateReconciler write or pass, or one made on behalf of the TTL Manager or the StateReconciler)",
	"c10-holder-acts":        "a coordinator instance whose lease ended (lost, released, superseded) steps again at a later instant",
	"c10-takeover":           "the leader lock freed (its holder's session lost, a release) and taken again",
	"c10-fencing":            "a world-changing call (an actuator call, an object put or delete) by a coordinator instance that led",
	"lease-recheck":          "a world-changing call (an actuator call or an object deletion) by a coordinator instance that led",
	"c11-error-skip":         "a HealthMonitor pass while a workspace is in ERROR",
	"c12-convergence":        "at the end, a workspace whose desired state has stood for the convergence bound",
	"c12-durability":         "the user reads data back, or at the end a workspace with data to keep is at rest",
	"retry-policy":           "a failed actuator call recorded on the row (error_count, error_info), or an at-once terminal code",
	"timeouts":               "an operation ends in a terminal timeout error",
	"timeout-entry":          "a reconciler records a Timeout error_info (an operation ends in a terminal timeout error)",
	"error-entry":            "a running operation ends with a terminal error_info",
	"error-reason":           "a reconciler records the failure of an actuator call that failed with a provider code other than VOLUME_IN_USE",
	"error-reason-no-code":   "a reconciler records the failure of an actuator call that failed without a code (a transport error: the provider's API did not answer)",
	"error-reason-in-use":    "a reconciler records the failure of an actuator call that failed with VOLUME_IN_USE (delete_volume while something still holds the volume)",
	"error-context-code":     "a reconciler records the failure of an actuator call that failed with a provider code, under the reason 1.5 gives it (not RetryExceeded)",
	"claim-op-started-at":    "a reconciler claims an operation, or writes op_started_at while one runs",
	"invoke-once":            "a leader's actuator call on a workspace while an operation runs",
	"ttl":                    "the TTL Manager changes desired_state, or at the end a row is past a TTL",
	"ttl-period":             "the TTL Manager changes desired_state, or a TTL rule holds past two of its periods",
	"last-access-forward":    "an applied write of last_access_at",
	"completion-stamp":       "a reconciler completes an operation without an error",
	"now-values":             "an applied write that sets a value SPEC defines as now (a claim's op_started_at, a last_access_at stamp or creation, a soft delete, an observation, a failure's occurred_at)",
	"api-rules":              "a workspace created, an administrator's recovery, a soft delete, or a desired_state change through the API",
	"api-answers":            "an API request the state rules decide (a PATCH, a DELETE, a recovery, a limit's 429) on a row no write changed while it ran, or a recovery owing its monitor:trigger",
	"limits":                 "a request refused by a running limit (429, or a refused guarded write)",
	"events":                 "a committed change of a trigger column whose delivery on workspace:{id} within 2 s is owed, nothing excusing it",
	"monitor-trigger":        "a reconciler's claim, completion or ERROR entry, owing its monitor:trigger",
	"recovery-trigger":       "an administrator's recovery applied, owing its monitor:trigger",
	"trigger-pass":           "the leader, subscribed to monitor:trigger, receives a trigger and has stepped since",
	"gives-up-at-once":       "a coordinator instance's lock check fails, or its write is refused as fenced",
	"reconcile-tick-rows":    "a step of the leader in which the StateReconciler ticked, nothing disturbing it, with a row claimed or calling for a claim",
	"step-bound":             "two consecutive steps of one leader (its acquisition or a successful lock check at a new instant)",
	"release-cause":          "a coordinator instance releases the leader lock",
	"claim-executes":         "the leader applies a claim, owing its first actuator call in the step",
	"adaptive-periods":       "two observation passes of the leader in a row, nothing disturbing them",
	"reconcile-period":       "a row calls for a StateReconciler write (a claim, a completion, an ERROR entry) at an earlier instant than the leader's tick that handles it, or past the period's due time",
	"component-order":        "a step of a leading instance in which two components act, in an order an earlier step of it already showed",
	"step-check":             "a step of the leader in which a component acts",
	"drops-listener":         "a coordinator instance gives the lead up and records its release",
	"pass-listing":           "a step in which the HealthMonitor writes or notes an observation",
	"gc-period":              "two Archive GC passes (listings of the bucket) of one leadership in a row, or a leader stepping past the next pass's due time",
	"skips-workspace":        "a StateReconciler tick of the leader, nothing disturbing it, with a row whose operation is past its timeout or owed its resume",
	"skips-tick":             "a HealthMonitor or Archive GC tick (its listing) of the leader after an earlier one or the start of its leadership",
	"health-mismatch-info":   "a HealthMonitor write that sets error_info, or makes health ERROR on a row whose error_info is null",
	"gc-timer-no-expiry":     "a GC pass (a listing of archives/ by a coordinator that has led) finding an object under archives/ unprotected",
	"archiving-op-id":        "a claim of ARCHIVING, or of another operation but DELETING on a row carrying an op_id",
	"health-rules":           "a HealthMonitor write (beyond observed_at) after successful container and volume listings of its instance",
	"reconcile-one-step":     "a step of the leader, nothing disturbing it, in which the StateReconciler completed a row's operation or entered ERROR on it, or handled a row whose first applicable step was one of those or a Timeout entry",
	"reconcile-id-order":     "a StateReconciler tick of the leader, nothing disturbing it, that acted on two rows or more",
	"first-step-components":  "a recorded acquisition of the leader lock whose step nothing cut short (no crash, fault, release, failed check or fenced write of the instance in it)",
	"first-step-reconciler":  "a recorded acquisition of the leader lock whose step nothing cut short, at which a row nobody else wrote then owed the StateReconciler an act whatever else its tick did (a claim, a completion, an ERROR or Timeout entry, a resume)",
	"first-step-ttl":         "a recorded acquisition of the leader lock whose step nothing cut short, at which a row nobody else wrote then, its activity keys known, satisfied a TTL rule (owing the TTL Manager's request)",
	"gc-hourly":              "an Archive GC pass after the first of its leadership, or a step of the leader at or after the GC's due time that nothing cut short",
	"gives-up-releases":      "a lock check of the leader fails while the record shows it still holding the lock (a DB error on the check, its session alive)",
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
