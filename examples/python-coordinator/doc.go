// Package pythoncoordinator holds the tests of the driver protocol's
// example: a workspace coordinator and API written in Python from
// docs/spec/workspaces.md (coordinator.py, see README.md), judged by the simulator
// through sim/workspace/driver like any implementation. The tests run it with the
// machine's Python 3 (skipped without one, unless CONVERGE_REQUIRE_PYTHON=1
// makes that a failure).
package pythoncoordinator
