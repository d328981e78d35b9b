package core

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
	"github.com/wsconverge/converge/wire/abciquery"
	"github.com/wsconverge/converge/wire/tx"
)

// submission is one result on its way to the chain: the attempt loop of
// §3.5, at most SubmitAttempts attempts.
type submission struct {
	res      oracle.JobResult
	attempts int    // attempts begun so far
	gas      uint64 // gas.limit, raised after code 11 (D5)
	wait     *timer // the backoff before the next attempt
	lastErr  string
}

// submitter is the Submitter: a result queue that never drops (D20), a
// semaphore of worker.pool_size results in progress (backoff waits
// included), and the SequenceManager's critical section — the on-chain
// check, reading L, signing, broadcasting and updating L — held by one
// result at a time, in arrival order (D23).
type submitter struct {
	queue        []*submission
	active       []*submission // holding a semaphore slot
	lockQ        []*submission // waiting for the critical section
	holder       *submission   // in the critical section
	broadcasting bool          // the holder's broadcast awaits its answer
	// fee is the last fee computed (D29) and the gas limit it is for: the
	// price is the configuration's, so the same limit gives the same fee.
	fee struct {
		gas    uint64
		amount string
	}
}

// feeFor is oracle.FeeAmount(gas.prices, gas).
func (c *Core) feeFor(gas uint64) (string, error) {
	if f := &c.sub.fee; f.amount != "" && f.gas == gas {
		return f.amount, nil
	}
	amount, err := oracle.FeeAmount(c.cfg.Gas.Prices, gas)
	if err != nil {
		return "", err
	}
	c.sub.fee.gas, c.sub.fee.amount = gas, amount
	return amount, nil
}

// queueResult is the QueueResult effect: the result joins the queue.
func (c *Core) queueResult(res oracle.JobResult) {
	if c.stopping() {
		c.traceResult(ports.ResultDropped, res)
		return
	}
	c.sub.queue = append(c.sub.queue, &submission{res: res, gas: c.cfg.Gas.Limit})
	c.traceResult(ports.ResultQueued, res)
	c.pumpSubmitter()
}

func (c *Core) traceResult(name string, res oracle.JobResult) {
	c.trace(ports.Trace{Kind: ports.TraceResult, Name: name, RequestID: res.RequestID, Nonce: res.Nonce})
}

func (c *Core) stale(s *submission) bool {
	return ResultStale(c.s.jobs[s.res.RequestID], s.res, c.self)
}

// pumpSubmitter takes queued results while the semaphore has room; a
// result that is stale by then is abandoned without a broadcast.
func (c *Core) pumpSubmitter() {
	for c.running() && len(c.sub.active) < c.cfg.Worker.PoolSize && len(c.sub.queue) > 0 {
		s := popFront(&c.sub.queue)
		if c.stale(s) {
			c.traceResult(ports.ResultAbandoned, s.res)
			continue
		}
		c.sub.active = append(c.sub.active, s)
		c.beginAttempt(s)
	}
}

// beginAttempt: the stale check, then the wait for the critical section.
func (c *Core) beginAttempt(s *submission) {
	if c.stale(s) {
		c.finishSubmission(s, ports.ResultAbandoned)
		return
	}
	c.sub.lockQ = append(c.sub.lockQ, s)
	c.grantLock()
}

func (c *Core) grantLock() {
	for c.sub.holder == nil && len(c.sub.lockQ) > 0 && !c.stopping() {
		s := popFront(&c.sub.lockQ)
		c.sub.holder = s
		c.critical(s)
	}
}

func (c *Core) releaseLock(s *submission) {
	if c.sub.holder == s {
		c.sub.holder = nil
	}
	c.grantLock()
}

// critical is one attempt inside the critical section: the stale check
// again, a resync when L is not known (before the first sync, after a
// code 32), the on-chain check, then build, sign and broadcast.
func (c *Core) critical(s *submission) {
	if c.stale(s) {
		c.releaseLock(s)
		c.finishSubmission(s, ports.ResultAbandoned)
		return
	}
	s.attempts++
	if !c.seq.synced || c.seq.needResync {
		c.syncAccount(func(ok bool) {
			if c.stopping() {
				c.releaseLock(s)
				return
			}
			if !ok {
				c.attemptFailed(s, "sequence unknown: Account query failed")
				return
			}
			c.onChainCheck(s)
		})
		return
	}
	c.onChainCheck(s)
}

// onChainCheck is D3: when self's submission for the round is on chain
// the result counts as submitted (and L is resynced before the next
// broadcast); a failed query is a transport failure of this attempt.
func (c *Core) onChainCheck(s *submission) {
	// querySubmitted, with the attempt itself waiting for the answer (see
	// pendingCall).
	data, err := c.submittedRequest(s.res.RequestID, s.res.Nonce)
	if err != nil {
		c.onChainChecked(s, false, fmt.Errorf("abci_query %s: encode: %w", abciquery.PathSubmitData, err))
		return
	}
	id := c.newID()
	c.pending[id] = pendingCall{kind: pendingCheck, s: s}
	c.emit(ports.QueryCall{ID: id, Path: abciquery.PathSubmitData, Data: data, Timeout: rpcTimeout})
}

// onChainChecked goes on from the on-chain check's answer.
func (c *Core) onChainChecked(s *submission, submitted bool, err error) {
	switch {
	case c.stopping():
		c.releaseLock(s)
	case err != nil:
		c.attemptFailed(s, fmt.Sprintf("on-chain check: %v", err))
	case submitted:
		c.seq.needResync = true
		c.releaseLock(s)
		c.finishSubmission(s, ports.ResultOnChain)
	case c.stale(s):
		c.releaseLock(s)
		c.finishSubmission(s, ports.ResultAbandoned)
	default:
		c.broadcast(s)
	}
}

// broadcast builds, signs and sends the submission with sequence L.
func (c *Core) broadcast(s *submission) {
	fee, err := c.feeFor(s.gas)
	if err != nil {
		c.releaseLock(s)
		c.giveUp(s, fmt.Sprintf("fee: %v", err))
		return
	}
	used := c.seq.l
	built, err := tx.BuildSubmission(c.signer, tx.Envelope{
		ChainID: c.cfg.Chain.ID, AccountNumber: c.seq.accNum, Sequence: used,
		GasLimit: s.gas, FeeAmount: fee,
	}, c.self, s.res.RequestID, s.res.Nonce, s.res.Data)
	if err != nil {
		c.attemptFailed(s, fmt.Sprintf("build tx: %v", err))
		return
	}
	id := c.newID()
	c.sub.broadcasting = true
	c.pending[id] = pendingCall{kind: pendingBroadcast, s: s, used: used}
	c.emit(ports.BroadcastCall{ID: id, Tx: built.TxBytes, Hash: built.Hash, Timeout: rpcTimeout})
}

func broadcastReply(r ports.Reply) oracle.BroadcastReply {
	switch {
	case r.Err != nil:
		return oracle.ReplyTransport()
	case r.RPCError != nil:
		return oracle.ReplyRPCError(r.RPCError.Message, r.RPCError.Data)
	case r.Broadcast != nil:
		return r.Broadcast.Reply()
	}
	return oracle.ReplyTransport()
}

// onBroadcastReply classifies the answer (§3.5's table), moves L, and
// ends the attempt.
func (c *Core) onBroadcastReply(s *submission, used uint64, r ports.Reply) {
	class := oracle.ClassifyBroadcast(broadcastReply(r))
	next, resync := SequenceUpdate(used, class)
	if next != used {
		c.seq.l = next
		c.seq.successes++
	}
	if resync {
		c.seq.needResync = true
	}
	if c.stopping() {
		// §3.7 step 4 waited for this broadcast; nothing follows it.
		name := ports.ResultDropped
		if class.Action() == oracle.ActionDone {
			c.metrics.TxSubmitted++
			name = ports.ResultSubmitted
		}
		c.sub.holder = nil
		c.finishSubmission(s, name)
		c.advanceShutdown()
		return
	}
	switch class.Action() {
	case oracle.ActionDone:
		c.metrics.TxSubmitted++
		c.releaseLock(s)
		c.finishSubmission(s, ports.ResultSubmitted)
	case oracle.ActionGiveUp:
		reason := describeReply(r, class)
		if class == oracle.ClassInsufficientFee {
			c.log(slog.LevelError, "insufficient fee: raise gas.prices", slog.String("gas.prices", c.cfg.Gas.Prices),
				slog.Uint64("gas", s.gas), slog.String("reply", reason))
		}
		c.releaseLock(s)
		c.giveUp(s, reason)
	default:
		if class.AdjustsGas() {
			s.gas = oracle.AdjustGas(s.gas, c.cfg.Gas.Adjustment)
		}
		c.attemptFailed(s, describeReply(r, class))
	}
}

func describeReply(r ports.Reply, class oracle.BroadcastClass) string {
	switch {
	case r.Err != nil:
		return fmt.Sprintf("%s: %v", class, r.Err)
	case r.RPCError != nil:
		return fmt.Sprintf("%s: %v", class, r.RPCError)
	case r.Broadcast != nil:
		return fmt.Sprintf("%s: code %d: %s", class, r.Broadcast.Code, r.Broadcast.Log)
	}
	return class.String()
}

// attemptFailed leaves the critical section and retries after the backoff
// (§3.5), or gives up when the attempts are used up.
func (c *Core) attemptFailed(s *submission, reason string) {
	c.releaseLock(s)
	if c.stopping() {
		return
	}
	s.lastErr = reason
	wait, ok := SubmitRetryWait(s.attempts, c.rnd.Float64())
	if !ok {
		c.giveUp(s, fmt.Sprintf("%d attempts failed, last: %s", s.attempts, reason))
		return
	}
	c.log(slog.LevelWarn, "submission attempt failed; retrying", slog.Uint64("request_id", s.res.RequestID),
		slog.Uint64("nonce", s.res.Nonce), slog.Int("attempt", s.attempts), slog.String("reason", reason),
		slog.Duration("wait", wait))
	s.wait = c.after(wait, func() {
		s.wait = nil
		if c.running() {
			c.beginAttempt(s)
		}
	})
}

// giveUp applies "submission gave up" (D7) unless the result is stale.
func (c *Core) giveUp(s *submission, reason string) {
	c.finishSubmission(s, ports.ResultGaveUp)
	c.log(slog.LevelWarn, "submission gave up", slog.Uint64("request_id", s.res.RequestID),
		slog.Uint64("nonce", s.res.Nonce), slog.String("reason", reason))
	if !c.stopping() {
		c.apply(s.res.RequestID, oracle.SubmissionGaveUp{Result: s.res, Self: c.self, Reason: reason})
	}
}

// finishSubmission frees the result's semaphore slot.
func (c *Core) finishSubmission(s *submission, name string) {
	c.cancel(s.wait)
	s.wait = nil
	c.sub.active = slices.DeleteFunc(c.sub.active, func(a *submission) bool { return a == s })
	c.sub.lockQ = slices.DeleteFunc(c.sub.lockQ, func(a *submission) bool { return a == s })
	c.traceResult(name, s.res)
	c.pumpSubmitter()
}

// recheckResults is the RecheckResults effect (D12): results of request r
// that are queued, in a backoff wait or waiting for the critical section
// and have turned stale are abandoned at once, freeing their slots.
func (c *Core) recheckResults(r uint64) {
	var gone []*submission
	c.sub.queue = slices.DeleteFunc(c.sub.queue, func(s *submission) bool {
		if s.res.RequestID == r && c.stale(s) {
			gone = append(gone, s)
			return true
		}
		return false
	})
	for _, s := range gone {
		c.traceResult(ports.ResultAbandoned, s.res)
	}
	for _, s := range slices.Clone(c.sub.active) {
		if s.res.RequestID == r && s != c.sub.holder && c.stale(s) {
			c.finishSubmission(s, ports.ResultAbandoned)
		}
	}
}

// shutdownSubmitter is the Submitter's part of §3.7 step 1: queued results
// are dropped (D22; R redoes them after a restart), backoff waits and
// results waiting for the critical section end; a broadcast in flight may
// finish.
func (c *Core) shutdownSubmitter() {
	for _, s := range c.sub.queue {
		c.traceResult(ports.ResultDropped, s.res)
	}
	c.sub.queue = nil
	for _, s := range c.sub.active {
		if s == c.sub.holder && c.sub.broadcasting {
			continue
		}
		c.cancel(s.wait)
		s.wait = nil
		c.traceResult(ports.ResultDropped, s.res)
	}
	c.sub.active = slices.DeleteFunc(c.sub.active, func(s *submission) bool {
		return !(s == c.sub.holder && c.sub.broadcasting)
	})
	c.sub.lockQ = nil
	if !c.sub.broadcasting {
		c.sub.holder = nil
	}
}
