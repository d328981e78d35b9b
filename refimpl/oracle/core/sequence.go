package core

import (
	"log/slog"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/wire/abciquery"
)

// sequencer is the SequenceManager (ORACLE-SPEC 3.5): the account number
// and the local sequence L, synced at start (retried every 5 s), every 5
// minutes, and before the next broadcast after a code 32. L moves up only
// on success (code 0, code 19).
type sequencer struct {
	synced     bool
	accNum     uint64
	l          uint64
	needResync bool
	successes  uint64 // broadcasts acknowledged so far: a resync sent before one is stale
	initRetry  *timer
	periodic   *timer
}

// startSequence is §3.1 step 3: the initial sync, retried every 5 s until
// it succeeds.
func (c *Core) startSequence() {
	c.syncAccount(func(ok bool) {
		if ok || c.stopping() || c.seq.synced {
			return
		}
		c.seq.initRetry = c.after(oracle.SequenceSyncRetry, func() {
			c.seq.initRetry = nil
			if !c.stopping() && !c.seq.synced {
				c.startSequence()
			}
		})
	})
}

// syncAccount sends one Account query and sets L and the account number
// from its answer. Every query re-arms the 5-minute resync, so Account
// queries are never more than 5 minutes apart. An answer sent before a
// broadcast was acknowledged is stale and left unused.
func (c *Core) syncAccount(done func(ok bool)) {
	c.armResync()
	sentAfter := c.seq.successes
	c.queryAccount(func(acc abciquery.Account, err error) {
		if c.stopping() {
			done(false)
			return
		}
		if err != nil {
			c.countError("sequence sync failed", errAttr(err))
			done(false)
			return
		}
		if c.seq.successes != sentAfter {
			c.log(slog.LevelDebug, "sequence sync answer predates a broadcast; not used")
			done(c.seq.synced && !c.seq.needResync)
			return
		}
		if !c.seq.synced || c.seq.l != acc.Sequence {
			c.log(slog.LevelInfo, "sequence synced", slog.Uint64("account_number", acc.AccountNumber),
				slog.Uint64("sequence", acc.Sequence), slog.Uint64("previous", c.seq.l))
		}
		c.seq.synced, c.seq.needResync = true, false
		c.seq.accNum, c.seq.l = acc.AccountNumber, acc.Sequence
		done(true)
	})
}

func (c *Core) armResync() {
	c.cancel(c.seq.periodic)
	c.seq.periodic = c.after(oracle.SequenceResync, func() {
		c.seq.periodic = nil
		if !c.stopping() {
			c.syncAccount(func(bool) {})
		}
	})
}

// stopSequence stops the resync timers (§3.7 step 4).
func (c *Core) stopSequence() {
	c.cancel(c.seq.initRetry)
	c.cancel(c.seq.periodic)
	c.seq.initRetry, c.seq.periodic = nil, nil
}

// SequenceUpdate is the SequenceManager's rule after a classified answer
// (ORACLE-SPEC 3.5): the local sequence L moves to L + 1 on code 0 and code
// 19 (and "already in cache"), a code 32 requires a resync (an Account query)
// before the next broadcast of any result, and anything else leaves L alone.
func SequenceUpdate(l uint64, c oracle.BroadcastClass) (next uint64, resync bool) {
	switch c {
	case oracle.ClassSuccess, oracle.ClassAlreadyAdmitted:
		return l + 1, false
	case oracle.ClassSequenceMismatch:
		return l, true
	}
	return l, false
}
