// Package oracleconform judges an oracle daemon binary black-box
// (ORACLE-SPEC §6): a Facade serves, on loopback, the CometBFT JSON-RPC
// endpoint a daemon talks to (HTTP POST and /websocket), backed by the
// simulated chain of fakes/chain producing blocks on the wall clock and by
// the fake data sources of fakes/datasource; it records every request,
// answer and event frame in the vocabulary of contracts/oracle/history.
// A Run writes the daemon's config.toml and key into a sandbox home,
// launches the binary, drives a short Script (operator workload, faults,
// SIGKILL and restart, SIGTERM), and judges the recorded history with the
// checkers of contracts/oracle/invariant in black-box mode.
//
// Everything here runs in real time: a run takes about as long as its
// script (the default is under a minute).
package oracleconform
