package records

import (
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/wire/abciquery"
	"github.com/wsconverge/converge/wire/cometrpc"
	"github.com/wsconverge/converge/wire/keys"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
	"github.com/wsconverge/converge/wire/tx"
)

var (
	testKey  = keys.PrivKeyFromSeed("history-test")
	testSelf = testKey.PubKey().Address()
	testEnv  = tx.Envelope{ChainID: oracle.DefaultChainID, AccountNumber: 4, Sequence: 9, GasLimit: 70000,
		FeeAmount: "44100000000000000"}
)

func testDoc() *oraclev1.OracleRequestDoc {
	return &oraclev1.OracleRequestDoc{
		RequestId: 7, OracleType: oraclev1.OracleType_ORACLE_TYPE_CRYPTO, Name: "btc", Description: "d",
		Period: 30, AccountList: []string{"guru1a", testSelf}, Quorum: 2,
		Endpoints:       []*oraclev1.OracleEndpoint{{Url: "http://127.0.0.1:1/r/7/e/0", ParseRule: "data.price"}},
		AggregationRule: oraclev1.AggregationRule_AGGREGATION_RULE_MEDIAN,
		Status:          oraclev1.RequestStatus_REQUEST_STATUS_ENABLED, Nonce: 14,
	}
}

func TestDocRoundTrips(t *testing.T) {
	d := DocFromProto(testDoc())
	require.True(t, proto.Equal(testDoc(), DocProto(d)))
	rd := d.RequestDoc()
	require.Equal(t, uint64(7), rd.RequestID)
	require.Equal(t, oracle.StatusEnabled, rd.Status)
	require.Equal(t, []oracle.Endpoint{{URL: "http://127.0.0.1:1/r/7/e/0", ParseRule: "data.price"}}, rd.Endpoints)
}

func TestTxOfAndDecodeTx(t *testing.T) {
	b, err := tx.Build(keys.StandInSigner{Key: testKey}, testEnv, tx.SubmissionMsg(testSelf, 7, 15, "101.5"),
		tx.UpdateMsg(testSelf, testDoc(), "why"))
	require.NoError(t, err)
	got := DecodeTx(b.TxBytes)
	require.Equal(t, TxOf(b.Tx), got)
	require.Equal(t, b.Hash, got.Hash)
	require.Equal(t, len(b.TxBytes), got.Size)
	require.Equal(t, testSelf, got.Signer)
	require.Equal(t, uint64(9), got.Sequence)
	require.Equal(t, 1, got.Signers)
	require.Equal(t, 1, got.Signatures)
	require.Equal(t, int32(1), got.SignMode)
	require.Equal(t, hex.EncodeToString(testKey.PubKey().Bytes()), got.PubKey)
	require.Equal(t, []history.Coin{{Denom: "agxn", Amount: "44100000000000000"}}, got.Fee)
	require.Len(t, got.Msgs, 2)
	require.Equal(t, history.Msg{Type: oracle.TypeURLSubmit, Signer: testSelf, RequestID: 7, Nonce: 15, RawData: "101.5",
		Provider: testSelf, Signature: oracle.SubmissionSignature(7, 15, "101.5")}, got.Msgs[0])
	require.Equal(t, oracle.TypeURLUpdate, got.Msgs[1].Type)
	require.Equal(t, "why", got.Msgs[1].Reason)
	require.Equal(t, DocFromProto(testDoc()), *got.Msgs[1].Doc)

	bad := DecodeTx([]byte{0xff})
	require.NotEmpty(t, bad.DecodeErr)
	require.Contains(t, bad.DecodeErr, "tx parse error")
	require.Equal(t, tx.Hash([]byte{0xff}), bad.Hash)
	require.Empty(t, bad.Msgs)
}

func TestCheckSig(t *testing.T) {
	msg := tx.SubmissionMsg(testSelf, 7, 15, "101.5")
	standIn, err := tx.Build(keys.StandInSigner{Key: testKey}, testEnv, msg)
	require.NoError(t, err)
	real, err := tx.Build(keys.KeySigner{Key: testKey}, testEnv, msg)
	require.NoError(t, err)
	require.Equal(t, history.SigStandIn, CheckSig(standIn.Tx, oracle.DefaultChainID, 4))
	require.Equal(t, history.SigValid, CheckSig(real.Tx, oracle.DefaultChainID, 4))
	require.Equal(t, history.SigInvalid, CheckSig(real.Tx, "other-chain", 4), "signed for another chain id")
	require.Equal(t, history.SigInvalid, CheckSig(standIn.Tx, oracle.DefaultChainID, 5), "signed for another account number")

	other := keys.PrivKeyFromSeed("someone else")
	spoof, err := tx.Build(keys.StandInSigner{Key: other}, testEnv, msg)
	require.NoError(t, err)
	require.Equal(t, history.SigInvalid, CheckSig(spoof.Tx, oracle.DefaultChainID, 4), "the key is not the signer's")
}

func TestQueryAndValueOfEveryPath(t *testing.T) {
	data, err := abciquery.SubmitDataRequest(7, 15, "guru1p")
	require.NoError(t, err)
	q := QueryOf(cometrpc.ABCIQueryParams{Path: abciquery.PathSubmitData, Data: data, Height: 3})
	require.Equal(t, &history.Query{Path: abciquery.PathSubmitData, Height: 3, RequestID: 7, Nonce: 15, Provider: "guru1p"}, q)

	data, err = abciquery.AccountRequest(testSelf)
	require.NoError(t, err)
	require.Equal(t, testSelf, QueryOf(cometrpc.ABCIQueryParams{Path: abciquery.PathAccount, Data: data}).Address)
	data, err = abciquery.DocsRequest(oracle.StatusEnabled)
	require.NoError(t, err)
	require.Equal(t, int32(1), QueryOf(cometrpc.ABCIQueryParams{Path: abciquery.PathDocs, Data: data}).Status)
	data, err = abciquery.DocRequest(9)
	require.NoError(t, err)
	require.Equal(t, uint64(9), QueryOf(cometrpc.ABCIQueryParams{Path: abciquery.PathDoc, Data: data}).RequestID)
	data, err = abciquery.DataRequest(8)
	require.NoError(t, err)
	require.Equal(t, uint64(8), QueryOf(cometrpc.ABCIQueryParams{Path: abciquery.PathData, Data: data}).RequestID)
	require.Contains(t, QueryOf(cometrpc.ABCIQueryParams{Path: "/nope"}).DecodeErr, "unknown request")
	require.Contains(t, QueryOf(cometrpc.ABCIQueryParams{Path: abciquery.PathDoc, Data: []byte{0xff}}).DecodeErr, "invalid request")

	v, err := abciquery.AccountResponse(abciquery.Account{Address: testSelf, AccountNumber: 4, Sequence: 10,
		PubKey: testKey.PubKey().Bytes()})
	require.NoError(t, err)
	require.Equal(t, &history.Account{Address: testSelf, AccountNumber: 4, Sequence: 10,
		PubKey: hex.EncodeToString(testKey.PubKey().Bytes())}, ValueOf(abciquery.PathAccount, v).Account)

	v, err = abciquery.DocsResponse(nil)
	require.NoError(t, err)
	docs := ValueOf(abciquery.PathDocs, v)
	require.NotNil(t, docs.Docs, "an empty list is a list")
	require.Empty(t, docs.Docs)
	v, err = abciquery.DocsResponse([]*oraclev1.OracleRequestDoc{testDoc()})
	require.NoError(t, err)
	require.Equal(t, []history.Doc{DocFromProto(testDoc())}, ValueOf(abciquery.PathDocs, v).Docs)

	v, err = abciquery.DocResponse(testDoc())
	require.NoError(t, err)
	require.Equal(t, DocFromProto(testDoc()), *ValueOf(abciquery.PathDoc, v).Doc)

	sub := &oraclev1.SubmitDataSet{RequestId: 7, Nonce: 15, RawData: "1", Provider: "p", Signature: "s"}
	v, err = abciquery.SubmitDataResponse([]*oraclev1.SubmitDataSet{sub})
	require.NoError(t, err)
	require.Equal(t, []history.Submission{{RequestID: 7, Nonce: 15, RawData: "1", Provider: "p", Signature: "s"}},
		ValueOf(abciquery.PathSubmitData, v).Submissions)

	v, err = abciquery.DataResponse(&oraclev1.DataSet{RequestId: 7, Nonce: 15, BlockHeight: 3, BlockTime: 99, RawData: "1"})
	require.NoError(t, err)
	require.Equal(t, &history.DataSet{RequestID: 7, Nonce: 15, BlockHeight: 3, BlockTime: 99, RawData: "1"},
		ValueOf(abciquery.PathData, v).DataSet)

	require.NotEmpty(t, ValueOf(abciquery.PathData, []byte{0xff}).DecodeErr)
	require.Nil(t, ValueOf("/nope", nil))
}

func TestResultSummaries(t *testing.T) {
	v, err := abciquery.DocResponse(testDoc())
	require.NoError(t, err)
	ok := ResultOfQuery(abciquery.PathDoc, cometrpc.QueryOK(v, 12))
	require.Equal(t, int64(12), ok.Height)
	var okIn history.RPCResult
	var okValue history.QueryValue
	require.Equal(t, ok, ResultOfQueryIn(&okIn, &okValue, abciquery.PathDoc, cometrpc.QueryOK(v, 12)))
	require.Same(t, &okValue, okIn.Value)
	require.Equal(t, uint64(7), ok.Value.Doc.RequestID)

	var in history.RPCResult
	var qv history.QueryValue
	same := ResultOfQueryIn(&in, &qv, abciquery.PathDoc, cometrpc.QueryFailed(abciquery.DocNotFound(9), 12))
	require.Same(t, &in, same)
	failed := ResultOfQuery(abciquery.PathDoc, cometrpc.QueryFailed(abciquery.DocNotFound(9), 12))
	require.Equal(t, failed, same)
	require.Equal(t, uint32(18), failed.Code)
	require.Equal(t, "not exist RequestDoc(req_id: 9): invalid request", failed.Log)
	require.Equal(t, "sdk", failed.Codespace)
	require.Nil(t, failed.Value)

	br := ResultOfBroadcast(cometrpc.BroadcastRejected([]byte{0xab, 0xcd}, oracle.Errorf(32, "x")))
	require.Equal(t, &history.RPCResult{Code: 32, Log: "x: incorrect account sequence", Codespace: "sdk", Hash: "ABCD"}, br)
	// The tx's own hash is taken when the answer's is its bytes, and only then.
	for _, known := range []string{"ABCD", "abcd", "ABCE", "ABC", ""} {
		var in history.RPCResult
		got := ResultOfBroadcastIn(&in, cometrpc.BroadcastRejected([]byte{0xab, 0xcd}, oracle.Errorf(32, "x")), known)
		require.Same(t, &in, got)
		require.Equal(t, br, got, known)
	}

	bt := time.Date(2030, 1, 1, 0, 0, 57, 0, time.UTC)
	st := ResultOfStatus(cometrpc.NewStatus(oracle.DefaultChainID, 57, bt, bt))
	require.Equal(t, &history.RPCResult{Height: 57, BlockTime: bt, Network: oracle.DefaultChainID}, st)

	require.Equal(t, &history.RPCResult{ErrCode: -32603, ErrMessage: "Internal error", ErrData: oracle.RPCErrMempoolFull},
		ResultOfError(cometrpc.ErrInternal(oracle.RPCErrMempoolFull)))
}

// A TxMemo gives the records DecodeTxSummed gives: the SUT's build back
// from its tx.Memo, the key's hex shared while the key is the same.
func TestDecodeTxMemoIsDecodeTxSummed(t *testing.T) {
	var m TxMemo
	other := keys.PrivKeyFromSeed("other")
	for i, key := range []keys.PrivKey{testKey, testKey, other, testKey} {
		signer := tx.MemoSigner{Signer: keys.StandInSigner{Key: key}, Memo: &m.Tx}
		b, err := tx.Build(signer, testEnv, tx.SubmissionMsg(key.PubKey().Address(), 7, uint64(i+1), "101.5"))
		require.NoError(t, err)
		wantRec, want, wantSum := DecodeTxSummed(b.TxBytes)
		rec, got, sum := DecodeTxMemo(b.TxBytes, &m)
		require.Equal(t, wantRec, rec)
		require.Equal(t, wantSum, sum)
		require.Same(t, b.Tx, got, "the build comes back")
		require.Equal(t, want.Bytes, got.Bytes)
	}
	rec, got, _ := DecodeTxMemo([]byte{0xff}, &m)
	require.Nil(t, got)
	require.NotEmpty(t, rec.DecodeErr)
}
