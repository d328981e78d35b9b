// Package sim is the deterministic simulator and judge: it runs a system
// under test (ports.System: coordinator instances and an API) against the
// in-memory world of package fakes on a virtual clock, driven by a
// single-threaded event queue and one seed, injects faults, and has the
// checkers of package invariant judge the recorded history and the final
// world.
//
// # A judged run
//
// A run has two phases. For Config.Duration the user workload acts and the
// plan's faults strike; then, for Config.Quiet, nothing does: open fault
// windows close, planned crashes are cancelled, crashed coordinator
// instances restart, users stop, and a `quiet` fault event marks where the
// convergence bound starts (invariant.ConvergeBound; DefaultQuiet covers
// it). Result runs every checker (Sim.Judge) over the history and
// Sim.Final; Result.Report carries the verdicts, Result.Evidence the
// timeline around each violation.
//
// # Plans and faults
//
// A Plan is the explicit list of timed actions of a run: faults and, for
// scripted runs, user and administrator actions. GeneratePlan draws one
// from the seed and a FaultMix, swarm style: the seed first turns each
// fault kind on or off, then draws a Poisson number of faults of each kind
// at uniform times. DrawAction draws one action's parameters from a
// Source; the seeded generator and rapid's draws (scenarios/rapid_test.go)
// share it. The fault kinds (see Kind): a coordinator crash at its k-th
// port call (fail-stop through the gate) with a supervisor's restart; the
// leader's DB session killed from inside one of its own writes while its
// successor steps to completion first (depose), or between events;
// provider outages (calls fail with a SPEC 1.5 code, transient or
// permanent) and lost responses (the effect happens, an error is
// returned); slow container starts; containers killed or removed; volumes
// lost; archives or their .meta corrupted or removed; bus messages dropped,
// Redis flushed; change notifications dropped, listeners broken. Faults
// aimed at workspaces favour interesting ones (in ERROR, mid-operation).
// Each is recorded as a history.KindFault event.
//
// # The durability model
//
// The simulated users write files into running workspaces; the model
// remembers the last bytes of every path. Whenever a user connects to a
// workspace shown RUNNING it reads its volume and records a user.verify
// event (failed on a difference). A fault that destroys data adjusts the
// model: a lost volume leaves what the archive at archive_key holds; a
// destroyed archive is owed nothing until a restore tries it (which must
// end in DataLost). An administrator recovering a workspace from DataLost
// acknowledges the loss. A user also fails user.verify on a workspace shown
// RUNNING whose container a completed HealthMonitor pass saw stopped.
//
// # Determinism, replay and shrinking
//
// Everything a run does follows from Config.Seed (or the explicit
// Config.Plan): the workload, the ids every instance issues and the faults
// each draw from their own stream derived from it. Nothing reads the wall
// clock, uses global randomness or lets map order leak into what is
// recorded, so a seed always produces the same history; Check runs each
// seed twice and fails if the two history hashes differ. A Replay file
// holds a run's system, configuration and plan; it reruns the run exactly.
// Shrink reduces a failing run (quiet phase, fleet, plan actions, fault
// phase) while it still fails.
//
// # Scripted runs
//
// Scenario tests drive a Sim directly: disable the random workload
// (Workload.Disabled), call the API, and move time with RunFor, RunUntil
// and RunUntilCond; Crash, Restart and KillSession act on coordinator
// instances between events. Step-by-step drivers use Play, which applies
// plan actions between events and keeps them (Played), so that a plan
// replays the same run.
package workspace
