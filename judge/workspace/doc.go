// Package invariant holds the checkers of contracts C1–C12 (and of the
// retry, timeout, TTL and limit rules). They read only a recorded history
// (and a final world snapshot), so they judge any implementation the same
// way: the reference, a mutant, or a third party's coordinator.
//
// The engine replays the history once, keeping the workspaces table row by
// row (every applied write), a model of the real resources built from
// successful provider calls and injected faults, and the leadership. Each
// checker sees every event together with the state just before it, and
// counts how often its situation arose, so that a report tells "passed"
// from "never exercised".
package workspace
