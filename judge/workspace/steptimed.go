package workspace

// StepTimed is implemented by the checkers whose bounds hold only where a
// coordinator's step takes no time, as in the simulator's virtual clock:
// a stamp read at a step's start must equal the write's instant, or a
// change must be published within SPEC 4.6's 2 s of its commit. Where
// real services run under a fast clock (a drill at time scale K), one
// step's PostgreSQL and Docker calls last seconds on the coordinator's
// clock, and a correct implementation could fail them: such runs leave
// them out, with the reason given here.
type StepTimed interface {
	Checker
	// AssumesInstantSteps says why the checker's bound needs steps that
	// take no time.
	AssumesInstantSteps() string
}

const whyInstantSteps = "SPEC 3's now is the clock at the start of the step that writes, and its bound here is one step; a real runtime's step spans its actuator calls (seconds, minutes at a time scale), which the audit trail does not show"

func (*nowValues) AssumesInstantSteps() string       { return whyInstantSteps }
func (*completionStamp) AssumesInstantSteps() string { return whyInstantSteps }
func (*events) AssumesInstantSteps() string {
	return "SPEC 4.6 gives a change 2 s from its commit to its publication; under a fast clock the step that commits it, and the listener's next step, last longer than that on the coordinator's clock"
}

func (*apiAnswers) AssumesInstantSteps() string {
	return "a request's reads must fall within one step (APIRequestSpan) of its recorded answer; a request to real PostgreSQL under a fast clock spans longer, and writes that land meanwhile may excuse or explain its answer"
}

// whyStepInstants is the reason of the checkers that tell a coordinator's
// steps apart by their instants (DR411).
const whyStepInstants = "it tells an instance's steps apart by their instants of virtual time, where a step takes none; a real runtime's step spans real time, and a message reaches a subscriber after the bus's latency"

func (*monitorTrigger) AssumesInstantSteps() string {
	return "it takes a publish recorded more than NowSlack after the write that owed it to belong to a later step; under a fast clock one step's calls, the publish to real Redis included, can last longer than that on the coordinator's clock"
}

func (*holderActs) AssumesInstantSteps() string     { return whyStepInstants }
func (*tickRows) AssumesInstantSteps() string       { return whyStepInstants }
func (*triggerPass) AssumesInstantSteps() string    { return whyStepInstants }
func (*stepBound) AssumesInstantSteps() string      { return whyStepInstants }
func (*claimExecutes) AssumesInstantSteps() string  { return whyStepInstants }
func (*componentOrder) AssumesInstantSteps() string { return whyStepInstants }
func (*stepCheck) AssumesInstantSteps() string      { return whyStepInstants }
func (*passListing) AssumesInstantSteps() string    { return whyStepInstants }
func (*reconcilePeriod) AssumesInstantSteps() string {
	return "it bounds the StateReconciler's ticks by the leader's steps and the instants of the ticks it shows; a real runtime's step spans real time, and a tick read at its start may act seconds later"
}
func (*takeover) AssumesInstantSteps() string {
	return "its 30 s bound on a free lock counts from the end of the holder's session, which on a real PostgreSQL comes at a TCP timeout that a fast clock stretches past the bound"
}

// InstantStepsOnly reports whether c's bounds assume steps that take no
// time, and why.
func InstantStepsOnly(c Checker) (why string, ok bool) {
	if st, ok := c.(StepTimed); ok {
		return st.AssumesInstantSteps(), true
	}
	return "", false
}

func (*skipsWorkspace) AssumesInstantSteps() string { return whyStepInstants }
func (*oneStep) AssumesInstantSteps() string        { return whyStepInstants }
func (*idOrder) AssumesInstantSteps() string        { return whyStepInstants }
func (*skipsTick) AssumesInstantSteps() string {
	return "it counts a component's ticks between the leader's steps, told apart by their instants; under a fast clock one step's calls last seconds on the coordinator's clock, and a listing may land well after the step that began it"
}
func (*timeouts) AssumesInstantSteps() string {
	return "its grace past a timeout is the StateReconciler's 2 s period plus tolerance, counted on a clock where a step takes none; under a fast clock one step's actuator calls last longer than that, delaying the tick that ends the operation"
}

func (*firstStep) AssumesInstantSteps() string     { return whyStepInstants }
func (*firstStepRows) AssumesInstantSteps() string { return whyStepInstants }
func (*gcHourly) AssumesInstantSteps() string {
	return "it tells the leader's steps apart by their instants and holds a GC pass to the first step at or after its due time; a real runtime's step spans real time, and which step came first past the due time depends on when the listing was taken within it"
}
