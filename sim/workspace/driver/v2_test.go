package driver

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	wssim "github.com/wsconverge/converge/sim/workspace"
	"github.com/wsconverge/converge/sim/workspace/driver/wire"
)

// stepOnce builds fake child name as coord-1 on a fresh world and takes
// one step.
func stepOnce(t *testing.T, name string) (*System, *world, error) {
	t.Helper()
	sys := fakeSystem(t, name, DefaultTimeout)
	w := newWorld()
	_, err := sys.NewAPI(w.deps("api"))
	require.NoError(t, err)
	c, err := sys.NewCoordinator(w.deps("coord-1"))
	require.NoError(t, err)
	_, err = c.Step(context.Background())
	return sys, w, err
}

// Calls a child pipelines (sends before it has read the answers to the
// first) are answered in order, as are the calls of a batch; an error
// answers its own call and the others go on.
func TestPipelinedAndBatchedCallsAreAnsweredInOrder(t *testing.T) {
	sys, w, err := stepOnce(t, "pipeline")
	require.NoError(t, err)
	require.Empty(t, sys.Failures())
	require.Len(t, w.notes, 1)
	ids := strings.Fields(strings.TrimPrefix(w.notes[0], "coord-1#1: pipelined "))
	require.Len(t, ids, 3)
	require.NotEqual(t, ids[0], ids[1])

	sys, w, err = stepOnce(t, "batch")
	require.NoError(t, err)
	require.Empty(t, sys.Failures())
	require.Len(t, w.notes, 1)
	got := strings.Fields(strings.TrimPrefix(w.notes[0], "coord-1#1: batch "))
	require.Len(t, got, 3)
	require.Equal(t, "not_found", got[1], "the error answers the second call; the third is made")
	require.NotEqual(t, got[0], got[2])
}

// Version 2's messages from a child that answered hello with version 1,
// and a wake-up that cannot wake anything, break the protocol.
func TestVersionTwoMessagesAreCheckedLikeAnyOther(t *testing.T) {
	sys, _, err := stepOnce(t, "batch-v1")
	require.ErrorContains(t, err, "a batch is protocol version 2; this child answered hello with version 1")
	require.Len(t, sys.Failures(), 1)

	sys, _, err = stepOnce(t, "bad-wake")
	require.ErrorContains(t, err, `done: wake.calls[0]: method "store.get" cannot wake a child`)
	require.Len(t, sys.Failures(), 1)
}

// A child is woken only when a call of its wake-up answers something new
// or its own work is due (until): meanwhile the harness takes its quiet
// steps, without a message, and the step it wakes it for brings the
// answers of the calls it begins with.
func TestTheHarnessTakesAChildsQuietStepsAndWakesItWithTheAnswers(t *testing.T) {
	sys := fakeSystem(t, "wake", DefaultTimeout)
	w := newWorld()
	_, err := sys.NewAPI(w.deps("api"))
	require.NoError(t, err)
	c, err := sys.NewCoordinator(w.deps("coord-1"))
	require.NoError(t, err)
	ctx := context.Background()
	step := func(at time.Duration) time.Time {
		t.Helper()
		w.clock.Set(t0.Add(at))
		next, err := c.Step(ctx)
		require.NoError(t, err)
		return next
	}
	require.Equal(t, t0.Add(time.Second), step(0), "the first step listens and declares its wake-up")
	messages := sys.Messages()
	require.Equal(t, t0.Add(2*time.Second), step(time.Second), "nothing happened: a quiet step")
	require.Equal(t, t0.Add(3*time.Second), step(2*time.Second))
	require.Equal(t, messages, sys.Messages(), "quiet steps send nothing")
	require.Equal(t, 2, sys.QuietSteps())
	require.Empty(t, w.notes)

	// A change: the next step's drain finds it, and wakes the child.
	ws := contracts.NewWorkspace("w1", "u1", "dev", "img", t0)
	writer := contracts.Writer{Component: contracts.CompAPI, Instance: "api"}
	require.NoError(t, w.w.Store.Insert(ctx, writer, ws))
	applied, err := w.w.Store.Update(ctx, writer, "w1", contracts.Cond{}, contracts.Patch{DesiredState: contracts.Some(contracts.DesiredStandby)})
	require.NoError(t, err)
	require.True(t, applied)
	step(3 * time.Second)
	require.Len(t, w.notes, 1)
	require.Contains(t, w.notes[0], "woken at 00:00:03 with 1 answers: [{")
	require.Contains(t, w.notes[0], `"desired_state":"STANDBY"`)

	// Its own time: at until, the step is the child's, and still begins
	// with the wake-up's calls, answered quietly.
	step(4 * time.Second)
	require.Equal(t, 3, sys.QuietSteps())
	step(13 * time.Second)
	require.Len(t, w.notes, 2)
	require.Contains(t, w.notes[1], "woken at 00:00:13 with 1 answers: []")
	require.Empty(t, sys.Failures())
}

// restarting is a run whose crashed coordinator is restarted a second
// later, again and again.
func restarting(sys *System) wssim.Config {
	cfg := quietRun(sys)
	cfg.Duration, cfg.RestartDelay = time.Hour, time.Second
	return cfg
}

// A child that fails the same way again and again stops the seed after
// three children, with one report: the failure, the children, and the
// command that gives the last of them what the harness gave it.
func TestACrashLoopStopsTheSeedWithOneReport(t *testing.T) {
	sys := fakeSystem(t, "no-next", DefaultTimeout)
	r, err := Check(context.Background(), restarting(sys))
	require.ErrorIs(t, err, ErrCrashLoop)
	require.Len(t, r.Failures, 1, "%v", r.Failures)
	report := r.Failures[0]
	require.Contains(t, report, "driver: crash loop: 3 children in a row failed the same way (coord-1#1, coord-1#2, coord-1#3)")
	require.Contains(t, report, `a step's done has no "next"`)
	require.Contains(t, report, "reproduce it without converge: give the child what the harness gave coord-1#3 (2 messages):")
	require.Contains(t, report, `printf '%s\n' '{"type":"hello","protocol":`+strconv.Itoa(wire.Version)+`,"role":"coordinator","instance":"coord-1",`)
	require.Contains(t, report, ` | `+shellQuote(sys.Command()[0]))
	looped := sys.cur
	if sys.prev != nil {
		looped = sys.prev // the loop ended the first run; its double never started a child
		require.Zero(t, sys.cur.gens["coord-1"])
	}
	require.Equal(t, 3, looped.gens["coord-1"], "no fourth child was started")
	require.Nil(t, r.Report, "a run cut short is not judged")

	// Without Check's cancellation the run goes on without children: no
	// fourth is started, and the loop is said once.
	sys = fakeSystem(t, "no-next", DefaultTimeout)
	r, err = wssim.Run(context.Background(), restarting(sys))
	require.NoError(t, err)
	require.Equal(t, 3, sys.cur.gens["coord-1"])
	all := strings.Join(r.Failures, "\n")
	require.Equal(t, 1, strings.Count(all, "3 children in a row failed the same way (coord-1#1, coord-1#2, coord-1#3)"), all)
	require.Equal(t, 1, strings.Count(all, `a step's done has no "next"`), "the failure is said once")
}

// Children that die at start-up, or API processes that die at every call,
// are a crash loop too.
func TestAStartUpCrashLoopIsReportedWithItsStandardError(t *testing.T) {
	sys := fakeSystem(t, "startup-exit", DefaultTimeout)
	_, err := Check(context.Background(), restarting(sys))
	require.ErrorContains(t, err, "at start-up: read from the child: the child exited with status 1")
	require.ErrorContains(t, err, "its standard error ends:\n    ImportError: no module named converge_drivr")

	sys = fakeSystem(t, "api-exit", DefaultTimeout)
	cfg := restarting(sys)
	cfg.Workspaces, cfg.Workload = 3, wssim.Workload{}
	r, err := Check(context.Background(), cfg)
	require.ErrorIs(t, err, ErrCrashLoop)
	require.Contains(t, r.Failures[0], "3 children in a row failed the same way (api#1, api#2, api#3)")
	require.Contains(t, r.Failures[0], "Traceback: KeyError: 'user'")
}
