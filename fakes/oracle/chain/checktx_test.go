package chain

import (
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/wire/cometrpc"
	"github.com/wsconverge/converge/wire/keys"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
	"github.com/wsconverge/converge/wire/records"
	"github.com/wsconverge/converge/wire/tx"
)

// CheckTx's rows of ORACLE-SPEC 4.3, each failing alone, and pairs of
// defects showing that the earlier row answers.
func TestCheckTxRowsInOrder(t *testing.T) {
	submit := func() proto.Message { return tx.SubmissionMsg(sutAddr, 1, 1, "101.5") }
	env := func(mut func(*tx.Envelope)) tx.Envelope {
		e := sutEnv(0)
		if mut != nil {
			mut(&e)
		}
		return e
	}
	lowFee := func(e *tx.Envelope) { e.FeeAmount = "1" }
	lowGas := func(e *tx.Envelope) {
		e.GasLimit = 40000
		e.FeeAmount, _ = oracle.FeeAmount(oracle.DefaultGasPrices, 40000)
	}
	withSig := func(sig string) proto.Message {
		m := tx.SubmissionMsg(sutAddr, 1, 1, "101.5")
		m.DataSet.Signature = sig
		return m
	}
	stranger := keys.PrivKeyFromSeed("stranger")
	cases := []struct {
		name string
		tx   func(h *harness) []byte
		code uint32
		log  string
	}{
		{"admitted", func(h *harness) []byte { return sutTx(t, env(nil), submit()) }, 0, ""},
		{"row 3: not a TxRaw", func(h *harness) []byte { return []byte{0x0a, 0x05} }, 2, "tx parse error"},
		{"row 3: fee amount not an integer", func(h *harness) []byte {
			return sutTx(t, env(func(e *tx.Envelope) { e.FeeAmount = "12a" }), submit())
		}, 2, `invalid fee coin amount "12a": tx parse error`},
		{"row 4: no message", func(h *harness) []byte { return sutTx(t, env(nil)) }, 18, "at least one message"},
		{"row 4: bad address", func(h *harness) []byte {
			return sutTx(t, env(nil), tx.SubmissionMsg("cosmos1xyz", 1, 1, "1"))
		}, 7, "invalid address"},
		{"row 4: request id 0", func(h *harness) []byte {
			return sutTx(t, env(nil), tx.SubmissionMsg(sutAddr, 0, 1, "1"))
		}, 18, "request_id must not be 0"},
		{"row 4: empty raw data", func(h *harness) []byte {
			return sutTx(t, env(nil), tx.SubmissionMsg(sutAddr, 1, 1, ""))
		}, 18, "raw_data must not be empty"},
		{"row 4: empty signature", func(h *harness) []byte { return sutTx(t, env(nil), withSig("")) }, 18,
			"signature must not be empty"},
		{"row 4: two signers", func(h *harness) []byte {
			return sutTx(t, env(nil), submit(), tx.RegisterMsg(modKey.PubKey().Address(), newDoc(1, sutAddr)))
		}, 4, "wrong number of signers"},
		{"row 5: fee too low", func(h *harness) []byte { return sutTx(t, env(lowFee), submit()) }, 13,
			"insufficient fees; got: 1agxn required: 44100000000000000agxn: insufficient fee"},
		{"row 5: no fee", func(h *harness) []byte {
			return sutTx(t, env(func(e *tx.Envelope) { e.FeeAmount = "" }), submit())
		}, 13, "insufficient fee"},
		{"row 5: fee in another denom", func(h *harness) []byte {
			return sutTx(t, env(func(e *tx.Envelope) { e.FeeDenom = "uatom" }), submit())
		}, 13, "got: 44100000000000000uatom"},
		{"row 6: gas too low", func(h *harness) []byte { return sutTx(t, env(lowGas), submit()) }, 11,
			"gasWanted: 40000, gasUsed: 50000: out of gas"},
		{"row 7: unknown signer", func(h *harness) []byte {
			b, err := tx.Build(keys.StandInSigner{Key: stranger}, env(nil),
				tx.SubmissionMsg(stranger.PubKey().Address(), 1, 1, "1"))
			require.NoError(t, err)
			return b.TxBytes
		}, 5, "does not exist: insufficient funds"},
		{"row 7: too poor", func(h *harness) []byte {
			poor := keys.PrivKeyFromSeed("poor")
			_, err := h.c.AddPeer(poor, big.NewInt(10))
			require.NoError(t, err)
			b, err := tx.Build(keys.StandInSigner{Key: poor}, env(nil), tx.SubmissionMsg(poor.PubKey().Address(), 1, 1, "1"))
			require.NoError(t, err)
			return b.TxBytes
		}, 5, "spendable balance 10agxn is smaller than 44100000000000000agxn"},
		{"row 8: wrong sequence", func(h *harness) []byte {
			return sutTx(t, env(func(e *tx.Envelope) { e.Sequence = 3 }), submit())
		}, 32, "account sequence mismatch, expected 0, got 3: incorrect account sequence"},
		{"rows 5 and 8: the fee answers", func(h *harness) []byte {
			return sutTx(t, env(func(e *tx.Envelope) { lowFee(e); e.Sequence = 3 }), submit())
		}, 13, "insufficient fee"},
		{"rows 5 and 6: the fee answers", func(h *harness) []byte {
			return sutTx(t, env(func(e *tx.Envelope) { lowGas(e); e.FeeAmount = "1" }), submit())
		}, 13, "insufficient fee"},
		{"rows 4 and 5: the message answers", func(h *harness) []byte {
			return sutTx(t, env(lowFee), withSig(""))
		}, 18, "signature must not be empty"},
		{"rows 6 and 8: the gas answers", func(h *harness) []byte {
			return sutTx(t, env(func(e *tx.Envelope) { lowGas(e); e.Sequence = 3 }), submit())
		}, 11, "out of gas"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			b := tc.tx(h)
			res, rpcErr := h.c.BroadcastTxSync(b)
			require.Nil(t, rpcErr)
			require.Equal(t, tc.code, res.Code, res.Log)
			require.Equal(t, tx.Hash(b), res.Hash.String())
			acc, _ := h.c.Account(sutAddr)
			rec := h.lastCheck()
			require.Equal(t, history.OriginSUT, rec.Origin)
			require.Equal(t, tc.code, rec.Code)
			require.Equal(t, res.Log, rec.Log)
			require.Equal(t, tx.Hash(b), rec.Tx.Hash)
			if tc.code == 0 {
				require.Empty(t, res.Log)
				require.Empty(t, res.Codespace)
				require.Equal(t, uint64(1), acc.CheckSequence, "admission moves the check sequence")
				require.Equal(t, uint64(0), acc.Sequence, "not the committed one")
				require.Len(t, h.c.Mempool(), 1)
				require.Equal(t, 1, rec.Mempool)
				require.Equal(t, history.SigStandIn, rec.Tx.Sig)
				return
			}
			require.Contains(t, res.Log, tc.log)
			require.Equal(t, "sdk", res.Codespace)
			require.Zero(t, acc.CheckSequence, "a rejection leaves the sequence")
			require.Empty(t, h.c.Mempool())
			require.Zero(t, h.c.cache.len(), "a rejected tx leaves the cache")
			// A rejected tx can be sent again: it meets CheckTx, not the cache.
			_, rpcErr = h.c.BroadcastTxSync(b)
			require.Nil(t, rpcErr)
		})
	}
}

// Rows 1 and 2 answer before CheckTx runs, with CometBFT's JSON-RPC errors.
func TestMempoolFullAndCacheHitAreRPCErrors(t *testing.T) {
	h := newHarness(t, func(p *Params) { p.MempoolSize = 1 })
	r := h.register(newDoc(1, sutAddr))
	first := sutTx(t, sutEnv(0), tx.SubmissionMsg(sutAddr, r, 1, "1"))
	res, rpcErr := h.c.BroadcastTxSync(first)
	require.Nil(t, rpcErr)
	require.Zero(t, res.Code)

	_, rpcErr = h.c.BroadcastTxSync(first)
	require.NotNil(t, rpcErr)
	require.Equal(t, cometrpc.CodeInternalError, rpcErr.Code)
	// Row 1 comes first: with the mempool full even a cached tx is told so.
	require.Equal(t, "mempool is full: number of txs 1 (max: 1), total txs bytes "+itoa(len(first))+" (max: 1073741824)", rpcErr.Data)
	require.Equal(t, oracle.ClassTransient, oracle.ClassifyBroadcast(oracle.ReplyRPCError(rpcErr.Message, rpcErr.Data)))
	require.Equal(t, rpcErr.Data, h.lastCheck().RPCError)

	h.block()
	_, rpcErr = h.c.BroadcastTxSync(first)
	require.NotNil(t, rpcErr, "a committed tx stays in the cache")
	require.Equal(t, oracle.RPCErrTxInCache, rpcErr.Data)
	require.True(t, h.c.Submitted(r, 1, sutAddr))
	require.Equal(t, oracle.ClassAlreadyAdmitted, oracle.ClassifyBroadcast(oracle.ReplyRPCError(rpcErr.Message, rpcErr.Data)))
	acc, _ := h.c.Account(sutAddr)
	require.Equal(t, uint64(1), acc.Sequence)
	require.Equal(t, uint64(1), acc.CheckSequence, "a cache hit moves nothing")
}

func itoa(n int) string { return big.NewInt(int64(n)).String() }

func TestCacheIsLRUOfCacheSize(t *testing.T) {
	h := newHarness(t, func(p *Params) { p.CacheSize = 2 })
	var txs [][]byte
	for i := uint64(0); i < 3; i++ {
		txs = append(txs, sutTx(t, sutEnv(i), tx.SubmissionMsg(sutAddr, 1, 1, "1")))
		res, rpcErr := h.c.BroadcastTxSync(txs[i])
		require.Nil(t, rpcErr)
		require.Zero(t, res.Code)
	}
	require.Equal(t, 2, h.c.cache.len())
	// The oldest hash was dropped: its bytes meet CheckTx again (and its
	// sequence is taken now), the newest still hit the cache.
	res, rpcErr := h.c.BroadcastTxSync(txs[0])
	require.Nil(t, rpcErr)
	require.Equal(t, uint32(oracle.CodeWrongSequence), res.Code)
	_, rpcErr = h.c.BroadcastTxSync(txs[2])
	require.NotNil(t, rpcErr)
	require.Equal(t, oracle.RPCErrTxInCache, rpcErr.Data)
}

// D26's verifying mode: the stand-in signature is refused, a real one
// accepted, and the chain's own actors sign for real.
func TestVerifyingMode(t *testing.T) {
	h := newHarness(t, func(p *Params) { p.VerifySignatures = true })
	msg := tx.SubmissionMsg(sutAddr, 1, 1, "1")
	res, _ := h.c.BroadcastTxSync(sutTx(t, sutEnv(0), msg))
	require.Equal(t, uint32(oracle.CodeUnauthorized), res.Code)
	require.Contains(t, res.Log, "signature verification failed")

	real, err := tx.Build(keys.KeySigner{Key: sutKey}, sutEnv(0), msg)
	require.NoError(t, err)
	res, _ = h.c.BroadcastTxSync(real.TxBytes)
	require.Zero(t, res.Code, res.Log)
	require.Equal(t, history.SigValid, h.lastCheck().Tx.Sig)

	h.addPeers(1)
	r := h.register(newDoc(1, h.peers[0].Address))
	adms, err := h.c.PeerSubmit(h.peers[0], r, history.PeerPrompt, "5")
	require.NoError(t, err)
	require.True(t, adms[0].Admitted(), adms[0].Log)

	// The wrong account number makes a real signature fail too.
	env := sutEnv(1)
	env.AccountNumber = 7
	wrong, err := tx.Build(keys.KeySigner{Key: sutKey}, env, msg)
	require.NoError(t, err)
	res, _ = h.c.BroadcastTxSync(wrong.TxBytes)
	require.Equal(t, uint32(oracle.CodeUnauthorized), res.Code)
}

// F11: the next N SUT attempts answer the injected code with a chain's
// log, then CheckTx answers again; peers are never affected.
func TestInjectedCheckTxCodes(t *testing.T) {
	for _, tc := range []struct {
		code uint32
		log  string
	}{
		{11, "out of gas in location"},
		{13, "insufficient fees; got: 44100000000000000agxn required: 44100000000000001agxn"},
		{18, "invalid request"},
		{5, "insufficient funds"},
		{32, "account sequence mismatch, expected 1, got 0"},
		{20, "mempool is full"},
	} {
		h := newHarness(t)
		require.NoError(t, h.c.InjectCheckTx(tc.code, 2))
		h.addPeers(1)
		r := h.register(newDoc(1, h.peers[0].Address))
		adms, err := h.c.PeerSubmit(h.peers[0], r, history.PeerPrompt, "1")
		require.NoError(t, err)
		require.True(t, adms[0].Admitted(), "peers are not the SUT")
		for i := 0; i < 2; i++ {
			res, rpcErr := h.submit(r, 1, "2")
			require.Nil(t, rpcErr)
			require.Equal(t, tc.code, res.Code)
			require.Contains(t, res.Log, tc.log)
			require.True(t, h.lastCheck().Injected)
		}
		require.Zero(t, h.c.InjectionsLeft())
		res, _ := h.submit(r, 1, "2")
		require.Zero(t, res.Code, res.Log)
		require.False(t, h.lastCheck().Injected)
	}
	h := newHarness(t)
	require.Error(t, h.c.InjectCheckTx(0, 1))
	require.Error(t, h.c.InjectCheckTx(11, -1))
}

func TestMempoolFullFault(t *testing.T) {
	h := newHarness(t)
	h.c.SetMempoolFull(true)
	_, rpcErr := h.submit(1, 1, "1")
	require.NotNil(t, rpcErr)
	require.True(t, strings.HasPrefix(rpcErr.Data, "mempool is full: number of txs 0 (max: 5000)"))
	adm, err := h.c.Register(newDoc(1, sutAddr))
	require.NoError(t, err)
	require.False(t, adm.Admitted(), "F10 turns everyone away")
	h.c.SetMempoolFull(false)
	res, rpcErr := h.submit(1, 1, "1")
	require.Nil(t, rpcErr)
	require.Zero(t, res.Code)
}

// The checktx record checks the SUT's signature (O17): the stand-in or a
// real signature of the right sign doc, a key that is not the signer's,
// another account number, alternating keys.
func TestCheckTxRecordsTheSignatureCheck(t *testing.T) {
	h := newHarness(t)
	msg := tx.SubmissionMsg(sutAddr, 1, 1, "1")
	other := keys.PrivKeyFromSeed("other")
	real, err := tx.Build(keys.KeySigner{Key: sutKey}, sutEnv(0), msg)
	require.NoError(t, err)
	spoof, err := tx.Build(keys.StandInSigner{Key: other}, sutEnv(0), msg)
	require.NoError(t, err)
	wrongAcc := sutEnv(0)
	wrongAcc.AccountNumber = 9
	for _, tc := range []struct {
		b    []byte
		want history.SigCheck
	}{
		{sutTx(t, sutEnv(0), msg), history.SigStandIn},
		{spoof.TxBytes, history.SigInvalid},
		{real.TxBytes, history.SigValid},
		{sutTx(t, wrongAcc, msg), history.SigInvalid},
		{spoof.TxBytes, history.SigInvalid},
		{sutTx(t, sutEnv(5), msg), history.SigStandIn},
	} {
		_, _ = h.c.BroadcastTxSync(tc.b)
		require.Equal(t, tc.want, h.lastCheck().Tx.Sig)
	}
}

// A tx broadcast with the caller's record gives the records (and the
// answers) of one the chain records itself, and leaves the given record as
// it was.
func TestBroadcastTxSyncRecordedRecordsAsTheChain(t *testing.T) {
	play := func(t *testing.T, recorded bool) (string, []*oraclev1.SubmitDataSet) {
		t.Helper()
		h := newHarness(t)
		r := h.register(newDoc(1, sutAddr))
		for i, value := range []string{"1", "2"} {
			b := sutTx(t, sutEnv(uint64(i)), tx.SubmissionMsg(sutAddr, r, uint64(i+1), value))
			if !recorded {
				_, rpcErr := h.c.BroadcastTxSync(b)
				require.Nil(t, rpcErr)
			} else {
				rec, decoded, sum := records.DecodeTxSummed(b)
				given := rec
				given.Msgs = slices.Clone(rec.Msgs)
				_, rpcErr := h.c.BroadcastTxSyncRecorded(b, decoded, sum, &given)
				require.Nil(t, rpcErr)
				require.Equal(t, rec, given, "the given record is the caller's")
			}
			h.block()
		}
		return h.rec.Hash(), h.submissions(r, 1)
	}
	hash, subs := play(t, false)
	hashRec, subsRec := play(t, true)
	require.Equal(t, hash, hashRec)
	require.Len(t, subsRec, 1)
	require.True(t, proto.Equal(subs[0], subsRec[0]))
	want := tx.SubmissionMsg(sutAddr, 1, 1, "1").GetDataSet()
	require.True(t, proto.Equal(want, subsRec[0]), "the round keeps what was submitted: %v", subsRec[0])
}

// AdmitUnverified (the conformance harness's diagnostic mode) lets the
// SUT's message and signature checks pass and counts what it let pass;
// the fee, gas, funds and sequence rows still answer, peers are judged as
// always, and a chain without it answers as before.
func TestAdmitUnverifiedWaivesOnlyTheMessageAndSignatureChecks(t *testing.T) {
	noSig := func() proto.Message {
		m := tx.SubmissionMsg(sutAddr, 1, 1, "101.5")
		m.DataSet.Signature = ""
		return m
	}
	plain := newHarness(t)
	res, _ := plain.c.BroadcastTxSync(sutTx(t, sutEnv(0), noSig()))
	require.Equal(t, uint32(oracle.CodeInvalidRequest), res.Code)
	require.Empty(t, plain.c.Waived())

	h := newHarness(t, func(p *Params) { p.AdmitUnverified = true; p.VerifySignatures = true })
	res, _ = h.c.BroadcastTxSync(sutTx(t, sutEnv(0), noSig()))
	require.Zero(t, res.Code, res.Log)
	require.Len(t, h.c.Mempool(), 1)
	require.Zero(t, h.lastCheck().Code, "the record says what the daemon was told")

	// A wrong sequence is still a code 32, and its waived checks are not
	// counted: the tx was not admitted.
	res, _ = h.c.BroadcastTxSync(sutTx(t, sutEnv(5), noSig()))
	require.Equal(t, uint32(oracle.CodeWrongSequence), res.Code)
	// Too low a fee is still a code 13.
	res, _ = h.c.BroadcastTxSync(sutTx(t, func() tx.Envelope { e := sutEnv(1); e.FeeAmount = "1"; return e }(), noSig()))
	require.Equal(t, uint32(oracle.CodeInsufficientFee), res.Code)

	// Another admitted tx with the same defect.
	res, _ = h.c.BroadcastTxSync(sutTx(t, sutEnv(1), tx.SubmissionMsg(sutAddr, 2, 1, "7")))
	require.Zero(t, res.Code, res.Log)

	// Each admitted tx's waived checks, by code and log (the verification
	// log names the sequence, so the two txs' differ).
	byCode := map[uint32]int{}
	for _, w := range h.c.Waived() {
		byCode[w.Code] += w.Txs
		switch w.Code {
		case oracle.CodeUnauthorized:
			require.Contains(t, w.Log, "signature verification failed", "the stand-in signature fails verification")
		case oracle.CodeInvalidRequest:
			require.Contains(t, w.Log, "signature must not be empty")
		}
	}
	require.Equal(t, map[uint32]int{oracle.CodeUnauthorized: 2, oracle.CodeInvalidRequest: 1}, byCode)

	// A peer's defective tx is not waived.
	h.addPeers(1)
	r := h.register(newDoc(1, h.peers[0].Address))
	adms, err := h.c.PeerSubmit(h.peers[0], r, history.PeerPrompt, "")
	require.NoError(t, err)
	require.False(t, adms[0].Admitted())
}
