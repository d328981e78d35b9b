package oracle

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClassifyBroadcast(t *testing.T) {
	cases := []struct {
		name   string
		reply  BroadcastReply
		class  BroadcastClass
		action BroadcastAction
		gas    bool
	}{
		{"3.5 code 0 → success, done", ReplyCode(0), ClassSuccess, ActionDone, false},
		{"3.5, D3 code 19 → already admitted, done", ReplyCode(19), ClassAlreadyAdmitted, ActionDone, false},
		{"3.5, D3 RPC error tx already exists in cache → done",
			ReplyRPCError("Internal error", "tx already exists in cache"), ClassAlreadyAdmitted, ActionDone, false},
		{"3.5 code 32 → sequence mismatch, retry", ReplyCode(32), ClassSequenceMismatch, ActionRetry, false},
		{"3.5, D5 code 11 → out of gas, adjust and retry", ReplyCode(11), ClassOutOfGas, ActionRetry, true},
		{"3.5, D4 code 13 → insufficient fee, give up", ReplyCode(13), ClassInsufficientFee, ActionGiveUp, false},
		{"3.5 code 20 → transient, retry", ReplyCode(20), ClassTransient, ActionRetry, false},
		{"3.5 RPC error mempool is full → transient, retry",
			ReplyRPCError("Internal error", "mempool is full: number of txs 5000 (max: 5000), total txs bytes 1 (max: 2)"),
			ClassTransient, ActionRetry, false},
		{"3.5, D6 code 2 → rejected", ReplyCode(2), ClassRejected, ActionGiveUp, false},
		{"3.5, D6 code 4 → rejected", ReplyCode(4), ClassRejected, ActionGiveUp, false},
		{"3.5, D6 code 5 → rejected", ReplyCode(5), ClassRejected, ActionGiveUp, false},
		{"3.5, D6 code 7 → rejected", ReplyCode(7), ClassRejected, ActionGiveUp, false},
		{"3.5, D6 code 18 → rejected", ReplyCode(18), ClassRejected, ActionGiveUp, false},
		{"3.5, D6 an unknown code → rejected", ReplyCode(99), ClassRejected, ActionGiveUp, false},
		{"3.5 transport error → ambiguous, retry", ReplyTransport(), ClassAmbiguous, ActionRetry, false},
		{"3.5 other RPC error → ambiguous, retry", ReplyRPCError("Internal error", "timed out waiting for tx"), ClassAmbiguous, ActionRetry, false},
		{"3.5 an RPC error is never read as a code", BroadcastReply{RPCError: true, RPCErrorText: "boom", Code: 0}, ClassAmbiguous, ActionRetry, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ClassifyBroadcast(tc.reply)
			require.Equal(t, tc.class, c)
			require.Equal(t, tc.action, c.Action())
			require.Equal(t, tc.gas, c.AdjustsGas())
		})
	}
}
