package history

import (
	"testing"
	"time"
)

// benchEvents are records like the ones a quiet day is made of: a
// broadcast and its tx, its CheckTx and delivery, a GET's end with its
// body, a Complete frame and a block.
func benchEvents() []Event {
	at := time.Unix(1_700_000_000, 123456789).UTC()
	tx := Tx{Hash: "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08", Size: 412,
		Signer: "guru1qyqszqgpqyqszqgpqyqszqgpqyqszqgpjnp7du", Signers: 1, Signatures: 1, Sequence: 1234,
		PubKey: "02a1633cafcc01ebfb6d78e39f687a1f0995c62fc95f51ead10a02ee0be551b5dc", SignMode: 1, GasLimit: 200000,
		Fee: []Coin{{Denom: "agxn", Amount: "126000000000000000"}},
		Msgs: []Msg{{Type: "/guru.oracle.v1.MsgSubmitOracleData", Signer: "guru1qyqszqgpqyqszqgpqyqszqgpqyqszqgpjnp7du",
			RequestID: 42, Nonce: 777, RawData: "1042.78", Provider: "guru1qyqszqgpqyqszqgpqyqszqgpqyqszqgpjnp7du",
			Signature: "c2lnbmF0dXJlIG9mIHRoZSBzdWJtaXNzaW9uIG9mIHJvdW5kIDc3Nw=="}}, Sig: SigStandIn}
	return []Event{
		{Seq: 1, At: at, Kind: KindRPC, Life: 1, RPC: &RPC{Call: 99, Conn: 3, Phase: PhaseRecv, Method: "broadcast_tx_sync", ID: "17", Tx: &tx, TRecv: at}},
		{Seq: 2, At: at, Kind: KindRPC, Life: 1, RPC: &RPC{Call: 99, Conn: 3, Phase: PhaseDone, Method: "broadcast_tx_sync", ID: "17",
			Result: &RPCResult{Hash: tx.Hash, Log: "[]"}, TRecv: at, TDelivered: at}},
		{Seq: 3, At: at, Kind: KindCheckTx, CheckTx: &CheckTx{Origin: OriginSUT, Tx: tx, Mempool: 12}},
		{Seq: 4, At: at, Kind: KindDeliver, Deliver: &Deliver{Height: 5000, Index: 2, Hash: tx.Hash, Origin: OriginSUT, Signer: tx.Signer,
			Sequence: 1234, GasLimit: 200000, Fee: tx.Fee, Msgs: tx.Msgs}},
		{Seq: 5, At: at, Kind: KindSrc, Life: 1, Src: &Src{Exchange: 7, Phase: PhaseDone, RequestID: 42, Endpoint: 1, Path: "/e/1/price",
			Class: "ok", Status: 200, Body: `{"data":{"price":1042.78},"ts":"2024-01-01T00:00:00Z"}`, TRecv: at}},
		{Seq: 6, At: at, Kind: KindWS, Life: 1, WS: &WS{Conn: 1, Action: WSFrame, Query: "tm.event='NewBlock' AND complete_oracle_data_set.request_id EXISTS", ID: "2",
			Frame: &Frame{Type: "tendermint/event/NewBlock", Height: 5000, Events: map[string][]string{
				"complete_oracle_data_set.request_id": {"42"}, "complete_oracle_data_set.nonce": {"777"},
				"complete_oracle_data_set.block_time": {"1700000000"}, "tm.event": {"NewBlock"}}, Published: at}}},
		{Seq: 7, At: at, Kind: KindBlock, Block: &Block{Height: 5000, Time: at, Completes: []Complete{{RequestID: 42, Nonce: 777,
			RawData: "1042.78", BlockHeight: 5000, BlockTime: 1700000000, Providers: []string{"a", "b", "c"}, Values: []string{"1", "2", "3"}}}, Txs: 3}},
	}
}

func BenchmarkAppendEvent(b *testing.B) {
	evs := benchEvents()
	var buf []byte
	for b.Loop() {
		for i := range evs {
			buf = AppendEvent(buf[:0], &evs[i])
		}
	}
}
