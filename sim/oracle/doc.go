// Package oraclesim is the oracle system's deterministic world (ORACLE-SPEC
// 4): a daemon — the reference core of refimpl/oracle/core, or a mutant
// wrapped around it — driven on sim/engine's virtual clock against the
// simulated chain of fakes/oracle/chain and the data sources of fakes/oracle/datasource,
// with no real I/O. A seed fixes everything: the requests and their peers,
// the moderator's workload, the data sources' behaviour, the faults of §4.9
// and when they strike, and the daemon's own jitter. The world records the
// run in contracts/oracle/history's vocabulary and judges it with the
// checkers of judge/oracle.
//
// A run has three phases: a fault phase (workload and faults), a quiet
// phase (healthy peers and sources, no faults: O16 is judged there) and a
// final graceful stop (O14, O15). The world acts as the daemon's
// supervisor: a daemon that exits non-zero is restarted after 5 s.
//
// The daemon is seen only through its ports: the inputs and outputs of
// contracts/oracle/ports (ports.Daemon). The world imports no daemon: a
// run is handed its System (Options.System), or runs the one registered
// as ReferenceName (Register); the CLI and the tests register the
// reference, refimpl/oracle's NewSystem. A mutant is a System whose
// daemons wrap the reference and bend what it reads or what it asks for;
// nothing of the reference changes.
package oracle
