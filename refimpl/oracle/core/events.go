package core

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
)

// eventProcessor handles frames one at a time, in arrival order (D19): a
// frame's Register and Update ids each wait for their doc queries before
// the next id, and the next frame waits for the whole frame.
type eventProcessor struct {
	queue []ports.Frame
	busy  bool // a frame's doc queries are in flight
}

// pumpEvents handles queued frames while the processor is free.
func (c *Core) pumpEvents() {
	for c.running() && !c.ev.busy && len(c.ev.queue) > 0 {
		f := popFront(&c.ev.queue)
		c.handleFrame(f)
	}
}

func (c *Core) handleFrame(f ports.Frame) {
	if f.Err != nil {
		c.countError("frame dropped: data does not decode", errAttr(f.Err))
		return
	}
	sub, err := Route(f.Query, f.Events)
	if err != nil {
		c.countError("frame dropped", errAttr(err))
		return
	}
	c.metrics.EventsProcessed++
	switch sub {
	case oracle.SubComplete:
		entries, errs := CompleteEntries(f.Events)
		c.countAll("complete frame", errs)
		for _, e := range entries {
			c.apply(e.RequestID, oracle.Complete{Nonce: e.Nonce, BlockTime: e.BlockTime})
		}
	case oracle.SubRegister, oracle.SubUpdate:
		ids, errs := RegisterIDs(f.Events)
		if sub == oracle.SubUpdate {
			ids, errs = UpdateIDs(f.Events)
		}
		c.countAll(sub.String()+" frame", errs)
		if len(ids) > 0 {
			c.ev.busy = true
			c.handleDocEvents(sub, ids)
		}
	}
}

func (c *Core) countAll(what string, errs []error) {
	for _, err := range errs {
		c.countError(what+": entry skipped", errAttr(err))
	}
}

// handleDocEvents handles Register or Update ids in order (§3.3.1), then
// frees the processor for the next frame.
func (c *Core) handleDocEvents(sub oracle.Subscription, ids []uint64) {
	if c.stopping() {
		return
	}
	if len(ids) == 0 {
		c.ev.busy = false
		c.pumpEvents()
		return
	}
	r, rest := ids[0], ids[1:]
	next := func() { c.handleDocEvents(sub, rest) }
	c.queryDocTries(r, 1, func(doc *oracle.RequestDoc, err error) {
		if c.stopping() {
			return
		}
		if err != nil {
			c.dropEvent(fmt.Sprintf("%s(%d)", sub, r), err)
			next()
			return
		}
		c.applyDoc(r, doc, func(err error) {
			if err != nil {
				c.dropEvent(fmt.Sprintf("%s(%d)", sub, r), err)
			}
			next()
		})
	})
}

// dropEvent gives up on one event: TotalErrors++, and R runs 5 s later
// (D9).
func (c *Core) dropEvent(what string, err error) {
	c.countError("event dropped; reconciling in 5 s", slog.String("event", what), errAttr(err))
	c.requestReconcileIn(oracle.DroppedEventReconcile)
}

// queryDocTries queries a doc up to DocQueryTries times, DocQueryWaits
// apart (D9). A doc that does not exist is an answer (nil), not a failure.
func (c *Core) queryDocTries(r uint64, try int, fn func(*oracle.RequestDoc, error)) {
	c.queryDoc(r, func(doc *oracle.RequestDoc, err error) {
		if err == nil || try >= oracle.DocQueryTries || c.stopping() {
			fn(doc, err)
			return
		}
		c.after(oracle.DocQueryWaits[try-1], func() {
			if c.stopping() {
				return
			}
			c.queryDocTries(r, try+1, fn)
		})
	})
}

// applyDoc is the per-doc decision of a Register or Update (D9): create
// the job (after the creation queries), update it, remove it, or ignore
// the doc. done gets the error of a failed creation query.
func (c *Core) applyDoc(r uint64, doc *oracle.RequestDoc, done func(error)) {
	switch DecideDoc(c.s.jobs[r], doc, c.self) {
	case DocCreate:
		c.createJob(*doc, done)
	case DocUpdate, DocRemove:
		c.apply(r, oracle.Update{Doc: doc, Self: c.self})
		done(nil)
	default:
		done(nil)
	}
}

// createJob makes the queries a creation needs (§3.3.3: self's submission
// for doc.nonce + 1, and the last aggregate's block time when doc.nonce >
// 0), then applies Create. If a query fails no job is created.
func (c *Core) createJob(doc oracle.RequestDoc, done func(error)) {
	c.creationFacts(doc, func(submitted bool, lastBT time.Time, err error) {
		if c.stopping() {
			return
		}
		if err != nil {
			done(err)
			return
		}
		c.apply(doc.RequestID, oracle.Create{Doc: doc, Self: c.self, SelfSubmitted: submitted, LastBlockTime: lastBT})
		done(nil)
	})
}

// creationFacts queries what a creation needs to know.
func (c *Core) creationFacts(doc oracle.RequestDoc, fn func(submitted bool, lastBT time.Time, err error)) {
	c.querySubmitted(doc.RequestID, doc.Nonce+1, func(submitted bool, err error) {
		if err != nil || c.stopping() {
			fn(false, time.Time{}, err)
			return
		}
		if doc.Nonce == 0 {
			fn(submitted, time.Time{}, nil)
			return
		}
		c.queryLastBlockTime(doc.RequestID, func(bt time.Time, err error) {
			fn(submitted, bt, err)
		})
	})
}
