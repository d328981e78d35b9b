package scenarios

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

// failStarts makes every container start fail with IMAGE_PULL_FAILED for
// d: three attempts, then RetryExceeded (SPEC 4.2.4).
func failStarts(t *testing.T, s *wssim.Sim, d time.Duration) {
	t.Helper()
	require.NoError(t, s.Apply(wssim.Action{Kind: wssim.FaultOutage, Method: "instances.Start",
		Code: contracts.CodeImagePullFailed, For: d, Percent: 100}))
}

// startsFailingToError creates a RUNNING workspace whose starts fail until
// it is in ERROR, with the pull outage lasting until `outage` from now.
func startsFailingToError(t *testing.T, s *wssim.Sim, outage time.Duration) string {
	t.Helper()
	failStarts(t, s, outage)
	id := create(t, s, contracts.DesiredRunning)
	waitDisplay(t, s, id, contracts.DisplayError, 10*time.Minute)
	w := row(t, s, id)
	require.Equal(t, contracts.ReasonRetryExceeded, w.ErrorInfo.Reason)
	require.NotEmpty(t, w.ErrorMessage)
	require.Equal(t, contracts.ObservedStandby, w.ObservedStatus)
	return id
}

// claimsAfter lists the operations claimed on id after event seq.
func claimsAfter(s *wssim.Sim, id string, seq int64) []contracts.Operation {
	var out []contracts.Operation
	for _, o := range TraceOf(s.History().Events(), id).Ops {
		if o.What == "claim" && o.Seq > seq {
			out = append(out, o.Op)
		}
	}
	return out
}

// TestRecoveryThenNewRequest: SPEC 4.3 as amended. An administrator
// recovers a workspace whose start kept failing; the user, right after,
// asks for STANDBY instead. The change is accepted at once (ERROR is
// judged by error_info, which recovery reset), and the reconciler never
// retries the old request: no STARTING is claimed after the recovery.
func TestRecoveryThenNewRequest(t *testing.T) {
	s := newSim(t, scenarioSystem, 1)
	id := startsFailingToError(t, s, time.Hour)
	require.NoError(t, s.RunFor(5*time.Second)) // the ERROR entry is published
	ctx := t.Context()
	sub, err := s.World().Bus.Subscribe(ctx, contracts.WorkspaceChannel(id))
	require.NoError(t, err)

	recoveredAt := int64(s.History().Len())
	require.NoError(t, s.API().Recover(ctx, "admin", id))
	ws, err := s.API().Patch(ctx, "alice", id, ports.PatchRequest{DesiredState: ptr("STANDBY")})
	require.NoError(t, err, "a desired-state change right after recovery is accepted")
	require.Equal(t, contracts.DesiredStandby, ws.DesiredState)

	require.NoError(t, s.RunFor(2*time.Minute))
	w := row(t, s, id)
	require.Equal(t, contracts.DisplayStandby, contracts.Display(&w), "healthy again, as asked")
	require.Nil(t, w.ErrorInfo)
	require.Empty(t, w.ErrorMessage)
	require.Empty(t, claimsAfter(s, id, recoveredAt), "the old request (STARTING) is not retried")

	// Every change published since the recovery carries no error message:
	// a client never sees the old error again.
	msgs := sub.Poll()
	require.NotEmpty(t, msgs, "the recovery and what followed were published")
	for _, m := range msgs {
		var ch ports.Change
		require.NoError(t, json.Unmarshal([]byte(m.Payload), &ch))
		require.Empty(t, ch.ErrorMessage, "change %s", m.Payload)
		require.Zero(t, ch.ErrorCount)
	}
	requireNoViolations(t, s)
}

// TestRecoveryResumesTheRequest: recovery without a new request resumes
// the workspace's desired state promptly: monitor:trigger makes the
// HealthMonitor re-observe it at once (not at its idle 30 s period), and
// the start, whose image now pulls, succeeds.
func TestRecoveryResumesTheRequest(t *testing.T) {
	s := newSim(t, scenarioSystem, 1)
	id := startsFailingToError(t, s, 3*time.Minute)
	require.NoError(t, s.RunFor(5*time.Minute)) // the outage is over; the workspace rests in ERROR
	require.Equal(t, contracts.DisplayError, displayOf(t, s, id))
	require.Empty(t, claimsAfter(s, id, int64(s.History().Len())-1))

	recoveredAt := s.Now()
	require.NoError(t, s.API().Recover(t.Context(), "admin", id))
	ok, err := s.RunUntilCond(func(s *wssim.Sim) bool { return row(t, s, id).HealthStatus == contracts.HealthOK }, time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	require.Less(t, s.Now().Sub(recoveredAt), 5*time.Second, "re-observed on the trigger, not at the next idle pass")

	waitDisplay(t, s, id, contracts.DisplayRunning, 5*time.Minute)
	requireNoViolations(t, s)
}

// TestRecoveryWriteIsOneReset: the recovery is one admin write of
// error_info, error_count and error_message, followed by monitor:trigger.
func TestRecoveryWriteIsOneReset(t *testing.T) {
	s := newSim(t, scenarioSystem, 1)
	id := startsFailingToError(t, s, time.Hour)
	from := s.History().Len()
	require.NoError(t, s.API().Recover(t.Context(), "admin", id))
	var writes, triggers int
	for _, e := range s.History().Events()[from:] {
		switch {
		case e.Kind == history.KindWrite && e.Component == contracts.CompAdmin:
			writes++
			require.True(t, e.Applied)
			require.Equal(t, []contracts.Column{contracts.ColErrorCount, contracts.ColErrorInfo, contracts.ColErrorMessage}, e.Patch.Columns())
		case e.Kind == history.KindCall && e.Method == "bus.Publish" && strings.HasPrefix(e.Args, contracts.MonitorTriggerChannel):
			triggers++
		}
	}
	require.Equal(t, 1, writes)
	require.Equal(t, 1, triggers)
}

func displayOf(t *testing.T, s *wssim.Sim, id string) contracts.DisplayState {
	t.Helper()
	w := row(t, s, id)
	return contracts.Display(&w)
}
