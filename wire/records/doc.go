// Package records turns the oracle's wire messages into the history
// records every oracle checker reads (contracts/oracle/history): request
// docs, decoded transactions with their signature check, ABCI queries and
// their values, and RPC results. The fake chain, the black-box façade and
// the world record through it, so each record says what crossed the wire.
package records
