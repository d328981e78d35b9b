package chain

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/wire/abciquery"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
)

// The five query paths of ORACLE-SPEC 6.5 over the committed state, and
// their failures (docs/decisions/oracle-4-world.md, DR27).
func TestQueries(t *testing.T) {
	h := newHarness(t)
	peers := h.addPeers(2)
	r1 := h.register(newDoc(3, sutAddr, peers[0], peers[1]))
	paused := newDoc(1, sutAddr)
	paused.Status = oraclev1.RequestStatus_REQUEST_STATUS_PAUSED
	r2 := h.register(paused)

	// Account: committed sequence, key once a tx committed, unknown = 22.
	data, err := abciquery.AccountRequest(sutAddr)
	q := h.query(abciquery.PathAccount, data, err)
	require.Nil(t, q.Err())
	acc, err := abciquery.DecodeAccountResponse(q.Response.Value)
	require.NoError(t, err)
	require.Equal(t, abciquery.Account{Address: sutAddr, AccountNumber: 1}, acc)
	res, _ := h.submit(r1, 1, "1")
	require.Zero(t, res.Code)
	q = h.c.ABCIQuery(abciquery.PathAccount, data)
	acc, _ = abciquery.DecodeAccountResponse(q.Response.Value)
	require.Zero(t, acc.Sequence, "queries read the committed state, not the check state")
	h.block()
	q = h.c.ABCIQuery(abciquery.PathAccount, data)
	acc, _ = abciquery.DecodeAccountResponse(q.Response.Value)
	require.Equal(t, uint64(1), acc.Sequence)
	require.Equal(t, sutKey.PubKey().Bytes(), acc.PubKey)
	require.Equal(t, int64(h.c.Height()), int64(q.Response.Height))

	data, err = abciquery.AccountRequest(keysAddr("nobody"))
	q = h.query(abciquery.PathAccount, data, err)
	require.Equal(t, uint32(22), q.Response.Code)
	require.Contains(t, q.Response.Log, "not found: key not found")
	data, err = abciquery.AccountRequest("guru1nope")
	q = h.query(abciquery.PathAccount, data, err)
	require.Equal(t, uint32(7), q.Response.Code)

	// Docs: ascending, filtered by status (0 = all).
	for status, want := range map[oracle.RequestStatus][]uint64{
		oracle.StatusUnspecified: {r1, r2}, oracle.StatusEnabled: {r1}, oracle.StatusPaused: {r2}, oracle.StatusDisabled: {},
	} {
		data, err := abciquery.DocsRequest(status)
		q := h.query(abciquery.PathDocs, data, err)
		require.Nil(t, q.Err())
		docs, err := abciquery.DecodeDocsResponse(q.Response.Value)
		require.NoError(t, err)
		var ids []uint64
		for _, d := range docs {
			ids = append(ids, d.RequestID)
		}
		require.Equal(t, len(want), len(ids), status)
		for i := range want {
			require.Equal(t, want[i], ids[i])
		}
	}

	// Doc, and the spec's not-found log.
	data, err = abciquery.DocRequest(r1)
	q = h.query(abciquery.PathDoc, data, err)
	require.Nil(t, q.Err())
	doc, err := abciquery.DecodeDocResponse(q.Response.Value)
	require.NoError(t, err)
	require.Equal(t, []string{sutAddr, peers[0], peers[1]}, doc.AccountList)
	data, err = abciquery.DocRequest(7)
	q = h.query(abciquery.PathDoc, data, err)
	require.Equal(t, uint32(18), q.Response.Code)
	require.Equal(t, "not exist RequestDoc(req_id: 7): invalid request", q.Response.Log)
	require.Equal(t, "sdk", q.Response.Codespace)
	require.Nil(t, q.Response.Value)

	// SubmitData: every provider (sorted by address), one provider, absent.
	for _, p := range h.peers {
		_, err := h.c.PeerSubmit(p, r1, "prompt", "2")
		require.NoError(t, err)
	}
	h.block()
	subs := h.submissions(r1, 1)
	require.Len(t, subs, 3)
	for i := 1; i < len(subs); i++ {
		require.Less(t, subs[i-1].GetProvider(), subs[i].GetProvider())
	}
	data, err = abciquery.SubmitDataRequest(r1, 1, sutAddr)
	q = h.query(abciquery.PathSubmitData, data, err)
	require.Nil(t, q.Err())
	one, _ := abciquery.DecodeSubmitDataResponse(q.Response.Value)
	require.Len(t, one, 1)
	require.True(t, proto.Equal(&oraclev1.SubmitDataSet{RequestId: r1, Nonce: 1, RawData: "1", Provider: sutAddr,
		Signature: oracle.SubmissionSignature(r1, 1, "1")}, one[0]))
	data, err = abciquery.SubmitDataRequest(r1, 2, sutAddr)
	q = h.query(abciquery.PathSubmitData, data, err)
	require.Equal(t, uint32(18), q.Response.Code)
	require.Contains(t, q.Response.Log, "not exist SubmitData")
	require.Empty(t, h.submissions(r1, 2), "no submission is an empty list")
	require.Empty(t, h.submissions(99, 1))

	// Data: none yet is 18; after a Complete the aggregate.
	data, err = abciquery.DataRequest(r2)
	q = h.query(abciquery.PathData, data, err)
	require.Equal(t, uint32(18), q.Response.Code)
	require.Contains(t, q.Response.Log, "not exist DataSet(req_id: 2)")

	// Unknown path and bad data.
	q = h.c.ABCIQuery("/cosmos.bank.v1beta1.Query/Balance", nil)
	require.Equal(t, uint32(6), q.Response.Code)
	require.Contains(t, q.Response.Log, "unknown request")
	q = h.c.ABCIQuery(abciquery.PathDoc, []byte{0xff, 0xff})
	require.Equal(t, uint32(18), q.Response.Code)
}

func keysAddr(seed string) string {
	return keysPriv(seed).PubKey().Address()
}
