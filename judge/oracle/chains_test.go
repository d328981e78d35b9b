package oracle

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

// Issue 22, item 6: the judge attributes by result, not by execution. A
// daemon that runs a request again while an earlier execution waits to
// retry its GET, or while an earlier result still retries its broadcast,
// keeps two attempt chains of one request side by side; each chain's
// spacing, attempts and give-up are its own. These histories hold two
// interleaved chains of request 1; the daemon that makes them breaks O3
// (two executions at once, or one before its E) and nothing else unless a
// test bends one chain.

// violatedSet lists the checkers a report flags, sorted.
func violatedSet(r *judge.Report) []string {
	var out []string
	for _, v := range r.Violations {
		if !slices.Contains(out, v.Checker) {
			out = append(out, v.Checker)
		}
	}
	slices.Sort(out)
	return out
}

// messagesOf lists one checker's violation messages.
func messagesOf(r *judge.Report, checker string) []string {
	var out []string
	for _, v := range r.Violations {
		if v.Checker == checker {
			out = append(out, v.Message)
		}
	}
	return out
}

// interleavedFetches: execution A's GET fails; a tick later the daemon
// starts execution B (its GET fails too) while A waits; A retries one
// second after its failure, B one second after its own (or after
// bWait), then A's third attempt, on time, succeeds and its value is
// submitted.
func interleavedFetches(bWait time.Duration) (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	a1 := tl + sec(0.5)                                              // A's first attempt
	b.get(a1, ms(20), 1, path(1, 0), failed())                       // ends a1+20ms: A's retry is due a1+1.02
	b.get(a1+sec(0.5), ms(20), 1, path(1, 0), failed())              // B, a new execution while A waits
	a2 := a1 + ms(20) + time.Second                                  // A's attempt 2, on time
	b.get(a2, ms(20), 1, path(1, 0), failed())                       // A waits 2 s now
	b.get(a1+sec(0.5)+ms(20)+bWait, ms(20), 1, path(1, 0), failed()) // B's attempt 2
	a3 := a2 + ms(20) + 2*time.Second                                // A's attempt 3, on time
	bt := b.round(a3, 1, 0)
	b.stop(bt + sec(2))
	return std(b)
}

func TestFetchRetriesJudgedPerExecution(t *testing.T) {
	// Each chain spaced as 3.4 asks: no O4; the second execution, started
	// while the first waited to retry, is O3's.
	p, evs := interleavedFetches(time.Second)
	r := judgeRun(t, p, evs)
	require.Equal(t, []string{nameExecutionTiming}, violatedSet(r), describe(r, evs))
	require.Positive(t, r.Exercised[nameFetchRetries], "two failed attempts in one execution")
	require.Contains(t, strings.Join(messagesOf(r, nameExecutionTiming), "\n"), "waited to retry")

	// B's retry 300 ms after its failure: O4, for B's chain alone.
	p, evs = interleavedFetches(ms(300))
	r = judgeRun(t, p, evs)
	require.Equal(t, []string{nameExecutionTiming, nameFetchRetries}, violatedSet(r), describe(r, evs))
	o4 := messagesOf(r, nameFetchRetries)
	require.Len(t, o4, 1, describe(r, evs))
	require.Contains(t, o4[0], "came 300ms after attempt 1 ended; the wait is 1s")
}

// TestEarlyAttemptFlaggedAtTheEnd: an early attempt that no later GET
// of its lifetime shows to be a new execution is O4's, at the run's end.
func TestEarlyAttemptFlaggedAtTheEnd(t *testing.T) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	b.get(tl+sec(0.5), ms(20), 1, path(1, 0), failed())
	b.get(tl+sec(0.9), ms(20), 1, path(1, 0), failed())
	p, evs := std(b)
	r := judgeRun(t, p, evs)
	require.Equal(t, []string{nameFetchRetries}, violatedSet(r), describe(r, evs))
	require.Contains(t, messagesOf(r, nameFetchRetries)[0], "the wait is 1s")
}

// sideBySide: execution X extracts vX and submits it into a full mempool
// (or meets first); a tick later the daemon runs the request again (Y,
// O3), extracts vY and submits it into the full mempool too. X's retry
// comes 1 s after X's answer and is admitted; Y's retry, 1 s after Y's
// answer, finds self's submission on chain and stops there (D3).
func sideBySide(first answer) (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	full := answer{rpc: "mempool is full: number of txs 5000 (max: 5000), total txs bytes 1 (max: 1)"}
	x := tl + sec(0.5)
	resX, vX := b.okValue()
	b.get(x, ms(20), 1, path(1, 0), resX)
	b.onChain(x+ms(30), 1, 1, false)
	b.bcast(x+ms(40), b.submitTx(1, 1, b.q, 70000, vX), first) // answered x+41ms
	y := x + time.Second
	resY, vY := b.okValue()
	b.get(y, ms(20), 1, path(1, 0), resY)
	b.onChain(y+ms(30), 1, 1, false)
	b.bcast(y+ms(40), b.submitTx(1, 1, b.q, 70000, vY), full) // answered y+41ms
	retry := x + ms(41) + sec(1.05)                           // X's retry: 1.05 s after its answer, 9 ms after Y's
	b.onChain(retry-ms(5), 1, 1, false)
	tx := b.submitTx(1, 1, b.q, 70000, vX)
	b.bcast(retry, tx, code(0))
	b.q++
	c := ceilSec(retry + ms(1))
	b.commit(c, tx, 0)
	b.onChain(y+ms(41)+sec(1.05), 1, 1, true) // Y's retry: self is on chain
	b.complete(c+time.Second, 1, 1, peer, self)
	b.stop(c + 3*time.Second)
	return std(b)
}

func TestSubmissionRetriesJudgedPerResult(t *testing.T) {
	// Two results of round 1 in submission side by side, each retried
	// after its own answer: O5's spacing, O12's value and O23's retries
	// hold per result; only the second execution (before its E) is O3's.
	p, evs := sideBySide(answer{rpc: "mempool is full: number of txs 5000 (max: 5000), total txs bytes 1 (max: 1)"})
	r := judgeRun(t, p, evs)
	require.Equal(t, []string{nameExecutionTiming}, violatedSet(r), describe(r, evs))
	require.Positive(t, r.Exercised[nameRetried], "a retry after a retryable answer")

	// X's first answer is code 13: its retry is O5's, though another
	// execution of the request ran in between.
	p, evs = sideBySide(code(13))
	r = judgeRun(t, p, evs)
	require.Equal(t, []string{nameExecutionTiming, nameSubmitRetries}, violatedSet(r), describe(r, evs))
	o5 := messagesOf(r, nameSubmitRetries)
	require.Len(t, o5, 1, describe(r, evs))
	require.Contains(t, o5[0], "broadcast again after a terminal answer (insufficient fee)")
}

// giveUpPerResult: result X is refused by a full mempool six times, its
// retries spaced as 3.5 asks (it then gives up, as it may); result Y,
// extracted by an execution a tick after X's, is refused once and never
// retried. A new execution comes a minute after X's last answer (the
// re-run X's give-up arms, D7).
func giveUpPerResult() (Params, []history.Event) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	full := answer{rpc: "mempool is full: number of txs 5000 (max: 5000), total txs bytes 1 (max: 1)"}
	x := tl + sec(0.5)
	resX, vX := b.okValue()
	b.get(x, ms(20), 1, path(1, 0), resX)
	y := x + time.Second
	resY, vY := b.okValue()
	b.get(y, ms(20), 1, path(1, 0), resY)
	b.onChain(y+ms(30), 1, 1, false)
	b.bcast(y+ms(40), b.submitTx(1, 1, b.q, 70000, vY), full) // Y's only attempt
	t := x + ms(40)
	for k := 0; k < specSubmitAttempts; k++ {
		if k > 0 {
			t += time.Second<<(k-1) + ms(2)
		}
		b.onChain(t-ms(5), 1, 1, false)
		b.bcast(t, b.submitTx(1, 1, b.q, 70000, vX), full)
	}
	rerun := t + ms(1) + time.Minute + sec(0.5)
	bt := b.round(rerun, 1, 0)
	b.stop(bt + sec(2))
	return std(b)
}

func TestGiveUpCountedPerResult(t *testing.T) {
	// X spent its six attempts: its give-up is allowed (and O20 sees it
	// re-armed). Y made one: the re-run a minute later shows it given up
	// (O23), counted by Y's own attempts, not X's.
	p, evs := giveUpPerResult()
	r := judgeRun(t, p, evs)
	require.Equal(t, []string{nameRetried, nameExecutionTiming}, violatedSet(r), describe(r, evs))
	require.Positive(t, r.Exercised[nameGaveUp], "X's give-up re-armed the job")
	for _, m := range messagesOf(r, nameRetried) {
		require.True(t, strings.Contains(m, "at most 1 of 6 attempts") || strings.Contains(m, "(the backoff before retry 1,"),
			"only Y's single attempt is a give-up: %s", m)
	}
}

// TestSamePayloadTwoResults: two executions a second apart fetch the same
// value (a source's value changes once a second), so two results of one
// round carry one payload. Result X's retry, spaced after X's own answer
// though it comes 49 ms after Y's, is X's: neither result's retries are
// early.
func TestSamePayloadTwoResults(t *testing.T) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	full := answer{rpc: "mempool is full: number of txs 5000 (max: 5000), total txs bytes 1 (max: 1)"}
	res, v := b.okValue()
	x := tl + sec(0.5)
	b.get(x, ms(20), 1, path(1, 0), res)
	b.onChain(x+ms(30), 1, 1, false)
	b.bcast(x+ms(40), b.submitTx(1, 1, b.q, 70000, v), full)
	y := x + time.Second
	b.get(y, ms(20), 1, path(1, 0), res) // the same body: the same value
	b.onChain(y+ms(30), 1, 1, false)
	b.bcast(y+ms(40), b.submitTx(1, 1, b.q, 70000, v), full)
	retry := y + ms(90) // X's retry: 1.049 s after X's answer, 49 ms after Y's
	b.onChain(retry-ms(5), 1, 1, false)
	tx := b.submitTx(1, 1, b.q, 70000, v)
	b.bcast(retry, tx, code(0))
	b.q++
	c := ceilSec(retry + ms(1))
	b.commit(c, tx, 0)
	b.onChain(y+ms(41)+sec(1.05), 1, 1, true) // Y's retry finds self on chain
	b.complete(c+time.Second, 1, 1, peer, self)
	b.stop(c + 3*time.Second)
	p, evs := std(b)
	r := judgeRun(t, p, evs)
	require.Equal(t, []string{nameExecutionTiming}, violatedSet(r), describe(r, evs))
}

// TestEarlyGetShownNewByItsOwnRetry: execution A waits 2 s after its
// second failure; execution B starts meanwhile (early for A) and fails;
// B's retry comes 1 s after, on time for B and before A's: B was a new
// execution (O3), and neither chain's spacing is early.
func TestEarlyGetShownNewByItsOwnRetry(t *testing.T) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	a := tl + sec(0.5)
	b.get(a, ms(20), 1, path(1, 0), failed())                   // A1, ends a+20ms
	b.get(a+ms(1020), ms(20), 1, path(1, 0), failed())          // A2, on time; A waits 2 s
	b.get(a+sec(1.5), ms(20), 1, path(1, 0), failed())          // B1: early for A
	b.get(a+sec(1.5)+ms(1020), ms(20), 1, path(1, 0), failed()) // B2: on time for B
	bt := b.round(a+ms(1040)+2*time.Second, 1, 0)               // A3: on time for A
	b.stop(bt + sec(2))
	p, evs := std(b)
	r := judgeRun(t, p, evs)
	require.Equal(t, []string{nameExecutionTiming}, violatedSet(r), describe(r, evs))
	require.Contains(t, strings.Join(messagesOf(r, nameExecutionTiming), "\n"), "waited to retry")
}
