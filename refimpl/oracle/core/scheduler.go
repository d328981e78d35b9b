package core

import (
	"cmp"
	"log/slog"
	"slices"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
)

// scheduler is the Scheduler's state (ORACLE-SPEC 3.3): the JobStore,
// keyed by request id (the job id is req_{id}), the 1 s tick, and the
// watchdog checks in flight.
type scheduler struct {
	jobs      map[uint64]*oracle.Job
	ordered   []*oracle.Job // the same jobs, ascending by request id (the tick walks them)
	tick      *timer
	watchdogs map[uint64]bool
	// ready is the tick's scratch (see onTick).
	ready []readyJob
	// rooms are each job's two rooms (see transition).
	rooms map[uint64]*jobRooms
}

// jobRooms are the memory a job's transitions take turns in, each with
// the call (Start or Handle) it was last written in.
type jobRooms struct {
	room [2]Room
	call [2]uint64
}

// readyJob is a ready job as the tick orders it: by NextRunTime, then
// request id.
type readyJob struct {
	at time.Time
	r  uint64
}

func (s *scheduler) init() {
	s.jobs = make(map[uint64]*oracle.Job)
	s.watchdogs = make(map[uint64]bool)
	s.rooms = make(map[uint64]*jobRooms)
}

// at is where request r's job is, or would go, in s.ordered.
func (s *scheduler) at(r uint64) (int, bool) {
	return slices.BinarySearchFunc(s.ordered, r, func(j *oracle.Job, r uint64) int { return cmp.Compare(j.RequestID, r) })
}

func (s *scheduler) put(j *oracle.Job) {
	if i, ok := s.at(j.RequestID); ok {
		s.ordered[i] = j
	} else {
		s.ordered = slices.Insert(s.ordered, i, j)
	}
	s.jobs[j.RequestID] = j
}

func (s *scheduler) remove(r uint64) {
	if i, ok := s.at(r); ok {
		s.ordered = slices.Delete(s.ordered, i, i+1)
	}
	delete(s.jobs, r)
	delete(s.rooms, r)
}

// apply runs one trigger of the job-transition table on request r's job
// and carries out its effects. Jobs are values: a transition stores a new
// job and never changes the old one, so a traced job stays as it was
// until the call (Start or Handle) that traced it returns.
func (c *Core) apply(r uint64, t oracle.Trigger) oracle.Outcome {
	prev := c.s.jobs[r]
	o := c.transition(r, prev, t)
	if len(o.Rows) == 0 {
		return o
	}
	switch {
	case o.Job != nil:
		c.s.put(o.Job)
	case prev != nil:
		c.s.remove(r)
	}
	c.trace(ports.Trace{Kind: ports.TraceJob, RequestID: r, Rows: o.Rows, Job: o.Job})
	if slices.Contains(o.Rows, oracle.RowSucceeded) {
		c.metrics.JobsCompleted++
	}
	for _, e := range o.Effects {
		switch e := e.(type) {
		case *oracle.QueueResult:
			c.queueResult(e.Result)
		case oracle.AbortExecution:
			c.abortExecution(r)
		case oracle.RecheckResults:
			c.recheckResults(r)
		case *oracle.ArmWatchdog:
			// The tick runs the watchdog once WatchdogDue holds.
		}
	}
	c.settleExecution(r)
	return o
}

// transition applies t to request r's job prev. The job after it goes in
// one of the request's two rooms: the one that does not hold prev, if no
// transition of this call wrote it (this call's outputs may still point
// there); otherwise, and for a new job, it is allocated. A job is copied
// on every selection and every execution's end, and a new one each time
// was a tenth of the oracle world's bytes.
func (c *Core) transition(r uint64, prev *oracle.Job, t oracle.Trigger) oracle.Outcome {
	if prev == nil {
		return Transition(nil, t, c.now)
	}
	rm := c.s.rooms[r]
	if rm == nil {
		rm = &jobRooms{}
		c.s.rooms[r] = rm
	}
	for i := range rm.room {
		if rm.room[i].Holds(prev) || rm.call[i] == c.calls {
			continue
		}
		rm.call[i] = c.calls
		return TransitionIn(&rm.room[i], prev, t, c.now)
	}
	return Transition(prev, t, c.now)
}

// startLoops is §3.1 step 6: the event processor, the 1 s tick, the health
// check; the result processor and the sequence resync already run.
func (c *Core) startLoops() {
	c.phase = phaseRunning
	c.trace(ports.Trace{Kind: ports.TraceStep, Name: ports.StepRunning})
	c.log(slog.LevelInfo, "oracle daemon running", slog.Int("jobs", len(c.s.ordered)))
	c.scheduleTick(c.now.Add(oracle.TickInterval))
	c.startHealth()
	c.pumpEvents()
	c.pumpSubmitter()
}

func (c *Core) scheduleTick(at time.Time) {
	c.s.tick = c.at(at, func() {
		c.s.tick = nil
		if !c.running() {
			return
		}
		c.onTick()
		c.scheduleTick(at.Add(oracle.TickInterval))
	})
}

// onTick selects the ready jobs in (NextRunTime, RequestID) order, marking
// each Executing in this same step (D19, D30), hands them to the executor,
// and runs the watchdog of every job whose 24 h wait is over (D13).
func (c *Core) onTick() {
	// The ready jobs in oracle.ReadyOrder's order (D19, D30), kept as
	// their sort keys in a slice the ticks reuse: copying whole jobs twice
	// a tick was a tenth of the daemon's bytes.
	ready := c.s.ready[:0]
	c.s.ready = nil // whatever runs below and ticks takes its own
	for _, j := range c.s.ordered {
		if Ready(j, c.now) {
			ready = append(ready, readyJob{at: j.NextRunTime, r: j.RequestID})
		}
	}
	slices.SortFunc(ready, func(a, b readyJob) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.r, b.r)
	})
	for _, j := range ready {
		o := c.apply(j.r, oracle.Select{})
		if slices.Contains(o.Rows, oracle.RowSelect) {
			c.enqueueExecution(j.r)
		}
	}
	c.s.ready = ready[:0]
	for _, j := range c.s.ordered {
		if WatchdogDue(*j, c.now) && !c.s.watchdogs[j.RequestID] {
			c.runWatchdog(j.RequestID)
		}
	}
}

// runWatchdog is D13 for request r: query the doc, then either act as
// Complete (the chain moved on), re-run the round (self's submission is
// missing) or wait another 24 h. A failed query leaves the job due, so the
// watchdog runs again on a later tick.
func (c *Core) runWatchdog(r uint64) {
	c.s.watchdogs[r] = true
	done := func() { delete(c.s.watchdogs, r) }
	c.queryDoc(r, func(doc *oracle.RequestDoc, err error) {
		j := c.s.jobs[r]
		switch {
		case c.stopping():
			done()
			return
		case err != nil:
			done()
			c.countError("watchdog: doc query failed", slog.Uint64("request_id", r), errAttr(err))
			return
		case j == nil || !WatchdogDue(*j, c.now):
			done()
			return
		case doc == nil:
			done()
			c.apply(r, oracle.Watchdog{Doc: nil, Self: c.self})
			return
		case doc.Nonce > j.Nonce:
			c.queryLastBlockTime(r, func(bt time.Time, err error) {
				done()
				if c.stopping() {
					return
				}
				if err != nil {
					c.log(slog.LevelWarn, "watchdog: no block time; using now", slog.Uint64("request_id", r), errAttr(err))
				}
				c.apply(r, oracle.Watchdog{Doc: doc, Self: c.self, LastBlockTime: bt})
			})
		default:
			c.querySubmitted(r, j.Nonce+1, func(submitted bool, err error) {
				done()
				if c.stopping() {
					return
				}
				if err != nil {
					c.countError("watchdog: submission query failed", slog.Uint64("request_id", r), errAttr(err))
					return
				}
				c.apply(r, oracle.Watchdog{Doc: doc, Self: c.self, SelfSubmitted: submitted})
			})
		}
	})
}

// stopTick is the first half of §3.7 step 3: the tick stops; the
// executor then drains.
func (c *Core) stopTick() {
	c.cancel(c.s.tick)
	c.s.tick = nil
}
