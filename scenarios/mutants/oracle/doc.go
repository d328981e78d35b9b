// Package oraclemutants holds broken oracle daemons — the mutant catalogue
// of ORACLE-SPEC 5.4 — of two kinds, each naming the checkers that must
// catch it; the kill-matrix tests run every mutant until one of them does.
//
// Port mutants (All) are the unmodified reference daemon seen through bent
// ports (sim/oracle's Daemon): a mutant changes what the reference
// reads (an answer, a frame, its configuration) or what its requests
// carry (a tx, a URL, a trace point), never the reference's code. They
// run in this process.
//
// Source mutants (Sources) are bugs inside the core: each is a few named
// edits of the reference's source (Edit), applied to copies of the files
// and compiled with `go build -overlay` into internal/oraclerun (Builder).
// The built command runs the world and hands the history back (WriteHistory);
// Built.Run judges it here, with checkers compiled from the unedited tree,
// since several edits touch the transition table the checkers share.
package oracle
