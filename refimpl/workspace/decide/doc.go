// Package decide is the reference coordinator's and API service's
// decisions as pure functions of (row, observation, activity, now): SPEC
// 4.2's operation table, completion, timeouts, retries and ERROR entry
// (Reconcile, which returns a tick's whole decision for one workspace as
// data), 4.1's observation rule, 4.4's TTL rules, 4.5's archive GC (GC,
// the whole decision for one object, as data), 4.6's hints, 3's adaptive
// periods, and 4.3's API checks and writes.
//
// Nothing here does I/O, reads the wall clock or draws random numbers:
// the shells in package coordinator and api read the ports, ask these
// functions what to do, and carry the answer out. Nothing outside the
// reference decides through them either: the judge reads SPEC on its own
// (judge/workspace/spec.go), so a slip here shows up as a verdict instead
// of being followed unseen. Types, names, errors and the store's own
// rules (filters, limits, text) are shared vocabulary and stay in package
// contracts.
package decide
