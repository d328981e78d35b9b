package cometrpc_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/refimpl/oracle/core"
	"github.com/wsconverge/converge/wire/abciquery"
	"github.com/wsconverge/converge/wire/cometrpc"
	"github.com/wsconverge/converge/wire/keys"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
	"github.com/wsconverge/converge/wire/tx"
)

// wire carries a request to the façade and its response back as bytes, the
// way the HTTP transport does.
func wire(t *testing.T, req cometrpc.Request, serve func(cometrpc.Request) cometrpc.Response) cometrpc.Response {
	t.Helper()
	body, err := json.Marshal(req)
	require.NoError(t, err)
	reqs, _, rpcErr := cometrpc.ParseRequests(body)
	require.Nil(t, rpcErr)
	out, err := json.Marshal(serve(reqs[0]))
	require.NoError(t, err)
	resp, err := cometrpc.DecodeResponse(out)
	require.NoError(t, err)
	require.True(t, req.ID.Equal(resp.ID))
	return resp
}

// One submission round trip across every package: the daemon syncs its
// sequence, checks the round on chain, builds and broadcasts its tx; the
// façade decodes each request, the chain decodes and checks the tx, and the
// daemon classifies the answer.
func TestDaemonAndChainSpeakTheSameWire(t *testing.T) {
	key := keys.PrivKeyFromSeed("provider-0")
	self := key.PubKey().Address()
	cfg := oracle.DefaultConfig("/h")

	// 1. Account query.
	data, err := abciquery.AccountRequest(self)
	require.NoError(t, err)
	req, err := cometrpc.NewRequest(cometrpc.IntID(0), cometrpc.MethodABCIQuery,
		cometrpc.ABCIQueryParams{Path: abciquery.PathAccount, Data: data})
	require.NoError(t, err)
	resp := wire(t, req, func(r cometrpc.Request) cometrpc.Response {
		var p cometrpc.ABCIQueryParams
		require.Nil(t, r.DecodeParams(&p))
		m, err := abciquery.DecodeRequest(p.Path, p.Data)
		require.NoError(t, err)
		require.Equal(t, self, m.(interface{ GetAddress() string }).GetAddress())
		v, err := abciquery.AccountResponse(abciquery.Account{Address: self, AccountNumber: 3, Sequence: 41})
		require.NoError(t, err)
		out, err := cometrpc.NewResult(r.ID, cometrpc.QueryOK(v, 57))
		require.NoError(t, err)
		return out
	})
	var q cometrpc.ResultABCIQuery
	require.NoError(t, resp.DecodeResult(&q))
	require.Nil(t, q.Err())
	acc, err := abciquery.DecodeAccountResponse(q.Response.Value)
	require.NoError(t, err)
	require.Equal(t, uint64(41), acc.Sequence)

	// 2. On-chain check: nobody has submitted round 15 yet.
	data, err = abciquery.SubmitDataRequest(7, 15, "")
	require.NoError(t, err)
	req, err = cometrpc.NewRequest(cometrpc.IntID(1), cometrpc.MethodABCIQuery,
		cometrpc.ABCIQueryParams{Path: abciquery.PathSubmitData, Data: data})
	require.NoError(t, err)
	resp = wire(t, req, func(r cometrpc.Request) cometrpc.Response {
		v, err := abciquery.SubmitDataResponse(nil)
		require.NoError(t, err)
		out, err := cometrpc.NewResult(r.ID, cometrpc.QueryOK(v, 57))
		require.NoError(t, err)
		return out
	})
	require.NoError(t, resp.DecodeResult(&q))
	sets, err := abciquery.DecodeSubmitDataResponse(q.Response.Value)
	require.NoError(t, err)
	require.False(t, abciquery.HasProvider(sets, self))

	// 3. Build, sign and broadcast.
	fee, err := oracle.FeeAmount(cfg.Gas.Prices, cfg.Gas.Limit)
	require.NoError(t, err)
	built, err := tx.Build(keys.StandInSigner{Key: key}, tx.Envelope{
		ChainID: cfg.Chain.ID, AccountNumber: acc.AccountNumber, Sequence: acc.Sequence, GasLimit: cfg.Gas.Limit, FeeAmount: fee,
	}, tx.SubmissionMsg(self, 7, 15, "101.5"))
	require.NoError(t, err)
	req, err = cometrpc.NewRequest(cometrpc.IntID(2), cometrpc.MethodBroadcastTxSync, cometrpc.BroadcastTxParams{Tx: built.TxBytes})
	require.NoError(t, err)
	resp = wire(t, req, func(r cometrpc.Request) cometrpc.Response {
		var p cometrpc.BroadcastTxParams
		require.Nil(t, r.DecodeParams(&p))
		decoded, err := tx.Decode(p.Tx)
		require.NoError(t, err)
		require.NoError(t, tx.ValidateBasic(decoded))
		seq, _ := decoded.Sequence()
		require.Equal(t, uint64(41), seq)
		require.Equal(t, []tx.Coin{{Denom: "agxn", Amount: "44100000000000000"}}, decoded.FeeCoins())
		ds := decoded.Submissions()[0].GetDataSet()
		require.True(t, proto.Equal(&oraclev1.SubmitDataSet{RequestId: 7, Nonce: 15, RawData: "101.5", Provider: self,
			Signature: oracle.SubmissionSignature(7, 15, "101.5")}, ds), "%v", ds)
		hash, err := cometrpc.HexBytesFromString(decoded.Hash())
		require.NoError(t, err)
		out, err := cometrpc.NewResult(r.ID, cometrpc.BroadcastAdmitted(hash))
		require.NoError(t, err)
		return out
	})
	class := oracle.ClassifyBroadcast(cometrpc.ReplyOf(resp, nil))
	require.Equal(t, oracle.ClassSuccess, class)
	next, resync := core.SequenceUpdate(acc.Sequence, class)
	require.Equal(t, uint64(42), next)
	require.False(t, resync)
	var br cometrpc.ResultBroadcastTx
	require.NoError(t, resp.DecodeResult(&br))
	require.Equal(t, built.Hash, br.Hash.String())

	// 4. The round completes; the frame drives the job table.
	block := time.Date(2030, 1, 1, 0, 1, 0, 0, time.UTC)
	ev := cometrpc.ABCIEvent{Type: oracle.EventComplete, Attributes: []cometrpc.EventAttribute{
		{Key: "request_id", Value: "7"}, {Key: "nonce", Value: "15"}, {Key: "block_time", Value: "1893456060"},
	}}
	nb, err := cometrpc.NewBlockData(cfg.Chain.ID, 58, block, []cometrpc.ABCIEvent{ev})
	require.NoError(t, err)
	frame, err := cometrpc.NewEventFrame(cometrpc.IntID(5), oracle.QueryComplete, nb, cometrpc.EventsMap(cometrpc.TMEventNewBlock, []cometrpc.ABCIEvent{ev}, nil))
	require.NoError(t, err)
	raw, err := json.Marshal(frame)
	require.NoError(t, err)
	got, err := cometrpc.DecodeResponse(raw)
	require.NoError(t, err)
	re, err := cometrpc.DecodeEvent(got.Result)
	require.NoError(t, err)
	entries, errs := core.CompleteEntries(re.Events)
	require.Empty(t, errs)
	job := &oracle.Job{ID: core.JobID(7), RequestID: 7, Nonce: 14, Period: 30 * time.Second, Status: oracle.StatusEnabled,
		AccountList: []string{self}, Exec: oracle.ExecutionState{Status: oracle.ExecCompleted}}
	o := core.Transition(job, oracle.Complete{Nonce: entries[0].Nonce, BlockTime: entries[0].BlockTime}, block.Add(time.Second))
	require.Equal(t, []oracle.Row{oracle.RowComplete}, o.Rows)
	require.Equal(t, uint64(15), o.Job.Nonce)
	require.Equal(t, block.Add(30*time.Second), o.Job.NextRunTime)
}
