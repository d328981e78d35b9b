package judge

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
// passes reads every class, and does not implement Reader. A checker
// that does not implement Reader, or whose world has no Classes, sees
// every event.
type Reader interface {
	Reads() uint64
}

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
	// see class c's events, and those of them that are AfterAppliers.
	observe [][]int
	after   [][]int
	r       *Report
	done    bool
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
	st.observe, st.after = make([][]int, n), make([][]int, n)
	for c := range n {
		for i, k := range checkers {
			if rd, ok := k.(Reader); ok && st.classes != nil && rd.Reads()&(1<<c) == 0 {
				continue
			}
			st.observe[c] = append(st.observe[c], i)
			if _, ok := k.(AfterApplier[S, E]); ok {
				st.after[c] = append(st.after[c], i)
			}
		}
	}
	return st
}

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
	for _, k := range st.observe[c] {
		st.r.asChecker(k)
		st.checkers[k].Observe(st.s, e, st.r)
	}
	st.w.Apply(st.s, e)
	for _, k := range st.after[c] {
		st.r.asChecker(k)
		st.checkers[k].(AfterApplier[S, E]).AfterApply(st.s, e, st.r)
	}
}

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
