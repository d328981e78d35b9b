package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// answer is the harness's record of a request of the API (SPEC 4.3).
func (tr *trace) answer(method, id, args, errText string) *trace {
	return tr.add(history.Event{Kind: history.KindAPI, Instance: "api", Method: method, Workspace: id, Args: args, Err: errText})
}

// inError leaves id in ERROR: a terminal error_info and, with health,
// health ERROR.
func (tr *trace) inError(id string, health bool) *trace {
	info := &contracts.ErrorInfo{Reason: contracts.ReasonRetryExceeded, IsTerminal: true, OccurredAt: tr.now}
	tr.write(contracts.CompStateReconciler, "c1", 1, id, nil, contracts.Patch{ErrorInfo: contracts.Some(info), ErrorMessage: contracts.Some("boom")})
	if health {
		tr.write(contracts.CompHealthMonitor, "c1", 1, id, nil, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)})
	}
	return tr
}

func TestAPIAnswersStateRules(t *testing.T) {
	idle := func() *trace {
		return newTrace().insertOf("u1", "w", contracts.DesiredStandby).observe("w", contracts.ObservedStandby).at(time.Minute)
	}
	busy := func() *trace {
		return idle().claim("w", contracts.OpStarting).at(2 * time.Minute)
	}
	// What the rules allow.
	for what, tr := range map[string]*trace{
		"change while busy":           busy().answer("api.Patch", "w", "user=u1 desired=PENDING", "409 INVALID_STATE"),
		"delete while busy":           busy().answer("api.Delete", "w", "user=u1", "409 INVALID_STATE"),
		"change in ERROR":             idle().inError("w", false).at(2*time.Minute).answer("api.Patch", "w", "user=u1 desired=RUNNING", "409 INVALID_STATE"),
		"edit while busy":             busy().answer("api.Patch", "w", `user=u1 name="x"`, ""),
		"no-op while busy":            busy().answer("api.Patch", "w", "user=u1 desired=STANDBY", ""),
		"a race: the row moved":       idle().desire("w", contracts.DesiredRunning).answer("api.Patch", "w", "user=u1 desired=PENDING", "409 INVALID_STATE"),
		"recover with health OK":      idle().inError("w", false).at(2*time.Minute).answer("api.Recover", "w", "admin=admin", "409 INVALID_STATE"),
		"another user's workspace":    idle().answer("api.Get", "w", "user=u2", "404 NOT_FOUND"),
		"a soft-deleted workspace":    idle().write(contracts.CompAPI, "api", 0, "w", nil, contracts.Patch{DeletedAt: contracts.Some(t0), DesiredState: contracts.Some(contracts.DesiredPending)}).at(3*time.Minute).answer("api.Patch", "w", `user=u1 memo="m"`, "404 NOT_FOUND"),
		"an outage":                   idle().answer("api.Patch", "w", "user=u1 desired=PENDING", "update workspace w: injected outage"),
		"change in ERROR, health too": idle().inError("w", true).at(2*time.Minute).answer("api.Patch", "w", "user=u1 desired=RUNNING", "409 INVALID_STATE"),
	} {
		require.Empty(t, run(t, tr, nil, "api-answers").Violations, what)
	}
	// What they do not.
	recovered := func() *trace {
		tr := idle().inError("w", true).at(2 * time.Minute)
		return tr.write(contracts.CompAdmin, "api", 0, "w", nil, contracts.Patch{ErrorInfo: contracts.Some[*contracts.ErrorInfo](nil), ErrorCount: contracts.Some(0), ErrorMessage: contracts.Some("")}).
			trigger("api", "w").at(3 * time.Minute)
	}
	for what, tr := range map[string]*trace{
		"no-op refused while busy":       busy().answer("api.Patch", "w", "user=u1 desired=STANDBY", "409 INVALID_STATE"),
		"edit refused while busy":        busy().answer("api.Patch", "w", "user=u1 standby_ttl=600", "409 INVALID_STATE"),
		"edit refused in ERROR":          idle().inError("w", true).at(2*time.Minute).answer("api.Patch", "w", `user=u1 description="d e"`, "409 INVALID_STATE"),
		"change refused at rest":         idle().answer("api.Patch", "w", "user=u1 desired=PENDING", "409 INVALID_STATE"),
		"change refused after recovery":  recovered().answer("api.Patch", "w", "user=u1 desired=RUNNING", "409 INVALID_STATE"),
		"delete refused in ERROR":        idle().inError("w", true).at(2*time.Minute).answer("api.Delete", "w", "user=u1", "409 INVALID_STATE"),
		"recover refused in ERROR":       idle().inError("w", true).at(2*time.Minute).answer("api.Recover", "w", "admin=admin", "409 INVALID_STATE"),
		"own live workspace not found":   idle().answer("api.Get", "w", "user=u1", "404 NOT_FOUND"),
		"soft-deleted workspace patched": idle().write(contracts.CompAPI, "api", 0, "w", nil, contracts.Patch{DeletedAt: contracts.Some(t0), DesiredState: contracts.Some(contracts.DesiredPending)}).at(3*time.Minute).answer("api.Patch", "w", `user=u1 memo="m"`, ""),
	} {
		require.Len(t, run(t, tr, nil, "api-answers").Violations, 1, what)
	}
}

func TestAPIAnswersRecoveryTrigger(t *testing.T) {
	recovery := func(tr *trace) *trace {
		return tr.write(contracts.CompAdmin, "api", 0, "w", nil, contracts.Patch{ErrorInfo: contracts.Some[*contracts.ErrorInfo](nil), ErrorCount: contracts.Some(0), ErrorMessage: contracts.Some("")})
	}
	base := func() *trace {
		return newTrace().insertOf("u1", "w", contracts.DesiredStandby).inError("w", true).at(time.Minute)
	}
	r := run(t, recovery(base()).trigger("api", "w").answer("api.Recover", "w", "admin=admin", "").at(time.Hour), &Final{End: t0.Add(time.Hour)}, "api-answers")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("api-answers"))

	r = run(t, recovery(base()).answer("api.Recover", "w", "admin=admin", "").at(time.Hour).observe("w", contracts.ObservedStandby), nil, "api-answers")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "monitor:trigger")
	r = run(t, recovery(base()).answer("api.Recover", "w", "admin=admin", ""), &Final{End: t0.Add(time.Minute)}, "api-answers")
	require.Len(t, r.Violations, 1, "owed at the end")

	// Its answer lost: the API cannot know the reset applied.
	tr := recovery(base()).add(history.Event{Kind: history.KindFault, Method: FLostResp, Instance: "api", Workspace: "w", Args: "store.Update"}).
		at(time.Hour).observe("w", contracts.ObservedStandby)
	require.Empty(t, run(t, tr, nil, "api-answers").Violations)
}

func TestAPIAnswersLimitRefusals(t *testing.T) {
	// u1 runs one workspace; the limit is 2 per user.
	one := func() *trace {
		return newTrace().insertOf("u1", "a", contracts.DesiredRunning).insertOf("u1", "b", contracts.DesiredStandby).
			insertOf("u1", "c", contracts.DesiredStandby).at(time.Minute)
	}
	two := func() *trace { return one().desire("b", contracts.DesiredRunning).at(2 * time.Minute) }
	for what, tr := range map[string]*trace{
		"per-user limit reached": two().answer("api.Patch", "c", "user=u1 desired=RUNNING", "429 workspace_limit_exceeded"),
		"create at the limit":    two().answer(MAPICreate, "", "user=u1 name=n image=i", "429 workspace_limit_exceeded"),
		"wake at the limit":      two().answer("api.Wake", "c", "", "429 workspace_limit_exceeded"),
		"counts moved meanwhile": one().desire("b", contracts.DesiredRunning).answer("api.Patch", "c", "user=u1 desired=RUNNING", "429 workspace_limit_exceeded"),
	} {
		r := run(t, tr, nil, "api-answers")
		require.Empty(t, r.Violations, what)
	}
	for what, tr := range map[string]*trace{
		"room left":                 one().answer("api.Patch", "c", "user=u1 desired=RUNNING", "429 workspace_limit_exceeded"),
		"itself counted":            one().answer("api.Patch", "a", "user=u1 desired=RUNNING", "429 workspace_limit_exceeded"),
		"create with room":          one().answer(MAPICreate, "", "user=u1 name=n image=i", "429 workspace_limit_exceeded"),
		"create of a STANDBY":       two().answer(MAPICreate, "", "user=u1 name=n image=i desired=STANDBY", "429 workspace_limit_exceeded"),
		"a lower state refused 429": two().answer("api.Patch", "c", "user=u1 desired=PENDING", "429 workspace_limit_exceeded"),
		"wake with room":            one().answer("api.Wake", "c", "", "429 workspace_limit_exceeded"),
	} {
		r := run(t, tr, nil, "api-answers")
		require.Len(t, r.Violations, 1, what)
	}
}
