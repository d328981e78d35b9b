package chain

import (
	"crypto/sha256"
	"encoding/hex"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/refimpl/oracle/core"
	"github.com/wsconverge/converge/wire/abciquery"
	"github.com/wsconverge/converge/wire/cometrpc"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
	"github.com/wsconverge/converge/wire/records"
	"github.com/wsconverge/converge/wire/tx"
)

// MsgSubmitOracleData's rules (ORACLE-SPEC 4.4), each in a block: the
// ante handler takes the fee and the sequence even when the message fails.
func TestSubmitExecution(t *testing.T) {
	h := newHarness(t)
	other := h.addPeers(1)[0]
	r := h.register(newDoc(2, sutAddr, other))
	paused := newDoc(1, sutAddr)
	paused.Status = oraclev1.RequestStatus_REQUEST_STATUS_PAUSED
	rp := h.register(paused)

	cases := []struct {
		name      string
		r, n      uint64
		authority string
		code      uint32
		log       string
	}{
		{"unknown request", 99, 1, sutAddr, 18, "failed to execute message; message index: 0: request document not found: invalid request"},
		{"wrong nonce (stale)", r, 0, sutAddr, 18, "nonce is not correct"},
		{"wrong nonce (future)", r, 2, sutAddr, 18, "nonce is not correct"},
		{"not authorized", r, 1, "", 18, "account is not authorized"},
		{"accepted", r, 1, sutAddr, 0, ""},
		{"status is not checked", rp, 1, sutAddr, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := h.c.Account(sutAddr)
			var b []byte
			if tc.authority == "" {
				// A doc that does not list the SUT: register one without it.
				rr := h.register(newDoc(1, other))
				b = sutTx(t, sutEnv(h.seq), tx.SubmissionMsg(sutAddr, rr, 1, "1"))
			} else {
				b = sutTx(t, sutEnv(h.seq), tx.SubmissionMsg(tc.authority, tc.r, tc.n, "7.25"))
			}
			res, rpcErr := h.c.BroadcastTxSync(b)
			require.Nil(t, rpcErr)
			require.Zero(t, res.Code, "CheckTx never runs the message: %s", res.Log)
			h.seq++
			blk := h.block()
			d := blk.Delivered[len(blk.Delivered)-1]
			require.Equal(t, tc.code, d.Code, d.Log)
			require.Contains(t, d.Log, tc.log)
			after, _ := h.c.Account(sutAddr)
			require.Equal(t, before.Sequence+1, after.Sequence, "the sequence is used even if the message fails")
			fee := new(big.Int).Sub(before.Balance, after.Balance)
			require.Equal(t, "44100000000000000", fee.String(), "the fee is paid even if the message fails")
			require.NotNil(t, after.PubKey)
			frame := blk.Frames[len(blk.Frames)-1]
			if tc.code != 0 {
				require.Empty(t, frame.EventsMap()[oracle.KeyAction], "a failed tx emits no message events")
				require.False(t, h.c.cache.has(sha256.Sum256(b)), "a tx failed in a block leaves the cache")
				return
			}
			require.Equal(t, []string{oracle.TypeURLSubmit}, frame.EventsMap()[oracle.KeyAction])
			require.Equal(t, []string{sutAddr}, frame.EventsMap()[oracle.KeySender])
			require.Equal(t, []string{"oracle"}, frame.EventsMap()[oracle.KeyModule])
			require.Equal(t, []string{"7.25"}, frame.EventsMap()[oracle.EventSubmit+".raw_data"])
			require.Equal(t, []string{sutAddr}, frame.EventsMap()[oracle.EventSubmit+".from_address"])
			require.True(t, h.c.Submitted(tc.r, tc.n, sutAddr))
		})
	}
}

// A provider's second submission for a round replaces its first; quorum
// counts distinct providers.
func TestSubmissionOverwritesAndQuorumCountsProviders(t *testing.T) {
	h := newHarness(t)
	peers := h.addPeers(1)
	r := h.register(newDoc(2, sutAddr, peers[0]))
	res, _ := h.submit(r, 1, "1")
	require.Zero(t, res.Code)
	res, _ = h.submit(r, 1, "2")
	require.Zero(t, res.Code)
	b := h.block()
	require.Len(t, b.Delivered, 2)
	require.Zero(t, b.Delivered[0].Code)
	require.Zero(t, b.Delivered[1].Code)
	subs := h.submissions(r, 1)
	require.Len(t, subs, 1)
	require.Equal(t, "2", subs[0].GetRawData())
	require.Empty(t, h.block().Completes, "one provider twice is no quorum of two")
}

// Register, Update and their rules (ORACLE-SPEC 4.4).
func TestRegisterAndUpdate(t *testing.T) {
	h := newHarness(t)
	peers := h.addPeers(2)
	doc := newDoc(1, sutAddr)
	doc.RequestId, doc.Nonce = 42, 9 // both ignored
	r1 := h.register(doc)
	r2 := h.register(newDoc(2, sutAddr, peers[0]))
	require.Equal(t, []uint64{1, 2}, []uint64{r1, r2}, "ids are 1, 2, …")
	got, ok := h.c.Doc(r1)
	require.True(t, ok)
	require.Zero(t, got.GetNonce(), "a new doc starts at nonce 0")

	invalid := func(mut func(*oraclev1.OracleRequestDoc)) *oraclev1.OracleRequestDoc {
		d := newDoc(1, sutAddr)
		mut(d)
		return d
	}
	for name, d := range map[string]*oraclev1.OracleRequestDoc{
		"no oracle type":    invalid(func(d *oraclev1.OracleRequestDoc) { d.OracleType = 0 }),
		"no name":           invalid(func(d *oraclev1.OracleRequestDoc) { d.Name = "" }),
		"no endpoint":       invalid(func(d *oraclev1.OracleRequestDoc) { d.Endpoints = nil }),
		"no rule":           invalid(func(d *oraclev1.OracleRequestDoc) { d.AggregationRule = 0 }),
		"no accounts":       invalid(func(d *oraclev1.OracleRequestDoc) { d.AccountList = nil }),
		"bad account":       invalid(func(d *oraclev1.OracleRequestDoc) { d.AccountList = []string{"guru1bad"} }),
		"quorum 0":          invalid(func(d *oraclev1.OracleRequestDoc) { d.Quorum = 0 }),
		"quorum > accounts": invalid(func(d *oraclev1.OracleRequestDoc) { d.Quorum = 2 }),
		"no status":         invalid(func(d *oraclev1.OracleRequestDoc) { d.Status = 0 }),
	} {
		adm, err := h.c.Register(d)
		require.NoError(t, err)
		require.True(t, adm.Admitted(), name)
		b := h.block()
		require.Equal(t, uint32(18), b.Delivered[0].Code, name)
		require.Contains(t, b.Delivered[0].Log, "invalid request document", name)
	}
	require.Len(t, h.c.Docs(), 2, "no invalid doc was stored")

	// The SUT is not the moderator.
	res, _ := h.c.BroadcastTxSync(sutTx(t, sutEnv(0), tx.RegisterMsg(sutAddr, newDoc(1, sutAddr))))
	require.Zero(t, res.Code)
	b := h.block()
	require.Equal(t, uint32(4), b.Delivered[0].Code)
	require.Contains(t, b.Delivered[0].Log, "is not the moderator: unauthorized")

	// Update merges non-zero fields; name, description, type and nonce
	// never change.
	upd := &oraclev1.OracleRequestDoc{RequestId: r2, Name: "other", Description: "other", OracleType: 2, Nonce: 77,
		Period: 30, AccountList: []string{peers[1], sutAddr, peers[0]}, Quorum: 3,
		Endpoints:       []*oraclev1.OracleEndpoint{{Url: "http://a", ParseRule: "x"}, {Url: "http://b", ParseRule: "y"}},
		AggregationRule: oraclev1.AggregationRule_AGGREGATION_RULE_MEDIAN}
	adm, err := h.c.Update(upd, "move")
	require.NoError(t, err)
	require.True(t, adm.Admitted())
	b = h.block()
	require.Zero(t, b.Delivered[0].Code, b.Delivered[0].Log)
	got, _ = h.c.Doc(r2)
	want := newDoc(3, peers[1], sutAddr, peers[0])
	want.RequestId, want.Period, want.Endpoints = r2, 30, upd.Endpoints
	want.AggregationRule = oraclev1.AggregationRule_AGGREGATION_RULE_MEDIAN
	require.True(t, proto.Equal(want, got), "got %v", got)
	require.Equal(t, []history.Doc{records.DocFromProto(want)}, b.Delivered[0].Docs, "the deliver record has the doc that results")
	frame := b.Frames[1]
	require.Equal(t, []string{"77"}, frame.EventsMap()[oracle.EventUpdate+".nonce"], "the event echoes the message's nonce")
	require.Equal(t, []string{"2"}, frame.EventsMap()[oracle.KeyUpdateID])

	// A merge that breaks a rule is refused; an unknown doc too.
	adm, _ = h.c.Update(&oraclev1.OracleRequestDoc{RequestId: r1, Quorum: 5}, "")
	require.True(t, adm.Admitted())
	adm, _ = h.c.Update(&oraclev1.OracleRequestDoc{RequestId: 99, Period: 5}, "")
	require.True(t, adm.Admitted())
	b = h.block()
	require.Contains(t, b.Delivered[0].Log, "quorum 5 not in [1, 1]")
	require.Contains(t, b.Delivered[1].Log, "request document not found")

	// Disable is final.
	_, err = h.c.Disable(r1, "done")
	require.NoError(t, err)
	b = h.block()
	require.Zero(t, b.Delivered[0].Code)
	got, _ = h.c.Doc(r1)
	require.Equal(t, oraclev1.RequestStatus_REQUEST_STATUS_DISABLED, got.GetStatus())
	_, err = h.c.Update(&oraclev1.OracleRequestDoc{RequestId: r1, Status: oraclev1.RequestStatus_REQUEST_STATUS_ENABLED}, "")
	require.NoError(t, err)
	b = h.block()
	require.Equal(t, uint32(18), b.Delivered[0].Code)
	require.Contains(t, b.Delivered[0].Log, "disabled")

	// The bogus-nonce update changes nothing but echoes its nonce.
	before, _ := h.c.Doc(r2)
	_, err = h.c.BogusNonceUpdate(r2, 1234)
	require.NoError(t, err)
	b = h.block()
	require.Zero(t, b.Delivered[0].Code)
	after, _ := h.c.Doc(r2)
	require.True(t, proto.Equal(before, after))
	require.Equal(t, []string{"1234"}, b.Frames[1].EventsMap()[oracle.EventUpdate+".nonce"])

	ops := h.events(history.KindOp)
	require.Equal(t, history.OpBogusUpdate, ops[len(ops)-1].Op.Action)
	require.Equal(t, uint64(1234), ops[len(ops)-1].Op.Doc.Nonce)
}

// A tx's messages are all or nothing.
func TestMessagesAreAtomic(t *testing.T) {
	h := newHarness(t)
	mod := modKey.PubKey().Address()
	adm, err := moderatorTx(h.c, tx.RegisterMsg(mod, newDoc(1, sutAddr)),
		tx.UpdateMsg(mod, &oraclev1.OracleRequestDoc{RequestId: 1, Quorum: 9}, ""))
	require.NoError(t, err)
	require.True(t, adm.Admitted())
	b := h.block()
	require.Equal(t, uint32(18), b.Delivered[0].Code)
	require.Contains(t, b.Delivered[0].Log, "message index: 1: invalid request document")
	require.Empty(t, h.c.Docs(), "the register rolled back with the failed update")
	require.Empty(t, b.Delivered[0].Docs)

	adm, err = moderatorTx(h.c, tx.RegisterMsg(mod, newDoc(1, sutAddr)), tx.RegisterMsg(mod, newDoc(1, sutAddr)))
	require.NoError(t, err)
	require.True(t, adm.Admitted())
	b = h.block()
	require.Zero(t, b.Delivered[0].Code)
	require.Len(t, b.Delivered[0].Docs, 2)
	require.Equal(t, []string{"1", "2"}, b.Frames[1].EventsMap()[oracle.KeyRegisterID], "one tx, two register events")
}

// Quorum and aggregation at BeginBlock (ORACLE-SPEC 4.5).
func TestAggregationAtBeginBlock(t *testing.T) {
	h := newHarness(t)
	peers := h.addPeers(3)
	mk := func(quorum uint32, rule oraclev1.AggregationRule) uint64 {
		d := newDoc(quorum, sutAddr, peers[0], peers[1], peers[2])
		d.AggregationRule = rule
		return h.register(d)
	}
	avg := mk(4, oraclev1.AggregationRule_AGGREGATION_RULE_AVG)
	mn := mk(3, oraclev1.AggregationRule_AGGREGATION_RULE_MIN)
	mx := mk(2, oraclev1.AggregationRule_AGGREGATION_RULE_MAX)
	medOdd := mk(3, oraclev1.AggregationRule_AGGREGATION_RULE_MEDIAN)
	medEven := mk(4, oraclev1.AggregationRule_AGGREGATION_RULE_MEDIAN)
	values := map[uint64][]string{
		avg:     {"1", "2", "2", "2"},    // 7 / 4
		mn:      {"10.5", "-3", "x"},     // x skipped, counted
		mx:      {"1.000000000001", "1"}, // exact decimals
		medOdd:  {"5", "1", "3"},
		medEven: {"4", "1", "3", "2"}, // (2 + 3) / 2
	}
	for _, r := range []uint64{avg, mn, mx, medOdd, medEven} {
		vs := values[r]
		res, _ := h.submit(r, 1, vs[0])
		require.Zero(t, res.Code)
		for i, v := range vs[1:] {
			adms, err := h.c.PeerSubmit(h.peers[i], r, history.PeerPrompt, v)
			require.NoError(t, err)
			require.True(t, adms[0].Admitted())
		}
	}
	b := h.block()
	require.Empty(t, b.Completes, "the block that commits the quorum never completes the round")
	require.Len(t, b.Frames[0].EventsMap(), 1, "a NewBlock without completes has only tm.event")
	b = h.block()
	require.Len(t, b.Completes, 5, "several requests complete in one block")
	want := []struct {
		r     uint64
		raw   string
		unpar int
	}{{avg, "1.75", 0}, {mn, "-3", 1}, {mx, "1.000000000001", 0}, {medOdd, "3", 0}, {medEven, "2.5", 0}}
	for i, w := range want {
		c := b.Completes[i]
		require.Equal(t, w.r, c.RequestID, "ascending request id")
		require.Equal(t, uint64(1), c.Nonce)
		require.Equal(t, w.raw, c.RawData)
		require.Equal(t, w.unpar, c.Unparsable)
		require.Equal(t, b.Height, c.BlockHeight)
		require.Equal(t, b.Time.Unix(), c.BlockTime)
		require.Len(t, c.Providers, len(values[w.r]))
		got, _ := h.c.Doc(w.r)
		require.Equal(t, uint64(1), got.GetNonce())
		data, err := abciquery.DataRequest(w.r)
		q := h.query(abciquery.PathData, data, err)
		require.Nil(t, q.Err())
		ds, err := abciquery.DecodeDataResponse(q.Response.Value)
		require.NoError(t, err)
		require.Equal(t, w.raw, ds.GetRawData())
		require.Equal(t, uint64(b.Height), ds.GetBlockHeight())
	}
	// The NewBlock frame lines the entries up by index.
	ev := b.Frames[0].EventsMap()
	require.Equal(t, []string{"1", "2", "3", "4", "5"}, ev[oracle.KeyCompleteID])
	require.Equal(t, []string{"1", "1", "1", "1", "1"}, ev[oracle.KeyCompleteNonce])
	require.Equal(t, []string{"1.75", "-3", "1.000000000001", "3", "2.5"}, ev[oracle.KeyCompleteRawData])
	require.Len(t, ev[oracle.KeyCompleteBlockTime], 5)
	require.Equal(t, []string{"BeginBlock", "BeginBlock", "BeginBlock", "BeginBlock", "BeginBlock"}, ev[oracle.KeyCompleteMode])
	entries, errs := core.CompleteEntries(ev)
	require.Empty(t, errs)
	require.Len(t, entries, 5)
	require.Equal(t, b.Time.Truncate(time.Second), entries[0].BlockTime)

	// The next round starts empty; a submission for the old round fails.
	res, _ := h.submit(avg, 1, "9")
	require.Zero(t, res.Code)
	b = h.block()
	require.Contains(t, b.Delivered[0].Log, "nonce is not correct")
	require.Empty(t, h.submissions(avg, 2))
	require.Len(t, h.submissions(avg, 1), 4, "a completed round's submissions stay queryable")
}

func TestNoAggregationWhenPausedOrDisabledOrOff(t *testing.T) {
	for _, off := range []bool{false, true} {
		h := newHarness(t, func(p *Params) { p.EnableOracle = !off })
		r := h.register(newDoc(1, sutAddr))
		if !off {
			_, err := h.c.Update(&oraclev1.OracleRequestDoc{RequestId: r, Status: oraclev1.RequestStatus_REQUEST_STATUS_PAUSED}, "")
			require.NoError(t, err)
			h.block()
		}
		res, _ := h.submit(r, 1, "1")
		require.Zero(t, res.Code)
		h.block()
		require.True(t, h.c.Submitted(r, 1, sutAddr))
		for i := 0; i < 3; i++ {
			require.Empty(t, h.block().Completes)
		}
		require.Zero(t, h.c.Nonce(r))
	}
}

func TestAggregateRendering(t *testing.T) {
	for _, tc := range []struct {
		rule   oraclev1.AggregationRule
		values []string
		want   string
		unpar  int
	}{
		{oraclev1.AggregationRule_AGGREGATION_RULE_AVG, []string{"1", "2"}, "1.5", 0},
		{oraclev1.AggregationRule_AGGREGATION_RULE_AVG, []string{"1", "1", "2"}, "1.333333333333333333", 0},
		{oraclev1.AggregationRule_AGGREGATION_RULE_AVG, []string{"2", "2", "1"}, "1.666666666666666667", 0},
		{oraclev1.AggregationRule_AGGREGATION_RULE_AVG, []string{"-0.5", "0.5"}, "0", 0},
		{oraclev1.AggregationRule_AGGREGATION_RULE_UNSPECIFIED, []string{"3", "5"}, "4", 0},
		{oraclev1.AggregationRule_AGGREGATION_RULE_MAX, []string{"1e3", "+2", ".5", "5.", "7", "", "0x1"}, "7", 6},
		{oraclev1.AggregationRule_AGGREGATION_RULE_MIN, []string{"null", "true"}, "", 2},
		{oraclev1.AggregationRule_AGGREGATION_RULE_MEDIAN, []string{"12345.678901234", "12345.678901235"}, "12345.6789012345", 0},
	} {
		got, unpar := aggregate(tc.rule, tc.values)
		require.Equal(t, tc.want, got, "%v %v", tc.rule, tc.values)
		require.Equal(t, tc.unpar, unpar)
	}
}

// Commit and recheck (ORACLE-SPEC 4.2 steps 3–4) and F13.
func TestRecheckAndEviction(t *testing.T) {
	h := newHarness(t, func(p *Params) { p.MaxBlockTxs = 1 })
	r := h.register(newDoc(1, sutAddr))
	var hashes []string
	for i := 0; i < 3; i++ {
		res, rpcErr := h.submit(r, 1, "1")
		require.Nil(t, rpcErr)
		require.Zero(t, res.Code)
		hashes = append(hashes, res.Hash.String())
	}
	// F13 drops the first: the check state keeps its sequence.
	require.True(t, h.c.Evict(hashes[0]))
	require.False(t, h.c.Evict(hashes[0]))
	acc, _ := h.c.Account(sutAddr)
	require.Equal(t, uint64(3), acc.CheckSequence)
	ev := h.events(history.KindEvict)
	require.Len(t, ev, 1)
	require.Equal(t, history.EvictFault, ev[0].Evict.Cause)
	require.Equal(t, uint64(0), ev[0].Evict.Sequence)

	// The block takes seq 1 (code 32 at the ante: the committed sequence
	// is 0); the recheck drops seq 2.
	b := h.block()
	require.Len(t, b.Delivered, 1)
	require.Equal(t, uint32(32), b.Delivered[0].Code)
	require.Contains(t, b.Delivered[0].Log, "account sequence mismatch, expected 0, got 1")
	require.Len(t, b.Evicted, 1)
	require.Equal(t, history.EvictRecheck, b.Evicted[0].Cause)
	require.Equal(t, hashes[2], b.Evicted[0].Hash)
	require.Equal(t, uint32(32), b.Evicted[0].Code)
	require.Empty(t, h.c.Mempool())
	acc, _ = h.c.Account(sutAddr)
	require.Zero(t, acc.Sequence)
	require.Zero(t, acc.CheckSequence, "after the commit the check state is the committed state")
	for _, hash := range hashes {
		var key [32]byte
		_, err := hex.Decode(key[:], []byte(hash))
		require.NoError(t, err)
		require.False(t, h.c.cache.has(key), "evicted and failed txs leave the cache")
	}

	// A resynced daemon starts again at 0.
	res, _ := h.c.BroadcastTxSync(sutTx(t, sutEnv(0), tx.SubmissionMsg(sutAddr, r, 1, "1")))
	require.Zero(t, res.Code)
}

// Recheck keeps valid txs in order and moves the check sequence past them.
func TestRecheckKeepsValidTxs(t *testing.T) {
	h := newHarness(t, func(p *Params) { p.MaxBlockTxs = 2 })
	r := h.register(newDoc(1, sutAddr))
	for i := 0; i < 5; i++ {
		res, _ := h.submit(r, 1, "1")
		require.Zero(t, res.Code)
	}
	b := h.block()
	require.Len(t, b.Delivered, 2)
	require.Empty(t, b.Evicted)
	require.Len(t, h.c.Mempool(), 3)
	acc, _ := h.c.Account(sutAddr)
	require.Equal(t, uint64(2), acc.Sequence)
	require.Equal(t, uint64(5), acc.CheckSequence)
	require.Equal(t, []uint64{2, 3, 4}, []uint64{h.c.Mempool()[0].Sequence, h.c.Mempool()[1].Sequence, h.c.Mempool()[2].Sequence})
}

// The frames of a block (ORACLE-SPEC 4.6): NewBlock first, one Tx frame
// per included tx, each matching exactly the queries it should.
func TestFramesAndQueries(t *testing.T) {
	h := newHarness(t)
	_, err := h.c.Register(newDoc(1, sutAddr))
	require.NoError(t, err)
	b := h.block()
	require.Len(t, b.Frames, 2)
	reg, upd, cmp := mustQuery(t, oracle.QueryRegister), mustQuery(t, oracle.QueryUpdate), mustQuery(t, oracle.QueryComplete)
	nb, txf := b.Frames[0], b.Frames[1]
	require.Equal(t, cometrpc.TMEventNewBlock, nb.Type)
	require.False(t, Matches(cmp, nb), "a NewBlock frame without a complete matches no query")
	require.Equal(t, cometrpc.TMEventTx, txf.Type)
	require.True(t, Matches(reg, txf))
	require.False(t, Matches(upd, txf))
	require.False(t, Matches(cmp, txf))
	require.Equal(t, []string{b.Delivered[0].Hash}, txf.EventsMap()[oracle.KeyTxHash])
	require.Equal(t, []string{"1"}, txf.EventsMap()[oracle.KeyTxHeight])
	require.Equal(t, []string{"1"}, txf.EventsMap()[oracle.KeyRegisterID])
	for _, k := range []string{"oracle_type", "name", "description", "period", "account_list", "endpoints",
		"aggregation_rule", "status"} {
		require.Len(t, txf.EventsMap()[oracle.EventRegister+"."+k], 1, k)
	}
	ids, errs := core.RegisterIDs(txf.EventsMap())
	require.Empty(t, errs)
	require.Equal(t, []uint64{1}, ids)

	// The JSON a subscriber gets decodes as CometBFT's client reads it.
	resp, err := txf.Response(cometrpc.IntID(0), oracle.QueryRegister)
	require.NoError(t, err)
	ev, err := cometrpc.DecodeEvent(resp.Result)
	require.NoError(t, err)
	require.Equal(t, oracle.QueryRegister, ev.Query)
	data, err := ev.Data.Tx()
	require.NoError(t, err)
	require.Equal(t, int64(1), int64(data.TxResult.Height))
	require.Zero(t, data.TxResult.Result.Code)
	require.Equal(t, b.Delivered[0].Hash, tx.Hash(data.TxResult.Tx))
	rec := txf.Record()
	require.Equal(t, txf.EventsMap(), rec.Events)
	require.Equal(t, h.now, rec.Published)

	res, _ := h.submit(1, 1, "1")
	require.Zero(t, res.Code)
	b = h.block()
	require.False(t, Matches(reg, b.Frames[1]) || Matches(upd, b.Frames[1]) || Matches(cmp, b.Frames[1]),
		"a submission's frame matches none of the three queries")
	b = h.block()
	require.True(t, Matches(cmp, b.Frames[0]))
	resp, err = b.Frames[0].Response(cometrpc.IntID(2), oracle.QueryComplete)
	require.NoError(t, err)
	ev, err = cometrpc.DecodeEvent(resp.Result)
	require.NoError(t, err)
	nbData, err := ev.Data.NewBlock()
	require.NoError(t, err)
	require.Equal(t, int64(3), int64(nbData.Block.Header.Height))
	require.Equal(t, oracle.DefaultChainID, nbData.Block.Header.ChainID)
	require.Equal(t, b.Time, nbData.Block.Header.Time)
	require.Len(t, nbData.ResultFinalizeBlock.Events, 1)
}

func mustQuery(t *testing.T, s string) *cometrpc.Query {
	t.Helper()
	q, err := cometrpc.ParseQuery(s)
	require.NoError(t, err)
	return q
}

// F16 and block-time monotonicity.
func TestBlockTimeSkew(t *testing.T) {
	h := newHarness(t)
	b := h.block()
	require.Equal(t, genesis.Add(time.Second), b.Time)
	h.c.SetBlockTimeSkew(-10 * time.Second)
	b = h.block()
	require.Equal(t, genesis.Add(time.Second+time.Millisecond), b.Time, "a block time never goes back")
	h.c.SetBlockTimeSkew(5 * time.Second)
	b = h.block()
	require.Equal(t, genesis.Add(8*time.Second), b.Time)
	st := h.c.Status()
	require.Equal(t, int64(3), int64(st.SyncInfo.LatestBlockHeight))
	require.Equal(t, b.Time, st.SyncInfo.LatestBlockTime)
	require.Equal(t, genesis, st.SyncInfo.EarliestBlockTime)
	require.Equal(t, oracle.DefaultChainID, st.NodeInfo.Network)
}

// The frame's own matcher agrees with the events map it builds, for every
// frame of a busy run and queries on every kind of key.
func TestFrameLookupAgreesWithItsEventsMap(t *testing.T) {
	h := newHarness(t)
	peers := h.addPeers(2)
	r := h.register(newDoc(2, sutAddr, peers[0], peers[1]))
	queries := []string{oracle.QueryRegister, oracle.QueryUpdate, oracle.QueryComplete,
		"tm.event='Tx'", "tm.event='NewBlock'", "tx.height='3'", "tx.hash EXISTS", "submit_oracle_data.nonce='1'",
		"message.sender='" + sutAddr + "'", "message EXISTS", "message.action.x EXISTS", "tx EXISTS",
		"complete_oracle_data_set.raw_data='1.5'", "submit_oracle_data.raw_data='1' AND tm.event='Tx'",
		"message.action='" + oracle.TypeURLSubmit + "'", "message.module='oracle'", "submit_oracle_data.request_id='1'",
		"submit_oracle_data.from_address='" + sutAddr + "'", "submit_oracle_data.nonce='9'", "submit_oracle_data.sender EXISTS",
		"submit_oracle_data.raw_data.x EXISTS"}
	var frames []*Frame
	for i := 0; i < 4; i++ {
		_, err := h.c.PeerSubmit(h.peers[0], r, history.PeerDuplicate, "1")
		require.NoError(t, err)
		_, _ = h.submit(r, h.c.Nonce(r)+1, "2")
		_, _ = h.submit(r, h.c.Nonce(r)+9, "3") // fails in the block: no events
		_, err = h.c.BogusNonceUpdate(r, 5)
		require.NoError(t, err)
		frames = append(frames, h.block().Frames...)
	}
	matched := 0
	for _, s := range queries {
		q := mustQuery(t, s)
		for _, f := range frames {
			want := q.Matches(f.EventsMap())
			require.Equal(t, want, Matches(q, f), "%s on %s frame %d/%d", s, f.Type, f.Height, f.Index)
			if want {
				matched++
			}
		}
	}
	require.Greater(t, matched, 20)
	failed := 0
	for _, f := range frames {
		if f.code != 0 {
			failed++
		}
	}
	require.Positive(t, failed, "a failed submission's frame is looked up too")
}

// ratAggregate is the definition in rationals, for the property test of
// the fixed-point arithmetic.
func ratAggregate(rule oraclev1.AggregationRule, values []string) string {
	var nums []*big.Rat
	for _, v := range values {
		if _, _, _, ok := splitDecimal(v); ok {
			r, _ := new(big.Rat).SetString(v)
			nums = append(nums, r)
		}
	}
	if len(nums) == 0 {
		return ""
	}
	var out *big.Rat
	switch rule {
	case oraclev1.AggregationRule_AGGREGATION_RULE_MIN:
		out = slices.MinFunc(nums, (*big.Rat).Cmp)
	case oraclev1.AggregationRule_AGGREGATION_RULE_MAX:
		out = slices.MaxFunc(nums, (*big.Rat).Cmp)
	case oraclev1.AggregationRule_AGGREGATION_RULE_MEDIAN:
		slices.SortFunc(nums, (*big.Rat).Cmp)
		out = nums[len(nums)/2]
		if len(nums)%2 == 0 {
			out = new(big.Rat).Add(nums[len(nums)/2-1], out)
			out.Quo(out, big.NewRat(2, 1))
		}
	default:
		out = new(big.Rat)
		for _, n := range nums {
			out.Add(out, n)
		}
		out.Quo(out, big.NewRat(int64(len(nums)), 1))
	}
	s := out.FloatString(aggregateDigits) // rounds half away from zero
	s = strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
	if s == "-0" || s == "" {
		s = "0"
	}
	return s
}

func TestAggregateMatchesRationalArithmetic(t *testing.T) {
	value := rapid.OneOf(rapid.StringMatching(`-?[0-9]{1,25}(\.[0-9]{1,25})?`), rapid.SampledFrom([]string{"x", "", "1e5", ".5"}))
	rule := rapid.SampledFrom([]oraclev1.AggregationRule{0, 1, 2, 3, 4})
	rapid.Check(t, func(rt *rapid.T) {
		vs := rapid.SliceOfN(value, 1, 7).Draw(rt, "values")
		r := rule.Draw(rt, "rule")
		got, _ := aggregate(r, vs)
		require.Equal(rt, ratAggregate(r, vs), got)
	})
}

// The machine-word path gives the big-integer path's string whenever it
// takes a round, and takes the rounds the simulator makes.
func TestAggregateSmallMatchesBig(t *testing.T) {
	value := rapid.StringMatching(`-?[0-9]{1,20}(\.[0-9]{1,20})?`)
	rule := rapid.SampledFrom([]oraclev1.AggregationRule{0, 1, 2, 3, 4})
	rapid.Check(t, func(rt *rapid.T) {
		vs := rapid.SliceOfN(value, 1, 8).Draw(rt, "values")
		r := rule.Draw(rt, "rule")
		var decs []dec
		scale := 0
		for _, v := range vs {
			neg, i, f, ok := splitDecimal(v)
			require.True(rt, ok)
			decs = append(decs, dec{i, f, neg})
			u, ok := decs[len(decs)-1].uint()
			pu, err := strconv.ParseUint(i+f, 10, 64)
			require.Equal(rt, err == nil, ok, "uint overflows as ParseUint does")
			if ok {
				require.Equal(rt, pu, u)
			}
			scale = max(scale, len(f))
		}
		want := aggregateBig(r, decs, scale)
		if got, ok := aggregateSmall(r, decs, scale); ok {
			require.Equal(rt, want, got)
		}
		got, _ := aggregate(r, vs)
		require.Equal(rt, ratAggregate(r, vs), got)
	})
	_, ok := aggregateSmall(oraclev1.AggregationRule_AGGREGATION_RULE_AVG,
		[]dec{{"1042", "17", false}, {"101", "5", false}, {"99", "", false}}, 2)
	require.True(t, ok, "a round of prices is small")
	// Exact halves and the carry out of the 18th digit, which random
	// values seldom hit.
	for _, vs := range [][]string{
		{"0.000000000000000001", "0"},
		{"0.9999999999999999995"},
		{"1.9999999999999999994"},
		{"2", "3"},
		{"0.0000000000000000015"},
		{"18446744073709551615"},
		{"18446744073709551615", "1"},
		{"1844674407370955161.5", "0.5"},
	} {
		for _, r := range []oraclev1.AggregationRule{0, 1, 2, 3, 4} {
			got, _ := aggregate(r, vs)
			require.Equal(t, ratAggregate(r, vs), got, "%v %v", r, vs)
		}
	}
}

// A failed tx rolls back every submission its earlier messages made, in
// place or inserted, in any order.
func TestFailedTxRollsBackSubmissions(t *testing.T) {
	h := newHarness(t)
	peers := h.addPeers(3)
	r := h.register(newDoc(4, sutAddr, peers[0], peers[1], peers[2]))
	res, _ := h.submit(r, 1, "1") // the SUT's own value, to be replaced
	require.Zero(t, res.Code)
	h.block()
	before := h.submissions(r, 1)
	require.Len(t, before, 1)

	// The SUT (authorised) writes its own value again and, as provider,
	// two peers' slots, then a message that fails.
	as := func(provider, v string) proto.Message {
		m := tx.SubmissionMsg(sutAddr, r, 1, v)
		m.DataSet.Provider = provider
		return m
	}
	msgs := []proto.Message{as(peers[2], "x"), as(sutAddr, "2"), as(peers[0], "y"), tx.SubmissionMsg(sutAddr, r, 7, "bad")}
	res, _ = h.c.BroadcastTxSync(sutTx(t, sutEnv(h.seq), msgs...))
	require.Zero(t, res.Code)
	h.seq++
	b := h.block()
	require.Contains(t, b.Delivered[0].Log, "message index: 3: nonce is not correct")
	after := h.submissions(r, 1)
	require.Len(t, after, 1)
	require.True(t, proto.Equal(before[0], after[0]), "rolled back to %v", after)

	// Without the failing message every write stays.
	res, _ = h.c.BroadcastTxSync(sutTx(t, sutEnv(h.seq), msgs[:3]...))
	require.Zero(t, res.Code)
	b = h.block()
	require.Zero(t, b.Delivered[0].Code, b.Delivered[0].Log)
	require.Len(t, h.submissions(r, 1), 3)
	events := b.Frames[1].EventsMap()
	require.Equal(t, []string{"x", "2", "y"}, events[oracle.EventSubmit+".raw_data"], "events in message order")
}

// Only the last KeepRounds completed rounds keep their submissions.
func TestKeepRounds(t *testing.T) {
	h := newHarness(t, func(p *Params) { p.KeepRounds = 2 })
	r := h.register(newDoc(1, sutAddr))
	for n := uint64(1); n <= 4; n++ {
		res, _ := h.submit(r, n, "1")
		require.Zero(t, res.Code)
		h.block()
		require.Len(t, h.block().Completes, 1)
	}
	require.Equal(t, uint64(4), h.c.Nonce(r))
	require.Empty(t, h.submissions(r, 1))
	require.Empty(t, h.submissions(r, 2))
	require.Len(t, h.submissions(r, 3), 1)
	require.Len(t, h.submissions(r, 4), 1)
	require.False(t, h.c.Submitted(r, 2, sutAddr))
	require.True(t, h.c.Submitted(r, 3, sutAddr))
	require.Equal(t, uint64(1000), DefaultParams().KeepRounds)
}

// A round's list can be emptied and set again (an undone first
// submission); forgotten rounds answer nothing and take no place.
func TestRoundsForgetAndDrop(t *testing.T) {
	var r rounds
	r.set(1, []kept{{provider: "a"}})
	r.drop(1)
	require.Nil(t, r.get(1))
	r.set(1, []kept{{provider: "b"}})
	r.set(3, []kept{{provider: "c"}})
	require.Equal(t, "b", r.get(1)[0].provider)
	require.Nil(t, r.get(2))
	require.Equal(t, "c", r.get(3)[0].provider)
	require.Nil(t, r.get(4))

	r.forget(2)
	require.Nil(t, r.get(1))
	require.Nil(t, r.get(2))
	require.Equal(t, "c", r.get(3)[0].provider)
	require.Len(t, r.lists, 1, "forgotten rounds leave the slice")
	require.PanicsWithValue(t, "chain: round 2 set after rounds 1–2 were forgotten", func() { r.set(2, nil) })

	r.forget(10) // past every round set: the next one starts after 3
	require.Nil(t, r.get(3))
	r.set(11, []kept{{provider: "d"}})
	require.Equal(t, "d", r.get(11)[0].provider)
}
