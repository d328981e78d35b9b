// Command oraclerun runs the oracle world on the reference daemon for one
// seed and writes the recorded history to stdout, unjudged: the source
// mutants of scenarios/mutants/oracle are this command built with a Go
// overlay that swaps one file of the reference for a patched copy. The
// history goes back to the caller, whose checkers were built from the
// unpatched tree, so a mutant that edits code the checkers share (the
// transition table of contracts/oracle) cannot bend its own judge.
//
// Usage: oraclerun [-seed N] [-requests N] [-fault-phase D] [-quiet-phase D]
// [-faults N] [-ops N] [-pool-size N] (oraclemutants.RunArgs); the output
// is oraclemutants.WriteHistory's.
package main
