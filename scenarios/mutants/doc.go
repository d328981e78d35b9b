// Package mutants is the catalogue of deliberately broken variants of the
// reference coordinator. Each is the reference with exactly one realistic
// bug switched on (refimpl/coordinator.Bug), exposed as a ports.System like
// any implementation under test. The kill matrix runs the judge against
// each: a checker is trusted only once a mutant has made it fail.
package mutants
