package oracle

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

// Every checker is held to three kinds of hand-built history: one where
// its situation arises and the SUT behaves (pass, and no checker at all
// may complain), one where the SUT breaks the contract (violated, with the
// message that says how), and one where the situation never arises (not
// exercised).

type tcase struct {
	name    string
	checker string
	build   func() (Params, []history.Event)
	want    judge.Verdict
	msg     string
}

func std(b *hb) (Params, []history.Event) { return params(), b.build() }

func baseTwo() (Params, []history.Event) {
	b, _ := twoRequests(3)
	return std(b)
}

func baseOne() (Params, []history.Event) {
	b, _ := oneRequest(3)
	return std(b)
}

var u64 = func(v uint64) *uint64 { return &v }

// ---- O1 ----

// retryMeetsCache: the first broadcast's answer is lost though the chain
// admitted the tx; the retry meets the cached tx (an acknowledgement).
func retryMeetsCache() (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	at := tl + sec(0.5)
	res, v := b.okValue()
	b.get(at, ms(20), 1, path(1, 0), res)
	b.onChain(at+ms(30), 1, 1, false)
	tx := b.submitTx(1, 1, 0, 70000, v)
	b.q++
	b.bcast(at+ms(40), tx, answer{lost: true})
	b.add(at+ms(40), history.Event{Kind: history.KindCheckTx, CheckTx: &history.CheckTx{Origin: history.OriginSUT, Tx: tx}})
	b.onChain(at+sec(1), 1, 1, false)
	b.bcast(at+sec(1.05), tx, answer{rpc: "tx already exists in cache"})
	b.commit(2*time.Second, tx, 0)
	b.complete(3*time.Second, 1, 1, peer, self)
	end := b.steady(13*time.Second+sec(0.5), 2, map[uint64]int{1: 0}, nil)
	b.stop(end)
	return std(b)
}

func doubleCommit() (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	at := tl + sec(0.5)
	bt := b.round(at, 1, 0)
	second := b.submitTx(1, 1, 1, 70000, "1001.5")
	b.q++
	b.commit(bt-time.Second, second, 0)
	b.stop(bt + 2*time.Second)
	return std(b)
}

// ---- O2 ----

// completeWhileWaiting: the broadcast meets a full mempool; the round
// completes without self meanwhile and the SUT drops the result.
func completeWhileWaiting() (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer, other}, 1))
	at := tl + sec(0.5)
	b.roundO(at, 1, ro{answer: &answer{rpc: "mempool is full: number of txs 5000 (max: 5000)"}, peers: []string{other, peer}})
	end := b.steady(12*time.Second+sec(0.5), 2, map[uint64]int{1: 0}, nil)
	b.stop(end)
	return std(b)
}

func staleBroadcast() (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	bt := b.round(tl+sec(0.5), 1, 0)
	tx := b.submitTx(1, 1, b.q, 70000, "1")
	b.q++
	b.bcast(bt+3*time.Second, tx, code(0))
	b.stop(bt + 5*time.Second)
	return std(b)
}

func nonceAhead() (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	b.roundO(tl+sec(0.5), 1, ro{nonce: 3})
	b.stop(5 * time.Second)
	return std(b)
}

// ---- O3 ----

// failThenWait: a fetch failure (four attempts), the next execution a
// minute later meets a malformed body, the next one five minutes later
// succeeds.
func failThenWait(next time.Duration) (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	at := tl + sec(0.5)
	for k, wait := range []time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second} {
		at += wait
		b.get(at, ms(20), 1, path(1, 0), failed())
		at += ms(20)
		_ = k
	}
	at += next
	b.get(at, ms(20), 1, path(1, 0), malformed())
	at += ms(20) + oracle.ParseFailureRetry + sec(0.3)
	bt := b.round(at, 1, 0)
	end := b.steady(bt+sec(10.5), 2, map[uint64]int{1: 0}, nil)
	b.periodic(0, end)
	b.stop(end)
	return std(b)
}

// ---- O3b and O13 ----

// restartAfterRound: lifetime 1 runs a round and crashes 2 s after its
// Complete; lifetime 2 starts 2 s later and resumes the next round at
// firstExec after its list answer (lastBT + period is 6 s after it).
func restartAfterRound(firstExec time.Duration, resume bool) (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	bt := b.round(tl+sec(0.5), 1, 0)
	b.signal(bt+2*time.Second, "crash")
	b.exit(bt+2*time.Second+ms(1), 1)
	d := doc(1, 10, []string{self, peer}, 1)
	d.Nonce = 1
	tl2 := b.boot(bt+4*time.Second, d)
	end := tl2 + 20*time.Second
	if resume {
		bt2 := b.round(tl2+firstExec, 1, 0)
		end = b.steady(bt2+sec(10.5), 1, map[uint64]int{1: 0}, nil)
	}
	b.periodic(bt+4*time.Second, end)
	b.stop(end)
	return std(b)
}

// restartThenPeersComplete: lifetime 2 starts 4 s after round 1 (period
// 10); the period becomes 2 and the peer alone completes round 2 at bt + 5
// s; the daemon runs round 3 at that Complete's bt + 2 s + 0.5 s, before
// round 1's bt + 10 s but after the E the new round gives.
func restartThenPeersComplete() (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	bt := b.round(tl+sec(0.5), 1, 0)
	b.signal(bt+2*time.Second, "crash")
	b.exit(bt+2*time.Second+ms(1), 1)
	d := doc(1, 10, []string{self, peer}, 1)
	d.Nonce = 1
	tl2 := b.boot(bt+4*time.Second, d)
	d2 := d
	d2.Period = 2
	b.moderate(tl2+ms(100), d2)
	b.txFrame(tl2+ms(105), true, 1)
	b.docAnswer(tl2+ms(110), d2)
	b.complete(bt+5*time.Second, 1, 2, peer)
	bt3 := b.round(bt+sec(7.5), 1, 0)
	end := bt3 + ms(500) // before round 4 is due
	b.periodic(bt+4*time.Second, end)
	b.stop(end)
	return std(b)
}

// crashInFlight: lifetime 1 crashes 200 ms after its round-2 tx was
// admitted; the tx commits anyway, and lifetime 2 resumes round 3.
func crashInFlight(resume bool) (Params, []history.Event) { return crashInFlightBlocks(resume, 0) }

// crashInFlightBlocks is crashInFlight with a block every blockEvery after
// the restart (none when 0).
func crashInFlightBlocks(resume bool, blockEvery time.Duration) (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	bt := b.round(tl+sec(0.5), 1, 0)
	at := bt + sec(10.5)
	bt2 := b.round(at, 1, 0)
	b.signal(at+ms(200), "crash")
	b.exit(at+ms(201), 1)
	d := doc(1, 10, []string{self, peer}, 1)
	d.Nonce = 2
	tl2 := b.boot(bt2+2*time.Second, d)
	end := tl2 + 20*time.Second
	if resume {
		b.round(bt2+sec(10.5), 1, 0)
	}
	for t := tl2 + ms(50); blockEvery > 0 && t < end; t += blockEvery {
		b.block(t)
	}
	b.periodic(bt2+2*time.Second, end)
	b.stop(end)
	return std(b)
}

// resubmitAcrossRestart: lifetime 1's tx for round 2 is admitted when it
// crashes; lifetime 2 lists the doc at nonce 1, runs round 2 again and its
// tx commits too.
func resubmitAcrossRestart() (Params, []history.Event) {
	b, _, at, v := secondFetch()
	b.onChain(at+ms(30), 1, 2, false)
	first := b.submitTx(1, 2, b.q, 70000, v)
	b.q++
	b.bcast(at+ms(40), first, code(0))
	b.signal(at+ms(100), "crash")
	b.exit(at+ms(101), 1)
	d := doc(1, 10, []string{self, peer}, 1)
	d.Nonce = 1
	tl2 := b.boot(at+ms(300), d)
	res2, v2 := b.okValue()
	b.get(tl2+ms(100), ms(20), 1, path(1, 0), res2)
	b.onChain(tl2+ms(130), 1, 2, false)
	second := b.submitTx(1, 2, b.q, 70000, v2)
	b.q++
	b.bcast(tl2+ms(140), second, code(0))
	b.commit(ceilSec(tl2+ms(150)), first, 0)
	b.commit(ceilSec(tl2+ms(150)), second, 0)
	b.stop(tl2 + 3*time.Second)
	return std(b)
}

// ---- O4 ----

func retries(gaps ...time.Duration) (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	at := tl + sec(0.5)
	for _, g := range gaps {
		b.get(at, ms(20), 1, path(1, 0), failed())
		at += ms(20) + g
	}
	bt := b.round(at, 1, 0)
	end := b.steady(bt+sec(10.5), 1, map[uint64]int{1: 0}, nil)
	b.stop(end)
	return std(b)
}

// ---- O5 ----

// codeDance: round 1 meets code 32 (resync, retry), then code 11 (retry
// with more gas), then succeeds; round 2 meets code 13 and gives up while
// the round completes without self; then a healthy round.
func codeDance(afterTerminal, early, lowGas bool) (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer, other}, 1))
	at := tl + sec(0.5)
	res, v := b.okValue()
	b.get(at, ms(20), 1, path(1, 0), res)
	b.onChain(at+ms(30), 1, 1, false)
	b.bcast(at+ms(40), b.submitTx(1, 1, 0, 70000, v), code(32))
	b.account(at+ms(500), 0)
	retry := at + ms(41) + sec(1)
	if early {
		retry = at + ms(200)
	}
	b.onChain(retry-ms(10), 1, 1, false)
	b.bcast(retry, b.submitTx(1, 1, 0, 70000, v), code(11))
	gas := uint64(105000)
	if lowGas {
		gas = 70000
	}
	ok := b.submitTx(1, 1, 0, gas, v)
	b.onChain(retry+sec(2)-ms(10), 1, 1, false)
	b.bcast(retry+sec(2), ok, code(0))
	b.q = 1
	c := ceilSec(retry + sec(2) + ms(1))
	b.commit(c, ok, 0)
	b.complete(c+time.Second, 1, 1, peer, self)
	at = c + sec(11.5)
	res2, v2 := b.okValue()
	b.get(at, ms(20), 1, path(1, 0), res2)
	b.onChain(at+ms(30), 1, 2, false)
	b.bcast(at+ms(40), b.submitTx(1, 2, 1, 70000, v2), code(13))
	if afterTerminal {
		b.bcast(at+sec(2), b.submitTx(1, 2, 1, 70000, v2), code(0))
	}
	b.complete(ceilSec(at+sec(3)), 1, 2, peer, other)
	end := b.steady(ceilSec(at+sec(3))+sec(10.5), 1, map[uint64]int{1: 0}, nil)
	b.periodic(0, end)
	b.stop(end)
	return std(b)
}

// ---- O6 ----

// updateWhileAwaiting: round 1's submission is acknowledged, its Complete
// is slow (a late peer), and an Update keeping the job arrives meanwhile;
// rerun makes the SUT execute again right after the Update.
func updateWhileAwaiting(rerun bool) (Params, []history.Event) {
	b := newHB()
	d := doc(1, 10, []string{self, peer}, 1)
	tl := b.boot(0, d)
	at := tl + sec(0.5)
	res, v := b.okValue()
	b.get(at, ms(20), 1, path(1, 0), res)
	b.onChain(at+ms(30), 1, 1, false)
	tx := b.submitTx(1, 1, 0, 70000, v)
	b.q++
	b.bcast(at+ms(40), tx, code(0))
	b.commit(time.Second, tx, 0)
	d2 := d
	d2.Period = 12
	b.moderate(2*time.Second, d2)
	b.txFrame(2*time.Second+ms(5), true, 1)
	b.docAnswer(2*time.Second+ms(10), d2)
	if rerun {
		b.get(3*time.Second, ms(20), 1, path(1, 0), res)
	}
	b.add(5*time.Second, history.Event{Kind: history.KindPeer, Peer: &history.Peer{Provider: peer, Behaviour: history.PeerLate, RequestID: 1, Nonce: 1}})
	b.complete(6*time.Second, 1, 1, peer, self)
	end := b.steady(18*time.Second+sec(0.5), 1, map[uint64]int{1: 0}, nil)
	b.stop(end)
	return std(b)
}

func bogusNonce() (Params, []history.Event) {
	b := newHB()
	d := doc(1, 10, []string{self, peer}, 1)
	tl := b.boot(0, d)
	bogus := d
	bogus.Nonce = 7
	b.add(tl+ms(100), history.Event{Kind: history.KindOp, Op: &history.Op{Action: history.OpBogusUpdate, RequestID: 1, Doc: bogus}})
	b.roundO(tl+sec(0.5), 1, ro{nonce: 8})
	b.stop(4 * time.Second)
	return std(b)
}

// ---- O7 ----

// fiveRequests: five requests with pool_size 4 and GETs of 500 ms; the
// fifth waits for a slot unless crowd.
func fiveRequests(crowd bool) (Params, []history.Event) {
	b := newHB()
	var docs []history.Doc
	for r := uint64(1); r <= 5; r++ {
		docs = append(docs, doc(r, 10, []string{self, peer}, 1))
	}
	tl := b.boot(0, docs...)
	at := tl + sec(0.5)
	for r := uint64(1); r <= 5; r++ {
		start := at + time.Duration(r-1)*ms(10)
		if r == 5 && !crowd {
			start = at + ms(520)
		}
		b.roundO(start, r, ro{getDur: ms(500)})
	}
	b.stop(4 * time.Second)
	return std(b)
}

func twoBroadcastsAtOnce() (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1), doc(2, 10, []string{self, peer}, 1))
	at := tl + sec(0.5)
	b.round(at, 1, 0)
	b.round(at, 2, 0)
	b.stop(4 * time.Second)
	return std(b)
}

// ---- O8 and O9 ----

// intruded: under F9 the first broadcast meets code 32; the SUT resyncs
// (unless noResync) and broadcasts at the sequence the chain reports.
func intruded(noResync bool) (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	b.fault(tl, "F9", history.FaultStart)
	at := tl + sec(0.5)
	res, v := b.okValue()
	b.get(at, ms(20), 1, path(1, 0), res)
	b.onChain(at+ms(30), 1, 1, false)
	b.bcast(at+ms(40), b.submitTx(1, 1, 0, 70000, v), code(32))
	if !noResync {
		b.account(at+ms(500), 1)
	}
	tx := b.submitTx(1, 1, 1, 70000, v)
	b.bcast(at+sec(1.5), tx, code(0))
	b.q = 2
	b.commit(3*time.Second, tx, 0)
	b.complete(4*time.Second, 1, 1, peer, self)
	b.fault(5*time.Second, "F9", history.FaultEnd)
	end := b.steady(14*time.Second+sec(0.5), 1, map[uint64]int{1: 0}, nil)
	b.stop(end)
	return std(b)
}

// intrudedFailedResync: as intruded, the resync after the code 32 fails;
// retried: a second one succeeds before the broadcast.
func intrudedFailedResync(retried bool) (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	b.fault(tl, "F9", history.FaultStart)
	at := tl + sec(0.5)
	res, v := b.okValue()
	b.get(at, ms(20), 1, path(1, 0), res)
	b.onChain(at+ms(30), 1, 1, false)
	b.bcast(at+ms(40), b.submitTx(1, 1, 0, 70000, v), code(32))
	b.failedAccount(at + ms(500))
	if retried {
		b.account(at+sec(1.4), 1)
	}
	tx := b.submitTx(1, 1, 1, 70000, v)
	b.bcast(at+sec(1.5), tx, code(0))
	b.q = 2
	b.commit(3*time.Second, tx, 0)
	b.complete(4*time.Second, 1, 1, peer, self)
	b.fault(5*time.Second, "F9", history.FaultEnd)
	end := b.steady(14*time.Second+sec(0.5), 1, map[uint64]int{1: 0}, nil)
	b.stop(end)
	return std(b)
}

func reuse() (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	bt := b.round(tl+sec(0.5), 1, 0)
	b.roundO(bt+sec(10.5), 1, ro{seq: u64(0)})
	b.stop(bt + 15*time.Second)
	return std(b)
}

func skip() (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	b.roundO(tl+sec(0.5), 1, ro{seq: u64(5)})
	b.stop(5 * time.Second)
	return std(b)
}

// longRun: six minutes of healthy rounds, with the periodic Account
// queries unless noResync.
func longRun(noResync bool, statusGap bool) (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	end := b.steady(tl+sec(0.5), 26, map[uint64]int{1: 0}, nil)
	for t := 30 * time.Second; t < end; t += 30 * time.Second {
		if statusGap && t == 90*time.Second {
			continue
		}
		b.status(t)
	}
	if !noResync {
		b.account(5*time.Minute, b.q)
	}
	b.stop(end)
	return std(b)
}

// ---- O11 ----

// paused: request 1 is paused after its first round (the update is
// committed and its doc answered); rogue runs it again 3 s later.
func paused(rogue bool) (Params, []history.Event) {
	b := newHB()
	d := doc(1, 10, []string{self, peer}, 1)
	tl := b.boot(0, d)
	bt := b.round(tl+sec(0.5), 1, 0)
	p := d
	p.Status = int32(oracle.StatusPaused)
	p.Nonce = 1
	b.moderate(bt+time.Second, p)
	b.txFrame(bt+time.Second+ms(5), true, 1)
	b.docAnswer(bt+time.Second+ms(10), p)
	if rogue {
		b.get(bt+4*time.Second, ms(20), 1, path(1, 0), ok(`{"data":{"price":1}}`))
	}
	b.stop(bt + 30*time.Second)
	return std(b)
}

func foreign() (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	b.get(tl+sec(0.5), ms(20), 3, path(3, 0), ok(`{"data":{"price":1}}`))
	b.stop(3 * time.Second)
	return std(b)
}

// ---- O14, O15 ----

// stopDuring: SIGTERM 5 ms into a GET; the daemon exits with status after
// exitAfter, and (lateGet) makes another GET 2 s after the signal.
func stopDuring(status int, exitAfter time.Duration, lateGet bool, extra func(b *hb, at time.Duration)) (Params, []history.Event) {
	b := newHB()
	b.goroutines(0, GoroutinesBaseline, 5)
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	at := tl + sec(0.5)
	b.get(at, ms(20), 1, path(1, 0), ok(`{"data":{"price":1}}`))
	b.signal(at+ms(5), "SIGTERM")
	if lateGet {
		b.get(at+sec(2), ms(20), 1, path(1, 0), ok(`{"data":{"price":1}}`))
	}
	b.closeWS(at+ms(30), 1, "client")
	if extra != nil {
		extra(b, at)
	}
	b.exit(at+exitAfter, status)
	return std(b)
}

// refusals writes n refused dials (F1) one second apart from at: each a
// failed re-subscription attempt.
func refusals(b *hb, at time.Duration, n int) {
	for i := range n {
		b.ws(at+time.Duration(i)*time.Second, &history.WS{Conn: int64(100 + i), Action: history.WSRefuse})
	}
}

// refusalsBackoff is refusals spaced as ORACLE-SPEC 3.2 spaces attempts:
// after k failures in a row, min(2^k s, 10 s) (O19).
func refusalsBackoff(b *hb, at time.Duration, n int) {
	for i := range n {
		b.ws(at, &history.WS{Conn: int64(100 + i), Action: history.WSRefuse})
		at += min(time.Second<<(i+1), 10*time.Second)
	}
}

func crashOnly() (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	bt := b.round(tl+sec(0.5), 1, 0)
	b.signal(bt+time.Second, "crash")
	b.exit(bt+time.Second, 1)
	return std(b)
}

func stopOrder(names ...string) (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	b.round(tl+sec(0.5), 1, 0)
	b.signal(5*time.Second, "SIGTERM")
	t := 5*time.Second + ms(1)
	for _, n := range names {
		switch n {
		case "drained":
			b.white(t, history.WhiteDrained, "")
		case "watcher", "scheduler", "submitter", "rpc-client":
			b.white(t, history.WhiteStop, n)
		default:
			b.white(t, history.WhiteClose, n)
		}
		t += ms(1)
	}
	b.closeWS(t, 1, "client")
	b.exit(t+ms(1), 0)
	return std(b)
}

// ---- O16, O16b ----

func lateRound() (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	bt := b.steady(tl+sec(0.5), 2, map[uint64]int{1: 0}, nil)
	bt2 := b.round(bt+15*time.Second, 1, 0)
	end := b.steady(bt2+sec(10.5), 1, map[uint64]int{1: 0}, nil)
	b.stop(end)
	return std(b)
}

// silent: two rounds, then the SUT (still running) does nothing for a
// minute; stopped at the end or not.
func silent(stop bool) (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	end := b.steady(tl+sec(0.5), 2, map[uint64]int{1: 0}, nil) + time.Minute
	b.periodic(0, end)
	if stop {
		b.stop(end)
	} else {
		b.status(end)
	}
	return std(b)
}

// disconnect: F1 closes the WebSocket between two rounds for 2 s; the SUT
// reconnects, reconciles and runs the next round (unless gone).
func disconnect(gone bool) (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	bt := b.round(tl+sec(0.5), 1, 0)
	b.fault(bt+time.Second, "F1", history.FaultStart)
	b.closeWS(bt+time.Second, 1, "server")
	b.fault(bt+3*time.Second, "F1", history.FaultEnd)
	end := bt + 70*time.Second
	if !gone {
		b.connect(bt+sec(3.1), 2)
		d := doc(1, 10, []string{self, peer}, 1)
		d.Nonce = 1
		b.list(bt+sec(3.2), d)
		end = b.steady(bt+sec(10.5), 2, map[uint64]int{1: 0}, nil)
	}
	b.periodic(0, end)
	b.stop(end)
	return std(b)
}

// ---- O17 ----

func wireBent(bend func(b *hb, at time.Duration)) (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	bend(b, tl)
	b.stop(5 * time.Second)
	return std(b)
}

func chainOnly() (Params, []history.Event) {
	b := newHB()
	b.complete(time.Second, 1, 1, peer, other)
	b.fault(2*time.Second, "F10", history.FaultPoint)
	return std(b)
}

// ---- O18 ----

// probeRun is a lifetime of rounds of work after the start's probe, with
// the health check's status calls at the times at returns (given the
// run's end; nil: none).
func probeRun(rounds int, at func(end time.Duration) []time.Duration) (Params, []history.Event) {
	b := newHB()
	b.manualProbes = true
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	end := b.steady(tl+sec(0.5), rounds, map[uint64]int{1: 0}, nil)
	if at != nil {
		for _, t := range at(end) {
			b.status(t)
		}
	}
	b.stop(end)
	return std(b)
}

// probes: a status call every 30 s but the one at skipAt (0: none skipped).
func probes(skipAt time.Duration) (Params, []history.Event) {
	return probeRun(8, func(end time.Duration) (ts []time.Duration) {
		for t := 30 * time.Second; t < end; t += 30 * time.Second {
			if t != skipAt {
				ts = append(ts, t)
			}
		}
		return ts
	})
}

// probesOutage: a status call every 30 s, but the health check after the
// one at 60 s comes 35 s later, as a daemon's would that re-arms its 30 s
// on the answer of a call that hung for its 5 s timeout; an RPC outage
// (F2) of the given mode is open from 58 s to 64 s.
func probesOutage(mode string) (Params, []history.Event) {
	b := newHB()
	b.manualProbes = true
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	end := b.steady(tl+sec(0.5), 8, map[uint64]int{1: 0}, nil)
	for t := 30 * time.Second; t < end; t += 30 * time.Second {
		if t > time.Minute {
			t += 5 * time.Second
		}
		b.status(t)
	}
	for at, ph := range map[time.Duration]history.FaultPhase{58 * time.Second: history.FaultStart, 64 * time.Second: history.FaultEnd} {
		b.add(at, history.Event{Kind: history.KindFault, Fault: &history.Fault{ID: "F2", Phase: ph,
			Params: []history.Param{{Key: "mode", Value: mode}}}})
	}
	b.stop(end)
	return std(b)
}

// probesNone: the start's probe, then a minute of work without a status
// call.
func probesNone() (Params, []history.Event) { return probeRun(8, nil) }

// probesShort: the start's probe and a round of work, too short for a
// health-check interval.
func probesShort() (Params, []history.Event) { return probeRun(1, nil) }

func cases() []tcase {
	notEx := judge.NotExercised
	return []tcase{
		{"retry meets the cached tx", nameSingleCommit, retryMeetsCache, judge.Pass, ""},
		{"two commits of one round", nameSingleCommit, doubleCommit, judge.Violated, "committed a second time"},
		{"no retry, no restart", nameSingleCommit, baseTwo, notEx, ""},

		{"Complete while the result waits", nameNonceBounds, completeWhileWaiting, judge.Pass, ""},
		{"broadcast after its Complete", nameNonceBounds, staleBroadcast, judge.Violated, "although Complete 1 was delivered"},
		{"nonce ahead of the chain", nameNonceBounds, nonceAhead, judge.Violated, "while the chain's completed nonce is 0"},
		{"no result waits at a Complete", nameNonceBounds, baseTwo, notEx, ""},

		{"backoffs after fetch and parse failures", nameExecutionTiming, func() (Params, []history.Event) { return failThenWait(time.Minute + sec(0.3)) }, judge.Pass, ""},
		{"re-run 10 s after a fetch failure", nameExecutionTiming, func() (Params, []history.Event) { return failThenWait(10 * time.Second) }, judge.Violated, "before E"},
		{"no failure", nameExecutionTiming, baseTwo, notEx, ""},

		{"restart honours the period", nameRestartPeriod, func() (Params, []history.Event) { return restartAfterRound(sec(6.5), true) }, judge.Pass, ""},
		{"restart runs at once", nameRestartPeriod, func() (Params, []history.Event) { return restartAfterRound(sec(0.5), true) }, judge.Violated, "before lastBT + period"},
		{"a round the peer completed after the restart", nameRestartPeriod, restartThenPeersComplete, judge.Pass, ""},
		{"no restart", nameRestartPeriod, baseTwo, notEx, ""},

		{"retries spaced 1 s and 2 s", nameFetchRetries, func() (Params, []history.Event) { return retries(time.Second, 2*time.Second) }, judge.Pass, ""},
		{"retry after 200 ms", nameFetchRetries, func() (Params, []history.Event) { return retries(ms(200)) }, judge.Violated, "the wait is 1s"},
		{"a new execution after a pause in the wait", nameFetchRetries, pausedInWait, judge.Pass, ""},
		{"a 5th GET", nameFetchRetries, func() (Params, []history.Event) {
			return retries(time.Second, 2*time.Second, 4*time.Second, 5*time.Second)
		}, judge.Violated, "a 5th GET"},
		{"no failed attempt", nameFetchRetries, baseTwo, notEx, ""},

		{"codes 32, 11 and 13 handled", nameSubmitRetries, func() (Params, []history.Event) { return codeDance(false, false, false) }, judge.Pass, ""},
		{"broadcast after code 13", nameSubmitRetries, func() (Params, []history.Event) { return codeDance(true, false, false) }, judge.Violated, "terminal answer"},
		{"retry without backoff", nameSubmitRetries, func() (Params, []history.Event) { return codeDance(false, true, false) }, judge.Violated, "the backoff is at least"},
		{"gas not raised after code 11", nameSubmitRetries, func() (Params, []history.Event) { return codeDance(false, false, true) }, judge.Violated, "after code 11"},
		{"every broadcast acknowledged", nameSubmitRetries, baseTwo, notEx, ""},

		{"update while awaiting Complete", nameUpdateKeepsNonce, func() (Params, []history.Event) { return updateWhileAwaiting(false) }, judge.Pass, ""},
		{"update re-arms the job", nameUpdateKeepsNonce, func() (Params, []history.Event) { return updateWhileAwaiting(true) }, judge.Violated, "after an Update"},
		{"bogus nonce used", nameUpdateKeepsNonce, bogusNonce, judge.Violated, "bogus update nonce 7"},
		{"no update", nameUpdateKeepsNonce, baseTwo, notEx, ""},

		{"fifth request waits for a slot", nameConcurrency, func() (Params, []history.Event) { return fiveRequests(false) }, judge.Pass, ""},
		{"five GETs at once", nameConcurrency, func() (Params, []history.Event) { return fiveRequests(true) }, judge.Violated, "5 GETs in flight"},
		{"two broadcasts at once", nameConcurrency, twoBroadcastsAtOnce, judge.Violated, "2 broadcasts in flight"},
		{"a slot held through a retry wait", nameConcurrency, func() (Params, []history.Event) { return slotInWait(false) }, judge.Pass, ""},
		{"a slot lent during a retry wait", nameConcurrency, func() (Params, []history.Event) { return slotInWait(true) }, judge.Violated,
			"3 executions in flight, retry waits included"},
		{"never more ready than slots", nameConcurrency, baseTwo, notEx, ""},

		{"resync under an intruder", nameSequence, func() (Params, []history.Event) { return intruded(false) }, judge.Pass, ""},
		{"sequence reused", nameSequence, reuse, judge.Violated, "sequence 0 reused"},
		{"sequence skipped", nameSequence, skip, judge.Violated, "skips ahead"},
		{"no intruder, no eviction", nameSequence, baseTwo, notEx, ""},

		{"resync after code 32", nameResync, func() (Params, []history.Event) { return intruded(false) }, judge.Pass, ""},
		{"no resync after code 32", nameResync, func() (Params, []history.Event) { return intruded(true) }, judge.Violated, "without a successful Account answer"},
		{"a failed resync after code 32, then a broadcast", nameResync, func() (Params, []history.Event) { return intrudedFailedResync(false) }, judge.Violated,
			"without a successful Account answer"},
		{"a failed resync after code 32, then a good one", nameResync, func() (Params, []history.Event) { return intrudedFailedResync(true) }, judge.Pass, ""},
		{"no periodic resync", nameResync, func() (Params, []history.Event) { return longRun(true, false) }, judge.Violated, "no Account query for more than"},
		{"no code 32", nameResync, func() (Params, []history.Event) { return longRun(false, false) }, notEx, ""},

		{"every Complete of a frame handled", nameCompleteHandled, baseTwo, judge.Pass, ""},
		{"second entry ignored", nameCompleteHandled, func() (Params, []history.Event) {
			b, _ := twoRequestsSkip(3, func(i int, r uint64) bool { return i == 2 && r == 2 })
			return std(b)
		}, judge.Violated, "no execution of request 2"},
		{"one Complete per frame", nameCompleteHandled, baseOne, notEx, ""},

		{"paused request stops", nameNotRunning, func() (Params, []history.Event) { return paused(false) }, judge.Pass, ""},
		{"paused request runs", nameNotRunning, func() (Params, []history.Event) { return paused(true) }, judge.Violated, "is PAUSED"},
		{"foreign request runs", nameNotRunning, foreign, judge.Violated, "never listed self"},
		{"nothing stops", nameNotRunning, baseTwo, notEx, ""},

		{"endpoint by index, values exact", nameFidelity, baseTwo, judge.Pass, ""},
		{"endpoint 0 instead of 1", nameFidelity, func() (Params, []history.Event) {
			b := newHB()
			tl := b.boot(0, doc(2, 10, []string{peer, self}, 2))
			b.roundO(tl+sec(0.5), 2, ro{endpoint: 0})
			b.stop(5 * time.Second)
			return std(b)
		}, judge.Violated, "self's endpoint is /r/2/e/1"},
		{"six significant digits", nameFidelity, func() (Params, []history.Event) {
			b := newHB()
			tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
			b.roundO(tl+sec(0.5), 1, ro{raw: "1001.12"})
			b.stop(5 * time.Second)
			return std(b)
		}, judge.Violated, "raw_data \"1001.12\""},
		{"self first of one endpoint", nameFidelity, baseOne, notEx, ""},

		{"resumes after a crash in flight", nameRestart, func() (Params, []history.Event) { return crashInFlight(true) }, judge.Pass, ""},
		{"no resumption", nameRestart, func() (Params, []history.Event) { return crashInFlight(false) }, judge.Violated, "no execution of request 1"},
		{"round committed twice across a restart", nameRestart, resubmitAcrossRestart, judge.Violated, "again by lifetime 2"},
		{"no restart", nameRestart, baseTwo, notEx, ""},

		{"SIGTERM during a GET", nameShutdown, func() (Params, []history.Event) { return stopDuring(0, ms(100), false, nil) }, judge.Pass, ""},
		{"exit status 1", nameShutdown, func() (Params, []history.Event) { return stopDuring(1, ms(100), false, nil) }, judge.Violated, "exit status 1 after SIGTERM"},
		{"killed by the signal itself", nameShutdown, func() (Params, []history.Event) {
			p, evs := stopDuring(-1, ms(100), false, nil)
			for i := range evs {
				if evs[i].Proc != nil && evs[i].Proc.Action == history.ProcExit {
					evs[i].Proc.Signal = "SIGTERM" // the default action: no handler
				}
			}
			return p, evs
		}, judge.Violated, "killed by SIGTERM after SIGTERM"},
		{"GET after the signal", nameShutdown, func() (Params, []history.Event) { return stopDuring(0, sec(3), true, nil) }, judge.Violated, "GET 1.995s after SIGTERM"},
		{"exit after T_sd", nameShutdown, func() (Params, []history.Event) { return stopDuring(0, 45*time.Second, false, nil) }, judge.Violated, "T_sd"},
		{"a panic trace", nameShutdown, func() (Params, []history.Event) {
			return stopDuring(0, ms(100), false, func(b *hb, at time.Duration) {
				b.add(at+ms(50), history.Event{Kind: history.KindProc, Life: 1, Proc: &history.Proc{Action: history.ProcTrace, Output: "panic: boom"}})
			})
		}, judge.Violated, "panic: boom"},
		{"goroutines left", nameShutdown, func() (Params, []history.Event) {
			return stopDuring(0, ms(100), false, func(b *hb, at time.Duration) { b.goroutines(at+ms(60), GoroutinesFinal, 9) })
		}, judge.Violated, "9 goroutines after the stop"},
		{"exit status 1 after the attempts ran out", nameShutdown, func() (Params, []history.Event) {
			return stopDuring(1, ms(100), false, func(b *hb, at time.Duration) { refusalsBackoff(b, at-sec(20), 4) })
		}, judge.Pass, ""},
		{"exit status 1 after three refusals", nameShutdown, func() (Params, []history.Event) {
			return stopDuring(1, ms(100), false, func(b *hb, at time.Duration) { refusals(b, at-sec(20), 3) })
		}, judge.Violated, "exit status 1 after SIGTERM"},
		{"exit status 1, attempts ran out after the signal", nameShutdown, func() (Params, []history.Event) {
			return stopDuring(1, sec(9), false, func(b *hb, at time.Duration) { refusals(b, at+ms(10), 4) })
		}, judge.Violated, "exit status 1 after SIGTERM"},
		{"exit status 1, a re-subscription between the refusals", nameShutdown, func() (Params, []history.Event) {
			return stopDuring(1, ms(100), false, func(b *hb, at time.Duration) {
				refusals(b, at-sec(40), 2)
				b.connect(at-sec(25), 2)
				refusals(b, at-sec(20), 2)
			})
		}, judge.Violated, "exit status 1 after SIGTERM"},
		{"no GET at the signal", nameShutdown, baseTwo, notEx, ""},

		{"client closes first", nameClientCloses, baseTwo, judge.Pass, ""},
		{"server closes first", nameClientCloses, func() (Params, []history.Event) {
			return stopDuring(0, ms(100), false, func(b *hb, at time.Duration) { b.closeWS(at+ms(10), 1, "server") })
		}, judge.Warned, "closed by the server first"},
		{"an F1 disconnect during the stop", nameClientCloses, func() (Params, []history.Event) {
			return stopDuring(0, ms(100), false, func(b *hb, at time.Duration) {
				b.fault(at+ms(10), "F1", history.FaultStart)
				b.closeWS(at+ms(10), 1, "server")
			})
		}, judge.Pass, ""},
		{"no graceful stop", nameClientCloses, crashOnly, notEx, ""},

		{"shutdown in order", nameShutdownOrder, baseTwo, judge.Pass, ""},
		{"ResultCh before the drain", nameShutdownOrder, func() (Params, []history.Event) {
			return stopOrder("shutdownCh", "EventCh", "ErrorCh", "watcher", "ResultCh", "drained", "scheduler", "submitSemaphore",
				"submitter", "rpc-client", "fatalCh")
		}, judge.Violated, "ResultCh closed before the task group drained"},
		{"scheduler before watcher", nameShutdownOrder, func() (Params, []history.Event) {
			return stopOrder("shutdownCh", "EventCh", "ErrorCh", "scheduler", "watcher", "drained", "ResultCh", "submitSemaphore",
				"submitter", "rpc-client", "fatalCh")
		}, judge.Violated, "scheduler stopped before watcher"},
		{"crash, no shutdown", nameShutdownOrder, crashOnly, notEx, ""},

		{"steady rounds", nameLiveness, baseTwo, judge.Pass, ""},
		{"a late round", nameLiveness, lateRound, judge.Violated, "completed"},
		{"a request falls silent", nameLiveness, func() (Params, []history.Event) { return silent(true) }, judge.Violated, "no round of request 1 completed"},
		{"silent until the run ends", nameLiveness, func() (Params, []history.Event) { return silent(false) }, judge.Violated, "no round of request 1 completed"},
		{"no quiet phase", nameLiveness, func() (Params, []history.Event) {
			p, evs := baseTwo()
			p.QuietFrom = time.Time{}
			return p, evs
		}, notEx, ""},

		{"recovers after a disconnect", nameRecovery, func() (Params, []history.Event) { return disconnect(false) }, judge.Pass, ""},
		{"never recovers", nameRecovery, func() (Params, []history.Event) { return disconnect(true) }, judge.Violated, "no recovery of request 1"},
		{"no fault", nameRecovery, baseTwo, notEx, ""},

		{"well-formed wire", nameWire, baseTwo, judge.Pass, ""},
		{"unknown query path", nameWire, func() (Params, []history.Event) {
			return wireBent(func(b *hb, at time.Duration) {
				b.rpc(at, at+ms(1), methodQuery, &history.Query{Path: "/cosmos.bank.v1beta1.Query/Balance"}, nil, &history.RPCResult{Code: 6})
			})
		}, judge.Violated, "abci_query on path"},
		{"wrong subscription", nameWire, func() (Params, []history.Event) {
			return wireBent(func(b *hb, at time.Duration) {
				b.ws(at, &history.WS{Conn: 1, Action: history.WSSubscribe, Query: "tm.event='NewBlock'"})
			})
		}, judge.Violated, "none of the three queries"},
		{"first broadcast with other gas", nameWire, func() (Params, []history.Event) {
			return wireBent(func(b *hb, at time.Duration) { b.roundO(at+sec(0.5), 1, ro{gas: 80000}) })
		}, judge.Violated, "gas_limit 80000"},
		{"fee not ceil(price × gas)", nameWire, func() (Params, []history.Event) {
			return wireBent(func(b *hb, at time.Duration) {
				b.roundO(at+sec(0.5), 1, ro{answer: &answer{code: 11}})
				tx := b.submitTx(1, 1, b.q, 105000, b.lastValue()) // the result's retry
				tx.Fee[0].Amount = "44100000000000000"             // gas.limit's, not 105000's
				b.bcast(at+sec(2), tx, code(13))
			})
		}, judge.Violated, "ceil(gas.prices × gas_limit) is 66150000000000000agxn"},
		{"gas raised once after code 11", nameWire, func() (Params, []history.Event) { return gasRetries(11, 105000, 105000) }, judge.Pass, ""},
		{"gas raised twice after code 11", nameWire, func() (Params, []history.Event) { return gasRetries(11, 157500) }, judge.Violated, "3.5 asks for 105000"},
		{"gas raised after code 20", nameWire, func() (Params, []history.Event) { return gasRetries(20, 105000) }, judge.Violated, "3.5 asks for 70000"},
		{"tx with a memo", nameWire, func() (Params, []history.Event) {
			return wireBent(func(b *hb, at time.Duration) {
				tx := b.submitTx(1, 1, b.q, 70000, "1")
				tx.Memo = "oracled"
				b.bcast(at+sec(0.5), tx, code(0))
			})
		}, judge.Violated, "memo is empty"},
		{"on-chain check for provider self", nameWire, func() (Params, []history.Event) {
			return wireBent(func(b *hb, at time.Duration) {
				b.rpc(at, at+ms(1), methodQuery, &history.Query{Path: pathSubmitData, RequestID: 1, Nonce: 2, Provider: self}, nil, &history.RPCResult{})
			})
		}, judge.Violated, "asks with provider \"\""},
		{"no SUT at all", nameWire, chainOnly, notEx, ""},

		{"status every 30 s", nameHealthProbe, func() (Params, []history.Event) { return probes(0) }, judge.Pass, ""},
		{"a missing probe", nameHealthProbe, func() (Params, []history.Event) { return probes(60 * time.Second) }, judge.Violated, "no status call for more than"},
		{"too short to judge", nameHealthProbe, probesShort, notEx, ""},
		{"no health check after the start's probe", nameHealthProbe, func() (Params, []history.Event) { return probes(30 * time.Second) }, judge.Violated, "no status call for more than"},
		{"the start's probe only", nameHealthProbe, probesNone, judge.Violated, "no status call for more than"},
		{"35 s apart while calls hang (F2)", nameHealthProbe, func() (Params, []history.Event) { return probesOutage("hang") }, judge.Violated, "no status call for more than 33s"},
		{"35 s apart while calls are dropped (F2), not judged", nameHealthProbe, func() (Params, []history.Event) {
			return probesOutage("connection dropped")
		}, judge.Pass, ""},

		{"waits 1 s, 2 s, 4 s", nameResubscribe, func() (Params, []history.Event) { return redial(time.Second, 2*time.Second, 4*time.Second) }, judge.Pass, ""},
		{"jitter 10 % short", nameResubscribe, func() (Params, []history.Event) { return redial(ms(900), ms(1800)) }, judge.Pass, ""},
		{"redial at once", nameResubscribe, func() (Params, []history.Event) { return redial(ms(5)) }, judge.Violated, "waits at least 900ms"},
		{"second wait not doubled", nameResubscribe, func() (Params, []history.Event) { return redial(time.Second, time.Second) }, judge.Violated, "waits at least 1.8s"},
		{"fatal after 4 refusals", nameResubscribe, func() (Params, []history.Event) { return giveUp(4) }, judge.Pass, ""},
		{"fatal after 1 refusal", nameResubscribe, func() (Params, []history.Event) { return giveUp(1) }, judge.Violated, "only 1 re-subscription attempts in a row failed"},
		{"no disconnect", nameResubscribe, baseTwo, notEx, ""},

		{"re-run 1 min after code 13", nameGaveUp, func() (Params, []history.Event) { return feeRefused(time.Minute + sec(0.5)) }, judge.Pass, ""},
		{"no re-run after code 13", nameGaveUp, func() (Params, []history.Event) { return feeRefused(0) }, judge.Violated, "no execution of request 1 started"},
		{"re-run 5 min after code 13", nameGaveUp, func() (Params, []history.Event) { return feeRefused(5 * time.Minute) }, judge.Violated, "after the submission gave up"},
		{"no give-up", nameGaveUp, baseTwo, notEx, ""},

		{"R after the re-subscription", nameResubscribeReconciles, func() (Params, []history.Event) { return redial(time.Second) }, judge.Pass, ""},
		{"no R after the re-subscription", nameResubscribeReconciles, func() (Params, []history.Event) { return resubscribed(0) }, judge.Violated, "no OracleRequestDocs query within G"},
		{"R 3 s after the re-subscription", nameResubscribeReconciles, func() (Params, []history.Event) { return resubscribed(3 * time.Second) }, judge.Violated, "no OracleRequestDocs query within G"},
		{"R 3 s late behind an RPC outage, not judged", nameResubscribeReconciles, resubscribedInOutage, notEx, ""},
		{"no re-subscription", nameResubscribeReconciles, baseTwo, notEx, ""},

		{"code 20 retried after 1 s", nameRetried, func() (Params, []history.Event) { return mempoolFull(1, false) }, judge.Pass, ""},
		{"six attempts, then a give-up", nameRetried, func() (Params, []history.Event) { return mempoolFull(5, true) }, judge.Pass, ""},
		{"code 20 given up", nameRetried, func() (Params, []history.Event) { return mempoolFull(0, true) }, judge.Violated, "the round was given up, not retried"},
		{"given up after two attempts", nameRetried, func() (Params, []history.Event) { return mempoolFull(1, true) }, judge.Violated, "with at most 2 of 6 attempts made"},
		{"backoff doubled", nameRetried, func() (Params, []history.Event) { return mempoolFullWaits(5, false, 2) }, judge.Violated, "no attempt for round 2 of request 1 began"},
		{"no retryable answer", nameRetried, baseTwo, notEx, ""},

		{"each Update looked up", nameDocEvents, pausedInWait, judge.Pass, ""},
		{"a repeated frame not looked up again", nameDocEvents, func() (Params, []history.Event) { return updates(true, false) }, judge.Pass, ""},
		{"a second Update skipped", nameDocEvents, func() (Params, []history.Event) { return updates(false, false) }, judge.Violated, "no OracleRequestDoc query for request 1"},
		{"a second Update looked up", nameDocEvents, func() (Params, []history.Event) { return updates(false, true) }, judge.Pass, ""},
		{"the second of two queued Updates looked up 3 s later", nameDocEvents, func() (Params, []history.Event) { return queuedUpdates(sec(3)) }, judge.Pass, ""},
		{"the second of two queued Updates looked up 5 s later", nameDocEvents, func() (Params, []history.Event) { return queuedUpdates(sec(5)) }, judge.Violated, "no OracleRequestDoc query for request 1"},
		{"no Register or Update", nameDocEvents, baseTwo, notEx, ""},

		{"each creation checks the chain", nameCreationChecks, baseTwo, judge.Pass, ""},
		{"a first round run unchecked", nameCreationChecks, func() (Params, []history.Event) { return uncheckedCreation(false) }, judge.Violated,
			"first execution of request 1's job with no OracleSubmitData query"},
		{"a job created again, unchecked", nameCreationChecks, func() (Params, []history.Event) { return uncheckedCreation(true) }, judge.Violated,
			"first execution of request 1's job with no OracleSubmitData query"},
		{"no execution", nameCreationChecks, bootOnly, notEx, ""},

		{"a dropped event reconciled 5 s later", nameLookupFollowed, func() (Params, []history.Event) { return droppedEvent(true) }, judge.Pass, ""},
		{"a dropped event never reconciled", nameLookupFollowed, func() (Params, []history.Event) { return droppedEvent(false) }, judge.Violated,
			"neither tried again nor followed by R's list"},
		{"a failed list tried again 5 s later", nameLookupFollowed, func() (Params, []history.Event) { return failedList(sec(5)) }, judge.Pass, ""},
		{"a failed list tried again 30 s later", nameLookupFollowed, func() (Params, []history.Event) { return failedList(sec(30)) }, judge.Violated,
			"OracleRequestDocs query was not tried again"},
		{"no failed doc query", nameLookupFollowed, baseTwo, notEx, ""},

		{"a submitted round waits for its Complete", nameSubmittedNotRerun, func() (Params, []history.Event) { return submittedRound(false) }, judge.Pass, ""},
		{"a submitted round run again", nameSubmittedNotRerun, func() (Params, []history.Event) { return submittedRound(true) }, judge.Violated,
			"self's submission for round 2 is on chain"},
		{"nothing submitted before", nameSubmittedNotRerun, baseTwo, notEx, ""},

		{"a paused job missing from R's list is looked up", nameMissingQueried, func() (Params, []history.Event) { return missingFromList(true) }, judge.Pass, ""},
		{"a paused job missing from R's list is not looked up", nameMissingQueried, func() (Params, []history.Event) { return missingFromList(false) }, judge.Violated,
			"no OracleRequestDoc query for it"},
		{"no job missing from a list", nameMissingQueried, baseTwo, notEx, ""},

		{"resync moves the sequence down", nameResynced, func() (Params, []history.Event) { return resyncAfterEviction(0) }, judge.Pass, ""},
		{"resync never moves it down", nameResynced, func() (Params, []history.Event) { return resyncAfterEviction(1) }, judge.Violated, "the last Account answer said 0"},
		{"no broadcast", nameResynced, bootOnly, notEx, ""},
	}
}

func TestCheckers(t *testing.T) {
	covered := map[string]map[judge.Verdict]bool{}
	for _, tc := range cases() {
		t.Run(tc.checker+"/"+tc.name, func(t *testing.T) {
			p, evs := tc.build()
			r := judgeRun(t, p, evs)
			if covered[tc.checker] == nil {
				covered[tc.checker] = map[judge.Verdict]bool{}
			}
			covered[tc.checker][tc.want] = true
			require.Equal(t, tc.want, r.Verdict(tc.checker), describe(r, evs))
			switch tc.want {
			case judge.Pass:
				require.Empty(t, r.Violations, "a passing history must pass every checker\n%s", describe(r, evs))
				require.Positive(t, r.Exercised[tc.checker])
			case judge.NotExercised:
				require.Empty(t, r.ByChecker(tc.checker))
			default:
				vs := r.ByChecker(tc.checker)
				require.NotEmpty(t, vs)
				found := false
				for _, v := range vs {
					require.NotEmpty(t, v.Evidence, "every violation names its evidence")
					require.Equal(t, Contracts()[tc.checker], v.Contract)
					for _, seq := range v.Evidence {
						require.True(t, seq >= 1 && seq <= int64(len(evs)), "evidence #%d is a record of the run", seq)
					}
					if strings.Contains(v.Message, tc.msg) {
						found = true
					}
				}
				require.True(t, found, "no violation says %q:\n%s", tc.msg, describe(r, evs))
			}
		})
	}
	for _, n := range Names() {
		bad := judge.Violated
		if n == nameClientCloses {
			bad = judge.Warned
		}
		require.True(t, covered[n][judge.Pass] && covered[n][bad] && covered[n][judge.NotExercised],
			"%s needs a passing, a violating and a not-exercised history", n)
	}
}

// ---- O19 ----

// redial: request 1 for three rounds; during the first, the server
// closes the WebSocket and the daemon's connection attempts follow after
// gaps (each refused but the last, which connects and re-subscribes).
func redial(gaps ...time.Duration) (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	t := tl + sec(0.2)
	b.closeWS(t, 1, "server")
	for i, g := range gaps {
		t += g
		if i < len(gaps)-1 {
			b.ws(t, &history.WS{Action: history.WSRefuse})
			continue
		}
		b.connect(t, 2)
		b.list(t+ms(5), doc(1, 10, []string{self, peer}, 1)) // R (D25)
	}
	return b.threeRounds(tl, params())
}

// giveUp: as redial, but the daemon's attempts are refused refusals times,
// each after its full backoff, and it exits with status 1 before its next
// round (no quiet phase: the run ends there).
func giveUp(refusals int) (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	t := tl + sec(0.2)
	b.closeWS(t, 1, "server")
	for k := 0; k < refusals; k++ {
		t += min(time.Second<<k, 10*time.Second)
		b.ws(t, &history.WS{Action: history.WSRefuse})
	}
	end := b.steady(tl+sec(0.5), 2, map[uint64]int{1: 0}, nil)
	b.periodic(0, end-time.Second)
	b.exit(end-time.Second, 1)
	return Params{Self: self}, b.build()
}

// ---- O20 ----

// feeRefused: request 1 runs a round, then its next broadcast meets code
// 13 (insufficient fee) and the submission gives up; the job re-runs
// rerun after the answer (0: never), and a round completes. No quiet
// phase: the round the fee held up is not O16's question.
func feeRefused(rerun time.Duration) (Params, []history.Event) {
	b, _, at, v := secondFetch()
	b.onChain(at+ms(30), 1, 2, false)
	b.bcast(at+ms(40), b.submitTx(1, 2, b.q, 70000, v), code(13))
	end := at + 2*time.Minute
	if rerun > 0 {
		bt := b.round(at+ms(41)+rerun, 1, 0)
		end = bt + sec(5)
	}
	b.periodic(0, end)
	b.stop(end)
	return Params{Self: self}, b.build()
}

// pausedInWait: request 1's execution fails its first GET; while it waits
// for the second attempt an Update pauses the request and another enables
// it again, so the daemon ends that execution without a GET (3.3.3,
// D12) and starts a new one on its next tick, whose second attempt comes
// 1 s after its first. Its GETs are a new execution's, not attempts 2 and
// 3 of the old one.
func pausedInWait() (Params, []history.Event) {
	b := newHB()
	d := doc(1, 10, []string{self, peer}, 1)
	tl := b.boot(0, d)
	at := tl + sec(0.5)
	b.get(at, ms(20), 1, path(1, 0), failed())
	paused := d
	paused.Status = int32(oracle.StatusPaused)
	b.txFrame(at+ms(300), true, 1)
	b.docAnswer(at+ms(301), paused)
	b.txFrame(at+ms(600), true, 1)
	b.docAnswer(at+ms(601), d)
	b.get(at+sec(1.5), ms(20), 1, path(1, 0), failed())
	b.get(at+sec(2.52), ms(20), 1, path(1, 0), failed())
	end := at + sec(4)
	b.periodic(0, end)
	b.stop(end)
	return Params{Self: self}, b.build()
}

// ---- O21 ----

// resyncAfterEviction: request 1's round-1 tx (sequence 0) is acknowledged
// and then evicted (F13); a resync then says 0; the next round's
// broadcast uses want (0 by ORACLE-SPEC 3.5; 1 for a daemon whose resync
// never moves the sequence down).
func resyncAfterEviction(want uint64) (Params, []history.Event) {
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
	bt := ceilSec(at+sec(1)) + time.Second
	b.complete(bt, 1, 1, peer, other)
	b.account(at+sec(3), 0)
	again := bt + sec(10.5)
	res2, v2 := b.okValue()
	b.get(again, ms(20), 1, path(1, 0), res2)
	b.onChain(again+ms(30), 1, 2, false)
	b.bcast(again+ms(40), b.submitTx(1, 2, want, 70000, v2), code(0))
	end := again + sec(5)
	b.statusEvery(0, end)
	b.stop(end)
	return Params{Self: self}, b.build()
}

// secondFetch: request 1 runs a round, and the next round's execution
// fetches v at at (the round's Complete came at bt); the broadcasts are the
// caller's.
func secondFetch() (b *hb, bt, at time.Duration, v string) {
	b = newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	bt = b.round(tl+sec(0.5), 1, 0)
	at = bt + sec(10.5)
	res, v := b.okValue()
	b.get(at, ms(20), 1, path(1, 0), res)
	return b, bt, at, v
}

// bootOnly: a lifetime that starts, loads request 1 and stops before
// anything runs.
func bootOnly() (Params, []history.Event) {
	b := newHB()
	b.boot(0, doc(1, 10, []string{self, peer}, 1))
	b.stop(sec(0.4))
	return std(b)
}

// ---- O22 ----

// threeRounds ends a history whose lifetime listed request 1 at tl: three
// steady rounds of it from tl + 0.5 s, the periodic calls and a stop.
func (b *hb) threeRounds(tl time.Duration, p Params) (Params, []history.Event) {
	end := b.steady(tl+sec(0.5), 3, map[uint64]int{1: 0}, nil)
	b.periodic(0, end)
	b.stop(end)
	return p, b.build()
}

// resubscribed: request 1 for three rounds; the server closes the
// WebSocket, the daemon reconnects 1 s later and re-subscribes, and runs
// R after late (0: never). The doc did not change meanwhile, so O16b sees
// nothing to recover.
func resubscribed(late time.Duration) (Params, []history.Event) {
	b := newHB()
	d := doc(1, 10, []string{self, peer}, 1)
	tl := b.boot(0, d)
	t := tl + sec(0.2)
	b.closeWS(t, 1, "server")
	b.connect(t+time.Second, 2)
	if late > 0 {
		b.list(t+time.Second+late, d)
	}
	return b.threeRounds(tl, params())
}

// resubscribedInOutage: as resubscribed(3 s), with an RPC outage (F2)
// open at the re-subscription: an R in progress may hold the next one.
func resubscribedInOutage() (Params, []history.Event) {
	b := newHB()
	d := doc(1, 10, []string{self, peer}, 1)
	tl := b.boot(0, d)
	t := tl + sec(0.2)
	b.fault(t, "F2", history.FaultStart)
	b.closeWS(t, 1, "server")
	b.connect(t+time.Second, 2)
	b.fault(t+sec(2), "F2", history.FaultEnd)
	b.list(t+sec(4), d)
	end := b.steady(tl+sec(60), 3, map[uint64]int{1: 0}, nil)
	b.periodic(0, end)
	b.stop(end)
	return Params{Self: self}, b.build()
}

// ---- O23 ----

// mempoolFull: request 1 runs a round; its next broadcast meets a full
// mempool, and retries follow it, each after its backoff (1, 2, 4, 8,
// 16 s), the last acknowledged — unless rerun: then every one meets the
// full mempool and the job re-runs 1 min after the last (a give-up). No
// quiet phase: the round the mempool held up is not O16's question.
func mempoolFull(retries int, rerun bool) (Params, []history.Event) {
	return mempoolFullWaits(retries, rerun, 1)
}

// mempoolFullWaits is mempoolFull with every backoff stretched by factor.
func mempoolFullWaits(retries int, rerun bool, factor time.Duration) (Params, []history.Event) {
	b, _, at, v := secondFetch()
	full := answer{rpc: "mempool is full: number of txs 5000 (max: 5000), total txs bytes 1 (max: 1)"}
	t := at + ms(40)
	for k := 0; k <= retries; k++ {
		if k > 0 {
			t += factor*time.Second<<(k-1) + ms(2)
		}
		b.onChain(t-ms(10), 1, 2, false)
		a := full
		if k == retries && !rerun {
			a = code(0)
		}
		tx := b.submitTx(1, 2, b.q, 70000, v)
		b.bcast(t, tx, a)
		if a == code(0) {
			b.q++
			c := ceilSec(t + ms(1))
			b.commit(c, tx, 0)
			b.complete(c+time.Second, 1, 2, peer, self)
		}
	}
	end := t + sec(10)
	if rerun {
		bt := b.round(t+ms(1)+time.Minute+sec(0.5), 1, 0)
		end = bt + sec(5)
	}
	b.periodic(0, end)
	b.stop(end)
	return Params{Self: self}, b.build()
}

// ---- O24 ----

// updates: request 1 runs; two Update frames for it arrive 5 s apart, the
// first looked up at once; the second repeats the first's tx (same) or is
// another tx, and is looked up only when lookedUp.
func updates(same, lookedUp bool) (Params, []history.Event) {
	b := newHB()
	d := doc(1, 10, []string{self, peer}, 1)
	tl := b.boot(0, d)
	frame := func(at time.Duration, hash string) {
		ev := map[string][]string{oracle.KeyTMEvent: {"Tx"}, oracle.KeyAction: {oracle.TypeURLUpdate},
			oracle.KeyUpdateID: {"1"}, oracle.KeyTxHash: {hash}}
		b.ws(at, &history.WS{Conn: 1, Action: history.WSFrame, Query: oracle.QueryUpdate, Frame: &history.Frame{Type: "Tx", Events: ev}})
	}
	frame(tl+sec(3), "AA01")
	b.docAnswer(tl+sec(3)+ms(1), d)
	second := "AA02"
	if same {
		second = "AA01"
	}
	frame(tl+sec(8), second)
	if lookedUp {
		b.docAnswer(tl+sec(8)+ms(1), d)
	}
	return b.threeRounds(tl, params())
}

// queuedUpdates: two Update frames delivered together; the daemon handles
// them one at a time (D19), the second's lookup `second` after the frames.
func queuedUpdates(second time.Duration) (Params, []history.Event) {
	b := newHB()
	d := doc(1, 10, []string{self, peer}, 1)
	tl := b.boot(0, d)
	for i, hash := range []string{"AA01", "AA02"} {
		ev := map[string][]string{oracle.KeyTMEvent: {"Tx"}, oracle.KeyAction: {oracle.TypeURLUpdate},
			oracle.KeyUpdateID: {"1"}, oracle.KeyTxHash: {hash}}
		b.ws(tl+sec(3)+ms(i), &history.WS{Conn: 1, Action: history.WSFrame, Query: oracle.QueryUpdate, Frame: &history.Frame{Type: "Tx", Events: ev}})
	}
	b.docAnswer(tl+sec(3)+ms(5), d)
	b.docAnswer(tl+sec(3)+second, d)
	return b.threeRounds(tl, params())
}

// slotInWait: pool_size 2 and three requests. Request 1's first GET fails
// and it retries 1 s later; request 2's one GET (failed; D1 allows fewer
// attempts) is in flight from 0.6 s to 0.9 s; request 3's starts at 0.7 s
// (lent: while request 1 waits and request 2 fetches, a third execution)
// or at 0.95 s, once request 2's execution ended (the second slot).
func slotInWait(lent bool) (Params, []history.Event) {
	b := newHB()
	docs := []history.Doc{doc(1, 10, []string{self, peer}, 1), doc(2, 10, []string{self, peer}, 1), doc(3, 10, []string{self, peer}, 1)}
	tl := b.boot(0, docs...)
	b.get(tl+sec(0.5), ms(20), 1, path(1, 0), failed())
	b.get(tl+sec(1.6), ms(20), 1, path(1, 0), failed())
	b.get(tl+sec(0.6), ms(300), 2, path(2, 0), failed())
	at := tl + sec(0.95)
	if lent {
		at = tl + sec(0.7)
	}
	b.get(at, ms(20), 3, path(3, 0), failed())
	b.stop(tl + sec(5))
	return Params{Self: self, PoolSize: 2}, b.build()
}

// ---- O25 ----

// uncheckedCreation: request 1 (nonce 0) is listed at the start; the
// daemon runs it with no on-chain check first — or (again) checks at the
// start and runs a round, fails the next one's fetch, then an Update
// removes self and another adds it back, and the re-created job runs with
// no check since that failed execution.
func uncheckedCreation(again bool) (Params, []history.Event) {
	b := newHB()
	d := doc(1, 10, []string{self, peer}, 1)
	tl := sec(0.01)
	if again {
		tl = b.boot(0, d)
	} else {
		b.start(0)
		b.connect(0, 1)
		b.status(ms(4))
		b.account(ms(6), 0)
		b.list(ms(9), d)
	}
	bt := b.round(tl+sec(0.5), 1, 0)
	end := bt + sec(5)
	if again {
		at := bt + sec(10.5) // the next round's execution fails: no check after it
		b.get(at, ms(20), 1, path(1, 0), failed())
		gone := doc(1, 10, []string{peer}, 1)
		gone.Nonce = 1
		b.txFrame(at+sec(1), true, 1)
		b.docAnswer(at+sec(1)+ms(1), gone)
		back := gone
		back.AccountList = []string{peer, self}
		b.txFrame(at+sec(2), true, 1)
		b.docAnswer(at+sec(2)+ms(1), back)
		res, _ := b.okValue()
		b.get(at+sec(3), ms(20), 1, path(1, 0), res)
		end = at + sec(5)
	}
	b.stop(end)
	return Params{Self: self}, b.build()
}

// ---- O26 ----

// droppedEvent: request 1 runs; under F14 an Update frame's three doc
// queries fail (1 s and 2 s apart) and the event is dropped; R's list
// follows 5 s later, or (reconciled false) never.
func droppedEvent(reconciled bool) (Params, []history.Event) {
	b := newHB()
	d := doc(1, 10, []string{self, peer}, 1)
	tl := b.boot(0, d)
	at := tl + sec(2)
	b.fault(at-sec(1), "F14", history.FaultStart)
	b.txFrame(at, true, 1)
	for _, t := range []time.Duration{at, at + sec(1), at + sec(3)} {
		b.rpc(t, t+ms(1), methodQuery, &history.Query{Path: pathDoc, RequestID: 1}, nil,
			&history.RPCResult{Code: 1, Codespace: "sdk", Log: "internal error (F14): error code 1"})
	}
	b.fault(at+sec(4), "F14", history.FaultEnd)
	if reconciled {
		b.list(at+sec(8), d)
	}
	return b.threeRounds(tl, Params{Self: self})
}

// failedList is a lifetime whose R's list fails once after a
// re-subscription (F14 on the list), tried again after retry.
func failedList(retry time.Duration) (Params, []history.Event) {
	b := newHB()
	d := doc(1, 10, []string{self, peer}, 1)
	tl := b.boot(0, d)
	at := tl + sec(2)
	b.fault(at-sec(1), "F14", history.FaultStart)
	b.rpc(at, at+ms(1), methodQuery, &history.Query{Path: pathDocs, Status: 1}, nil,
		&history.RPCResult{Code: 1, Codespace: "sdk", Log: "internal error (F14): error code 1"})
	b.fault(at+sec(2), "F14", history.FaultEnd)
	b.list(at+retry, d)
	return b.threeRounds(tl, Params{Self: self})
}

// submittedRound: a lifetime starts (after a crash, say) with doc nonce 1
// and self's round-2 submission already on chain, which the creation's
// check finds; the peer completes round 2 5 s later and the daemon runs
// round 3 after that. rerun: it runs round 2 at once instead.
func submittedRound(rerun bool) (Params, []history.Event) {
	b := newHB()
	d := doc(1, 10, []string{self, peer}, 1)
	d.Nonce = 1
	b.start(0)
	b.connect(0, int64(b.life))
	b.status(ms(4))
	b.account(ms(6), b.q)
	b.list(ms(9), d)
	b.onChain(ms(10), 1, 2, true)
	tl := ms(10)
	if rerun {
		res, _ := b.okValue()
		b.get(tl+sec(0.5), ms(20), 1, path(1, 0), res)
	}
	b.complete(tl+sec(5), 1, 2, self, peer)
	end := b.steady(tl+sec(15.5), 1, map[uint64]int{1: 0}, nil)
	b.periodic(0, end)
	b.stop(end)
	return std(b)
}

// gasRetries: request 1's result is broadcast with gas.limit and answered
// with code first; the retries carry gases (each answered with code 20,
// the last with code 0), 1 s, 2 s, … after the answer before.
func gasRetries(first uint32, gases ...uint64) (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	at := tl + sec(0.5)
	res, v := b.okValue()
	b.get(at, ms(20), 1, path(1, 0), res)
	b.onChain(at+ms(30), 1, 1, false)
	b.bcast(at+ms(40), b.submitTx(1, 1, b.q, 70000, v), code(first))
	t := at + ms(41)
	var tx history.Tx
	for k, g := range gases {
		t += time.Duration(1<<k) * time.Second
		b.onChain(t-ms(2), 1, 1, false)
		tx = b.submitTx(1, 1, b.q, g, v)
		a := code(20)
		if k == len(gases)-1 {
			a = code(0)
			b.q++
		}
		b.bcast(t, tx, a)
		t += ms(1)
	}
	c := ceilSec(t + ms(1))
	b.commit(c, tx, 0)
	b.complete(c+time.Second, 1, 1, peer, self)
	end := b.steady(c+sec(11.5), 1, map[uint64]int{1: 0}, nil)
	b.periodic(0, end)
	b.stop(end)
	return std(b)
}

// missingFromList: request 1 runs; request 2 is registered PAUSED (its
// job stored, not run); the WebSocket drops and R's list after the
// re-subscription leaves request 2 out (ENABLED only): step 3 looks it up
// (queried) or not.
func missingFromList(queried bool) (Params, []history.Event) {
	b := newHB()
	d := doc(1, 10, []string{self, peer}, 1)
	tl := b.boot(0, d)
	d2 := doc(2, 10, []string{self, peer}, 1)
	d2.Status = int32(oracle.StatusPaused)
	at := tl + sec(0.2)
	b.moderate(at, d2)
	b.txFrame(at+ms(5), false, 2)
	b.docAnswer(at+ms(10), d2)
	b.onChain(at+ms(11), 2, 1, false)
	t := tl + sec(3)
	b.closeWS(t, 1, "server")
	b.connect(t+time.Second, 2)
	b.list(t+time.Second+ms(10), d)
	if queried {
		b.docAnswer(t+time.Second+ms(20), d2)
	}
	return b.threeRounds(tl, params())
}
