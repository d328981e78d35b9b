package chain

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/wire/abciquery"
	"github.com/wsconverge/converge/wire/cometrpc"
	"github.com/wsconverge/converge/wire/keys"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
	"github.com/wsconverge/converge/wire/records"
	"github.com/wsconverge/converge/wire/tx"
)

func keysPriv(seed string) keys.PrivKey { return keys.PrivKeyFromSeed(seed) }

// The peers' behaviours (ORACLE-SPEC 4.7), each with its own key and
// sequence through the mempool.
func TestPeerBehaviours(t *testing.T) {
	h := newHarness(t)
	peers := h.addPeers(4)
	r := h.register(newDoc(4, sutAddr, peers[0], peers[1], peers[2], peers[3]))
	plan := []history.PeerBehaviour{history.PeerPrompt, history.PeerWrongNonce, history.PeerDuplicate, history.PeerAbsent}
	sent := map[history.PeerBehaviour][]Admission{}
	for i, b := range plan {
		adms, err := h.c.PeerSubmit(h.peers[i], r, b, "10")
		require.NoError(t, err)
		sent[b] = adms
	}
	require.Len(t, sent[history.PeerPrompt], 1)
	require.Len(t, sent[history.PeerWrongNonce], 1)
	require.Len(t, sent[history.PeerDuplicate], 2)
	require.Empty(t, sent[history.PeerAbsent])
	for _, adms := range sent {
		for _, a := range adms {
			require.True(t, a.Admitted(), a.Log)
		}
	}
	recs := h.events(history.KindPeer)
	require.Len(t, recs, 4)
	for i, e := range recs {
		p := e.Peer
		require.Equal(t, plan[i], p.Behaviour)
		require.Equal(t, peers[i], p.Provider)
		require.Equal(t, r, p.RequestID)
		require.Len(t, p.Hashes, len(sent[plan[i]]))
	}
	require.Equal(t, uint64(0), recs[1].Peer.Nonce, "a wrong nonce is the completed round, C")
	require.Equal(t, uint64(1), recs[2].Peer.Nonce)

	b := h.block()
	require.Len(t, b.Delivered, 4)
	byHash := map[string]history.Deliver{}
	for _, d := range b.Delivered {
		byHash[d.Hash] = d
		require.Equal(t, history.OriginPeer, d.Origin)
	}
	require.Zero(t, byHash[sent[history.PeerPrompt][0].Hash].Code)
	require.Contains(t, byHash[sent[history.PeerWrongNonce][0].Hash].Log, "nonce is not correct")
	require.Zero(t, byHash[sent[history.PeerDuplicate][0].Hash].Code)
	require.Zero(t, byHash[sent[history.PeerDuplicate][1].Hash].Code, "the duplicate overwrites")
	require.Len(t, h.submissions(r, 1), 2)
	acc, _ := h.c.Account(peers[2])
	require.Equal(t, uint64(2), acc.Sequence, "two txs, two sequences")

	_, err := h.c.PeerSubmit(h.peers[0], r, "sleepy", "1")
	require.Error(t, err)
	_, err = h.c.AddPeer(keys.PrivKey{}, nil)
	require.ErrorIs(t, err, keys.ErrNoKey)
}

// F9: the intruder uses the SUT's next sequence, so the SUT's broadcast
// at that sequence gets code 32; its own tx fails in the block without an
// oracle effect but uses the sequence.
func TestIntruderConsumesTheSUTsSequence(t *testing.T) {
	h := newHarness(t)
	r := h.register(newDoc(1, sutAddr))
	adm, err := h.c.Intrude(sutKey)
	require.NoError(t, err)
	require.True(t, adm.Admitted())
	require.Equal(t, history.OriginIntruder, h.lastCheck().Origin)

	res, _ := h.submit(r, 1, "1")
	require.Equal(t, uint32(oracle.CodeWrongSequence), res.Code)
	require.Contains(t, res.Log, "expected 1, got 0")
	require.Equal(t, oracle.ClassSequenceMismatch, oracle.ClassifyBroadcast(res.Reply()))

	b := h.block()
	require.Len(t, b.Delivered, 1)
	require.Equal(t, history.OriginIntruder, b.Delivered[0].Origin)
	require.Contains(t, b.Delivered[0].Log, "request document not found")
	acc, _ := h.c.Account(sutAddr)
	require.Equal(t, uint64(1), acc.Sequence)
	require.Zero(t, h.c.Nonce(r))
	require.Empty(t, h.submissions(r, 1))

	// After a resync the SUT goes on at 1.
	h.seq = 1
	res, _ = h.submit(r, 1, "1")
	require.Zero(t, res.Code)
	require.Len(t, h.block().Delivered, 1)
	require.Len(t, h.block().Completes, 1)

	_, err = h.c.Intrude(keys.PrivKeyFromSeed("unknown"))
	require.Error(t, err)
}

func TestWorkloadWithoutModerator(t *testing.T) {
	c, err := New(Config{Params: DefaultParams(), Genesis: genesis})
	require.NoError(t, err)
	_, err = c.Register(newDoc(1, sutAddr))
	require.ErrorIs(t, err, ErrNoModerator)
	_, err = c.Update(nil, "")
	require.Error(t, err)

	_, err = New(Config{Params: Params{}})
	require.Error(t, err)
	bad := DefaultParams()
	bad.MinGasPrice = "630000000000agxn"
	_, err = New(Config{Params: bad})
	require.ErrorContains(t, err, "min gas price")
	_, err = New(Config{Params: DefaultParams(), Accounts: []Funding{{Address: "x"}}})
	require.Error(t, err)
	_, err = New(Config{Params: DefaultParams(), Accounts: []Funding{{Address: sutAddr}, {Address: sutAddr}}})
	require.ErrorContains(t, err, "already exists")
}

func TestPeerMixIsAPureFunctionOfItsArguments(t *testing.T) {
	m := DefaultPeerMix()
	counts := map[history.PeerBehaviour]int{}
	for r := uint64(1); r <= 50; r++ {
		for n := uint64(1); n <= 40; n++ {
			p := m.Plan(7, 2, r, n)
			require.Equal(t, p, m.Plan(7, 2, r, n))
			counts[p.Behaviour]++
			switch p.Behaviour {
			case history.PeerAbsent:
				require.Zero(t, p.Delay)
			case history.PeerLate:
				require.GreaterOrEqual(t, p.Delay, m.LateDelay[0])
				require.LessOrEqual(t, p.Delay, m.LateDelay[1])
			default:
				require.LessOrEqual(t, p.Delay, m.PromptDelay[1])
			}
		}
	}
	for _, b := range []history.PeerBehaviour{history.PeerPrompt, history.PeerLate, history.PeerAbsent,
		history.PeerWrongNonce, history.PeerDuplicate} {
		require.Positive(t, counts[b], "2000 draws reach %s", b)
	}
	require.Greater(t, counts[history.PeerPrompt], 1400)
	differ := 0
	for n := uint64(1); n <= 100; n++ {
		if m.Plan(7, 2, 1, n) != m.Plan(8, 2, 1, n) {
			differ++
		}
	}
	require.Greater(t, differ, 50, "another seed is another script")
	for i := 0; i < 100; i++ {
		require.Equal(t, history.PeerPrompt, HealthyPeers().Plan(uint64(i), 0, 1, 1).Behaviour)
		require.LessOrEqual(t, HealthyPeers().Plan(uint64(i), 0, 1, 1).Delay, time.Second)
	}
	require.Equal(t, history.PeerAbsent, PeerMix{}.Plan(1, 0, 1, 1).Behaviour)
}

// The same calls give the same records, hashes and frames.
func TestDeterministic(t *testing.T) {
	// recycle: every block is given back once its frames are read, so its
	// frames and its peers' and the SUT's txs serve the next ones
	// (Recycle); the SUT then broadcasts as a simulator does, its answers
	// in rooms of its own.
	run := func(recycle bool) (string, []string) {
		h := newHarness(t)
		peers := h.addPeers(3)
		var frames, answers []string
		var rooms []*BroadcastRoom
		var hashes [][]byte
		var codes []uint32
		submit := func(r, n uint64, value string) {
			b := sutTx(t, sutEnv(h.seq), tx.SubmissionMsg(sutAddr, r, n, value))
			var res cometrpc.ResultBroadcastTx
			var rpcErr *cometrpc.RPCError
			if recycle {
				rec, decoded, sum := records.DecodeTxSummed(b)
				room := new(BroadcastRoom)
				res, rpcErr = h.c.BroadcastTxSyncRecordedIn(b, decoded, sum, &rec, room)
				rooms = append(rooms, room)
			} else {
				res, rpcErr = h.c.BroadcastTxSync(b)
			}
			require.Nil(t, rpcErr)
			if res.Code == 0 {
				h.seq++
			}
			hashes, codes = append(hashes, res.Hash), append(codes, res.Code)
			answers = append(answers, fmt.Sprintf("%d %X", res.Code, []byte(res.Hash)))
		}
		for i := 0; i < 3; i++ {
			h.register(newDoc(2, sutAddr, peers[0], peers[1], peers[2]))
		}
		for round := 0; round < 20; round++ {
			for r := uint64(1); r <= 3; r++ {
				for i, p := range h.peers {
					plan := DefaultPeerMix().Plan(11, i, r, h.c.Nonce(r)+1)
					_, err := h.c.PeerSubmit(p, r, plan.Behaviour, "1.5")
					require.NoError(t, err)
				}
				submit(r, h.c.Nonce(r)+1, "2.25")
			}
			if round == 7 {
				_, err := h.c.Intrude(sutKey)
				require.NoError(t, err)
			}
			b := h.block()
			for _, f := range b.Frames {
				resp, err := f.Response(cometrpc.IntID(0), "q")
				require.NoError(t, err)
				frames = append(frames, string(resp.Result))
			}
			if recycle {
				h.c.Recycle(b)
				h.c.Recycle(b) // a second time does nothing
				require.Nil(t, b.Frames)
			}
		}
		_, err := h.c.Update(&oraclev1.OracleRequestDoc{RequestId: 2, Period: 3}, "")
		require.NoError(t, err)
		h.block()
		for i, hash := range hashes {
			require.Equal(t, answers[i], fmt.Sprintf("%d %X", codes[i], []byte(hash)), "an answer's hash is never written again")
		}
		if recycle {
			require.NotEmpty(t, rooms)
		}
		return h.rec.Hash(), append(frames, answers...)
	}
	h1, f1 := run(false)
	h2, f2 := run(false)
	require.Equal(t, h1, h2)
	require.Equal(t, f1, f2)
	h3, f3 := run(true)
	require.Equal(t, h1, h3, "recycling changes no record")
	require.Equal(t, f1, f3, "recycling changes no frame")
	require.Greater(t, len(f1), 60)
}

// Records: every admission attempt, action, block, delivery and eviction.
func TestRecords(t *testing.T) {
	h := newHarness(t)
	peers := h.addPeers(1)
	_, err := h.c.Register(newDoc(2, sutAddr, peers[0]))
	require.NoError(t, err)
	h.block()
	_, err = h.c.PeerSubmit(h.peers[0], 1, history.PeerPrompt, "3")
	require.NoError(t, err)
	res, _ := h.submit(1, 1, "5")
	require.Zero(t, res.Code)
	h.block()
	h.block()
	var kinds []history.Kind
	for _, e := range h.rec.Events() {
		kinds = append(kinds, e.Kind)
		require.False(t, e.At.IsZero())
		require.Zero(t, e.Life, "the chain's records belong to no SUT lifetime")
	}
	require.Equal(t, []history.Kind{
		history.KindOp, history.KindCheckTx, history.KindBlock, history.KindDeliver,
		history.KindPeer, history.KindCheckTx, history.KindCheckTx,
		history.KindBlock, history.KindDeliver, history.KindDeliver,
		history.KindBlock,
	}, kinds)
	evs := h.rec.Events()
	require.Equal(t, genesis, evs[0].At)
	require.Equal(t, genesis.Add(time.Second), evs[2].At)
	sut := evs[6].CheckTx
	require.Equal(t, history.OriginSUT, sut.Origin)
	require.Equal(t, []history.Msg{{Type: oracle.TypeURLSubmit, Signer: sutAddr, RequestID: 1, Nonce: 1, RawData: "5",
		Provider: sutAddr, Signature: oracle.SubmissionSignature(1, 1, "5")}}, sut.Tx.Msgs)
	require.Equal(t, []history.Coin{{Denom: "agxn", Amount: "44100000000000000"}}, sut.Tx.Fee)
	require.Equal(t, oracle.DefaultGasLimit, sut.Tx.GasLimit)
	last := evs[len(evs)-1].Block
	require.Len(t, last.Completes, 1)
	require.Equal(t, "4", last.Completes[0].RawData)
	require.ElementsMatch(t, []string{peers[0], sutAddr}, last.Completes[0].Providers)

	// Lines render for each.
	for _, e := range evs {
		require.NotEmpty(t, history.Line(e, genesis))
	}
}

// With OmitRoutine the peers' routine leaves no record and its bytes are
// never built, yet the chain does the same thing: the same Completes, the
// same state, and frames whose tx bytes and hashes, when asked for, are
// those of the same tx built eagerly.
func TestOmitRoutine(t *testing.T) {
	run := func(omit bool) (*harness, []*Block) {
		h := &harness{t: t, now: genesis, rec: history.NewRecorder()}
		c, err := New(Config{Params: DefaultParams(), Genesis: genesis, Now: func() time.Time { return h.now },
			Sink: func(e history.Event) { h.rec.Add(e) }, OmitRoutine: omit, Moderator: modKey,
			Accounts: []Funding{{Address: sutAddr}}})
		require.NoError(t, err)
		h.c = c
		peers := h.addPeers(3)
		r := h.register(newDoc(3, sutAddr, peers[0], peers[1], peers[2]))
		var blocks []*Block
		for round := 0; round < 5; round++ {
			for i, p := range h.peers {
				b := history.PeerPrompt
				if round == 2 && i == 0 {
					b = history.PeerWrongNonce
				}
				_, err := h.c.PeerSubmit(p, r, b, "7")
				require.NoError(t, err)
			}
			_, _ = h.submit(r, h.c.Nonce(r)+1, "8")
			blocks = append(blocks, h.block(), h.block())
		}
		return h, blocks
	}
	full, fullBlocks := run(false)
	lean, leanBlocks := run(true)
	require.Equal(t, full.c.Nonce(1), lean.c.Nonce(1))
	require.Equal(t, full.c.Docs(), lean.c.Docs())
	for i := range fullBlocks {
		require.Equal(t, fullBlocks[i].Completes, leanBlocks[i].Completes)
		require.Len(t, leanBlocks[i].Frames, len(fullBlocks[i].Frames))
		for j, f := range leanBlocks[i].Frames {
			if f.m != nil && f.m.origin == history.OriginPeer && f.code == 0 {
				require.Nil(t, f.m.bytes, "a routine peer tx is never built unless asked for")
			}
			want, err := fullBlocks[i].Frames[j].Data()
			require.NoError(t, err)
			got, err := f.Data()
			require.NoError(t, err)
			require.Equal(t, want, got)
			require.Equal(t, fullBlocks[i].Frames[j].TxHash(), f.TxHash())
		}
	}
	for _, e := range lean.rec.Events() {
		require.False(t, history.Routine(&e), "no routine record: %s", history.Line(e, genesis))
	}
	var wrong int
	for _, e := range lean.events(history.KindPeer) {
		require.Equal(t, history.PeerWrongNonce, e.Peer.Behaviour)
		require.Len(t, e.Peer.Hashes, 1)
		wrong++
	}
	require.Equal(t, 1, wrong)
	require.Less(t, lean.rec.Len(), full.rec.Len())
	// The lean recorder of a full run keeps what the lean run records.
	leanKept := history.NewLeanRecorder()
	for _, e := range full.rec.Events() {
		leanKept.Add(e)
	}
	require.Equal(t, lean.rec.Len(), leanKept.Len())
}

// The chain's own txs take cache slots like any tx, so the LRU keeps the
// same number of the SUT's hashes as CometBFT would.
func TestOwnTxsOccupyTheCache(t *testing.T) {
	h := newHarness(t, func(p *Params) { p.CacheSize = 2 })
	h.addPeers(2)
	r := h.register(newDoc(1, sutAddr, h.peers[0].Address, h.peers[1].Address)) // the register: slot 1
	first := sutTx(t, sutEnv(0), tx.SubmissionMsg(sutAddr, r, 1, "1"))
	res, _ := h.c.BroadcastTxSync(first) // slot 2
	require.Zero(t, res.Code)
	_, rpcErr := h.c.BroadcastTxSync(first)
	require.NotNil(t, rpcErr, "still cached")
	for _, p := range h.peers { // the register, then first, fall out
		_, err := h.c.PeerSubmit(p, r, history.PeerPrompt, "1")
		require.NoError(t, err)
	}
	res, rpcErr = h.c.BroadcastTxSync(first)
	require.Nil(t, rpcErr, "pushed out of the cache by the peers' txs")
	require.Equal(t, uint32(oracle.CodeWrongSequence), res.Code)
}

// The façade calls the chain from many goroutines and encodes frames
// outside its lock: run that under the race detector.
func TestConcurrentUse(t *testing.T) {
	h := newHarness(t)
	h.c.omitRoutine = true
	peers := h.addPeers(2)
	r := h.register(newDoc(2, sutAddr, peers[0], peers[1]))
	var wg sync.WaitGroup
	frames := make(chan *Frame, 1024)
	wg.Add(3)
	go func() { // the block producer and the peers
		defer wg.Done()
		defer close(frames)
		now := genesis.Add(time.Hour)
		for i := 0; i < 50; i++ {
			for _, p := range h.peers {
				_, _ = h.c.PeerSubmit(p, r, history.PeerPrompt, "1")
			}
			now = now.Add(time.Second)
			for _, f := range h.c.ProduceBlock(now).Frames {
				frames <- f
			}
		}
	}()
	go func() { // a subscriber encoding every frame twice
		defer wg.Done()
		q := mustQuery(t, "tm.event='Tx'")
		for f := range frames {
			if Matches(q, f) {
				for j := 0; j < 2; j++ {
					_, err := f.Response(cometrpc.IntID(1), "tm.event='Tx'")
					require.NoError(t, err)
					_ = f.TxHash()
				}
			}
		}
	}()
	go func() { // a daemon's RPC calls
		defer wg.Done()
		for i := 0; i < 100; i++ {
			h.c.Status()
			data, err := abciquery.AccountRequest(sutAddr)
			require.NoError(t, err)
			h.c.ABCIQuery(abciquery.PathAccount, data)
			_, _ = h.c.BroadcastTxSync(sutTx(t, sutEnv(uint64(i)), tx.SubmissionMsg(sutAddr, r, h.c.Nonce(r)+1, "2")))
			_ = h.c.Mempool()
		}
	}()
	wg.Wait()
	require.Positive(t, h.c.Nonce(r))
}
