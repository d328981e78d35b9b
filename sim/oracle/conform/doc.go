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
// Everything here runs in real time: the default script took 98 s for the
// reference daemon (the command end to end 100 s, on 2 cores at a load
// average of 8–16), the short one 6 s; a slower daemon meets the script's
// waits later, up to the script's limit (140 s; short: 75 s) and the final
// stop's budget, so that no run takes more than about three minutes.
package conform
