// Package drivertest helps tests run driver-protocol children: it finds
// the machine's Python 3 (skipping, or failing when
// CONVERGE_REQUIRE_PYTHON=1 says Python is required), gives it an
// environment that caches bytecode outside the source tree, and builds Go
// children once per test binary. BenchSeeds is the protocol's speed
// figure, shared by every benchmark that reports it.
package drivertest
