// Package acme is a workspace control plane written from converge's
// spec (docs/spec/workspaces.md) by a team that is not converge's: a coordinator (leader
// election, HealthMonitor, StateReconciler, TTL Manager, Archive GC,
// EventListener) and the API service layer, plugged into converge through
// ports.System so that converge's simulator and checkers can judge it.
//
// Where each part lives:
//
//   - decide.go: every decision as a pure function of a row — SPEC 4.2.1's
//     table, completion conditions, timeouts, error classes (1.5), TTL
//     rules (4.4), archive protection (C9), the running limits (4.3);
//   - coordinator.go: the Step loop, leader election and fencing (3, 3.1),
//     the adaptive periods (3) and the monitor:trigger hint;
//   - health.go: the HealthMonitor (4.1);
//   - reconcile.go: the StateReconciler (4.2–4.2.5): claims, actuator
//     calls, retries, timeouts, ERROR entry, completion;
//   - ttl.go, gc.go, events.go: the TTL Manager (4.4), the Archive GC
//     (4.5) and the EventListener (4.6);
//   - api.go: the API service layer (4.3), also used by the coordinator
//     for the columns only the API may write.
//
// acme uses converge only through its public packages: the ports, the
// data types of contracts, and a few of its naming helpers (archive keys,
// channel and key names).
package acme
