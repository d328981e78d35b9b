package conform

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

// The summary counts the daemon's broadcasts by answer and names the
// script's fault behind those the script brought about (an injected
// code, the intruder's code 32, the lost answer's cache hit), so that a
// cause is only drawn from the daemon's own; a run that passed has none.
func TestSummaryTellsTheScriptsDoingFromTheDaemons(t *testing.T) {
	const self = "guru1self"
	sut := func(code uint32, log string) history.Event {
		return history.Event{Kind: history.KindCheckTx, CheckTx: &history.CheckTx{Origin: history.OriginSUT, Code: code, Log: log}}
	}
	fault := func(id string, ph history.FaultPhase) history.Event {
		return history.Event{Kind: history.KindFault, Fault: &history.Fault{ID: id, Phase: ph}}
	}
	seq := "account sequence mismatch, expected 4, got 3: incorrect account sequence"
	evs := []history.Event{
		{Kind: history.KindProc, Proc: &history.Proc{Action: history.ProcStart}},
		sut(0, ""),
		fault("F9", history.FaultStart), sut(oracle.CodeWrongSequence, seq), fault("F9", history.FaultEnd),
		sut(oracle.CodeWrongSequence, "account sequence mismatch, expected 7, got 5: incorrect account sequence"),
		{Kind: history.KindCheckTx, CheckTx: &history.CheckTx{Origin: history.OriginSUT, Code: oracle.CodeInsufficientFee, Log: "fee", Injected: true}},
		fault("F15", history.FaultStart),
		{Kind: history.KindCheckTx, CheckTx: &history.CheckTx{Origin: history.OriginSUT, RPCError: oracle.RPCErrTxInCache}},
		fault("F15", history.FaultEnd),
		{Kind: history.KindCheckTx, CheckTx: &history.CheckTx{Origin: history.OriginPeer, Code: 18}},
		{Kind: history.KindDeliver, Deliver: &history.Deliver{Origin: history.OriginSUT}},
		{Kind: history.KindBlock, Block: &history.Block{Completes: []history.Complete{{Providers: []string{"p", self}}, {Providers: []string{"p"}}}}},
		{Kind: history.KindProc, Proc: &history.Proc{Action: history.ProcSignal, Signal: "SIGTERM"}},
		{Kind: history.KindProc, Proc: &history.Proc{Action: history.ProcExit}},
	}
	res := &Result{Events: evs, Self: self, Report: &judge.Report{}, Lifetimes: []Lifetime{{Life: 1}}}
	s := summarize(res)
	require.Equal(t, 5, s.Broadcasts, "the peer's tx is not the daemon's")
	require.Equal(t, 1, s.Admitted)
	require.Equal(t, 1, s.Committed)
	require.Equal(t, 2, s.Rounds)
	require.Equal(t, 1, s.WithSelf)
	by := map[string]int{}
	for _, a := range s.Rejected {
		by[a.ByScript] += a.Count
	}
	require.Equal(t, map[string]int{"": 1, "F9": 1, "F11": 1, "F12": 1}, by)
	require.Empty(t, s.Cause, "a run that passed needs no cause")
	require.Equal(t, "exit status 0", res.Lifetimes[0].Ended)
	require.Equal(t, "SIGTERM", res.Lifetimes[0].AfterSignal)

	// The same counts in a failed run whose only admitted tx is gone: the
	// cause is drawn from the daemon's own rejection, not the script's.
	evs[1] = sut(oracle.CodeInvalidRequest, "message 0: signature must not be empty: invalid request")
	res = &Result{Events: evs, Self: self, Report: &judge.Report{}, Problems: []string{"failed"}}
	s = summarize(res)
	require.Zero(t, s.Admitted)
	require.Contains(t, s.Cause, `no broadcast of the daemon was admitted (most often code 18 "message 0: signature must not be empty: invalid request" ×1)`)
	require.Contains(t, s.Cause, "--admit-unverified")
}
