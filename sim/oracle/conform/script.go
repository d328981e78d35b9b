package conform

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"syscall"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
)

// Script is a black-box scenario on the wall clock: the requests' period,
// the daemon's worker.pool_size, and steps run in order. Each step acts on
// the world or the daemon and then waits for what the daemon does in
// answer, as the façade records it, within the step's budget; no step
// sleeps in the hope that something has happened.
type Script struct {
	// Period is every request's period.
	Period time.Duration
	// PoolSize is the daemon's worker.pool_size.
	PoolSize int
	// Limit bounds the whole script: once it has passed, the steps left
	// are skipped, except the final stop, which has its own budget on top.
	Limit time.Duration
	Steps []Step
	// Unreached names the checkers whose situation the script cannot
	// produce, each with why: the default allow-list of a run of it
	// (Options.Allow), printed in every report.
	Unreached map[string]string
}

// Step is one stage of a Script.
type Step struct {
	// Name says what the step does and which contracts it is for.
	Name string
	// Budget bounds the step's waits taken together.
	Budget time.Duration
	// final steps run even past the script's Limit (the stop).
	final bool
	run   func(ctx context.Context, r *runner) error
}

// Budget is the longest the script may take: its Limit, and the final
// steps' budgets on top.
func (s Script) Budget() time.Duration {
	d := s.Limit
	for _, st := range s.Steps {
		if st.final {
			d += st.Budget
		}
	}
	return d
}

// The scenario's requests (registered in this order, so the chain gives
// them these ids).
const (
	reqFidelity = 1 // self at index 1 of two endpoints (O12); updates (O6); code 11 (O5)
	reqFetch    = 2 // its source fails at first (O3, O4); its broadcast's answer is lost (O5 code 19, O1, O13)
	reqForeign  = 3 // self not assigned (O11)
	reqPeers    = 4 // two peers that can complete a round without self (O2); code 13 (O5)
	reqExtra    = 5 // one job over pool_size (O7), disabled at once (O11)
)

// requests are the scenario's requests.
func requests(period time.Duration) []Request {
	return []Request{
		{ID: reqFidelity, Period: period, SelfIndex: 1, Endpoints: 2, Status: oracle.StatusEnabled},
		{ID: reqFetch, Period: period, SelfIndex: 0, Endpoints: 1, Status: oracle.StatusEnabled},
		{ID: reqForeign, Period: period, SelfIndex: -1, Endpoints: 1, Status: oracle.StatusEnabled},
		{ID: reqPeers, Period: period, SelfIndex: 2, Peers: 2, Endpoints: 1, Status: oracle.StatusEnabled},
		{ID: reqExtra, Period: period, SelfIndex: 0, Endpoints: 1, Status: oracle.StatusEnabled},
	}
}

// DefaultScript is the scenario of `converge oracle conform`. Five
// requests with a 5 s period (self at index 1 of two endpoints; self at
// index 0; one self is not assigned to; one whose two peers can complete
// rounds without self; one more than the pool of 3 holds, disabled once
// the pool is seen full), then: a failing source for one request, an
// update and a bogus-nonce update while a round awaits Complete, CheckTx
// codes 20, 13 and 11 injected, a same-key intruder, a WebSocket drop, a
// lost broadcast answer with the chain stalled, SIGKILL with the tx in the
// mempool and a restart, a quiet phase of three rounds, and SIGTERM during
// a GET. The first lifetime lasts past the daemon's second health check
// and its re-execution one minute after the fetch failure.
func DefaultScript() Script {
	return Script{Period: 5 * time.Second, PoolSize: 3, Limit: 140 * time.Second, Steps: []Step{
		stepFailSource(),
		stepLaunch(),
		stepPoolFull(),
		stepFetchFailure(),
		stepUpdate(),
		stepStaleResult(),
		stepTerminalCodes(),
		stepIntruder(),
		stepDrop(),
		stepHealthInterval(),
		stepLostAnswer(),
		stepCrash(),
		stepQuiet(),
		stepTerm(),
	}, Unreached: defaultUnreached()}
}

// ShortScript is enough for a broken daemon to show itself in about half
// a minute: code 13, a same-key intruder, a crash and restart, SIGTERM.
func ShortScript() Script {
	return Script{Period: 5 * time.Second, PoolSize: 3, Limit: 75 * time.Second, Steps: []Step{
		stepLaunch(),
		stepTerminalFee(),
		stepIntruder(),
		stepCrash(),
		stepTerm(),
	}, Unreached: shortUnreached()}
}

// ---- the steps ----

func stepFailSource() Step {
	return Step{Name: "F8: request 2's source fails (O3, O4)", Budget: time.Second, run: func(_ context.Context, r *runner) error {
		r.w.Fault("F8", history.FaultStart, time.Time{}, history.Param{Key: "request", Value: strconv.Itoa(reqFetch)},
			history.Param{Key: "class", Value: "status"})
		r.sourceFailing = true
		return r.w.FailSource(reqFetch)
	}}
}

func stepLaunch() Step {
	return Step{Name: "launch and subscribe", Budget: 20 * time.Second, run: func(ctx context.Context, r *runner) error {
		if err := r.launch(); err != nil {
			return err
		}
		return r.await(ctx, r.lifeFrom, "the daemon subscribed to the three queries", subscribed())
	}}
}

func stepPoolFull() Step {
	return Step{Name: "four ready jobs, pool of 3 (O7); request 5 disabled (O11)", Budget: 25 * time.Second, run: func(ctx context.Context, r *runner) error {
		in := map[int64]bool{}
		life := r.life
		full := func(e *history.Event) bool {
			if e.Src == nil || e.Life != life {
				return false
			}
			if e.Src.Phase == history.PhaseRecv {
				in[e.Src.Exchange] = true
			} else {
				delete(in, e.Src.Exchange)
			}
			return len(in) >= r.pool
		}
		if err := r.await(ctx, r.lifeFrom, fmt.Sprintf("%d GETs in flight at once", r.pool), full); err != nil {
			return err
		}
		mark := r.w.watch.mark()
		if _, err := r.admitted(r.w.Chain.Disable(reqExtra, "conform: one job over the pool")); err != nil {
			return err
		}
		return r.await(ctx, mark, "the Update frame of request 5's disable", func(e *history.Event) bool { return updateOf(e, reqExtra) })
	}}
}

func stepFetchFailure() Step {
	return Step{Name: "four failed GETs of request 2, then its source heals (O4)", Budget: 30 * time.Second, run: func(ctx context.Context, r *runner) error {
		n := 0
		err := r.await(ctx, r.lifeFrom, "four failed GETs of request 2", func(e *history.Event) bool {
			if failedGet(e, reqFetch) {
				n++
			}
			return n >= oracle.FetchAttempts
		})
		if herr := r.healSource(); herr != nil {
			return herr
		}
		return err
	}}
}

func stepUpdate() Step {
	return Step{Name: "update and bogus-nonce update of request 1 awaiting Complete (O6)", Budget: 25 * time.Second, run: func(ctx context.Context, r *runner) error {
		if err := r.await(ctx, r.w.watch.mark(), "an acknowledged broadcast for request 1",
			onAnswer(func(a answer) bool { return a.R == reqFidelity && a.acked() })); err != nil {
			return err
		}
		mark := r.w.watch.mark()
		if err := r.w.Update(r.reqs[reqFidelity-1], "conform: routine update"); err != nil {
			return err
		}
		if _, err := r.admitted(r.w.Chain.BogusNonceUpdate(reqFidelity, r.w.Chain.Nonce(reqFidelity)+5)); err != nil {
			return err
		}
		return r.await(ctx, mark, "the Update frame of request 1", func(e *history.Event) bool { return updateOf(e, reqFidelity) })
	}}
}

func stepStaleResult() Step {
	return Step{Name: "F11 code 20 twice on request 4 while its peers complete the round (O2)", Budget: 30 * time.Second, run: func(ctx context.Context, r *runner) error {
		// Both peers submit from here to the end of the next step: the
		// round of request 4 that opens at its next Complete can complete
		// without self.
		r.w.SetActivePeers(reqPeers, 2)
		defer r.w.Disarm()
		if err := r.await(ctx, r.w.watch.mark(), "a Complete of request 4", func(e *history.Event) bool { return completeOf(e, reqPeers) }); err != nil {
			return err
		}
		r.inject(reqPeers, oracle.CodeMempoolIsFull, oracle.CodeMempoolIsFull)
		held := false
		answered := onAnswer(func(a answer) bool { return a.R == reqPeers && a.Code == oracle.CodeMempoolIsFull })
		return r.await(ctx, r.w.watch.mark(), "a Complete of request 4 after a code 20 for it", func(e *history.Event) bool {
			if answered(e) {
				held = true
			}
			return held && completeOf(e, reqPeers)
		})
	}}
}

func stepTerminalCodes() Step {
	return Step{Name: "F11 code 13 on request 4 and code 11 on request 1 (O5)", Budget: 30 * time.Second, run: func(ctx context.Context, r *runner) error {
		// Request 4's peers complete the round self gives up on (the
		// Complete re-arms self's job), as they did in the step before.
		r.w.SetActivePeers(reqPeers, 2)
		defer r.w.SetActivePeers(reqPeers, 1)
		defer r.w.Disarm()
		r.inject(reqPeers, oracle.CodeInsufficientFee)
		r.inject(reqFidelity, oracle.CodeOutOfGas)
		fee, gas, after := false, false, false
		return r.await(ctx, r.w.watch.mark(), "a code 13 for request 4, and a code 11 for request 1 then an acknowledgement",
			onAnswer(func(a answer) bool {
				switch {
				case a.R == reqPeers && a.Code == oracle.CodeInsufficientFee:
					fee = true
				case a.R == reqFidelity && a.Code == oracle.CodeOutOfGas:
					gas = true
				case a.R == reqFidelity && gas && a.acked():
					after = true
				}
				return fee && after
			}))
	}}
}

// stepTerminalFee is the short script's code 13.
func stepTerminalFee() Step {
	return Step{Name: "F11 code 13 on request 4 (O5)", Budget: 25 * time.Second, run: func(ctx context.Context, r *runner) error {
		defer r.w.Disarm()
		r.inject(reqPeers, oracle.CodeInsufficientFee)
		return r.await(ctx, r.w.watch.mark(), "a code 13 for request 4",
			onAnswer(func(a answer) bool { return a.R == reqPeers && a.Code == oracle.CodeInsufficientFee }))
	}}
}

func stepIntruder() Step {
	return Step{Name: "F9: a same-key intruder takes a sequence (O8, O9, O5 code 32)", Budget: 25 * time.Second, run: func(ctx context.Context, r *runner) error {
		r.w.Fault("F9", history.FaultStart, time.Time{}, history.Param{Key: "txs", Value: "1"})
		defer r.w.Fault("F9", history.FaultEnd, time.Time{})
		mark := r.w.watch.mark()
		if _, err := r.w.Chain.Intrude(r.key); err != nil {
			return err
		}
		mismatch := false
		return r.await(ctx, mark, "a code 32, then another broadcast", onAnswer(func(a answer) bool {
			if mismatch {
				return true
			}
			mismatch = a.class() == oracle.ClassSequenceMismatch
			return false
		}))
	}}
}

func stepDrop() Step {
	return Step{Name: "F1: the WebSocket drops, redials refused for 2 s (O16b)", Budget: 25 * time.Second, run: func(ctx context.Context, r *runner) error {
		const refuse = 2 * time.Second
		r.w.Fault("F1", history.FaultStart, time.Now().Add(refuse), history.Param{Key: "refuse", Value: refuse.String()})
		mark := r.w.watch.mark()
		r.w.Facade.DropWS(true)
		// The refusal lasts as long as the fault's knob says: a fault
		// window, not a wait for the daemon.
		if err := sleep(ctx, refuse); err != nil {
			return err
		}
		r.w.Facade.RefuseWS(false)
		r.w.Fault("F1", history.FaultEnd, time.Time{})
		return r.await(ctx, mark, "the daemon subscribed again", subscribed())
	}}
}

func stepHealthInterval() Step {
	return Step{Name: "two health checks in one lifetime (O18)", Budget: 70 * time.Second, run: func(ctx context.Context, r *runner) error {
		n := 0
		life := r.life
		return r.await(ctx, r.lifeFrom, "three status calls in this lifetime", func(e *history.Event) bool {
			if e.RPC != nil && e.Life == life && e.RPC.Phase == history.PhaseRecv && e.RPC.Method == "status" {
				n++
			}
			return n >= 3
		})
	}}
}

// stepLostAnswer loses the answer to request 2's next admitted broadcast
// and stalls the chain so that the tx stays in the mempool; a retry of the
// same bytes then meets the cached tx (code 19). The daemon's other
// requests run meanwhile, and one of their broadcasts sent between the
// loss and request 2's retry would meet the sequence the held tx took
// (code 32), make the daemon resync and race request 2's retry. So from
// the loss until the step ends the world answers every broadcast but
// request 2's code 20 (World.LoseNext): transient, retried after a
// backoff, the sequence untouched. Request 2's retry is then the next
// broadcast the chain checks against the held tx, whichever of the
// daemon's timers fires first, and the step makes one try: a correct
// daemon (§3.5: L unchanged after a transport error, deterministic
// signing, the gas changed only by code 11) sends the same bytes again
// and meets the cache. A retry admitted as a new tx ends the step unmet
// at once: the cached tx can no longer be met. The budget covers the wait
// for request 2's re-execution (a minute after its fetch failure, about
// 10 s after the health step) and a retry within 1.1 s, with room for a
// loaded machine.
//
// A daemon that never retries within that budget has done something with
// the lost answer that only its next broadcast shows (§3.5: L unchanged
// after a transport error; O8 judges the sequence that broadcast takes).
// With the chain stalled and the other broadcasts held off, that next
// broadcast may never come before the next step kills the daemon, so the
// step, already unmet, then lifts the hold, resumes the chain and gives the
// daemon lostAnswerFollow to broadcast again: the run records what it did
// instead of ending the lifetime first.
func stepLostAnswer() Step {
	return Step{Name: "F12: request 2's next admitted broadcast loses its answer, F15 holds it in the mempool (O1, O5 code 19)",
		Budget: lostAnswerBudget + lostAnswerFollow, run: func(ctx context.Context, r *runner) error {
			defer r.w.Disarm()
			const what = "the retry of request 2's broadcast meeting the cached tx"
			r.w.LoseNext(reqFetch)
			follow := r.deadline
			r.deadline = earlier(r.deadline, time.Now().Add(lostAnswerBudget))
			var at lostAnswerTry
			err := r.await(ctx, r.w.watch.mark(), what, onAnswer(at.see))
			var u *unmet
			switch {
			case err == nil && !at.met:
				return &unmet{what: what + " (request 2's retry was admitted as a new tx)"}
			case err == nil || !errors.As(err, &u) || !at.lost || r.exited():
				return err
			}
			// Unmet with the answer lost and no retry seen: follow the
			// daemon to its next broadcast.
			r.w.Disarm()
			r.w.Resume()
			r.deadline = follow
			if ferr := r.await(ctx, r.w.watch.mark(), "the daemon's next broadcast after its lost answer", onAnswer(func(answer) bool { return true })); ferr != nil && !errors.As(ferr, &u) {
				return ferr
			}
			return err
		}}
}

const (
	// lostAnswerBudget is the F12 step's wait for request 2's retry.
	lostAnswerBudget = 30 * time.Second
	// lostAnswerFollow is the longest the F12 step follows a daemon that
	// did not retry to its next broadcast: the stalled chain's next block,
	// a Complete and a period of 5 s, the fetch, with room for a loaded
	// machine.
	lostAnswerFollow = 20 * time.Second
)

// lostAnswerTry follows the F12 step through the daemon's broadcast
// answers: lost once request 2's admitted broadcast has lost its answer;
// after that, met once a broadcast of request 2 meets the cached tx, or
// rebuilt once one is admitted as a new tx instead. Other requests'
// answers do not count (the world holds them off with code 20).
type lostAnswerTry struct{ lost, met, rebuilt bool }

func (t *lostAnswerTry) see(a answer) bool {
	switch {
	case a.R != reqFetch:
	case !t.lost:
		t.lost = a.Lost
	case a.class() == oracle.ClassAlreadyAdmitted:
		t.met = true
	case a.class() == oracle.ClassSuccess:
		t.rebuilt = true
	}
	return t.met || t.rebuilt
}

func stepCrash() Step {
	return Step{Name: "F17: SIGKILL and restart (O13; with F12's tx held in the mempool, O1 and a restart just after its round completes, O3b)",
		Budget: 35 * time.Second, run: func(ctx context.Context, r *runner) error {
			r.w.Fault("F17", history.FaultPoint, time.Time{})
			if err := r.stop(syscall.SIGKILL, 10*time.Second); err != nil {
				return err
			}
			mark := r.w.watch.mark()
			held := r.w.Stalled() // F12 held the daemon's tx: its round completes once the chain resumes
			r.w.Resume()
			if err := sleep(ctx, downtime); err != nil {
				return err
			}
			var err error
			if held {
				// The restart comes less than a period after that round
				// completed (O3b's situation), so the restarted daemon must
				// wait out the rest of the period.
				err = r.await(ctx, mark, "a block completing a round of request 1, 2 or 4", func(e *history.Event) bool {
					if e.Block == nil {
						return false
					}
					for _, c := range e.Block.Completes {
						if c.RequestID != reqForeign && c.RequestID != reqExtra {
							return true
						}
					}
					return false
				})
			}
			var u *unmet
			if err != nil && !errors.As(err, &u) {
				return err
			}
			if lerr := r.launch(); lerr != nil {
				return lerr
			}
			return errors.Join(err, r.await(ctx, r.lifeFrom, "the restarted daemon's list of request docs", listed))
		}}
}

func stepQuiet() Step {
	return Step{Name: "quiet phase: three rounds of each running request (O16)", Budget: 45 * time.Second, run: func(ctx context.Context, r *runner) error {
		r.quietFrom = time.Now()
		n := map[uint64]int{}
		running := []uint64{reqFidelity, reqFetch, reqPeers}
		return r.await(ctx, r.w.watch.mark(), "three Completes of requests 1, 2 and 4", func(e *history.Event) bool {
			for _, id := range completes(e) {
				n[id]++
			}
			for _, id := range running {
				if n[id] < 3 {
					return false
				}
			}
			return true
		})
	}}
}

func stepTerm() Step {
	return Step{Name: "SIGTERM during a GET (O14)", Budget: 10*time.Second + shutdownWait, final: true, run: func(ctx context.Context, r *runner) error {
		life := r.life
		var err error
		if !r.exited() {
			err = r.await(ctx, r.w.watch.mark(), "a GET of the daemon", func(e *history.Event) bool {
				return e.Src != nil && e.Life == life && e.Src.Phase == history.PhaseRecv
			})
		}
		// SIGTERM ends the run even when no GET came.
		if serr := r.stop(syscall.SIGTERM, shutdownWait); serr != nil {
			return serr
		}
		return err
	}}
}
