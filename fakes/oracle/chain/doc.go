// Package chain is the simulated chain of ORACLE-SPEC 4: a guru chain with
// its oracle module and a CometBFT node's mempool, as a state machine the
// caller steps. The simulated oracle world drives it on the engine's
// virtual clock; the RPC façade drives it on the wall clock. It starts no
// goroutine, reads no clock but the caller's, draws no random number, and
// never iterates a map where order shows, so the same calls give the same
// bytes, hashes and records.
//
// What it does, in the spec's terms:
//
//   - State (§4.1): accounts with a committed and a check sequence and a
//     balance; the moderator; request docs by id with each round's
//     submissions and the latest aggregate; height and block time; the
//     mempool (FIFO) and the LRU cache of admitted tx hashes.
//   - BroadcastTxSync (§4.3, §6.3): a full mempool and a cache hit are
//     JSON-RPC errors; then CheckTx in the spec's order — strict decode
//     (wire/tx), stateless checks, fee, gas, funds, sequence
//     (and the signature in the verifying mode of D26). An admitted tx
//     moves the signer's check sequence.
//   - ABCIQuery and Status (§6.3, §6.5): the five query paths over the
//     committed state, encoded by wire/abciquery.
//   - ProduceBlock (§4.2, §4.4, §4.5): BeginBlock aggregation (several
//     Completes per block, in request order), execution of up to
//     max_block_txs txs (the ante handler takes the fee and the sequence
//     even when a message fails; the messages are all or nothing), commit,
//     recheck and eviction, and the frames to publish (§4.6): one NewBlock
//     frame, then one Tx frame per included tx, as cometrpc values built
//     on demand. Matches filters a frame with a subscription's query.
//     A caller done with a block's frames may Recycle it, giving its
//     memory and its included txs' back for later blocks.
//   - The operator workload and peers (§4.7): Register, Update, Disable and
//     BogusNonceUpdate sign and send the moderator's txs; AddPeer and
//     PeerSubmit a peer provider's submissions with its own key and
//     sequence; Intrude the same-key intruder of F9. PeerMix draws each
//     peer's behaviour per round from a seed.
//   - Chain-side faults (§4.9): SetMempoolFull (F10), InjectCheckTx (F11),
//     Evict (F13), SetBlockTimeSkew (F16); F15 is not producing blocks and
//     F12 is dropping an answer. The caller records the faults themselves.
//
// Every admission attempt (checktx), action (op, peer), block, delivered
// tx (deliver) and eviction (evict) is recorded as a
// contracts/oracle/history event sent to the sink the caller gives. The
// rpc, ws, src, proc and fault records belong to the caller, which sees
// the transport.
package chain
