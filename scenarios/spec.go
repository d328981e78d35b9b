package scenarios

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

// Scenario is one of the scenarios SPEC 6 walks through, as a test of any
// system: it scripts users, faults and time in the simulator and asserts
// what the spec says must happen (the operations, the observed states, the
// actuator calls, the bytes), then runs every checker over the history.
type Scenario struct {
	// Name is short and stable ("1-new-workspace").
	Name string
	// Spec says what SPEC 6 asks.
	Spec string
	// Run runs the scenario against sys, failing t.
	Run func(t *testing.T, sys ports.System)
}

// Spec returns SPEC 6's scenarios, in order. (7b is DELETING of a
// soft-deleted workspace in ERROR: scenario 7 from RUNNING needs no
// DELETING when ARCHIVING leaves nothing to delete.)
func Spec() []Scenario {
	return []Scenario{
		{"1-new-workspace", "PENDING → PROVISIONING → STANDBY → STARTING → RUNNING", scenario1NewWorkspace},
		{"2-restore", "PENDING with archive_key → RESTORING → STANDBY → STARTING → RUNNING, bytes restored", scenario2Restore},
		{"3-container-crash", "an OOM-killed container is observed STANDBY and started again", scenario3ContainerCrash},
		{"4-archive-ttl", "STANDBY idle past archive_ttl → desired PENDING through the API → ARCHIVED", scenario4ArchiveTTL},
		{"5-crash-during-starting", "the next leader resumes a STARTING the previous one crashed in", scenario5CrashDuringStarting},
		{"6-archiving-crash-points", "a crash at each point of ARCHIVING loses no data and leaves one archive key", scenario6ArchivingCrashPoints},
		{"7-delete-from-running", "STOPPING, ARCHIVING, (DELETING), DELETED; GC removes the archives after 2 h", scenario7DeleteFromRunning},
		{"7b-delete-in-error", "a soft-deleted workspace in ERROR is removed by DELETING", scenario7bDeleteInError},
		{"8-leader-failover", "the leader's DB session is killed; the standby takes over; nothing is done twice", scenario8LeaderFailover},
	}
}

// scenario1NewWorkspace is Scenario 1: a new workspace with desired RUNNING goes PENDING →
// PROVISIONING → STANDBY → STARTING → RUNNING.
func scenario1NewWorkspace(t *testing.T, sys ports.System) {
	s := newSim(t, sys, 1)
	id := create(t, s, contracts.DesiredRunning)
	waitDisplay(t, s, id, contracts.DisplayRunning, 2*time.Minute)

	tr := TraceOf(s.History().Events(), id)
	require.Equal(t, []string{"claim PROVISIONING", "complete PROVISIONING", "claim STARTING", "complete STARTING"}, tr.OpSummary())
	require.Equal(t, []contracts.ObservedStatus{contracts.ObservedPending, contracts.ObservedStandby, contracts.ObservedRunning}, tr.Observed)
	calls := Calls(s.History().Events(), id, "storage.Provision", "instances.Start")
	require.Len(t, calls, 2)
	require.Equal(t, "storage.Provision", calls[0].Method)
	require.Equal(t, "instances.Start", calls[1].Method)
	requireNoViolations(t, s)
}

// scenario2Restore is Scenario 2: restore — PENDING with archive_key and desired RUNNING goes
// RESTORING → STANDBY → STARTING → RUNNING, with the user's bytes back.
func scenario2Restore(t *testing.T, sys ports.System) {
	s := newSim(t, sys, 1)
	id := create(t, s, contracts.DesiredRunning)
	waitDisplay(t, s, id, contracts.DisplayRunning, 2*time.Minute)
	files := writeFiles(t, s, id, 5)
	setDesired(t, s, id, contracts.DesiredPending)
	waitDisplay(t, s, id, contracts.DisplayArchived, 5*time.Minute)
	require.NotEmpty(t, row(t, s, id).ArchiveKey)
	_, hasVolume := s.World().Storage.Files(id)
	require.False(t, hasVolume, "an archived workspace has no volume")

	mark := lastSeq(s)
	setDesired(t, s, id, contracts.DesiredRunning)
	waitDisplay(t, s, id, contracts.DisplayRunning, 5*time.Minute)
	tr := TraceOf(since(s, mark), id)
	require.Equal(t, []string{"claim RESTORING", "complete RESTORING", "claim STARTING", "complete STARTING"}, tr.OpSummary())
	require.Equal(t, []contracts.ObservedStatus{contracts.ObservedStandby, contracts.ObservedRunning}, tr.Observed)
	require.Equal(t, files, volumeFiles(t, s, id), "restored byte for byte")
	restored := row(t, s, id)
	require.Equal(t, restored.ArchiveKey, restored.RestoreMarker())
	requireNoViolations(t, s)
}

// scenario3ContainerCrash is Scenario 3: the container crashes (OOM kill) while RUNNING: observed
// STANDBY → STARTING → RUNNING again.
func scenario3ContainerCrash(t *testing.T, sys ports.System) {
	s := newSim(t, sys, 1)
	id := create(t, s, contracts.DesiredRunning)
	waitDisplay(t, s, id, contracts.DisplayRunning, 2*time.Minute)
	files := writeFiles(t, s, id, 2)

	mark := lastSeq(s)
	s.World().Instances.Kill(id)
	ok, err := s.RunUntilCond(func(s *wssim.Sim) bool {
		return len(TraceOf(since(s, mark), id).Completed()) > 0
	}, 2*time.Minute)
	require.NoError(t, err)
	require.True(t, ok, "the reconciler restarted the container")
	tr := TraceOf(since(s, mark), id)
	require.Equal(t, []string{"claim STARTING", "complete STARTING"}, tr.OpSummary())
	require.Equal(t, []contracts.ObservedStatus{contracts.ObservedStandby, contracts.ObservedRunning}, tr.Observed)
	_, running := s.World().Instances.State(id)
	require.True(t, running)
	require.Equal(t, files, volumeFiles(t, s, id), "the volume survives a container crash")
	requireNoViolations(t, s)
}

// scenario4ArchiveTTL is Scenario 4: archive TTL — a STANDBY workspace idle past archive_ttl is set
// to desired PENDING by the TTL Manager (through the API service layer),
// then ARCHIVING leaves it PENDING with an archive_key (ARCHIVED).
func scenario4ArchiveTTL(t *testing.T, sys ports.System) {
	s := newSim(t, sys, 1)
	id := create(t, s, contracts.DesiredStandby, func(r *ports.CreateRequest) { r.ArchiveTTLSeconds = ptr(3600) })
	waitDisplay(t, s, id, contracts.DisplayStandby, 2*time.Minute)
	created := row(t, s, id).CreatedAt

	waitDisplay(t, s, id, contracts.DisplayArchived, 2*time.Hour)
	var ttlWrite *history.Event
	for _, e := range s.History().Events() {
		if e.Kind == history.KindWrite && e.Applied && e.Workspace == id && e.Patch.DesiredState.Set {
			ttlWrite = &e
		}
	}
	require.NotNil(t, ttlWrite, "the TTL Manager asked for PENDING")
	require.Equal(t, contracts.CompAPI, ttlWrite.Component, "through the API service layer (C3)")
	require.Equal(t, contracts.DesiredPending, ttlWrite.Patch.DesiredState.V)
	idle := ttlWrite.At.Sub(created)
	require.Greater(t, idle, time.Hour, "not before the archive TTL")
	require.LessOrEqual(t, idle, time.Hour+decide.PeriodTTL+time.Second, "within one TTL period after it")

	tr := TraceOf(s.History().Events(), id)
	require.Equal(t, []string{"claim PROVISIONING", "complete PROVISIONING", "claim ARCHIVING", "complete ARCHIVING"}, tr.OpSummary())
	w := row(t, s, id)
	require.Equal(t, contracts.ObservedPending, w.ObservedStatus)
	require.NotEmpty(t, w.ArchiveKey)
	require.Empty(t, w.OpID, "op_id cleared on completion")
	requireNoViolations(t, s)
}

// scenario5CrashDuringStarting is Scenario 5: the coordinator crashes with STARTING in progress; the next
// leader resumes it (start is idempotent) and completes it.
func scenario5CrashDuringStarting(t *testing.T, sys ports.System) {
	s := newSim(t, sys, 2)
	id := create(t, s, contracts.DesiredStandby)
	waitDisplay(t, s, id, contracts.DisplayStandby, 2*time.Minute)
	leaders := s.Leaders()
	require.Len(t, leaders, 1)
	first := leaders[0]
	fired := crashLeaderAt(s, first, func(c wsfakes.Call) bool { return c.Port == "instances" && c.Method == "Start" })

	mark := lastSeq(s)
	setDesired(t, s, id, contracts.DesiredRunning)
	waitDisplay(t, s, id, contracts.DisplayRunning, 2*time.Minute)
	require.True(t, *fired, "the leader crashed at its start call")
	require.False(t, s.Alive(first))

	tr := TraceOf(since(s, mark), id)
	require.Equal(t, []string{"claim STARTING", "complete STARTING"}, tr.OpSummary(), "one claim, resumed, not claimed again")
	claim, done := tr.Ops[0], tr.Ops[1]
	require.Equal(t, first, claim.Instance)
	require.NotEqual(t, first, done.Instance, "the successor completed it")
	require.Greater(t, done.Epoch, claim.Epoch)
	starts := Calls(since(s, mark), id, "instances.Start")
	require.Len(t, starts, 2)
	require.NotEmpty(t, starts[0].Err, "the crashed leader's call had no effect")
	require.Equal(t, done.Instance, starts[1].Instance)
	require.Empty(t, starts[1].Err, "the successor re-invoked start")
	requireNoViolations(t, s)
}

// scenario6ArchivingCrashPoints is Scenario 6: a crash at each of ARCHIVING's three points loses no data and
// leaves exactly one archive key.
func scenario6ArchivingCrashPoints(t *testing.T, sys ports.System) {
	type point struct {
		name  string
		match func(armed *bool) func(c wsfakes.Call) bool
	}
	points := []point{
		{"after op_id is committed, before the archive", func(*bool) func(wsfakes.Call) bool {
			return func(c wsfakes.Call) bool { return c.Port == "storage" && c.Method == "Archive" }
		}},
		{"after the archive is uploaded, before archive_key is committed", func(armed *bool) func(wsfakes.Call) bool {
			return func(c wsfakes.Call) bool {
				if c.Port == "storage" && c.Method == "Archive" {
					*armed = true
					return false
				}
				return *armed && c.Port == "store" && c.Method == "Update"
			}
		}},
		{"after archive_key is committed, before the volume is deleted", func(*bool) func(wsfakes.Call) bool {
			return func(c wsfakes.Call) bool { return c.Port == "storage" && c.Method == "DeleteVolume" }
		}},
	}
	for _, p := range points {
		t.Run(p.name, func(t *testing.T) {
			s := newSim(t, sys, 2)
			id := create(t, s, contracts.DesiredRunning)
			waitDisplay(t, s, id, contracts.DisplayRunning, 2*time.Minute)
			files := writeFiles(t, s, id, 4)
			setDesired(t, s, id, contracts.DesiredStandby)
			waitDisplay(t, s, id, contracts.DisplayStandby, 2*time.Minute)
			first := s.Leaders()[0]
			armed := false
			fired := crashLeaderAt(s, first, p.match(&armed))

			mark := lastSeq(s)
			setDesired(t, s, id, contracts.DesiredPending)
			waitDisplay(t, s, id, contracts.DisplayArchived, 5*time.Minute)
			require.True(t, *fired, "the crash point was reached")

			tr := TraceOf(since(s, mark), id)
			require.Equal(t, []string{"claim ARCHIVING", "complete ARCHIVING"}, tr.OpSummary())
			require.Equal(t, first, tr.Ops[0].Instance)
			require.NotEqual(t, first, tr.Ops[1].Instance)
			w := row(t, s, id)
			require.Equal(t, []string{w.ArchiveKey, contracts.MetaKey(w.ArchiveKey)}, archiveObjects(s, id), "one archive key, no duplicate upload")

			setDesired(t, s, id, contracts.DesiredRunning)
			waitDisplay(t, s, id, contracts.DisplayRunning, 5*time.Minute)
			require.Equal(t, files, volumeFiles(t, s, id), "no data lost")
			requireNoViolations(t, s)
		})
	}
}

// scenario7DeleteFromRunning is Scenario 7: delete from RUNNING — STOPPING, then ARCHIVING, then (if
// anything is left) DELETING, then DELETED; the archives become unprotected
// and the GC removes them only after 2 h. (The reference's ARCHIVING
// removes the volume, so the HealthMonitor sees DELETED at once and no
// DELETING is needed; scenario 7b exercises DELETING.)
func scenario7DeleteFromRunning(t *testing.T, sys ports.System) {
	s := newSim(t, sys, 1)
	id := create(t, s, contracts.DesiredRunning)
	waitDisplay(t, s, id, contracts.DisplayRunning, 2*time.Minute)
	writeFiles(t, s, id, 3)
	require.NoError(t, s.API().Delete(t.Context(), "alice", id))
	waitDisplay(t, s, id, contracts.DisplayDeleted, 10*time.Minute)
	deletedAt := s.Now()

	tr := TraceOf(s.History().Events(), id)
	ops := tr.OpSummary()
	if len(ops) == 10 {
		// A DELETING after ARCHIVING is what SPEC 6 names; an ARCHIVING
		// that leaves nothing behind makes it unnecessary (docs/decisions/examples.md, DR36).
		require.Equal(t, []string{"claim DELETING", "complete DELETING"}, ops[8:])
		ops = ops[:8]
	}
	require.Equal(t, []string{
		"claim PROVISIONING", "complete PROVISIONING", "claim STARTING", "complete STARTING",
		"claim STOPPING", "complete STOPPING", "claim ARCHIVING", "complete ARCHIVING",
	}, ops)
	require.Equal(t, contracts.ObservedDeleted, tr.Observed[len(tr.Observed)-1])
	objs := archiveObjects(s, id)
	require.Len(t, objs, 2, "the archive and its .meta exist right after deletion")

	require.NoError(t, s.RunFor(2*time.Hour))
	require.Equal(t, objs, archiveObjects(s, id), "not deleted before 2 h orphaned")
	require.NoError(t, s.RunFor(90*time.Minute))
	require.Empty(t, archiveObjects(s, id), "GC removed the unprotected archive and its .meta")
	for _, c := range Calls(s.History().Events(), id, "objects.Delete") {
		require.GreaterOrEqual(t, c.At.Sub(deletedAt), 2*time.Hour)
	}
	r := requireNoViolations(t, s)
	require.Positive(t, r.Exercised["c9-gc-protection"])
}

// scenario7bDeleteInError is Scenario 7b: a soft-deleted workspace in ERROR is deleted by DELETING.
func scenario7bDeleteInError(t *testing.T, sys ports.System) {
	s := newSim(t, sys, 1)
	id := create(t, s, contracts.DesiredRunning)
	waitDisplay(t, s, id, contracts.DisplayRunning, 2*time.Minute)
	s.World().Storage.Lose(id) // container without volume: C6
	waitDisplay(t, s, id, contracts.DisplayError, time.Minute)
	w := row(t, s, id)
	require.Equal(t, contracts.ReasonMismatch, w.ErrorInfo.Reason)
	require.Equal(t, contracts.ViolationContainerWithoutVolume, w.ErrorInfo.Context["violation"])

	require.NoError(t, s.API().Delete(t.Context(), "alice", id))
	waitDisplay(t, s, id, contracts.DisplayDeleted, 5*time.Minute)
	tr := TraceOf(s.History().Events(), id)
	require.Equal(t, []string{"claim DELETING", "complete DELETING"}, tr.OpSummary()[4:])
	exists, _ := s.World().Instances.State(id)
	require.False(t, exists)
	requireNoViolations(t, s)
}

// scenario8LeaderFailover is Scenario 8: the leader's DB session is killed while operations run; the
// standby takes over and nothing is done twice.
func scenario8LeaderFailover(t *testing.T, sys ports.System) {
	s := newSim(t, sys, 2)
	first := s.Leaders()[0]
	var ids []string
	for range 3 {
		ids = append(ids, create(t, s, contracts.DesiredRunning))
	}
	// Let the leader claim and start work, then cut its session.
	ok, err := s.RunUntilCond(func(s *wssim.Sim) bool {
		return row(t, s, ids[0]).Operation != contracts.OpNone
	}, time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	s.KillSession(first)
	for _, id := range ids {
		waitDisplay(t, s, id, contracts.DisplayRunning, 5*time.Minute)
	}
	leaders := s.Leaders()
	require.Len(t, leaders, 1)
	require.NotEqual(t, first, leaders[0], "the standby took over")
	require.True(t, s.Alive(first), "the deposed leader keeps running as a standby")

	for _, id := range ids {
		tr := TraceOf(s.History().Events(), id)
		require.Equal(t, []contracts.Operation{contracts.OpProvisioning, contracts.OpStarting}, tr.Completed(), "each operation done once")
		claims := 0
		for _, o := range tr.Ops {
			if o.What == "claim" {
				claims++
			}
		}
		require.Equal(t, 2, claims, "no double claim")
	}
	var acquires []history.Event
	for _, e := range s.History().Events() {
		if e.Kind == history.KindLeader && e.Method == "acquire" {
			acquires = append(acquires, e)
		}
	}
	require.Len(t, acquires, 2)
	require.Equal(t, first, acquires[0].Instance)
	require.Equal(t, leaders[0], acquires[1].Instance)
	require.Equal(t, acquires[0].Epoch+1, acquires[1].Epoch)
	r := requireNoViolations(t, s)
	require.Positive(t, r.Exercised["c10-single-leader"], "a failover was judged")
}
