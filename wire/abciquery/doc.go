// Package abciquery is the oracle system's abci_query wire (ORACLE-SPEC 6.5):
// the five query paths, the protobuf request each carries in `data` and the
// response each returns in `value`, with an encoder and a decoder for both
// sides (the daemon asks and reads; the simulated chain reads and answers),
// and the conversion of a chain's OracleRequestDoc to the rule package's
// oracle.RequestDoc.
//
// Failed queries answer with a non-zero code in codespace sdk and a log
// "<reason>: <code text>" (oracle.CodeError); this package's NotFound
// helpers give the reasons the spec and the SDK use.
package abciquery
