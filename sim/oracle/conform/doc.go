// Package oracleconform judges an oracle daemon binary black-box
// (ORACLE-SPEC §6): a Facade serves, on loopback, the CometBFT JSON-RPC
// endpoint a daemon talks to (HTTP POST and /websocket), backed by the
// simulated chain of fakes/oracle/chain producing blocks on the wall clock and by
// the fake data sources of fakes/oracle/datasource; it records every request,
// answer and event frame in the vocabulary of contracts/oracle/history.
// A Run writes the daemon's config.toml and key into a sandbox home,
// launches the binary, drives a Script, and judges the recorded history
// with the checkers of judge/oracle in black-box mode.
//
// A Script is a list of steps: each acts on the world (operator workload,
// a fault of §4.9 such as an injected CheckTx code, a lost answer, a stall,
// a same-key intruder, a dropped WebSocket) or on the daemon (SIGKILL and
// restart, SIGTERM) and then waits, within a budget, for what the daemon
// does in answer as the façade recorded it. The default script exercises
// every checker an external daemon can be judged by (all but the
// white-box O15).
//
// Everything here runs in real time: the default script takes about a
// minute and a half, and never more than three minutes.
package conform
