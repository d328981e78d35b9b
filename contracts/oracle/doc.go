// Package oracle is the oracle daemon's specification as code (ORACLE-SPEC,
// seed 004): the data model of §2 and every decision rule of §3 as a pure
// function.
//
// Nothing here does I/O, reads the wall clock or draws random numbers: the
// reference daemon, the simulated chain, the RPC façade and the checkers all
// decide through these functions, so each rule is written once. Times are
// passed in (virtual in the simulator, wall time in production), and random
// draws (the ±10 % jitter of the backoffs) are passed in as uniform numbers.
//
// Where the rules live:
//
//   - §2 data model: types.go (RequestDoc, Job, ExecutionState, JobResult),
//     constants.go (§2.8), config.go (§2.7 defaults and validation).
//   - §3.2 EventWatcher: events.go (the three queries, routing, Register and
//     Update ids, Complete entries).
//   - §3.3 Scheduler: assign.go (D8 assignment and endpoint), ready.go
//     (readiness and selection order), transition.go (the job-transition
//     table), reconcile.go (reconciliation R and the per-document decision of
//     D9).
//   - §3.4 Executor: extract.go (dot-path extraction and value rendering).
//   - §3.5 Submitter and SequenceManager: broadcast.go (response
//     classification, sequence update), gas.go (D5 gas adjustment, D29 fee),
//     signature.go (D24 signature stand-in), stale.go (the stale check).
//   - Backoff schedules of §2.8, §3.2 and §3.5: backoff.go.
//   - §3.6 health: health.go. SDK error codes and logs: codes.go.
package oracle
