package chain

import (
	"fmt"
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
	genesis = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	modKey  = keys.PrivKeyFromSeed("moderator")
	sutKey  = keys.PrivKeyFromSeed("sut")
	sutAddr = sutKey.PubKey().Address()
)

// harness is a chain on a test clock with a recorder, the SUT's account
// funded, and helpers to act as the SUT.
type harness struct {
	t     *testing.T
	c     *Chain
	now   time.Time
	rec   *history.Recorder
	seq   uint64 // the SUT's next sequence, as a careful daemon keeps it
	peers []*Peer
}

func newHarness(t *testing.T, mutate ...func(*Params)) *harness {
	t.Helper()
	p := DefaultParams()
	for _, m := range mutate {
		m(&p)
	}
	h := &harness{t: t, now: genesis, rec: history.NewRecorder()}
	c, err := New(Config{Params: p, Genesis: genesis, Now: func() time.Time { return h.now },
		Sink: func(e history.Event) { h.rec.Add(e) }, Moderator: modKey,
		Accounts: []Funding{{Address: sutAddr}}})
	require.NoError(t, err)
	h.c = c
	return h
}

// block advances the clock by a second and produces a block.
func (h *harness) block() *Block {
	h.now = h.now.Add(time.Second)
	return h.c.ProduceBlock(h.now)
}

// addPeers adds n peers named peer-0, peer-1, ….
func (h *harness) addPeers(n int) []string {
	h.t.Helper()
	var addrs []string
	for i := 0; i < n; i++ {
		p, err := h.c.AddPeer(keys.PrivKeyFromSeed(fmt.Sprintf("peer-%d", i)), nil)
		require.NoError(h.t, err)
		h.peers = append(h.peers, p)
		addrs = append(addrs, p.Address)
	}
	return addrs
}

// newDoc is a valid doc for the given providers.
func newDoc(quorum uint32, accounts ...string) *oraclev1.OracleRequestDoc {
	return &oraclev1.OracleRequestDoc{
		OracleType: oraclev1.OracleType_ORACLE_TYPE_CRYPTO, Name: "btc", Description: "price", Period: 10,
		AccountList: accounts, Quorum: quorum,
		Endpoints:       []*oraclev1.OracleEndpoint{{Url: "http://127.0.0.1:1/r/1/e/0", ParseRule: "data.price"}},
		AggregationRule: oraclev1.AggregationRule_AGGREGATION_RULE_AVG,
		Status:          oraclev1.RequestStatus_REQUEST_STATUS_ENABLED,
	}
}

// register registers doc and commits it; it returns the request id.
func (h *harness) register(doc *oraclev1.OracleRequestDoc) uint64 {
	h.t.Helper()
	adm, err := h.c.Register(doc)
	require.NoError(h.t, err)
	require.True(h.t, adm.Admitted(), adm.Log)
	b := h.block()
	d := b.Delivered[len(b.Delivered)-1]
	require.Zero(h.t, d.Code, d.Log)
	return d.Docs[0].RequestID
}

// sutEnv is the SUT's envelope at sequence seq with the default gas and
// fee.
func sutEnv(seq uint64) tx.Envelope {
	fee, _ := oracle.FeeAmount(oracle.DefaultGasPrices, oracle.DefaultGasLimit)
	return tx.Envelope{ChainID: oracle.DefaultChainID, AccountNumber: 1, Sequence: seq,
		GasLimit: oracle.DefaultGasLimit, FeeAmount: fee}
}

// sutTx builds the SUT's tx with env and msgs.
func sutTx(t *testing.T, env tx.Envelope, msgs ...proto.Message) []byte {
	t.Helper()
	b, err := tx.Build(keys.StandInSigner{Key: sutKey}, env, msgs...)
	require.NoError(t, err)
	return b.TxBytes
}

// submit broadcasts the SUT's submission for (r, n) at its next sequence
// and moves that sequence on success, like a daemon.
func (h *harness) submit(r, n uint64, value string) (cometrpc.ResultBroadcastTx, *cometrpc.RPCError) {
	h.t.Helper()
	res, rpcErr := h.c.BroadcastTxSync(sutTx(h.t, sutEnv(h.seq), tx.SubmissionMsg(sutAddr, r, n, value)))
	if rpcErr == nil && res.Code == 0 {
		h.seq++
	}
	return res, rpcErr
}

// query runs an abci_query.
func (h *harness) query(path string, data []byte, err error) cometrpc.ResultABCIQuery {
	h.t.Helper()
	require.NoError(h.t, err)
	return h.c.ABCIQuery(path, data)
}

func (h *harness) submissions(r, n uint64) []*oraclev1.SubmitDataSet {
	h.t.Helper()
	data, err := abciquery.SubmitDataRequest(r, n, "")
	q := h.query(abciquery.PathSubmitData, data, err)
	require.Nil(h.t, q.Err())
	subs, err := abciquery.DecodeSubmitDataResponse(q.Response.Value)
	require.NoError(h.t, err)
	return subs
}

// events returns the recorded events of a kind.
func (h *harness) events(kind history.Kind) []history.Event {
	var out []history.Event
	for _, e := range h.rec.Events() {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func (h *harness) lastCheck() *history.CheckTx {
	evs := h.events(history.KindCheckTx)
	require.NotEmpty(h.t, evs)
	return evs[len(evs)-1].CheckTx
}

// moderatorTx sends one moderator tx with several messages.
func moderatorTx(c *Chain, msgs ...proto.Message) (Admission, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, adm, err := c.sendOwn(history.OriginModerator, c.modKey, c.moderator, c.moderator.checkSeq, msgs...)
	return adm, err
}
