package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/history"
)

// firstTicks is inst's acquisition of the lock at the trace's instant and
// the first ticks SPEC asks of that step: the EventListener listens, the
// HealthMonitor lists containers and volumes, the Archive GC lists
// archives/.
func (tr *trace) firstTicks(inst string, epoch int64) *trace {
	return tr.leader(inst, epoch).call(inst, MListen, "", "", "", "").
		call(inst, MInstancesList, "", "", "", "").call(inst, "storage.ListVolumes", "", "", "", "").
		call(inst, MObjList, "", "archives/", "0", "")
}

// SPEC 3, "Due times": the step in which an instance acquires the lock
// runs all five components.
func TestFirstStepComponents(t *testing.T) {
	tr := newTrace().firstTicks("c1", 1).at(time.Second).check("c1", 1, "")
	r := run(t, tr, nil, "first-step-components")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("first-step-components"))

	// A failed listing is a tick all the same (SPEC 3, "Failures").
	tr = newTrace().leader("c1", 1).call("c1", MListen, "", "", "", "").
		call("c1", MInstancesList, "", "", "", "docker unavailable").
		call("c1", MObjList, "", "archives/", "", "s3 unavailable").at(time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "first-step-components")
	require.Empty(t, r.Violations)

	// The GC waits for its hour instead of running at the acquisition.
	tr = newTrace().leader("c1", 1).call("c1", MListen, "", "", "", "").
		call("c1", MInstancesList, "", "", "", "").at(time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "first-step-components")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "no tick of the Archive GC")

	// No listing and no LISTEN at all: one violation naming all three.
	tr = newTrace().leader("c2", 2).at(time.Second).check("c2", 2, "")
	r = run(t, tr, nil, "first-step-components")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "HealthMonitor")
	require.Contains(t, r.Violations[0].Message, "EventListener")

	// An instance that gives the lead up within the step owes nothing.
	tr = newTrace().leader("c1", 1).call("c1", MListen, "", "", "", "").
		call("c1", MRelease, "", "c1", "", "").at(time.Second)
	r = run(t, tr, nil, "first-step-components")
	require.Empty(t, r.Violations)

	// Nor does one whose answer to its lock try was lost: it leads unawares.
	tr = newTrace().leader("c1", 1).add(history.Event{Kind: history.KindFault, Instance: "c1", Method: FLostResp, Args: MTryAcquire}).
		at(time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "first-step-components")
	require.Empty(t, r.Violations)
}

// SPEC 3, "Due times": the GC's next pass runs at the first step at or
// after one hour from the start of its previous pass.
func TestGCHourly(t *testing.T) {
	step := func(tr *trace, d time.Duration) *trace { return tr.at(d).check("c1", 1, "") }
	pass := func(tr *trace, d time.Duration, err string) *trace {
		return step(tr, d).call("c1", MObjList, "", "archives/", "", err)
	}
	// Passes on the hour, steps in between; the second pass failed and the
	// next one comes an hour after its start all the same.
	tr := newTrace().firstTicks("c1", 1)
	for m := 10; m < 180; m += 10 {
		if m%60 == 0 {
			tr = pass(tr, time.Duration(m)*time.Minute, map[bool]string{true: "s3 unavailable"}[m == 60])
		} else {
			tr = step(tr, time.Duration(m)*time.Minute)
		}
	}
	r := run(t, tr, nil, "gc-hourly")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("gc-hourly"))

	// No step on the hour: the first step after it passes.
	tr = newTrace().firstTicks("c1", 1)
	tr = step(tr, time.Hour-500*time.Millisecond)
	tr = pass(tr, time.Hour+1500*time.Millisecond, "")
	r = run(t, tr, nil, "gc-hourly")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("gc-hourly"))

	// A failed pass retried sooner.
	tr = newTrace().leader("c1", 1).call("c1", MObjList, "", "archives/", "", "s3 unavailable")
	tr = pass(tr, 10*time.Minute, "")
	r = run(t, tr, nil, "gc-hourly")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "before its due time")

	// A step at the due time without the pass, which comes a step later.
	tr = newTrace().firstTicks("c1", 1)
	tr = step(step(tr, time.Hour), time.Hour+time.Second)
	tr = pass(tr, time.Hour+2*time.Second, "")
	r = run(t, tr, nil, "gc-hourly")
	require.Len(t, r.Violations, 1, "once per gap")
	require.Contains(t, r.Violations[0].Message, "ran none")

	// A new leadership starts again with a pass at its first step; its next
	// pass is due an hour after that one, not after the old leader's.
	tr = newTrace().firstTicks("c1", 1)
	tr = step(tr, 30*time.Minute).add(history.Event{Kind: history.KindLeader, Method: "lost", Instance: "c1", Epoch: 1})
	tr = tr.at(31*time.Minute).firstTicks("c2", 2)
	tr = tr.at(time.Hour).check("c2", 2, "")
	tr = tr.at(time.Hour+31*time.Minute).check("c2", 2, "").call("c2", MObjList, "", "archives/", "", "")
	r = run(t, tr, nil, "gc-hourly")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("gc-hourly"))

	// A step cut short by a crash owes nothing.
	tr = newTrace().firstTicks("c1", 1)
	tr = step(tr, time.Hour).add(history.Event{Kind: history.KindCrash, Instance: "c1"})
	tr = tr.at(time.Hour+time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "gc-hourly")
	require.Empty(t, r.Violations)
}
