// Package judge is the checking engine both of converge's systems share:
// the workspace control plane (judge/workspace) and the oracle daemon
// (judge/oracle) judge their recorded histories with it.
//
// A run's history is kept by contracts/record's Recorder. Run replays a
// history through a set of checkers, each seeing every event (or every event of the classes it declares it reads)
// with the world's state just before it; a checker flags violations (with
// the events that prove them) and counts how often its situation arose,
// so that a Report tells "passed" from "never exercised" (non-vacuity).
// Tally sums reports over many runs.
//
// The package knows nothing of workspaces or oracles: a world supplies its
// event type, its state, how an event changes that state, and its
// checkers.
package judge
