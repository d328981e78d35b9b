// Package coordinator is the reference coordinator: leader election with a
// fencing epoch, and the five components of SPEC 3 — EventListener,
// HealthMonitor, StateReconciler, TTL Manager and Archive GC — each a
// synchronous tick with its own next-run time. Coordinator.Step runs
// whatever is due at the clock's now, so the very same code runs under the
// simulator's virtual clock and under the production runner.
//
// Every decision is taken by a pure function of refimpl/workspace/decide;
// this package reads, asks, and carries the answer out through ports. The
// StateReconciler's answer is a whole decision as data (decide.Reconcile:
// the claim, completion or ERROR entry, then the actuator calls, each
// after a lease re-check, and the writes of their answers), and so is the
// Archive GC's for each object (decide.GC: the timer, or the deletions,
// each after a lease re-check): each shell is one loop that checks the
// lease, acts and records.
package coordinator
