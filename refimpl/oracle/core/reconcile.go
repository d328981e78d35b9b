package core

import (
	"log/slog"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
)

// reconciler runs reconciliation R (ORACLE-SPEC 3.3.4): at start (the
// load), after every re-subscription, and 5 s after a dropped event or a
// failed query. One run at a time; a request during a run makes another
// run follow it.
type reconciler struct {
	running bool
	again   bool
	retry   *timer
	loaded  bool // the load (the first R) has finished
}

// load is §3.1 step 5: R, then the loops. Until R's list query succeeds
// it is retried every 5 s and nothing else starts; frames wait.
func (c *Core) load() {
	c.requestReconcile()
}

// requestReconcile runs R now, or right after the run in progress.
func (c *Core) requestReconcile() {
	if c.stopping() {
		return
	}
	if c.rec.running {
		c.rec.again = true
		return
	}
	c.cancel(c.rec.retry)
	c.rec.retry = nil
	c.reconcile()
}

// requestReconcileIn runs R after d, unless a run is already due sooner.
func (c *Core) requestReconcileIn(d time.Duration) {
	if c.stopping() || (c.rec.retry != nil && !c.rec.retry.at.After(c.now.Add(d))) {
		return
	}
	c.cancel(c.rec.retry)
	c.rec.retry = c.after(d, func() {
		c.rec.retry = nil
		c.requestReconcile()
	})
}

func (c *Core) reconcile() {
	c.rec.running = true
	c.queryDocs(func(docs []oracle.RequestDoc, err error) {
		if c.stopping() {
			return
		}
		if err != nil {
			c.rec.running = false
			c.countError("reconcile: listing the request docs failed; retrying in 5 s", errAttr(err))
			c.requestReconcileIn(oracle.DroppedEventReconcile)
			return
		}
		c.reconcileDocs(docs, 0, false)
	})
}

// reconcileDocs is R's step 2 for listed[i:], then step 3; failed is set
// once a query that a creation or step 3 needed has failed.
func (c *Core) reconcileDocs(listed []oracle.RequestDoc, i int, failed bool) {
	if c.stopping() {
		return
	}
	if i == len(listed) {
		c.reconcileMissing(MissingFromList(c.Jobs(), listed), failed)
		return
	}
	c.reconcileDoc(listed[i], func(ok bool) { c.reconcileDocs(listed, i+1, failed || !ok) })
}

// reconcileDoc makes the queries ReconcileNeeds asks for, then applies
// Reconcile. If the job appeared or vanished meanwhile so that other facts
// are needed, it asks again.
func (c *Core) reconcileDoc(doc oracle.RequestDoc, done func(ok bool)) {
	r := doc.RequestID
	j := c.s.jobs[r]
	if j == nil && !Assigned(doc, c.self) {
		done(true)
		return
	}
	needSub, needBT := ReconcileNeeds(j, doc, c.self)
	creating := j == nil
	c.reconcileFacts(r, doc.Nonce, needSub, needBT, func(submitted bool, bt time.Time, err error) {
		if c.stopping() {
			return
		}
		if err != nil && creating {
			c.countError("reconcile: creation query failed", slog.Uint64("request_id", r), errAttr(err))
			done(false)
			return
		}
		nowSub, nowBT := ReconcileNeeds(c.s.jobs[r], doc, c.self)
		if (nowSub && !needSub) || (nowBT && !needBT) {
			c.reconcileDoc(doc, done)
			return
		}
		c.apply(r, oracle.Reconcile{Doc: doc, Self: c.self, SelfSubmitted: submitted, LastBlockTime: bt})
		done(true)
	})
}

// reconcileFacts queries OracleSubmitData{r, nonce + 1} and OracleData{r}
// as asked. A failed OracleData query only matters for a creation: acting
// as Complete then uses now − period.
func (c *Core) reconcileFacts(r, nonce uint64, needSub, needBT bool, fn func(bool, time.Time, error)) {
	withBT := func(submitted bool) {
		if !needBT {
			fn(submitted, time.Time{}, nil)
			return
		}
		c.queryLastBlockTime(r, func(bt time.Time, err error) { fn(submitted, bt, err) })
	}
	if !needSub {
		withBT(false)
		return
	}
	c.querySubmitted(r, nonce+1, func(submitted bool, err error) {
		if err != nil {
			fn(false, time.Time{}, err)
			return
		}
		withBT(submitted)
	})
}

// reconcileMissing queries each job missing from the list and applies the
// Update rule with the answer (removing the job when the doc is gone).
func (c *Core) reconcileMissing(missing []uint64, failed bool) {
	if c.stopping() {
		return
	}
	if len(missing) == 0 {
		c.finishReconcile(failed)
		return
	}
	r, rest := missing[0], missing[1:]
	c.queryDoc(r, func(doc *oracle.RequestDoc, err error) {
		if c.stopping() {
			return
		}
		if err != nil {
			c.countError("reconcile: doc query failed", slog.Uint64("request_id", r), errAttr(err))
			c.reconcileMissing(rest, true)
			return
		}
		if c.s.jobs[r] != nil {
			c.apply(r, oracle.Update{Doc: doc, Self: c.self})
		}
		c.reconcileMissing(rest, failed)
	})
}

func (c *Core) finishReconcile(failed bool) {
	c.rec.running = false
	if failed {
		c.requestReconcileIn(oracle.DroppedEventReconcile)
	}
	if !c.rec.loaded {
		c.rec.loaded = true
		c.trace(ports.Trace{Kind: ports.TraceStep, Name: ports.StepLoaded})
		c.startLoops() // step 6
	}
	if c.rec.again {
		c.rec.again = false
		c.requestReconcile()
	}
}

// stopReconcile cancels a pending run.
func (c *Core) stopReconcile() {
	c.cancel(c.rec.retry)
	c.rec.retry = nil
}
