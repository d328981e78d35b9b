// Package driver judges implementations written in any language: it is a
// ports.System whose coordinator instances and API are child processes
// speaking the driver protocol (docs/driver-protocol.md) — newline-
// delimited JSON on the child's standard input and output.
//
// The harness side is just another ports.System. NewCoordinator starts
// the command for one coordinator instance and returns a
// ports.Coordinator whose Step sends `step {now}` and then serves the
// child's port calls (one at a time, pipelined or in batches), each
// through the (gated, recorded) ports the simulator handed
// NewCoordinator, until the child ends the step with its next wake time.
// NewAPI does the same for API processes. A session speaks the lower of
// the harness's protocol version and the child's; under version 2 a
// child's step may declare a wake-up, and the harness then takes the
// child's quiet steps itself (wake.go), making their calls through the
// same ports, and steps the child only when something happened.
// Because every port call goes through the simulator's own ports, the
// history is the one the same implementation would record in process:
// seeds, faults, crash-anywhere (the gate failing the k-th call kills the
// child; a restart starts a new one), shrinking, replay and every checker
// apply unchanged, and the simulator's double run checks the child's
// determinism.
//
// A child that breaks the protocol — a malformed message, an unknown
// method, bad arguments, an exit in the middle of an exchange, no message
// within Options.Timeout of wall-clock time — is killed, its instance is
// dropped as crashed, and the failure (with the end of its standard error)
// is reported with the run's failures (Judged, Check); children that keep
// failing the same way stop the run (a crash loop, failure.go). SelfTest
// checks a command in seconds before it is judged. What a child writes
// to standard error is left in the history as notes (ports.Deps.Note),
// tied to the exchange it was written in when the child marks its
// exchanges (stderr_sync). Each run's transcript of messages is kept, so
// that a nondeterministic child is reported with the first message where
// its two runs part (Check).
//
// Clients: sim/workspace/driver/client serves any Go ports.System as a child
// (cmd/refchild serves the reference and its mutants);
// sim/workspace/driver/python/converge_driver.py is the Python client;
// examples/python-coordinator is a coordinator written in Python.
package driver
