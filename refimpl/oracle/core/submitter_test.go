package core_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
	"github.com/wsconverge/converge/refimpl/oracle/core"
	"github.com/wsconverge/converge/refimpl/oracle/oracledtest"
	"github.com/wsconverge/converge/wire/abciquery"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
	"github.com/wsconverge/converge/wire/tx"
)

// Each answer of §3.5's table, as the first answer to a result's
// broadcast: how many broadcasts follow, what the result becomes, where
// the sequence goes and the gas of the second attempt.
func TestBroadcastAnswers(t *testing.T) {
	for _, tc := range []struct {
		name       string
		answer     oracledtest.Answer
		broadcasts int
		outcome    string
		nextSeq    uint64 // the sequence of the next result's broadcast
		resync     bool   // an Account query between the first two broadcasts
		gas2       uint64
	}{
		{"code 0", oracledtest.Answer{}, 1, ports.ResultSubmitted, 1, false, 0},
		{"code 19", oracledtest.Answer{Code: oracle.CodeTxInMempoolCache}, 1, ports.ResultSubmitted, 1, false, 0},
		{"tx in cache", oracledtest.Answer{RPCError: "tx already exists in cache"}, 1, ports.ResultSubmitted, 1, false, 0},
		{"code 32", oracledtest.Answer{Code: oracle.CodeWrongSequence}, 2, ports.ResultSubmitted, 1, true, 70000},
		{"code 11", oracledtest.Answer{Code: oracle.CodeOutOfGas}, 2, ports.ResultSubmitted, 1, false, 105000},
		{"code 20", oracledtest.Answer{Code: oracle.CodeMempoolIsFull}, 2, ports.ResultSubmitted, 1, false, 70000},
		{"mempool full", oracledtest.Answer{RPCError: "mempool is full: number of txs 5000 (max: 5000)"}, 2, ports.ResultSubmitted, 1, false, 70000},
		{"other RPC error", oracledtest.Answer{RPCError: "timed out waiting for tx"}, 2, ports.ResultSubmitted, 1, false, 70000},
		{"code 13", oracledtest.Answer{Code: oracle.CodeInsufficientFee}, 1, ports.ResultGaveUp, 0, false, 0},
		{"code 4", oracledtest.Answer{Code: oracle.CodeUnauthorized}, 1, ports.ResultGaveUp, 0, false, 0},
		{"code 18", oracledtest.Answer{Code: oracle.CodeInvalidRequest}, 1, ports.ResultGaveUp, 0, false, 0},
	} {
		for _, byAddress := range []bool{false, true} {
			name := tc.name
			if byAddress {
				name += " by address"
			}
			t.Run(name, func(t *testing.T) {
				w := newWorld(t).addressed(byAddress).withDoc(doc(1)).startRunning()
				w.chain.Script(tc.answer)
				w.advance(time.Second)
				w.advance(3 * time.Second)
				subs := w.broadcasts()
				require.Len(t, subs, tc.broadcasts)
				require.Len(t, w.results(tc.outcome), 1)
				if tc.broadcasts == 2 {
					gap := subs[1].at.Sub(subs[0].at)
					lo, hi := core.JitterBounds(time.Second)
					require.GreaterOrEqual(t, gap, lo)
					require.LessOrEqual(t, gap, hi)
					require.Equal(t, tc.gas2, subs[1].gas)
					accounts := w.queriesOf(abciquery.PathAccount)
					between := 0
					for _, a := range accounts {
						if a.at.After(subs[0].at) && !a.at.After(subs[1].at) {
							between++
						}
					}
					require.Equal(t, tc.resync, between > 0, "Account query before the retry")
				}
				if tc.outcome == ports.ResultGaveUp {
					// D7: the job runs again 1 min later, same nonce.
					require.Equal(t, oracle.ExecFailed, w.job(1).Exec.Status)
					w.advance(time.Minute)
					require.Len(t, w.fetchesOf(1), 2)
					require.Equal(t, uint64(1), w.broadcasts()[len(w.broadcasts())-1].n)
					return
				}
				// The next result uses the sequence the answer left.
				w.chain.Commit()
				w.complete(completeEntry{1, 1, w.now.Add(-10 * time.Second)})
				w.advance(time.Second)
				subs = w.broadcasts()
				require.Equal(t, tc.nextSeq, subs[len(subs)-1].sequence)
			})
		}
	}
}

// At most 6 attempts per result, waits 1, 2, 4, 8, 16 s ± 10 % (D2).
func TestSubmitAttemptsAndBackoff(t *testing.T) {
	w := newWorld(t).withDoc(doc(1)).startRunning()
	for i := 0; i < 10; i++ {
		w.chain.Script(oracledtest.Answer{Code: oracle.CodeMempoolIsFull})
	}
	w.advance(time.Minute)
	subs := w.broadcasts()
	require.Len(t, subs, 6)
	for k := 1; k < 6; k++ {
		lo, hi := core.JitterBounds(time.Second << (k - 1))
		gap := subs[k].at.Sub(subs[k-1].at)
		require.GreaterOrEqual(t, gap, lo, "retry %d", k)
		require.LessOrEqual(t, gap, hi, "retry %d", k)
	}
	require.Len(t, w.results(ports.ResultGaveUp), 1)
	require.Equal(t, oracle.ExecFailed, w.job(1).Exec.Status)
}

// An ambiguous broadcast (admitted, answer lost; F12) is retried after the
// on-chain check with the very same bytes, which the chain's cache
// recognises (D3, D24).
func TestAmbiguousBroadcast(t *testing.T) {
	w := newWorld(t).withDoc(doc(1)).startRunning()
	w.hold = isBroadcast
	w.advance(time.Second)
	w.reply(isBroadcast, func(id ports.ID) ports.Input {
		return ports.Reply{ID: id, Err: errors.New("context deadline exceeded")}
	})
	w.chain.Script(oracledtest.Answer{RPCError: "tx already exists in cache"})
	w.hold = func(ports.Output) bool { return false }
	checks := len(w.queriesOf(abciquery.PathSubmitData))
	w.advance(2 * time.Second)
	calls := outputsOf[ports.BroadcastCall](w)
	require.Len(t, calls, 2)
	require.Equal(t, calls[0].Tx, calls[1].Tx, "re-signing gives the same bytes")
	require.Equal(t, checks+1, len(w.queriesOf(abciquery.PathSubmitData)), "on-chain check before the retry")
	require.Len(t, w.results(ports.ResultSubmitted), 1)
	require.Equal(t, uint64(1), w.c.Metrics().TxSubmitted)
}

// When the on-chain check finds self's submission the result counts as
// submitted without a broadcast, and L is resynced before the next one.
func TestOnChainCheckFindsSubmission(t *testing.T) {
	w := newWorld(t).withDoc(doc(1)).startRunning()
	w.hold = isBroadcast
	w.advance(time.Second)
	w.lose(isBroadcast)
	w.chain.Commit() // the lost broadcast was admitted and committed
	w.hold = func(ports.Output) bool { return false }
	w.advance(2 * time.Second)
	require.Len(t, outputsOf[ports.BroadcastCall](w), 1)
	require.Len(t, w.results(ports.ResultOnChain), 1)

	accounts := len(w.queriesOf(abciquery.PathAccount))
	w.complete(completeEntry{1, 1, w.now.Add(-10 * time.Second)})
	w.advance(time.Second)
	require.Len(t, w.queriesOf(abciquery.PathAccount), accounts+1)
	subs := w.broadcasts()
	require.Len(t, subs, 2)
	require.Equal(t, uint64(1), subs[1].sequence, "resynced to the committed sequence")
}

// A result that turns stale during its backoff wait is abandoned at once
// and frees its semaphore slot (D12).
func TestStaleDuringBackoff(t *testing.T) {
	w := newWorld(t, poolSize(1)).withDoc(doc(1)).withDoc(doc(2)).startRunning()
	w.chain.Script(oracledtest.Answer{Code: oracle.CodeMempoolIsFull}, oracledtest.Answer{Code: oracle.CodeMempoolIsFull})
	w.advance(time.Second)
	// Request 1's result is in its backoff; request 2's waits for the slot.
	require.Len(t, w.broadcasts(), 1)
	require.Equal(t, uint64(1), w.broadcasts()[0].r)

	w.complete(completeEntry{1, 1, w.now})
	require.Len(t, w.results(ports.ResultAbandoned), 1)
	subs := w.broadcasts()
	require.Len(t, subs, 2, "the freed slot went to request 2 at once")
	require.Equal(t, uint64(2), subs[1].r)
	require.Equal(t, subs[0].at, subs[1].at)
	w.advance(time.Minute)
	for _, s := range w.broadcasts() {
		require.False(t, s.r == 1 && s.n == 1 && s.at.After(subs[0].at), "no broadcast of the stale result")
	}
}

// Broadcasts never overlap (D23): the critical section holds one result
// from its on-chain check to its answer.
func TestBroadcastsNeverOverlap(t *testing.T) {
	w := newWorld(t).withDoc(doc(1)).withDoc(doc(2)).withDoc(doc(3)).startRunning()
	w.hold = isBroadcast
	w.advance(time.Second)
	require.Len(t, outputsOf[ports.BroadcastCall](w), 1)
	for i := 2; i <= 3; i++ {
		w.release(isBroadcast)
		require.Len(t, outputsOf[ports.BroadcastCall](w), i)
	}
	w.release(isBroadcast)
	seqs := []uint64{}
	for _, s := range w.broadcasts() {
		seqs = append(seqs, s.sequence)
	}
	require.Equal(t, []uint64{0, 1, 2}, seqs, "consecutive sequences")
}

// The semaphore bounds the results in progress, backoff waits included:
// with pool_size 2 a third result waits in the queue.
func TestSubmitterSemaphore(t *testing.T) {
	w := newWorld(t, poolSize(2)).withDoc(doc(1)).withDoc(doc(2)).withDoc(doc(3)).startRunning()
	w.chain.Script(oracledtest.Answer{Code: oracle.CodeMempoolIsFull}, oracledtest.Answer{Code: oracle.CodeMempoolIsFull})
	w.advance(time.Second)
	var rs []uint64
	for _, s := range w.broadcasts() {
		rs = append(rs, s.r)
	}
	require.Equal(t, []uint64{1, 2}, rs, "two results in progress, both in backoff")
	for _, q := range w.queriesOf(abciquery.PathSubmitData) {
		req, err := abciquery.DecodeRequest(abciquery.PathSubmitData, q.out.(ports.QueryCall).Data)
		require.NoError(t, err)
		r := req.(*oraclev1.QueryOracleSubmitDataRequest)
		require.False(t, r.GetRequestId() == 3 && q.at.After(t0), "no on-chain check for request 3 yet (its creation check was at t0)")
	}
	w.advance(1200 * time.Millisecond)
	subs := w.broadcasts()
	require.Len(t, subs, 5)
	require.Contains(t, []uint64{1, 2}, subs[2].r, "a retry succeeds first")
	require.Equal(t, uint64(3), subs[3].r, "then request 3 gets the freed slot")
	require.Equal(t, subs[2].at, subs[3].at)
	require.NotEqual(t, subs[2].r, subs[4].r)
}

// The SequenceManager resyncs every 5 minutes (no two Account queries
// more than 5 min apart), and on code 32 before the next broadcast of any
// result. A resync answer sent before a success is not used.
func TestSequenceResync(t *testing.T) {
	t.Run("periodic", func(t *testing.T) {
		w := newWorld(t).startRunning()
		w.advance(16 * time.Minute)
		accounts := w.queriesOf(abciquery.PathAccount)
		require.Len(t, accounts, 4)
		for i := 1; i < len(accounts); i++ {
			require.Equal(t, 5*time.Minute, accounts[i].at.Sub(accounts[i-1].at))
		}
	})
	t.Run("stale answer", func(t *testing.T) {
		w := newWorld(t).withDoc(doc(1, period(600))).startRunning()
		w.hold = isQuery(abciquery.PathAccount)
		w.advance(5 * time.Minute) // round 1 submitted at t0 + 1 s; the resync is held
		require.Len(t, w.held, 1)
		w.hold = func(ports.Output) bool { return false }
		w.complete(completeEntry{1, 1, w.now.Add(-600 * time.Second)})
		w.advance(time.Second) // round 2 submitted with sequence 1
		w.release(isQuery(abciquery.PathAccount))
		w.chain.Commit()
		w.complete(completeEntry{1, 2, w.now.Add(-600 * time.Second)})
		w.advance(time.Second)
		var seqs []uint64
		for _, s := range w.broadcasts() {
			seqs = append(seqs, s.sequence)
		}
		require.Equal(t, []uint64{0, 1, 2}, seqs, "the stale answer (sequence 0) was not used")
	})
}

// The broadcast tx is what §3.5 describes: one MsgSubmitOracleData, the
// fee ceil(price × gas) agxn, gas.limit, the chain id and account number
// in the signed document.
func TestSubmissionTx(t *testing.T) {
	w := newWorld(t).withDoc(doc(1)).startRunning()
	w.advance(time.Second)
	calls := outputsOf[ports.BroadcastCall](w)
	require.Len(t, calls, 1)
	d, err := tx.Decode(calls[0].Tx)
	require.NoError(t, err)
	require.NoError(t, tx.ValidateBasic(d))
	require.Equal(t, []tx.Coin{{Denom: "agxn", Amount: "44100000000000000"}}, d.FeeCoins())
	require.Equal(t, uint64(70000), d.GasLimit())
	ds := d.Submissions()[0].GetDataSet()
	require.Equal(t, oracle.SubmissionSignature(1, 1, "1.25"), ds.GetSignature())
	require.Equal(t, rpcTimeout(), calls[0].Timeout)
	signBytes, err := tx.SignBytes(d.Raw.GetBodyBytes(), d.Raw.GetAuthInfoBytes(), oracle.DefaultChainID, 7)
	require.NoError(t, err)
	pub, err := d.PubKey()
	require.NoError(t, err)
	require.Equal(t, self, pub.Address())
	require.NotEmpty(t, signBytes)
}

func rpcTimeout() time.Duration { return oracle.RPCCallTimeout }
