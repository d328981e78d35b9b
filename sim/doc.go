// Package sim is the deterministic simulator: it runs a system under test
// (ports.System: coordinator instances and an API) against the in-memory
// world of package fakes on a virtual clock, driven by a single-threaded
// event queue and one seed.
//
// Everything a run does follows from Config.Seed: the user workload, the
// ids every instance issues and (later) the faults each draw from their own
// stream derived from it. Nothing reads the wall clock, uses global
// randomness or lets map order leak into what is recorded, so a seed always
// produces the same history; Check runs each seed twice and fails if the
// two history hashes differ.
//
// Scenario tests drive a Sim directly: disable the random workload
// (Workload.Disabled), call the API, and move time with RunFor, RunUntil
// and RunUntilCond; Crash, Restart and KillSession act on coordinator
// instances between events.
package sim
