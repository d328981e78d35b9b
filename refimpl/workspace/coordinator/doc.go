// Package coordinator is the reference coordinator: leader election with a
// fencing epoch, and the five components of SPEC 3 — EventListener,
// HealthMonitor, StateReconciler, TTL Manager and Archive GC — each a
// synchronous tick with its own next-run time. Coordinator.Step runs
// whatever is due at the clock's now, so the very same code runs under the
// simulator's virtual clock and under the production runner.
//
// Every decision is taken by a pure function of package contracts; this
// package reads, decides, acts through ports and nothing else.
package coordinator
