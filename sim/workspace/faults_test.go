package workspace

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
	wsref "github.com/wsconverge/converge/refimpl/workspace"
)

// scripted is a run of the reference with the workload off, driven by Play.
func scripted(t *testing.T, seed uint64) *Sim {
	t.Helper()
	s, err := New(Config{Seed: seed, System: wsref.NewSystem(), Workload: Workload{Disabled: true},
		Limits: contracts.Limits{MaxRunningPerUser: 5, MaxRunningGlobal: 10}})
	require.NoError(t, err)
	return s
}

func play(t *testing.T, s *Sim, actions ...Action) {
	t.Helper()
	for _, a := range actions {
		require.NoError(t, s.Play(a), "%s", a)
	}
}

func advance(d time.Duration) Action { return Action{Kind: Advance, For: d} }

// running creates one workspace with desired RUNNING and waits for it.
func running(t *testing.T, s *Sim) string {
	t.Helper()
	play(t, s, Action{Kind: UserCreate, N: 1, Desired: contracts.DesiredRunning}, advance(30*time.Second))
	ids := s.Scripted()
	require.NotEmpty(t, ids)
	w := row(t, s, ids[len(ids)-1])
	require.Equal(t, contracts.DisplayRunning, contracts.Display(&w))
	return w.ID
}

func row(t *testing.T, s *Sim, id string) contracts.Workspace {
	t.Helper()
	w, err := s.World().Store.Get(context.Background(), id)
	require.NoError(t, err)
	return w
}

// events returns the kept events of kind k and method m.
func events(s *Sim, k history.Kind, m string) []history.Event {
	var out []history.Event
	for _, e := range s.History().Events() {
		if e.Kind == k && e.Method == m {
			out = append(out, e)
		}
	}
	return out
}

func requireClean(t *testing.T, s *Sim) *wsjudge.Report {
	t.Helper()
	r := s.Judge(true)
	var lines []string
	for _, v := range r.Violations {
		lines = append(lines, v.String())
	}
	require.Empty(t, lines)
	return r
}

func TestPlanIsDrawnFromTheSeedSwarmStyle(t *testing.T) {
	a := GeneratePlan(7, DefaultFaults(), 24*time.Hour)
	b := GeneratePlan(7, DefaultFaults(), 24*time.Hour)
	require.Equal(t, a, b, "one seed, one plan")
	require.NotEmpty(t, a.Actions)
	for i := 1; i < len(a.Actions); i++ {
		require.LessOrEqual(t, a.Actions[i-1].At, a.Actions[i].At, "ordered by time")
	}
	kinds := map[string]bool{}
	for seed := uint64(1); seed <= 30; seed++ {
		p := GeneratePlan(seed, DefaultFaults(), 24*time.Hour)
		require.Less(t, len(p.Faults), len(FaultKinds()), "seed %d: swarm turns some kinds off", seed)
		for _, act := range p.Actions {
			require.Contains(t, p.Faults, act.Kind, "seed %d: only enabled kinds strike", seed)
			require.Less(t, act.At, 24*time.Hour)
		}
		kinds[kindList(p.Faults)] = true
	}
	require.Greater(t, len(kinds), 20, "seeds choose different mixes")

	all := GeneratePlan(7, FaultMix{Kinds: FaultKinds()}, 24*time.Hour)
	require.Equal(t, FaultKinds(), all.Faults, "without swarm every kind is on")
	require.Empty(t, GeneratePlan(7, NoFaults(), 24*time.Hour).Actions)
	double := GeneratePlan(7, FaultMix{Kinds: FaultKinds(), Rate: 4}, 24*time.Hour)
	require.Greater(t, len(double.Actions), 2*len(all.Actions), "a rate multiplies the faults")
}

func TestFaultMixParsesAndPrints(t *testing.T) {
	for _, s := range []string{"none", "swarm", "all", "crash,outage", "all@2", "swarm@0.5"} {
		m, err := ParseFaultMix(s)
		require.NoError(t, err, s)
		require.Equal(t, s, m.String())
	}
	m, err := ParseFaultMix("default")
	require.NoError(t, err)
	require.Equal(t, DefaultFaults(), m)
	for _, bad := range []string{"crash,meteor", "all@-1", "all@x"} {
		_, err := ParseFaultMix(bad)
		require.Error(t, err, bad)
	}
}

func TestActionsSurviveJSON(t *testing.T) {
	p := GeneratePlan(3, FaultMix{Kinds: FaultKinds(), Rate: 3}, 24*time.Hour)
	p.Actions = append(p.Actions, Action{At: time.Minute, Kind: UserDesire, Pick: 2, Desired: contracts.DesiredPending})
	b, err := json.Marshal(p)
	require.NoError(t, err)
	require.Contains(t, string(b), `"for":"`, "durations are readable")
	var back Plan
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, *p, back)
}

func TestOutageFailsCallsWithTheirCodeAndLostResponseKeepsTheEffect(t *testing.T) {
	s := scripted(t, 1)
	play(t, s, Action{Kind: FaultOutage, Method: "storage.Provision", Code: contracts.CodeVolumeCreateFailed, Percent: 100, For: time.Minute},
		Action{Kind: UserCreate, N: 1, Desired: contracts.DesiredStandby}, advance(10*time.Second))
	id := s.Scripted()[0]
	calls := events(s, history.KindCall, wsjudge.MProvision)
	require.NotEmpty(t, calls)
	require.Contains(t, calls[0].Err, string(contracts.CodeVolumeCreateFailed))
	w := row(t, s, id)
	require.Equal(t, 1, w.ErrorCount, "the reconciler recorded a retryable failure")
	_, hasVolume := s.World().Storage.Files(id)
	require.False(t, hasVolume, "an outage has no effect")
	require.Len(t, events(s, history.KindFault, evOutage), 1)

	// The window closes: the retry 30 s later succeeds.
	play(t, s, advance(2*time.Minute))
	w = row(t, s, id)
	require.Equal(t, contracts.DisplayStandby, contracts.Display(&w))

	// A lost response: the container starts, the caller hears an error.
	play(t, s, Action{Kind: FaultLostResponse, Method: "instances.Start", Code: contracts.CodeDockerUnreachable, Percent: 100, For: 10 * time.Second},
		Action{Kind: UserDesire, Desired: contracts.DesiredRunning}, advance(3*time.Second))
	_, running := s.World().Instances.State(id)
	require.True(t, running, "the effect happened")
	lost := events(s, history.KindFault, evLostResponse)
	require.Len(t, lost, 1)
	require.Equal(t, "instances.Start", lost[0].Args)
	recorded := false
	for _, e := range s.History().Events() {
		if e.Seq > lost[0].Seq && e.Kind == history.KindWrite && e.Workspace == id && e.Patch.ErrorCount.Set && e.Patch.ErrorCount.V == 1 {
			recorded = true
		}
	}
	require.True(t, recorded, "the reconciler recorded the lost response as a failure")
	play(t, s, advance(time.Minute))
	w = row(t, s, id)
	require.Equal(t, contracts.DisplayRunning, contracts.Display(&w), "observed RUNNING completes it")
	requireClean(t, s)
}

func TestWorldFaultsStrikeAndAreRecorded(t *testing.T) {
	s := scripted(t, 2)
	id := running(t, s)
	play(t, s, Action{Kind: UserConnect}, Action{Kind: UserWrite})
	require.Len(t, s.Model(id), 1)

	play(t, s, Action{Kind: FaultKillContainer}, advance(10*time.Second))
	require.Len(t, events(s, history.KindFault, wsjudge.FKill), 1)
	require.Equal(t, contracts.DisplayRunning, contracts.Display(ptr(row(t, s, id))), "restarted by the reconciler")

	for _, k := range []Kind{FaultDropMessages, FaultFlushRedis, FaultDropFeed} {
		play(t, s, Action{Kind: k, N: 2})
	}
	play(t, s, Action{Kind: FaultBreakFeed}) // N 0: now
	for _, m := range []string{evDropMessages, evFlushRedis, evDropFeed, evBreakFeed} {
		require.Len(t, events(s, history.KindFault, m), 1, m)
	}
	require.Empty(t, s.World().Bus.Keys(), "Redis lost every key")

	// Losing the volume leaves the user nothing but the (empty) archive.
	play(t, s, Action{Kind: FaultLoseVolume}, advance(10*time.Second))
	require.Len(t, events(s, history.KindFault, wsjudge.FLoseVolume), 1)
	require.Empty(t, s.Model(id), "the durability model follows the loss")
	w := row(t, s, id)
	require.Equal(t, contracts.HealthError, w.HealthStatus, "container without volume")
	requireClean(t, s)

	// Nothing to hit: recorded as skipped.
	play(t, s, Action{Kind: FaultCorruptObject})
	skipped := events(s, history.KindNote, evSkipped)
	require.Len(t, skipped, 1)
	require.Equal(t, "no archive", skipped[0].Result)
}

func ptr[T any](v T) *T { return &v }

// An armed feed break strikes right after the N-th change of a trigger
// column, at the instant of that change: its notification is lost with
// the session (SPEC 4.6's republish after a reconnect owes it).
func TestArmedFeedBreakStrikesRightAfterAChange(t *testing.T) {
	s := scripted(t, 2)
	id := running(t, s)
	play(t, s, Action{Kind: FaultBreakFeed, N: 1})
	require.Empty(t, events(s, history.KindFault, evBreakFeed), "armed, it waits for a change")
	require.Len(t, events(s, history.KindNote, evArmed), 1)
	play(t, s, Action{Kind: UserDesire, Desired: contracts.DesiredStandby}, advance(10*time.Second))
	breaks := events(s, history.KindFault, evBreakFeed)
	require.Len(t, breaks, 1)
	var change *history.Event
	for _, e := range s.rec.Events() {
		if e.Kind == history.KindWrite && e.Workspace == id && e.Applied && e.Patch.DesiredState.Set {
			change = &e
			break
		}
	}
	require.NotNil(t, change)
	require.Equal(t, change.At, breaks[0].At, "at the instant of the change")
	require.Greater(t, breaks[0].Seq, change.Seq, "right after it")
	requireClean(t, s)
}

func TestCorruptedArchiveIsOwedNothingUntilARestoreTries(t *testing.T) {
	s := scripted(t, 3)
	id := running(t, s)
	play(t, s, Action{Kind: UserConnect}, Action{Kind: UserWrite}, Action{Kind: UserDisconnect},
		Action{Kind: UserDesire, Desired: contracts.DesiredPending}, advance(time.Minute))
	w := row(t, s, id)
	require.Equal(t, contracts.DisplayArchived, contracts.Display(&w))
	play(t, s, Action{Kind: FaultCorruptObject, Pick: 1}) // focus: an archived workspace's archive
	require.True(t, s.faults.destroyed[w.ArchiveKey])
	f := s.Final()
	require.NotContains(t, f.Expected, id, "destroyed and undiscovered: nothing owed")
	requireClean(t, s)

	// The restore finds it: DataLost, which the durability check accepts.
	play(t, s, Action{Kind: UserDesire, Desired: contracts.DesiredRunning}, advance(time.Minute))
	w = row(t, s, id)
	require.NotNil(t, w.ErrorInfo)
	require.Equal(t, contracts.ReasonDataLost, w.ErrorInfo.Reason)
	requireClean(t, s)
}

func TestDelayedStartRunsLaterAndTimesOut(t *testing.T) {
	s := scripted(t, 4)
	play(t, s, Action{Kind: FaultDelayStart, Delay: 20 * time.Minute, For: time.Hour},
		Action{Kind: UserCreate, N: 1, Desired: contracts.DesiredRunning}, advance(time.Minute))
	id := s.Scripted()[0]
	exists, running := s.World().Instances.State(id)
	require.True(t, exists)
	require.False(t, running)
	require.Equal(t, contracts.OpStarting, row(t, s, id).Operation)
	play(t, s, advance(6*time.Minute))
	w := row(t, s, id)
	require.NotNil(t, w.ErrorInfo)
	require.Equal(t, contracts.ReasonTimeout, w.ErrorInfo.Reason, "STARTING timed out")
	r := requireClean(t, s)
	require.Equal(t, wsjudge.Pass, r.Verdict("timeouts"))
}

func TestCrashFaultDropsAndRestartsAnInstance(t *testing.T) {
	s := scripted(t, 5)
	running(t, s)
	leader := s.Leaders()
	require.Len(t, leader, 1)
	play(t, s, Action{Kind: FaultCrash, Pick: 0, N: 3, For: 30 * time.Second}, advance(10*time.Second))
	require.False(t, s.Alive(leader[0]), "the leader crashed at its 3rd call")
	require.Len(t, events(s, history.KindFault, "crash-at-call"), 1)
	play(t, s, advance(30*time.Second))
	require.True(t, s.Alive(leader[0]), "restarted after its delay")
	r := requireClean(t, s)
	require.Equal(t, wsjudge.Pass, r.Verdict("c10-single-leader"), "the standby took over")
}

// The deposed-leader fault: the leader's session dies inside its own
// write, the successor steps to completion inside that call, and only then
// does the deposed leader's write go on — fenced.
func TestDeposeRunsTheSuccessorInsideTheDeposedLeadersWrite(t *testing.T) {
	s := scripted(t, 6)
	running(t, s)
	old := s.Leaders()[0]
	play(t, s, Action{Kind: FaultDepose, N: 1}, Action{Kind: UserCreate, N: 2, Desired: contracts.DesiredRunning}, advance(5*time.Second))
	evs := s.History().Events()
	var depose, acquire, fenced int64
	for _, e := range evs {
		switch {
		case e.Kind == history.KindFault && e.Method == evDepose:
			depose = e.Seq
			require.Equal(t, old, e.Instance)
		case depose > 0 && acquire == 0 && e.Kind == history.KindLeader && e.Method == "acquire":
			acquire = e.Seq
			require.NotEqual(t, old, e.Instance)
		case acquire > 0 && fenced == 0 && e.Kind == history.KindWrite && e.Instance == old && e.Err != "":
			fenced = e.Seq
			require.Contains(t, e.Err, "fenced")
		}
	}
	require.Positive(t, depose)
	require.Positive(t, acquire, "the successor took over inside the write")
	require.Positive(t, fenced, "the deposed leader's write then failed on its fence")
	requireClean(t, s)
	require.Equal(t, []string{s.Leaders()[0]}, s.Leaders())
	require.NotEqual(t, old, s.Leaders()[0])
}

// Seed 35 of --faults all: coord-2 stepped, then coord-1 took the lead and
// was deposed inside its takeover at the same instant. Its successors step
// first, but never sooner than 100 ms after their previous Step (SPEC 3
// "Steps"): coord-2 keeps its own next Step, so no instance lists the
// containers twice at one instant (DR503).
func TestDeposeNeverStepsASuccessorTwiceWithinTheMinimumInterval(t *testing.T) {
	if testing.Short() {
		t.Skip("a day of faults")
	}
	mix, err := ParseFaultMix("all")
	require.NoError(t, err)
	r, err := Run(context.Background(), Config{Seed: 35, Workspaces: 5, Duration: 24 * time.Hour, Quiet: DefaultQuiet,
		Faults: mix, System: wsref.NewSystem()})
	require.NoError(t, err)
	require.Empty(t, r.Failures)
	require.NotNil(t, r.Report)
	require.Equal(t, wsjudge.Pass, r.Report.Verdict("pass-listing"))
	require.False(t, r.Report.Failed(), "%v", r.Report.Violations)
}

// The deposition aimed at a takeover waits for the next instance to take
// the lead, and strikes inside that new leader's first data call of the
// store: the path on which it resumes its predecessor's operations.
func TestDeposeAtResumeStrikesTheNextLeaderInItsTakeover(t *testing.T) {
	s := scripted(t, 5)
	running(t, s)
	old := s.Leaders()[0]
	play(t, s, Action{Kind: FaultDepose, N: 1, Pick: DeposeInResume}, advance(10*time.Second))
	require.Empty(t, events(s, history.KindFault, evDepose), "armed, it waits for a takeover")
	play(t, s, Action{Kind: FaultCrash, Pick: 0, N: 1, For: time.Hour}, advance(30*time.Second))
	require.False(t, s.Alive(old))
	var acquire, depose int64
	var successor string
	for _, e := range s.History().Events() {
		switch {
		case acquire == 0 && e.Kind == history.KindLeader && e.Method == "acquire" && e.Instance != old && e.Epoch > 1:
			acquire, successor = e.Seq, e.Instance
		case acquire > 0 && depose == 0 && e.Kind == history.KindFault && e.Method == evDepose:
			depose = e.Seq
			require.Equal(t, successor, e.Instance, "the new leader is the one deposed")
			require.Contains(t, e.Args, "takeover")
		case acquire > 0 && depose == 0 && e.Kind == history.KindCall && e.Instance == successor && strings.HasPrefix(e.Method, "store.") &&
			!slices.Contains([]string{wsjudge.MTryAcquire, wsjudge.MLockCheck, wsjudge.MRelease}, e.Method):
			require.Failf(t, "late", "the new leader made a data call (%s) before the deposition struck", e.Method)
		}
	}
	require.Positive(t, acquire, "a standby took over")
	require.Positive(t, depose, "the deposition struck the new leader")
	requireClean(t, s)
}

func TestQuietPhaseStopsFaultsAndRestartsInstances(t *testing.T) {
	s := scripted(t, 7)
	running(t, s)
	play(t, s, Action{Kind: FaultOutage, Method: "instances", Code: contracts.CodeDockerUnreachable, Percent: 100, For: time.Hour},
		Action{Kind: FaultCrash, Pick: 1, N: 1, For: 10 * time.Hour}, advance(5*time.Second))
	dead := 0
	for _, n := range s.Instances() {
		if !s.Alive(n) {
			dead++
		}
	}
	require.Equal(t, 1, dead)
	require.NoError(t, s.BeginQuiet())
	for _, n := range s.Instances() {
		require.True(t, s.Alive(n), "%s restarted for the quiet phase", n)
	}
	q := events(s, history.KindFault, wsjudge.FQuiet)
	require.Len(t, q, 1)
	play(t, s, Action{Kind: FaultKillContainer}, Action{Kind: UserDelete}, advance(16*time.Hour))
	require.Empty(t, events(s, history.KindFault, wsjudge.FKill), "no fault strikes once quiet")
	require.False(t, ptr(row(t, s, s.Scripted()[0])).Deleted(), "users act no more")
	r := requireClean(t, s)
	require.Equal(t, wsjudge.Pass, r.Verdict("c12-convergence"))
}

// Play and a plan run the same steps in the same order: the hashes match.
func TestPlayedActionsReplayExactlyAsAPlan(t *testing.T) {
	s := scripted(t, 8)
	play(t, s, Action{Kind: UserCreate, N: 1, Desired: contracts.DesiredRunning},
		Action{Kind: FaultDepose, N: 2}, advance(7*time.Second),
		Action{Kind: UserCreate, N: 2, Desired: contracts.DesiredStandby},
		Action{Kind: FaultOutage, Method: "storage", Code: contracts.CodeK8sAPIError, Percent: 50, For: time.Minute},
		Action{Kind: UserConnect}, Action{Kind: UserWrite, Pick: 0}, advance(3*time.Minute),
		Action{Kind: FaultKillContainer}, Action{Kind: UserDesire, Pick: 1, Desired: contracts.DesiredRunning}, advance(time.Hour))
	cfg := s.Config()
	cfg.Plan, cfg.Duration = s.Played(), s.Elapsed()
	require.Equal(t, []Kind{FaultDepose, FaultOutage, FaultKillContainer}, cfg.Plan.Faults)
	r, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	require.Equal(t, s.History().Hash(), r.Hash)
}

func TestReplayFileRoundTrip(t *testing.T) {
	cfg := Config{Seed: 11, Workspaces: 6, Duration: 8 * time.Hour, Quiet: time.Hour, System: wsref.NewSystem(), Faults: FaultMix{Kinds: FaultKinds(), Rate: 3}}
	r, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	require.NotEmpty(t, r.Plan.Actions)
	f, back, r2 := replayThroughAFile(t, cfg, r)
	require.Equal(t, r.Hash, r2.Hash, "a replay file reruns the run exactly")
	require.Equal(t, f.Hash, r2.Hash)

	back.Version = 99
	_, err = back.Config(wsref.NewSystem())
	require.ErrorContains(t, err, "version")
	require.Equal(t, "mutant-gc-no-delay-seed-3.json", ReplayName("mutant:gc-no-delay", 3))
}

// replayThroughAFile writes run r of cfg as a replay file (f), reads the
// file back (back) and runs it again (r2).
func replayThroughAFile(t *testing.T, cfg Config, r Result) (f, back *Replay, r2 Result) {
	t.Helper()
	f, err := NewReplay(cfg, "", r)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), ReplayName(f.System, cfg.Seed))
	require.NoError(t, WriteReplay(path, f))
	back, err = ReadReplay(path)
	require.NoError(t, err)
	again, err := back.Config(wsref.NewSystem())
	require.NoError(t, err)
	r2, err = Run(context.Background(), again)
	require.NoError(t, err)
	return f, back, r2
}

// A run configured with no deletes (a negative rate, as driver selftest
// and a third party's suite may set) writes a replay file that replays:
// the file check takes a negative rate as the "none" it is.
func TestReplayFileOfARunWithoutDeletes(t *testing.T) {
	cfg := Config{Seed: 2, Workspaces: 2, Duration: time.Hour, System: wsref.NewSystem(), Workload: Workload{DeletesPerDay: -1}}
	r, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	_, _, r2 := replayThroughAFile(t, cfg, r)
	require.Equal(t, r.Hash, r2.Hash)
}

func TestEvidenceShowsTheEventsAroundAViolation(t *testing.T) {
	s := scripted(t, 9)
	id := running(t, s)
	evs := s.History().Events()
	mid := evs[len(evs)/2]
	lines := s.Evidence(wsjudge.Violation{Checker: "x", Evidence: []int64{mid.Seq}})
	var marked []string
	for _, l := range lines {
		if strings.HasPrefix(l, ">> ") {
			marked = append(marked, l)
		}
	}
	require.Len(t, marked, 1)
	require.Contains(t, marked[0], "#"+strconv.FormatInt(mid.Seq, 10)+" ")
	require.Greater(t, len(lines), 3)
	end := s.Evidence(wsjudge.Violation{Checker: "x", Subject: id})
	require.NotEmpty(t, end)
	for _, l := range end {
		if strings.TrimSpace(l) != "…" {
			require.Contains(t, l, "ws="+history.ShortID(id))
		}
	}
}

// DB faults: a failed store call writes nothing; a lost answer writes and
// reports an error. Either way the reference recovers once the window
// closes, and every checker passes.
func TestDBErrorWritesNothingAndDBLostResponseKeepsTheWrite(t *testing.T) {
	s := scripted(t, 9)
	id := running(t, s)
	before := row(t, s, id)

	play(t, s, Action{Kind: UserDesire, Desired: contracts.DesiredStandby},
		Action{Kind: FaultDBError, Method: "store.Update", Percent: 100, For: time.Minute}, advance(20*time.Second))
	require.Len(t, events(s, history.KindFault, evOutage), 1)
	failed := 0
	for _, e := range s.History().Events() {
		if e.Kind == history.KindWrite && e.Instance != apiInstance && e.Workspace == id && e.Err != "" {
			require.False(t, e.Applied, "a failed write writes nothing")
			failed++
		}
	}
	require.Positive(t, failed, "the reconciler's claim failed")
	require.Equal(t, before.OpID, row(t, s, id).OpID, "no operation was claimed")
	play(t, s, advance(2*time.Minute))
	require.Equal(t, contracts.DisplayStandby, contracts.Display(ptr(row(t, s, id))), "done once the DB answers")

	play(t, s, Action{Kind: UserDesire, Desired: contracts.DesiredRunning},
		Action{Kind: FaultDBLostResponse, Method: "store.Update", Percent: 100, For: 10 * time.Second}, advance(3*time.Second))
	lost := events(s, history.KindFault, evLostResponse)
	require.NotEmpty(t, lost)
	require.Equal(t, "store.Update", lost[0].Args)
	var committed *history.Event
	for _, e := range s.History().Events() {
		if e.Seq == lost[0].Seq-1 {
			committed = &e
		}
	}
	require.NotNil(t, committed)
	require.Equal(t, history.KindWrite, committed.Kind)
	require.True(t, committed.Applied, "the write committed before its answer was lost")
	play(t, s, advance(2*time.Minute))
	require.Equal(t, contracts.DisplayRunning, contracts.Display(ptr(row(t, s, id))))
	requireClean(t, s)
}

// The default mix draws DB faults, and the reference survives a day of
// them at six times their rate.
func TestReferenceSurvivesDBFaults(t *testing.T) {
	mix, err := ParseFaultMix("db-error,db-lost-response@6")
	require.NoError(t, err)
	p := GeneratePlan(3, mix, 24*time.Hour)
	seen := map[Kind]bool{}
	for _, a := range p.Actions {
		seen[a.Kind] = true
		require.True(t, strings.HasPrefix(a.Method, "store"), "%s", a)
	}
	require.True(t, seen[FaultDBError] && seen[FaultDBLostResponse])
	for seed := uint64(1); seed <= 4; seed++ {
		r, err := Check(context.Background(), Config{Seed: seed, Workspaces: 20, Duration: 12 * time.Hour, Faults: mix, System: wsref.NewSystem()})
		require.NoError(t, err, "seed %d: %v", seed, r.Failures)
		require.True(t, r.OK(), "seed %d", seed)
	}
}

// An operator's volume removal is refused while the container holds the
// volume (nothing lost), and removes a stopped workspace's volume with its
// data: the durability model keeps only the archive (here: nothing).
func TestRemoveVolumeIsRefusedWhileTheContainerHoldsIt(t *testing.T) {
	s := scripted(t, 10)
	id := running(t, s)
	play(t, s, Action{Kind: UserConnect}, Action{Kind: UserWrite})
	play(t, s, Action{Kind: FaultRemoveVolume}, advance(10*time.Second))
	refused := events(s, history.KindFault, "storage.Remove")
	require.Len(t, refused, 1)
	require.Contains(t, refused[0].Err, string(contracts.CodeVolumeInUse))
	files, ok := s.World().Storage.Files(id)
	require.True(t, ok, "the volume is kept")
	require.Len(t, files, 1)
	require.Len(t, s.Model(id), 1, "nothing is lost")
	require.Equal(t, contracts.DisplayRunning, contracts.Display(ptr(row(t, s, id))))

	play(t, s, Action{Kind: UserDisconnect}, Action{Kind: UserDesire, Desired: contracts.DesiredStandby}, advance(time.Minute))
	require.Equal(t, contracts.DisplayStandby, contracts.Display(ptr(row(t, s, id))))
	play(t, s, Action{Kind: FaultRemoveVolume})
	require.Len(t, events(s, history.KindFault, wsjudge.FLoseVolume), 1, "no container: removed")
	_, ok = s.World().Storage.Files(id)
	require.False(t, ok)
	require.Empty(t, s.Model(id), "the user is owed only the (absent) archive")
	play(t, s, advance(5*time.Minute))
	requireClean(t, s)
}

// An operator's volume removal while another container holds the volume
// (hold-volume) is refused as it is under the workspace's own container
// (SPEC 5.2: a held volume is kept, VOLUME_IN_USE): recorded, nothing
// lost, and never a failure of the run (seed 11 of --faults all; DR502).
func TestRemoveVolumeIsRefusedWhileAnotherContainerHoldsIt(t *testing.T) {
	s := scripted(t, 10)
	id := running(t, s)
	play(t, s, Action{Kind: UserConnect}, Action{Kind: UserWrite}, Action{Kind: UserDisconnect})
	play(t, s, Action{Kind: FaultHoldVolume, Delay: 45 * time.Second},
		Action{Kind: UserDesire, Desired: contracts.DesiredPending}, advance(5*time.Second))
	require.Len(t, events(s, history.KindFault, "storage.Hold"), 1)
	exists, _ := s.World().Instances.State(id)
	require.False(t, exists, "ARCHIVING removed the workspace's container")
	_, ok := s.World().Storage.Files(id)
	require.True(t, ok, "the holder keeps the volume")

	play(t, s, Action{Kind: FaultRemoveVolume})
	require.Empty(t, events(s, history.KindNote, "failure"), "a fault action never fails the run")
	refused := events(s, history.KindFault, "storage.Remove")
	require.Len(t, refused, 1)
	require.Contains(t, refused[0].Err, string(contracts.CodeVolumeInUse))
	require.Empty(t, events(s, history.KindFault, wsjudge.FLoseVolume), "nothing removed")
	files, ok := s.World().Storage.Files(id)
	require.True(t, ok, "the volume is kept")
	require.Len(t, files, 1)
	require.Len(t, s.Model(id), 1, "nothing is lost")

	play(t, s, advance(2*time.Minute))
	require.Equal(t, contracts.DisplayArchived, contracts.Display(ptr(row(t, s, id))))
	require.Empty(t, s.Result().Failures)
	requireClean(t, s)
}

// A storage job killed between the archive object and its .meta: the
// object is left without its commit marker and ARCHIVING fails; the retry
// (same op_id, same key) uploads both and the workspace is archived.
func TestStorageJobCrashLeavesAnObjectWithoutMetaAndTheRetryCommits(t *testing.T) {
	s := scripted(t, 11)
	id := running(t, s)
	play(t, s, Action{Kind: UserConnect}, Action{Kind: UserWrite}, Action{Kind: UserDisconnect},
		Action{Kind: FaultStorageJobCrash, N: 1}, Action{Kind: UserDesire, Desired: contracts.DesiredPending}, advance(10*time.Second))
	archives := events(s, history.KindCall, wsjudge.MArchive)
	require.NotEmpty(t, archives)
	require.Contains(t, archives[0].Err, string(wsfakes.CodeStorageJobFailed))
	w := row(t, s, id)
	require.Equal(t, contracts.OpArchiving, w.Operation, "still archiving, retry pending")
	key := contracts.ArchiveKey(id, w.OpID)
	_, ok := s.World().Objects.Peek(key)
	require.True(t, ok, "the object is there")
	_, ok = s.World().Objects.Peek(contracts.MetaKey(key))
	require.False(t, ok, "without its .meta")

	play(t, s, advance(2*time.Minute))
	w = row(t, s, id)
	require.Equal(t, contracts.DisplayArchived, contracts.Display(&w))
	require.Equal(t, key, w.ArchiveKey, "the same op_id, the same key")
	_, ok = s.World().Objects.Peek(contracts.MetaKey(key))
	require.True(t, ok, "the retry committed the .meta")
	play(t, s, Action{Kind: UserDesire, Desired: contracts.DesiredRunning}, advance(time.Minute))
	require.Equal(t, contracts.DisplayRunning, contracts.Display(ptr(row(t, s, id))))
	require.Len(t, s.Model(id), 1)
	requireClean(t, s)
}

// An API race: several owners' requests for RUNNING run concurrently, their
// store calls interleaved; the reference's guarded write keeps the limit,
// and the same seed interleaves them the same way.
func TestAPIRaceInterleavesRequestsDeterministically(t *testing.T) {
	runRace := func() (*Sim, []string) {
		s, err := New(Config{Seed: 12, System: wsref.NewSystem(), Workload: Workload{Disabled: true},
			Limits: contracts.Limits{MaxRunningPerUser: 1, MaxRunningGlobal: 10}})
		require.NoError(t, err)
		for range 4 {
			play(t, s, Action{Kind: UserCreate, N: 1, Desired: contracts.DesiredStandby})
		}
		play(t, s, advance(time.Minute), Action{Kind: FaultAPIRace, N: 4}, advance(time.Minute))
		var order []string
		for _, e := range s.History().Events() {
			if e.Kind == history.KindAPI && e.Method == "api.Patch" {
				order = append(order, e.Workspace+" "+e.Result+e.Err)
			}
		}
		return s, order
	}
	s, order := runRace()
	require.Len(t, events(s, history.KindFault, evAPIRace), 1)
	require.Len(t, order, 4, "four concurrent requests")
	accepted := 0
	for _, o := range order {
		if strings.Contains(o, "desired=RUNNING") {
			accepted++
		}
	}
	require.Equal(t, 1, accepted, "one owner, a limit of one: one request wins: %v", order)
	requireClean(t, s)
	_, again := runRace()
	require.Equal(t, order, again)
}

// no-answer: the provider does not answer, so the call fails with no code
// (SPEC 1.5: Unreachable, retried); with N 1 it acted first. hold-volume:
// armed, it strikes the next delete_volume, which answers VOLUME_IN_USE
// until the other holder lets go; the retry 30 s later deletes the volume
// (DR496).
func TestNoAnswerFailsWithoutACodeAndHoldVolumeAnswersInUse(t *testing.T) {
	s := scripted(t, 12)
	play(t, s, Action{Kind: FaultNoAnswer, Method: "storage", Percent: 100, For: time.Minute},
		Action{Kind: UserCreate, N: 1, Desired: contracts.DesiredStandby}, advance(10*time.Second))
	id := s.Scripted()[0]
	calls := events(s, history.KindCall, wsjudge.MProvision)
	require.NotEmpty(t, calls)
	require.Equal(t, "storage.Provision: injected outage: unavailable", calls[0].Err, "no code")
	w := row(t, s, id)
	require.Equal(t, 1, w.ErrorCount)
	require.Equal(t, contracts.ReasonUnreachable, w.ErrorInfo.Reason)
	require.False(t, w.ErrorInfo.IsTerminal, "a transport error is retried")
	play(t, s, advance(2*time.Minute))
	require.Equal(t, contracts.DisplayStandby, contracts.Display(ptr(row(t, s, id))))

	// The answer lost after the effect: the container runs.
	play(t, s, Action{Kind: FaultNoAnswer, Method: "instances.Start", Percent: 100, For: 10 * time.Second, N: 1},
		Action{Kind: UserDesire, Desired: contracts.DesiredRunning}, advance(3*time.Second))
	_, running := s.World().Instances.State(id)
	require.True(t, running, "the effect happened")
	lost := events(s, history.KindFault, evLostResponse)
	require.Len(t, lost, 1)
	require.Equal(t, "instances.Start: injected outage: unavailable", lost[0].Err)
	play(t, s, advance(time.Minute))
	require.Equal(t, contracts.DisplayRunning, contracts.Display(ptr(row(t, s, id))))

	// Archive it with another container holding the volume for 45 s.
	play(t, s, Action{Kind: FaultHoldVolume, Delay: 45 * time.Second},
		Action{Kind: UserDesire, Desired: contracts.DesiredPending}, advance(5*time.Second))
	require.Len(t, events(s, history.KindFault, "storage.Hold"), 1)
	dels := events(s, history.KindCall, wsjudge.MDeleteVolume)
	require.Len(t, dels, 1)
	require.Contains(t, dels[0].Err, string(contracts.CodeVolumeInUse))
	w = row(t, s, id)
	require.Equal(t, contracts.ReasonActionFailed, w.ErrorInfo.Reason)
	require.False(t, w.ErrorInfo.IsTerminal, "VOLUME_IN_USE is retried")
	_, hasVolume := s.World().Storage.Files(id)
	require.True(t, hasVolume, "the volume is kept")
	play(t, s, advance(2*time.Minute))
	_, hasVolume = s.World().Storage.Files(id)
	require.False(t, hasVolume, "a retry deleted it once the holder let go")
	require.Equal(t, contracts.DisplayArchived, contracts.Display(ptr(row(t, s, id))))
	requireClean(t, s)
}
