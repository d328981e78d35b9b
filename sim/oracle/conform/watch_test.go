package conform

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
)

func submitRecv(call int64, r, n uint64) history.Event {
	return history.Event{Kind: history.KindRPC, RPC: &history.RPC{Call: call, Phase: history.PhaseRecv, Method: "broadcast_tx_sync",
		Tx: &history.Tx{Msgs: []history.Msg{{Type: oracle.TypeURLSubmit, RequestID: r, Nonce: n}}}}}
}

func answered(call int64, res *history.RPCResult, lost bool) history.Event {
	return history.Event{Kind: history.KindRPC, RPC: &history.RPC{Call: call, Phase: history.PhaseDone, Result: res, Lost: lost}}
}

// A wait sees the records from its mark on, in order, including those
// made while it waits; one that runs out says what it waited for.
func TestWatchAwaitsAConditionOverTheRecords(t *testing.T) {
	var w watch
	w.init()
	w.see(&history.Event{Kind: history.KindSrc, Src: &history.Src{Phase: history.PhaseDone, RequestID: 2, Class: "status"}})
	mark := w.mark()
	require.Equal(t, 1, mark)

	done := make(chan error, 1)
	go func() {
		_, err := w.await(context.Background(), mark, time.Minute, "an acknowledgement of request 2",
			onAnswer(func(a answer) bool { return a.R == 2 && a.acked() }))
		done <- err
	}()
	w.see(ptr(submitRecv(1, 2, 1)))
	w.see(ptr(answered(1, &history.RPCResult{Code: oracle.CodeWrongSequence}, false)))
	w.see(ptr(submitRecv(2, 1, 1)))
	w.see(ptr(answered(2, &history.RPCResult{}, false))) // request 1: not the one waited for
	w.see(ptr(submitRecv(3, 2, 1)))
	w.see(ptr(answered(3, &history.RPCResult{ErrCode: -32603, ErrData: "tx already exists in cache"}, false)))
	require.NoError(t, <-done)

	// From 0, the failed GET before the mark is seen.
	_, err := w.await(context.Background(), 0, time.Minute, "a failed GET", func(e *history.Event) bool { return failedGet(e, 2) })
	require.NoError(t, err)

	// Nothing more comes: the wait runs out with an unmet error.
	_, err = w.await(context.Background(), w.mark(), 20*time.Millisecond, "a Complete of request 4",
		func(e *history.Event) bool { return completeOf(e, 4) })
	var u *unmet
	require.True(t, errors.As(err, &u), "%v", err)
	require.Contains(t, err.Error(), "for a Complete of request 4")

	// A cancelled context is not an unmet step.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = w.await(ctx, w.mark(), time.Minute, "anything", func(*history.Event) bool { return false })
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, errors.As(err, &u))
}

func TestAnswerClasses(t *testing.T) {
	require.True(t, answer{Code: 0}.acked())
	require.True(t, answer{Code: 19}.acked())
	require.True(t, answer{ErrCode: -32603, ErrData: "tx already exists in cache"}.acked())
	require.False(t, answer{Lost: true}.acked())
	require.Equal(t, oracle.ClassSequenceMismatch, answer{Code: oracle.CodeWrongSequence}.class())
	require.Equal(t, oracle.ClassTransient, answer{ErrCode: -32603, ErrData: "mempool is full: number of txs 1"}.class())
}

func ptr(e history.Event) *history.Event { return &e }

// The F12 step is met by request 2's retry meeting the cached tx after
// its answer was lost, and ends unmet when that retry is admitted as a new
// tx; other requests' answers (code 20 while the world holds them off, a
// code 32 before the loss) and request 2's answers before the loss do not
// count.
func TestLostAnswerTry(t *testing.T) {
	cached := answer{R: reqFetch, ErrCode: -32603, ErrData: "tx already exists in cache"}
	taken := answer{R: reqPeers, Code: oracle.CodeWrongSequence}
	held := answer{R: reqPeers, Code: oracle.CodeMempoolIsFull}
	lost := answer{R: reqFetch, Lost: true}
	for _, c := range []struct {
		name         string
		answers      []answer
		met, rebuilt bool
	}{
		{"the retry meets the cached tx", []answer{taken, {R: reqPeers}, lost, held, held, cached}, true, false},
		{"a cache hit before the loss is no retry", []answer{cached, {R: reqFetch}, lost, held}, false, false},
		{"request 2's retry rebuilt and admitted", []answer{lost, held, {R: reqFetch}, cached}, false, true},
		{"a code 32 of request 2's retry leaves it open", []answer{lost, {R: reqFetch, Code: oracle.CodeWrongSequence}}, false, false},
		{"a lost answer of another request", []answer{{R: reqPeers, Lost: true}, cached}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var at lostAnswerTry
			for _, a := range c.answers {
				if at.see(a) {
					break
				}
			}
			require.Equal(t, c.met, at.met)
			require.Equal(t, c.rebuilt, at.rebuilt)
		})
	}
}
