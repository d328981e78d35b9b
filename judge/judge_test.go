package judge

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A toy world: events add to a counter; a checker wants it never to go
// negative, and notes each subtraction as its situation.
type ev struct {
	seq int64
	at  time.Time
	add int
}

type counter struct {
	now   time.Time
	value int
}

type toyWorld struct{}

func (toyWorld) Before(s *counter, e *ev) { s.now = e.at }
func (toyWorld) Apply(s *counter, e *ev)  { s.value += e.add }

type nonNegative struct{ finished bool }

func (*nonNegative) Name() string     { return "non-negative" }
func (*nonNegative) Contract() string { return "T1" }
func (c *nonNegative) Observe(s *counter, e *ev, r *Report) {
	if e.add < 0 {
		r.Exercise()
	}
}
func (c *nonNegative) AfterApply(s *counter, e *ev, r *Report) {
	if s.value < 0 {
		r.Flag("counter", s.now, "went negative", e.seq)
	}
}
func (c *nonNegative) Finish(s *counter, r *Report) { c.finished = true }

type neverSeen struct{}

func (neverSeen) Name() string                   { return "never-seen" }
func (neverSeen) Contract() string               { return "T2" }
func (neverSeen) Observe(*counter, *ev, *Report) {}

func events(adds ...int) []ev {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	out := make([]ev, len(adds))
	for i, a := range adds {
		out[i] = ev{seq: int64(i + 1), at: t0.Add(time.Duration(i) * time.Second), add: a}
	}
	return out
}

func TestRunFlagsExercisesAndFinishes(t *testing.T) {
	nn := &nonNegative{}
	r := Run[*counter, ev](toyWorld{}, &counter{}, events(2, -1, -3, 5), []Checker[*counter, ev]{nn, neverSeen{}})
	require.True(t, nn.finished)
	require.True(t, r.Failed())
	require.Len(t, r.Violations, 1)
	v := r.Violations[0]
	require.Equal(t, "non-negative", v.Checker)
	require.Equal(t, "T1", v.Contract)
	require.Equal(t, []int64{3}, v.Evidence)
	require.Equal(t, Must, v.Severity)
	require.Contains(t, v.String(), "went negative")
	require.Equal(t, 2, r.Exercised["non-negative"])
	require.Equal(t, Violated, r.Verdict("non-negative"))
	require.Equal(t, NotExercised, r.Verdict("never-seen"), "a checker whose situation never arose must say so")
	require.Equal(t, []string{"never-seen", "non-negative"}, r.Checkers())

	ok := Run[*counter, ev](toyWorld{}, &counter{}, events(2, -1), []Checker[*counter, ev]{&nonNegative{}})
	require.False(t, ok.Failed())
	require.Equal(t, Pass, ok.Verdict("non-negative"))
}

func TestShouldViolationsWarnWithoutFailing(t *testing.T) {
	r := Run[*counter, ev](toyWorld{}, &counter{}, events(-1), []Checker[*counter, ev]{&nonNegative{}}, "non-negative")
	require.False(t, r.Failed())
	require.Len(t, r.Violations, 1)
	require.Equal(t, Should, r.Violations[0].Severity)
	require.Equal(t, Warned, r.Verdict("non-negative"))
}

func TestReportCapsViolationsPerChecker(t *testing.T) {
	adds := make([]int, 3*MaxViolationsPerChecker)
	for i := range adds {
		adds[i] = -1
	}
	r := Run[*counter, ev](toyWorld{}, &counter{}, events(adds...), []Checker[*counter, ev]{&nonNegative{}})
	require.Len(t, r.Violations, MaxViolationsPerChecker)
}

func TestTallyListsTheUnexercisedInOrder(t *testing.T) {
	tl := NewTally([]string{"b", "a"})
	require.Equal(t, []string{"b", "a"}, tl.NotExercised())
}

func TestTallySumsRuns(t *testing.T) {
	tl := NewTally([]string{"non-negative", "never-seen"})
	tl.Add(Run[*counter, ev](toyWorld{}, &counter{}, events(1, -1), []Checker[*counter, ev]{&nonNegative{}, neverSeen{}}))
	require.Equal(t, Pass, tl.Verdict("non-negative"))
	bad := NewTally(nil)
	bad.Add(Run[*counter, ev](toyWorld{}, &counter{}, events(-1, -1), []Checker[*counter, ev]{&nonNegative{}}))
	tl.Merge(bad)
	tl.Add(nil)
	require.Equal(t, 2, tl.Runs)
	require.Equal(t, Violated, tl.Verdict("non-negative"))
	require.Equal(t, 2, tl.Violations["non-negative"])
	require.Equal(t, 1, tl.ViolatedRuns["non-negative"])
	require.Equal(t, NotExercised, tl.Verdict("never-seen"))
}

func TestStreamJudgesLikeRun(t *testing.T) {
	evs := events(2, -1, -3, 5, -9)
	whole := Run[*counter, ev](toyWorld{}, &counter{}, evs, []Checker[*counter, ev]{&nonNegative{}, neverSeen{}})
	nn := &nonNegative{}
	st := NewStream[*counter, ev](toyWorld{}, &counter{}, []Checker[*counter, ev]{nn, neverSeen{}})
	for i := range evs {
		st.Step(&evs[i])
	}
	require.False(t, nn.finished, "Finish runs only at the end")
	r := st.Finish()
	require.True(t, nn.finished)
	require.Equal(t, whole.Violations, r.Violations)
	require.Equal(t, whole.Exercised, r.Exercised)
	st.Step(&evs[0])
	require.Same(t, r, st.Finish(), "a finished stream ignores further events")
	require.Equal(t, whole.Exercised, r.Exercised)
}

func TestFiguresAreSummedAndMaxedNotJudged(t *testing.T) {
	r := NewReport([]Named{&nonNegative{}})
	r.As(&nonNegative{})
	r.Figure("window", 2)
	r.Figure("window", 3)
	require.Equal(t, 5.0, r.Figures["non-negative.window"])
	require.False(t, r.Failed(), "a figure is no violation")

	other := NewReport([]Named{&nonNegative{}})
	other.As(&nonNegative{})
	other.Figure("window", 4)
	tl := NewTally([]string{"non-negative"})
	tl.Add(r)
	part := NewTally([]string{"non-negative"})
	part.Add(other)
	tl.Merge(part)
	require.Equal(t, 9.0, tl.Figures["non-negative.window"])
	require.Equal(t, 5.0, tl.FigureMax["non-negative.window"])
}

// classedWorld is toyWorld with two classes of events: additions (0) and
// subtractions (1).
type classedWorld struct{ toyWorld }

func (classedWorld) Class(e *ev) int {
	if e.add < 0 {
		return 1
	}
	return 0
}

// seen notes the events it observes and, after they apply, the counter;
// reads (when not nil) is the set of classes it reads.
type seen struct {
	reads    *uint64
	observed []int64
	after    []int
	finished bool
}

func (*seen) Name() string     { return "seen" }
func (*seen) Contract() string { return "T3" }
func (c *seen) Observe(_ *counter, e *ev, r *Report) {
	c.observed = append(c.observed, e.seq)
	r.Exercise()
}
func (c *seen) AfterApply(s *counter, _ *ev, _ *Report) {
	c.after = append(c.after, s.value)
}
func (c *seen) Finish(*counter, *Report) { c.finished = true }

// seenReader is seen as a Reader.
type seenReader struct{ seen }

func (*seenReader) Name() string    { return "seen-reader" }
func (c *seenReader) Reads() uint64 { return *c.reads }

// A Reader sees only its classes' events (the state still follows every
// event); a checker that is no Reader, or whose world has no classes,
// sees them all.
func TestReadersSeeOnlyTheirClasses(t *testing.T) {
	subtractions := uint64(1 << 1)
	evs := events(2, -1, 4, -3, 5)
	reader, all := &seenReader{seen{reads: &subtractions}}, &seen{}
	r := Run[*counter, ev](classedWorld{}, &counter{}, evs, []Checker[*counter, ev]{reader, all})
	require.Equal(t, []int64{2, 4}, reader.observed)
	require.Equal(t, []int{1, 2}, reader.after, "the counter after each subtraction, the additions applied too")
	require.True(t, reader.finished)
	require.Equal(t, []int64{1, 2, 3, 4, 5}, all.observed)
	require.Equal(t, []int{2, 1, 5, 2, 7}, all.after)
	require.Equal(t, 2, r.Exercised["seen-reader"])
	require.Equal(t, 5, r.Exercised["seen"])

	classless := &seenReader{seen{reads: &subtractions}}
	Run[*counter, ev](toyWorld{}, &counter{}, evs, []Checker[*counter, ev]{classless})
	require.Equal(t, []int64{1, 2, 3, 4, 5}, classless.observed, "a world without classes shows every event")

	none := uint64(0)
	deaf := &seenReader{seen{reads: &none}}
	st := NewStream[*counter, ev](classedWorld{}, &counter{}, []Checker[*counter, ev]{deaf})
	for i := range evs {
		st.Step(&evs[i])
	}
	require.Equal(t, NotExercised, st.Finish().Verdict("seen-reader"))
	require.Empty(t, deaf.observed)
	require.True(t, deaf.finished, "Finish runs for every checker")
}

// clockedWorld is classedWorld with a clock: the counter's time.
type clockedWorld struct{ classedWorld }

func (clockedWorld) Now(s *counter) time.Time { return s.now }

// sleeper reads subtractions and, between them, wakes at the times in
// wakes (one per call, then Forever).
type sleeper struct {
	observed []int64
	wakes    []time.Time
}

func (*sleeper) Name() string     { return "sleeper" }
func (*sleeper) Contract() string { return "T4" }
func (*sleeper) Reads() uint64    { return 1 << 1 }
func (c *sleeper) Observe(_ *counter, e *ev, _ *Report) {
	c.observed = append(c.observed, e.seq)
}
func (c *sleeper) Wake(*counter) time.Time {
	if len(c.wakes) == 0 {
		return Forever
	}
	w := c.wakes[0]
	c.wakes = c.wakes[1:]
	return w
}

// afterSleeper is a sleeper that is also an AfterApplier: it sees every
// event.
type afterSleeper struct{ sleeper }

func (*afterSleeper) AfterApply(*counter, *ev, *Report) {}

// A Sleeper sees its classes' events, the first event, and any other once
// the clock is past its last Wake (the zero time: the next event); without
// a clock, or as an AfterApplier, it sees every event.
func TestSleepersSeeTheirClassesAndWhatIsDue(t *testing.T) {
	evs := events(1, 1, -1, 1, 1, 1, 1, 1) // at 0 s, 1 s, … 7 s
	t0 := evs[0].at
	sl := &sleeper{wakes: []time.Time{
		t0.Add(1500 * time.Millisecond), // after event 1: wake past 1.5 s (event 3 is read anyway)
		{},                              // after event 3: the next event
		t0.Add(5 * time.Second),         // after event 4: past 5 s, not at 5 s
	}}
	Run[*counter, ev](clockedWorld{}, &counter{}, evs, []Checker[*counter, ev]{sl})
	require.Equal(t, []int64{1, 3, 4, 7}, sl.observed)

	classless := &sleeper{}
	Run[*counter, ev](toyWorld{}, &counter{}, evs, []Checker[*counter, ev]{classless})
	require.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7, 8}, classless.observed, "a world without classes shows every event")

	unclocked := &sleeper{}
	Run[*counter, ev](classedWorld{}, &counter{}, evs, []Checker[*counter, ev]{unclocked})
	require.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7, 8}, unclocked.observed, "a world without a clock shows every event")

	after := &afterSleeper{}
	Run[*counter, ev](clockedWorld{}, &counter{}, evs, []Checker[*counter, ev]{after})
	require.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7, 8}, after.observed, "an AfterApplier sees every event")
}
