package core

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
)

// execution is one run of a job (§3.4): up to four GETs, then extraction.
type execution struct {
	req     uint64
	url     string // the job's URL and parse rule when its slot came
	rule    string
	queued  bool     // selected, waiting for a slot
	attempt int      // GETs made so far
	fetch   ports.ID // the GET in flight; 0 when none
	wait    *timer
	started time.Time // the first GET
	aborted bool      // the job was removed: the answer is discarded
	lastErr string
}

// executor is the bounded task group of worker.pool_size slots (D30): a
// slot is held from an execution's first GET to its end, retry waits
// included; selected executions queue for a slot in selection order.
type executor struct {
	slots   int
	waiting []*execution
	byJob   map[uint64]*execution
	fetches map[ports.ID]*execution
}

func (x *executor) init() {
	x.byJob = make(map[uint64]*execution)
	x.fetches = make(map[ports.ID]*execution)
}

// enqueueExecution queues the execution the tick just selected.
func (c *Core) enqueueExecution(r uint64) {
	e := &execution{req: r, queued: true}
	c.x.byJob[r] = e
	c.x.waiting = append(c.x.waiting, e)
	c.pumpExecutor()
}

// pumpExecutor starts queued executions while slots are free. One whose
// job may no longer run is dropped before any GET (D12; docs/decisions/oracle-3-daemon.md, DR24).
func (c *Core) pumpExecutor() {
	for !c.stopping() && c.x.slots < c.cfg.Worker.PoolSize && len(c.x.waiting) > 0 {
		e := popFront(&c.x.waiting)
		e.queued = false
		j := c.s.jobs[e.req]
		if !MayStartExecution(j) {
			c.forget(e)
			if j != nil {
				c.apply(e.req, oracle.ExecutionEnd{Outcome: oracle.ExecDropped})
			}
			continue
		}
		c.x.slots++
		e.url, e.rule = j.URL, j.ParseRule
		c.attemptFetch(e)
	}
}

func (c *Core) attemptFetch(e *execution) {
	e.attempt++
	if e.attempt == 1 {
		e.started = c.now
	}
	e.fetch = c.newID()
	c.x.fetches[e.fetch] = e
	c.emit(ports.Fetch{ID: e.fetch, RequestID: e.req, Attempt: e.attempt, URL: e.url, Timeout: c.timeout})
}

// mayContinue reports whether an execution may make another GET: not
// stopping, its job still exists, is Executing, not superseded, ENABLED.
func (c *Core) mayContinue(e *execution) bool {
	return !c.stopping() && !e.aborted && MayStartExecution(c.s.jobs[e.req])
}

func (c *Core) onFetched(in ports.Fetched) {
	e, ok := c.x.fetches[in.ID]
	if !ok {
		return
	}
	delete(c.x.fetches, in.ID)
	e.fetch = 0
	if e.aborted || c.stopping() {
		c.releaseSlot(e)
		return
	}
	if in.Err == nil && in.Status == 200 {
		data, err := Extract(in.Body, e.rule)
		if err != nil {
			c.endExecution(e, oracle.ExecParseFailed, "", err.Error())
			return
		}
		c.endExecution(e, oracle.ExecSucceeded, data, "")
		return
	}
	e.lastErr = fmt.Sprintf("GET %s: status %d", e.url, in.Status)
	if in.Err != nil {
		e.lastErr = fmt.Sprintf("GET %s: %v", e.url, in.Err)
	}
	wait, more := FetchRetryWait(e.attempt + 1)
	if !more || !c.mayContinue(e) {
		c.endExecution(e, oracle.ExecFetchFailed, "", e.lastErr)
		return
	}
	e.wait = c.after(wait, func() {
		e.wait = nil
		if c.mayContinue(e) {
			c.attemptFetch(e)
			return
		}
		c.endExecution(e, oracle.ExecFetchFailed, "", e.lastErr)
	})
}

// endExecution frees the slot, applies the execution's end, then lets the
// next queued execution start.
func (c *Core) endExecution(e *execution, outcome oracle.ExecOutcome, data, reason string) {
	c.freeSlot(e)
	if c.s.jobs[e.req] != nil {
		c.apply(e.req, oracle.ExecutionEnd{Outcome: outcome, Data: data, Error: reason, StartedAt: e.started})
	}
	c.pumpExecutor()
}

// releaseSlot ends an execution without a transition (its job was removed,
// or the daemon is stopping).
func (c *Core) releaseSlot(e *execution) {
	c.freeSlot(e)
	if c.stopping() {
		c.advanceShutdown()
		return
	}
	c.pumpExecutor()
}

// freeSlot frees an execution's slot and forgets it.
func (c *Core) freeSlot(e *execution) {
	c.cancel(e.wait)
	e.wait = nil
	c.x.slots--
	c.forget(e)
}

func (c *Core) forget(e *execution) {
	if c.x.byJob[e.req] == e {
		delete(c.x.byJob, e.req)
	}
}

// settleExecution ends at once an execution of r that may no longer run
// and is not in the middle of a GET: one still queued is dropped (D12),
// one in a retry wait ends as superseded. One with a GET in flight ends
// when the GET does.
func (c *Core) settleExecution(r uint64) {
	e := c.x.byJob[r]
	if e == nil || e.fetch != 0 || MayStartExecution(c.s.jobs[r]) {
		return
	}
	switch {
	case e.queued:
		c.x.waiting = slices.DeleteFunc(c.x.waiting, func(w *execution) bool { return w == e })
		c.forget(e)
		if c.s.jobs[r] != nil {
			c.apply(r, oracle.ExecutionEnd{Outcome: oracle.ExecDropped})
		}
	case e.wait != nil:
		c.endExecution(e, oracle.ExecFetchFailed, "", "superseded during a retry wait")
	}
}

// abortExecution is the AbortExecution effect: the job was removed while
// Executing; its execution stops at once and its result is discarded.
func (c *Core) abortExecution(r uint64) {
	e := c.x.byJob[r]
	if e == nil {
		return
	}
	e.aborted = true
	switch {
	case e.queued:
		c.x.waiting = slices.DeleteFunc(c.x.waiting, func(w *execution) bool { return w == e })
		c.forget(e)
	case e.fetch != 0:
		c.forget(e)
		c.emit(ports.AbortFetch{ID: e.fetch})
	default:
		c.releaseSlot(e)
	}
}

// shutdownExecutor is the executor's part of §3.7 steps 1 and 3: no new
// execution or attempt starts, queued executions and retry waits are
// dropped; a GET in flight may end.
func (c *Core) shutdownExecutor() {
	for _, e := range c.x.waiting {
		c.forget(e)
	}
	c.x.waiting = nil
	for _, r := range slices.Sorted(maps.Keys(c.x.byJob)) {
		if e := c.x.byJob[r]; e.wait != nil {
			c.freeSlot(e)
		}
	}
}
