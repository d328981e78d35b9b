// Package failrec is test support for property-based runs that are meant
// to fail: Recorder is a testing.TB-like sink (rapid.TB) that records a
// failure instead of failing the test, so a test can check that rapid
// found a broken system and how far it shrank the failure; SetFlags sets
// rapid's flags (seed, budget, no failfile) for one test.
package failrec
