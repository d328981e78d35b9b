package chain

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/wsconverge/converge/contracts/oracle/history"
)

// The chain-side faults of ORACLE-SPEC 4.9. The chain applies them; the
// caller records the fault itself (a fault record with its window). F15
// (block stall) is the caller not producing blocks, and F12 (ambiguous
// broadcast) the caller dropping a BroadcastTxSync answer: the tx is
// admitted all the same, and a re-broadcast of the same bytes meets the
// cache.

// SetMempoolFull turns F10 on or off: while on, every admission attempt
// answers "mempool is full".
func (c *Chain) SetMempoolFull(full bool) {
	c.mu.Lock()
	c.full = full
	c.mu.Unlock()
}

// InjectCheckTx is F11: the next attempts admission attempts of the SUT
// that reach CheckTx (past a full mempool and the cache) answer code
// instead of CheckTx's own answer, with the log a chain gives for that
// code (11, 13, 18, 5, 32; any other non-zero code gets a generic log).
// It replaces an injection still pending; attempts 0 cancels it.
func (c *Chain) InjectCheckTx(code uint32, attempts int) error {
	if code == 0 {
		return errors.New("inject CheckTx: code 0 is no fault")
	}
	if attempts < 0 {
		return fmt.Errorf("inject CheckTx: %d attempts", attempts)
	}
	c.mu.Lock()
	c.injectCode, c.injectLeft = code, attempts
	c.mu.Unlock()
	return nil
}

// InjectionsLeft is how many SUT attempts the pending injection still
// answers.
func (c *Chain) InjectionsLeft() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.injectLeft
}

// Evict is F13: tx hash (upper-case hex, as Mempool lists it) leaves the
// mempool and the cache at once, as if a recheck had dropped it; the check
// state keeps its sequence until the next commit. It records an evict
// event (cause fault) and reports whether the tx was there.
func (c *Chain) Evict(hash string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, m := range c.mempool {
		if m.txHash() != hash {
			continue
		}
		c.mempool = slices.Delete(c.mempool, i, i+1)
		c.uncache(m)
		c.record(c.now(), history.Event{Kind: history.KindEvict, Evict: &history.Evict{Cause: history.EvictFault,
			Hash: hash, Origin: m.origin, Signer: m.signer.address, Sequence: m.seq}})
		return true
	}
	return false
}

// SetBlockTimeSkew is F16: the blocks produced from now on carry the
// production time plus d (negative: behind the clock). Block times still
// increase by at least a millisecond per block.
func (c *Chain) SetBlockTimeSkew(d time.Duration) {
	c.mu.Lock()
	c.skew = d
	c.mu.Unlock()
}
