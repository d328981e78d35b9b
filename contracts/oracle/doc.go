// Package oracle is the oracle daemon's shared vocabulary (ORACLE-SPEC,
// seed 004): what the reference daemon, the simulated chain, the RPC
// façade and the checkers all read.
//
// Nothing here does I/O, reads the wall clock or draws random numbers.
// The reference daemon's own decisions (the job-transition table,
// readiness, reconciliation's per-document decision, the stale check,
// extraction, the backoffs, the health rule) live with it, in
// refimpl/oracle/core; the checkers read ORACLE-SPEC on their own.
//
// Where the vocabulary lives:
//
//   - §2 data model: types.go (RequestDoc, Job, ExecutionState, JobResult),
//     constants.go (§2.8), config.go (§2.7 defaults and validation).
//   - §3.2 EventWatcher: events.go (the three queries, routing, Register and
//     Update ids, Complete entries).
//   - §3.3 Scheduler: trigger.go (the rows of the job-transition table, its
//     triggers, effects and outcomes: what a trace and the checkers' model
//     name).
//   - §3.5 Submitter and SequenceManager: broadcast.go (response
//     classification, sequence update), gas.go (D5 gas adjustment, D29 fee),
//     signature.go (D24 signature stand-in): the chain's rules, which the
//     simulated chain applies too.
//   - §3.6 health: health.go (the statuses). SDK error codes and logs:
//     codes.go.
package oracle
