// Package history is the oracle world's recorded trace (ORACLE-SPEC 4.10):
// the only input of the checkers O1–O18, so that they judge the reference
// daemon, a mutant and an external binary alike.
//
// An Event is one recorded fact, of one Kind, with exactly one payload:
//
//   - proc: the SUT's process life — start, signal, exit, a Go panic or
//     fatal-error trace found in its output;
//   - rpc: one JSON-RPC call the SUT made, in two records linked by Call —
//     recv (t_recv, the method, id and decoded params: the query or the
//     decoded tx) and done (the result summary with the decoded value,
//     t_recv again and t_delivered, or Lost when the response never
//     reached the SUT);
//   - ws: the SUT's WebSocket — connect, close (by whom), subscribe and
//     unsubscribe (query, id, error), and every frame delivered (query, id,
//     the events map, the height and the time the chain published it; the
//     record's time is the delivery);
//   - checktx: one admission attempt at the simulated chain (SUT, peer,
//     moderator or intruder): the decoded tx, the RPC error or the CheckTx
//     code and log, whether the code was injected (F11);
//   - block: one block as BeginBlock leaves it — height, block time, the
//     Completes and DataSets; then one deliver record per included tx with
//     its code, log, messages and the docs it wrote; evict: a mempool tx
//     dropped by a recheck or a fault;
//   - op and peer: the moderator's and the peers' actions, with the txs they
//     sent;
//   - src: one data-source GET in two records linked by Exchange — recv
//     (request, endpoint, headers, t_recv) and done (class, status, body
//     served, or Aborted when the client went away);
//   - fault: a fault of the catalogue (§4.9) — id, target, parameters,
//     window;
//   - white: the reference's trace points — job transitions with the rows
//     of the §3.3.3 table applied, component stops, task-group drained,
//     channel closes, goroutine counts, health.
//
// NewRecorder returns a record.Recorder whose canonical encoding covers
// every field of every payload (maps in sorted key order), so two runs
// with the same hash recorded the same history; Line renders an event on
// one line for a failure timeline. The conversions in wire.go turn the
// wire packages' values (protobuf messages, decoded txs, query requests
// and answers) into these plain records.
package history
