// Package ports is what an oracle daemon exchanges with its world, as
// data: the messages of a sans-I/O daemon, the oracle world's counterpart
// of contracts/ports for the workspace world.
//
// A Daemon is driven one call at a time (Start, Handle, NextWake). Its
// outputs are requests to carry out (Dial, Subscribe, UnsubscribeAll,
// StatusCall, QueryCall, BroadcastCall, Fetch), each answered later by an
// input with the same ID (Dialed, Reply, Fetched), and outputs that want
// no answer (CloseConn, AbortFetch, Trace, Log, Exit). The other inputs
// are what happens on its own (Frame, ConnClosed, Wake, Stop). A Reply
// carries the node's answers as data (node.go: status, abci_query,
// broadcast_tx_sync and JSON-RPC errors), which wire/cometrpc encodes and
// decodes.
//
// The reference daemon (refimpl/oracle/core) implements Daemon; the
// simulated world (sim/oracle) and the production runtime
// (refimpl/oracle) drive one. The world imports no daemon: it is handed
// one through a factory.
package ports
