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

// Run replays events through every checker once, in order, with the
// state w maintains, then runs each Finisher, and returns the report with
// violations ordered by time. warn names checkers whose violations are
// warnings (Severity Should).
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
	s        S
	checkers []Checker[S, E]
	named    []Named // the checkers as Named, converted once
	after    []int
	r        *Report
	done     bool
}

// NewStream starts judging a history with the state s that w maintains;
// warn names checkers whose violations are warnings (Severity Should).
func NewStream[S, E any](w World[S, E], s S, checkers []Checker[S, E], warn ...string) *Stream[S, E] {
	named := make([]Named, len(checkers))
	var after []int
	for i, c := range checkers {
		named[i] = c
		if _, ok := c.(AfterApplier[S, E]); ok {
			after = append(after, i)
		}
	}
	return &Stream[S, E]{w: w, s: s, checkers: checkers, named: named, after: after, r: NewReport(named, warn...)}
}

// Step judges the next event. Steps after Finish are ignored.
func (st *Stream[S, E]) Step(e *E) {
	if st.done {
		return
	}
	st.w.Before(st.s, e)
	for i, c := range st.checkers {
		st.r.As(st.named[i])
		c.Observe(st.s, e, st.r)
	}
	st.w.Apply(st.s, e)
	for _, k := range st.after {
		st.r.As(st.named[k])
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
			st.r.As(st.named[i])
			f.Finish(st.s, st.r)
		}
	}
	st.r.current = nil
	st.r.sortViolations()
	return st.r
}
