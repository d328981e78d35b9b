// Package mutants is the catalogue of deliberately broken variants of the
// reference coordinator, the judge's proof of power: a checker is trusted
// only once a mutant has made it fail.
//
// The reference itself holds correct code only. Each mutant is the
// unmodified reference (refimpl.NewSystem) bent from outside, through the
// ports the harness hands it: a port wrapper that lies about what it
// reads (a stopped container listed as running, an hour-old failure, a
// forgotten op_id), or that changes what a call does (a claim written
// without its compare-and-set, an archive that also deletes the volume).
// Every mutant is a ports.System like any implementation under test, so
// the kill matrix judges it exactly as it would judge a third party's.
package workspace
