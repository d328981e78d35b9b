// Package cometrpc is CometBFT's JSON-RPC wire as the oracle system speaks it
// (ORACLE-SPEC 6.2-6.4): requests, responses and errors with ids echoed
// exactly, the results of status, abci_query and broadcast_tx_sync, the
// event frames of a subscription (NewBlock and Tx with their registered type
// names and the flattened events map), and the query matcher the façade
// filters frames with (key='value', key EXISTS, AND).
//
// Every type encodes the way CometBFT's amino-JSON does, so that CometBFT's
// own Go client decodes what the façade writes: 64-bit integers are JSON
// strings (Int64, Uint64), 32-bit ones numbers, byte strings base64, hashes
// upper-case hex (HexBytes), times RFC 3339 in UTC. Decoding is lenient
// where CometBFT clients differ (a 64-bit integer may also come as a bare
// number, hex in either case). Both sides use it: the façade encodes results
// and decodes requests; the daemon encodes requests and decodes results.
//
// CometBFT's own packages are not imported (they would pull in the node);
// the shapes are few and are pinned here by golden JSON from the spec.
package cometrpc
