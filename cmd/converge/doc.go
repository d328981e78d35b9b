// Command converge runs the workspace control plane's harness.
//
//	converge sim --seed S --seeds N --workspaces W --duration D
//
// runs the deterministic simulator against the reference coordinator, each
// seed twice (the two history hashes must match), and reports operations,
// final display states and speed. Run "converge help" for every command.
//
// The command is split so that others can add subcommands: main.go holds
// the dispatch table, one file per command (sim.go), and report.go the
// formatting of simulator results.
package main
