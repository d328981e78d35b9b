// Package oraclemutants holds broken oracle daemons — the mutant catalogue
// of ORACLE-SPEC 5.4 — each the unmodified reference daemon seen through
// bent ports (sim/oraclesim's Daemon): a mutant changes what the
// reference reads (an answer, a frame, its configuration) or what its
// requests carry (a tx, a URL, a trace point), never the reference's
// code. Each names the checkers that must catch it; the kill-matrix test
// runs every mutant until one of them does.
package oraclemutants
