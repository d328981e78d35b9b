package oracle

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

// statusEvery records the health check's status calls from from to to.
func (b *hb) statusEvery(from, to time.Duration) {
	for t := from + 30*time.Second; t < to; t += 30 * time.Second {
		b.status(t)
	}
}

// dropped: F3 drops the Complete frame of round 1; the job waits for its
// watchdog, 24 h after the extraction, which finds the round done and runs
// round 2 (unless idle: the SUT never comes back).
func dropped(idle bool) (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	at := tl + sec(0.5)
	bt := b.round(at, 1, 0)
	b.drop[bt] = true
	b.fault(bt+ms(5), "F3", history.FaultPoint, 1)
	watchdog := at + ms(20) + 24*time.Hour
	end := watchdog + time.Minute
	if !idle {
		d := doc(1, 10, []string{self, peer}, 1)
		d.Nonce = 1
		b.docAnswer(watchdog+ms(10), d)
		bt2 := b.round(watchdog+sec(0.5), 1, 0)
		end = b.steady(bt2+sec(10.5), 1, map[uint64]int{1: 0}, nil)
	}
	b.statusEvery(0, end)
	for t := 5 * time.Minute; t < end; t += 5 * time.Minute {
		b.account(t, b.seqBy(t))
	}
	b.stop(end)
	return std(b)
}

// evicted: F13 evicts round 1's acknowledged tx; the watchdog finds the
// round open without self's submission and runs it again 24 h later: the
// 5-minute resyncs have moved the sequence back to 0 (the chain forgot
// the evicted tx, ORACLE-SPEC 3.5), and it resubmits at sequence 0.
func evicted() (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	at := tl + sec(0.5)
	res, v := b.okValue()
	b.get(at, ms(20), 1, path(1, 0), res)
	b.onChain(at+ms(30), 1, 1, false)
	tx := b.submitTx(1, 1, 0, 70000, v)
	b.bcast(at+ms(40), tx, code(0))
	b.add(at+ms(500), history.Event{Kind: history.KindEvict, Evict: &history.Evict{Cause: history.EvictFault, Hash: tx.Hash,
		Origin: history.OriginSUT, Signer: self, Sequence: 0}})
	again := at + ms(20) + 24*time.Hour
	d := doc(1, 10, []string{self, peer}, 1)
	b.docAnswer(again-ms(20), d)
	b.onChain(again-ms(10), 1, 1, false)
	res2, v2 := b.okValue()
	b.get(again, ms(20), 1, path(1, 0), res2)
	b.onChain(again+ms(30), 1, 1, false)
	ok := b.submitTx(1, 1, 0, 70000, v2)
	b.bcast(again+ms(40), ok, code(0))
	c := ceilSec(again + ms(50))
	b.commit(c, ok, 0)
	b.complete(c+time.Second, 1, 1, peer, self)
	b.q = 1
	end := b.steady(c+sec(11.5), 1, map[uint64]int{1: 0}, nil)
	b.statusEvery(0, end)
	for t := 5 * time.Minute; t < end; t += 5 * time.Minute {
		b.account(t, 0)
	}
	b.stop(end)
	return std(b)
}

func TestRecoveryAfterLostInformation(t *testing.T) {
	p, evs := dropped(false)
	r := judgeRun(t, p, evs)
	require.Empty(t, r.Violations, describe(r, nil))
	require.Equal(t, judge.Pass, r.Verdict(nameRecovery))

	p, evs = dropped(true)
	r = judgeRun(t, p, evs)
	require.Equal(t, judge.Violated, r.Verdict(nameRecovery))
	require.Contains(t, r.ByChecker(nameRecovery)[0].Message, "after F3")
	require.Empty(t, r.ByChecker(nameLiveness), "a request F3 hit is O16b's, not O16's")

	p.Mode = ModeBlackBox
	require.Equal(t, judge.NotExercised, judgeRun(t, p, evs).Verdict(nameRecovery), "F3 is judged in sim mode only")

	p, evs = evicted()
	r = judgeRun(t, p, evs)
	require.Empty(t, r.Violations, describe(r, nil))
	require.Equal(t, judge.Pass, r.Verdict(nameRecovery))
	require.Equal(t, judge.Pass, r.Verdict(nameSequence), "the eviction disturbs the sequence")
	require.NotEqual(t, judge.Violated, r.Verdict(nameSubmitRetries), "the watchdog's re-run may resubmit an acknowledged round")
	require.Equal(t, judge.Pass, r.Verdict(nameResynced), "the resyncs moved the sequence back to 0")
}

func TestExclusionsSuspendJudgement(t *testing.T) {
	// The second entry of a frame ignored (an O10 violation), but F2 was
	// active: not judged.
	b, _ := twoRequestsSkip(3, func(i int, r uint64) bool { return i == 2 && r == 2 })
	b.fault(0, "F2", history.FaultStart)
	b.fault(5*time.Minute, "F2", history.FaultEnd)
	r := judgeRun(t, params(), b.build())
	require.Empty(t, r.ByChecker(nameCompleteHandled))
	require.Empty(t, r.ByChecker(nameLiveness))

	// More ENABLED assigned requests than pool_size: O10 not judged either.
	b, _ = twoRequestsSkip(3, func(i int, r uint64) bool { return i == 2 && r == 2 })
	p := params()
	p.PoolSize = 1
	require.Empty(t, judgeRun(t, p, b.build()).ByChecker(nameCompleteHandled))

	// A stale broadcast (O2) while F14 may hold frames back: the lower
	// bound is not judged, up to QuerySettle after the window.
	p, evs := staleBroadcast()
	f14 := func(from, to time.Duration) []history.Event {
		out := append([]history.Event(nil), evs...)
		out = append(out, history.Event{Kind: history.KindFault, At: t0.Add(from), Fault: &history.Fault{ID: "F14", Phase: history.FaultStart}},
			history.Event{Kind: history.KindFault, At: t0.Add(to), Fault: &history.Fault{ID: "F14", Phase: history.FaultEnd}})
		sortEvents(out)
		return out
	}
	require.Empty(t, judgeRun(t, p, f14(0, 2*time.Second)).ByChecker(nameNonceBounds), "within QuerySettle of the window")
	require.NotEmpty(t, judgeRun(t, p, f14(time.Minute, 61*time.Second)).ByChecker(nameNonceBounds), "a window after it does not excuse it")
}

// sortEvents orders records by time (stable) and renumbers them.
func sortEvents(evs []history.Event) {
	for i := 1; i < len(evs); i++ {
		for j := i; j > 0 && evs[j].At.Before(evs[j-1].At); j-- {
			evs[j], evs[j-1] = evs[j-1], evs[j]
		}
	}
	for i := range evs {
		evs[i].Seq = int64(i + 1)
	}
}

func TestFaultRequests(t *testing.T) {
	rs, all := faultRequests(&history.Fault{Params: []history.Param{{Key: "request", Value: "1, 2"}, {Key: "other", Value: "9"},
		{Key: "request", Value: "7"}, {Key: "request", Value: "x"}}})
	require.False(t, all)
	require.Equal(t, []uint64{1, 2, 7}, rs)
	_, all = faultRequests(&history.Fault{})
	require.True(t, all)
}

func TestSameValue(t *testing.T) {
	for _, tc := range []struct {
		got, want string
		same      bool
	}{
		{"101.5", "101.5", true},
		{"101.50", "101.5", true},
		{"1e3", "1000", true},
		{"101.123457", "101.123456789", false},
		{`{"b":1,"a":[1,2]}`, `{"a":[1,2],"b":1}`, true},
		{`{"a":1}`, `{"a":2}`, false},
		{`[1,2]`, `[1,2]`, true},
		{"true", "true", true},
		{"abc", "abd", false},
		{"1", "abc", false},
		{`"x"`, "x", false},
	} {
		require.Equal(t, tc.same, sameValue(tc.got, tc.want), "%s vs %s", tc.got, tc.want)
	}
}

func TestTxProblems(t *testing.T) {
	s := newState(Params{Self: self}.withDefaults())
	b := newHB()
	good := b.submitTx(1, 1, 0, 70000, "1")
	require.Empty(t, txProblem(s, &good, nil))
	for _, tc := range []struct {
		bend func(tx *history.Tx)
		msg  string
	}{
		{func(tx *history.Tx) { tx.DecodeErr = "tx parse error" }, "does not decode"},
		{func(tx *history.Tx) { tx.Msgs = append(tx.Msgs, tx.Msgs[0]) }, "2 messages"},
		{func(tx *history.Tx) { tx.Msgs[0].Type = "/cosmos.bank.v1beta1.MsgSend" }, "exactly one MsgSubmitOracleData"},
		{func(tx *history.Tx) { tx.Msgs[0].Signature = "" }, "empty signature"},
		{func(tx *history.Tx) { tx.Fee = []history.Coin{{Denom: "uatom", Amount: "1"}} }, "one coin in agxn"},
		{func(tx *history.Tx) { tx.Sig = history.SigInvalid }, "does not verify"},
	} {
		tx := b.submitTx(1, 1, 0, 70000, "1")
		tx.Msgs = append([]history.Msg(nil), tx.Msgs...)
		tc.bend(&tx)
		require.Contains(t, txProblem(s, &tx, nil), tc.msg)
	}
	require.Contains(t, txProblem(s, nil, nil), "without a tx")
}

func TestNotRunningSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		answer func(b *hb, at time.Duration)
		msg    string
	}{
		{func(b *hb, at time.Duration) { b.notFound(at, 1) }, "does not exist"},
		{func(b *hb, at time.Duration) { b.docAnswer(at, doc(1, 10, []string{peer}, 1)) }, "does not assign self"},
		{func(b *hb, at time.Duration) { b.list(at, doc(2, 10, []string{self, peer}, 1)) }, "was missing from the list"},
	} {
		b := newHB()
		tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
		bt := b.round(tl+sec(0.5), 1, 0)
		tc.answer(b, bt+time.Second)
		b.get(bt+4*time.Second, ms(20), 1, path(1, 0), ok(`{"data":{"price":1}}`))
		b.stop(bt + 10*time.Second)
		p, evs := std(b)
		vs := judgeRun(t, p, evs).ByChecker(nameNotRunning)
		require.NotEmpty(t, vs, tc.msg)
		require.Contains(t, vs[0].Message, tc.msg)
	}
}
