package judge

import (
	"math"
	"time"
)

// Checker judges one contract over a world's history: events of type E
// with the world's state S just before each.
type Checker[S, E any] interface {
	Named
	// Observe sees event e with the state just before it.
	Observe(s S, e *E, r *Report)
}

// AfterApplier is implemented by checkers that also need the state just
// after each event.
type AfterApplier[S, E any] interface {
	AfterApply(s S, e *E, r *Report)
}

// Finisher is implemented by checkers with an end-of-run judgement (on
// the final state, after the last event).
type Finisher[S any] interface {
	Finish(s S, r *Report)
}

// World is what Run needs of a world: how an event changes its state.
type World[S, E any] interface {
	// Before is called before the checkers observe e (to move the
	// state's clock, say).
	Before(s S, e *E)
	// Apply advances s past e.
	Apply(s S, e *E)
}

// Classes is implemented by a world whose events fall into classes that
// checkers can declare they read (Reader): Class numbers e's class, in
// [0, MaxClasses). A world without it has one class.
type Classes[E any] interface {
	Class(e *E) int
}

// MaxClasses bounds the classes of a world's events: a Reader's set is one
// bit per class.
const MaxClasses = 64

// Reader is implemented by a checker that reads only some classes of a
// world's events (Classes): bit c of Reads is set when it reads class c.
// Its Observe and AfterApply then see only the events of those classes
// (the world's Before and Apply still see every one, and Finish runs as
// for any checker). A checker must declare every class whose events it
// acts on, or whose time it acts at: one that judges deadlines as time
// passes reads every class, and does not implement Reader, unless it says
// when its next deadline is (Sleeper). A checker
// that does not implement Reader, or whose world has no Classes, sees
// every event.
type Reader interface {
	Reads() uint64
}

// Sleeper is implemented by a Reader that also judges deadlines as time
// passes, in a world with a Clock: besides the events of its classes, it
// sees every event at which the world's clock is past the time Wake gave
// after its last Observe (the zero time: the next event; Forever: none
// but its classes'). Wake must be such that Observe would do nothing at an
// event of a class it does not read while the clock is not past that time
// (a state it rebuilds first thing when it finds the world moved on, as a
// new lifetime, may be rebuilt at the next event it sees). A Sleeper that
// is an AfterApplier, or whose world has no Clock or no Classes, sees
// every event.
type Sleeper[S any] interface {
	Reader
	Wake(s S) time.Time
}

// Clock is implemented by a world whose checkers may sleep (Sleeper): Now
// is the state's time once Before has seen an event.
type Clock[S any] interface {
	Now(s S) time.Time
}

// Forever is a Sleeper's Wake when no time-driven judgement is due: it
// sees only its classes' events.
var Forever = time.Unix(foreverSec, 0)

// Run replays events through every checker once, in order (a Reader sees
// only the events of its classes), with the state w maintains, then runs
// each Finisher, and returns the report with violations ordered by time.
// warn names checkers whose violations are warnings (Severity Should).
func Run[S, E any](w World[S, E], s S, events []E, checkers []Checker[S, E], warn ...string) *Report {
	st := NewStream(w, s, checkers, warn...)
	for i := range events {
		st.Step(&events[i])
	}
	return st.Finish()
}

// Stream is Run one event at a time, for a world that hands its events
// to the checkers as they are recorded (a Recorder's Sink) instead of
// keeping them all.
type Stream[S, E any] struct {
	w        World[S, E]
	classes  Classes[E] // nil: one class
	s        S
	checkers []Checker[S, E]
	named    []Named // the checkers as Named, converted once
	// observe[c] and after[c] are the checkers (indices, in order) that
	// see class c's events, and those of them that are AfterAppliers. An
	// observer with asleep set is a Sleeper that does not read class c:
	// it sees the event only when the clock is past wake[its index].
	observe [][]observer[S]
	after   [][]int
	clock   Clock[S]
	wake    []int64 // by checker: a Sleeper's last Wake (wakeNanos)
	r       *Report
	done    bool
}

// observer is one checker that sees a class's events.
type observer[S any] struct {
	k int
	// sleeper is the checker when it sleeps (a Sleeper in a world with a
	// Clock and Classes); asleep is set when it does not read the class:
	// it sees the class's events only when the clock is past its wake.
	sleeper Sleeper[S]
	asleep  bool
}

// NewStream starts judging a history with the state s that w maintains;
// warn names checkers whose violations are warnings (Severity Should).
func NewStream[S, E any](w World[S, E], s S, checkers []Checker[S, E], warn ...string) *Stream[S, E] {
	named := make([]Named, len(checkers))
	for i, c := range checkers {
		named[i] = c
	}
	st := &Stream[S, E]{w: w, s: s, checkers: checkers, named: named, r: NewReport(named, warn...)}
	n := 1
	if cl, ok := w.(Classes[E]); ok {
		st.classes, n = cl, MaxClasses
	}
	if cl, ok := w.(Clock[S]); ok && st.classes != nil {
		st.clock = cl
	}
	st.wake = make([]int64, len(checkers))
	st.observe, st.after = make([][]observer[S], n), make([][]int, n)
	for c := range n {
		for i, k := range checkers {
			_, after := k.(AfterApplier[S, E])
			o := observer[S]{k: i}
			if sl, ok := k.(Sleeper[S]); ok && !after && st.clock != nil {
				o.sleeper = sl
			}
			if rd, ok := k.(Reader); ok && st.classes != nil && rd.Reads()&(1<<c) == 0 {
				if _, ok := k.(Sleeper[S]); !ok {
					continue
				}
				// A Sleeper that cannot sleep here sees every event.
				o.asleep = o.sleeper != nil
			}
			st.observe[c] = append(st.observe[c], o)
			if after {
				st.after[c] = append(st.after[c], i)
			}
		}
	}
	for i := range st.wake {
		st.wake[i] = math.MinInt64 // a Sleeper sees the first event
	}
	return st
}

// wakeNanos is a Sleeper's Wake as a number to compare clockNanos with:
// the zero time (any before 1678) is less than every clock, Forever
// (any time from it on) never passed.
func wakeNanos(t time.Time) int64 {
	switch sec := t.Unix(); {
	case sec < minClockSec:
		return math.MinInt64
	case sec >= foreverSec:
		return math.MaxInt64
	}
	return t.UnixNano()
}

// clockNanos is the world's clock as a number to compare wakeNanos with.
func clockNanos(t time.Time) int64 {
	switch sec := t.Unix(); {
	case sec < minClockSec:
		return math.MinInt64 + 1
	case sec >= foreverSec:
		return math.MaxInt64
	}
	return t.UnixNano()
}

// minClockSec and foreverSec bound the times (in Unix seconds) that
// wakeNanos and clockNanos tell apart: from them on, and before Forever,
// UnixNano is more than math.MinInt64+1.
const (
	minClockSec = math.MinInt64/int64(time.Second) + 1
	foreverSec  = math.MaxInt64 / int64(time.Second)
)

// Step judges the next event. Steps after Finish are ignored.
func (st *Stream[S, E]) Step(e *E) {
	if st.done {
		return
	}
	c := 0
	if st.classes != nil {
		c = st.classes.Class(e)
	}
	st.w.Before(st.s, e)
	now := int64(math.MinInt64)
	if st.clock != nil {
		now = clockNanos(st.clock.Now(st.s))
	}
	for _, o := range st.observe[c] {
		k := o.k
		if o.asleep && now <= st.wake[k] {
			continue
		}
		st.r.asChecker(k)
		st.checkers[k].Observe(st.s, e, st.r)
		if o.sleeper != nil {
			st.wake[k] = wakeNanos(o.sleeper.Wake(st.s))
		}
	}
	st.w.Apply(st.s, e)
	for _, k := range st.after[c] {
		st.r.asChecker(k)
		st.checkers[k].(AfterApplier[S, E]).AfterApply(st.s, e, st.r)
	}
}

// Report is the report so far: the violations in the order they were
// found, before Finish orders them by time. It changes with every Step.
func (st *Stream[S, E]) Report() *Report { return st.r }

// Finish runs each Finisher and returns the report, violations ordered by
// time. Later calls return the same report.
func (st *Stream[S, E]) Finish() *Report {
	if st.done {
		return st.r
	}
	st.done = true
	for i, c := range st.checkers {
		if f, ok := c.(Finisher[S]); ok {
			st.r.asChecker(i)
			f.Finish(st.s, st.r)
		}
	}
	st.r.current, st.r.checkers, st.r.cur = nil, nil, -1 // the report keeps no checker
	st.r.sortViolations()
	return st.r
}
