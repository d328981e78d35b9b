// Command converge runs the workspace control plane's harness.
//
//	converge sim --seed S --seeds N --workspaces W --duration D [--mutant NAME]
//
// judges the reference coordinator (or a mutant) in the deterministic
// simulator: each seed draws its faults (swarm style), runs the fault
// phase and a quiet phase, and every contract checker judges the history;
// each seed runs twice (the two history hashes must match). It reports
// operations, final display states, speed and each checker's verdict
// (pass, violated, not exercised); a failing seed prints the timeline
// around each violation and writes a replay file.
//
//	converge replay FILE
//
// reruns a replay file exactly and shows its timeline and violations.
//
//	converge mutants
//
// is the kill matrix: for each mutant, the seeds and wall time to the first
// kill by a checker (beyond what the reference shows on the same run), the
// mutant × checker matrix and the shrunk counterexample's size.
//
// Run "converge help" for every command. The command is split so that
// others can add subcommands: main.go holds the dispatch table, one file
// per command (sim.go, replay.go, mutants.go), and report.go the
// formatting of simulator results.
package main
