package conform

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/events"
	"github.com/stretchr/testify/require"

	wsjudge "github.com/wsconverge/converge/judge/workspace"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

func TestGenerateFaultsIsSeededAndCoversEveryKind(t *testing.T) {
	a := GenerateFaults(7, FaultKinds(), time.Minute)
	b := GenerateFaults(7, FaultKinds(), time.Minute)
	require.Equal(t, a, b, "one seed, one schedule")
	require.Len(t, a, len(FaultKinds()))
	for i, f := range a {
		require.GreaterOrEqual(t, f.At, 6*time.Second)
		require.LessOrEqual(t, f.At, 54*time.Second)
		if i > 0 {
			require.LessOrEqual(t, a[i-1].At, f.At)
		}
	}
	require.NotEqual(t, a, GenerateFaults(8, FaultKinds(), time.Minute))
	require.Empty(t, GenerateFaults(7, nil, time.Minute))
}

func TestFromPlanMapsSimulatorFaultsOntoRealOnes(t *testing.T) {
	p := &wssim.Plan{Actions: []wssim.Action{
		{At: time.Hour, Kind: wssim.FaultCrash, Pick: 0, For: 30 * time.Second},
		{At: 2 * time.Hour, Kind: wssim.FaultKillSession},
		{At: 3 * time.Hour, Kind: wssim.FaultDropMessages, N: 3},
		{At: 4 * time.Hour, Kind: wssim.FaultOutage, Method: "objects", For: 10 * time.Minute},
		{At: 5 * time.Hour, Kind: wssim.FaultOutage, Method: "instances.Start"},
		{At: 6 * time.Hour, Kind: wssim.FaultCorruptObject, Pick: 3, Meta: true},
		{At: 7 * time.Hour, Kind: wssim.UserCreate},
	}}
	faults, skipped := FromPlan(p, 24*time.Hour, 48*time.Second)
	require.Len(t, faults, 4)
	require.Equal(t, FaultKill, faults[0].Kind)
	require.True(t, faults[0].Leader)
	require.Equal(t, 2*time.Second, faults[0].At)
	require.Equal(t, 2*time.Second, faults[0].For, "a length below 2 s is stretched to 2 s")
	require.Equal(t, FaultTerminateBackend, faults[1].Kind)
	require.Equal(t, FaultS3Outage, faults[2].Kind)
	require.Equal(t, FaultObjectCorrupt, faults[3].Kind)
	require.True(t, faults[3].Meta)
	require.Len(t, skipped, 2, "drop-messages and an outage of instances.Start have no real counterpart")
}

func TestPlaceholders(t *testing.T) {
	env := map[string]string{EnvListen: "127.0.0.1:4100", EnvInstance: "conform-1", EnvDatabaseURL: "postgres://x"}
	s, err := expand("--listen {listen} --port {port} --name {instance} --db {database_url}", env)
	require.NoError(t, err)
	require.Equal(t, "--listen 127.0.0.1:4100 --port 4100 --name conform-1 --db postgres://x", s)
	_, err = SplitCommand("serve --x {nope}")
	require.ErrorContains(t, err, "unknown placeholder {nope}")
	argv, err := SplitCommand(`"my plane" serve --name '{instance}'`)
	require.NoError(t, err)
	require.Equal(t, []string{"my plane", "serve", "--name", "{instance}"}, argv)
}

func TestConfig(t *testing.T) {
	c, err := LoadConfig("", "")
	require.NoError(t, err)
	require.Equal(t, "short", c.Profile)
	require.Equal(t, "conform-alice-0123456789=alice,conform-bob-0123456789=bob,conform-root-0123456789=root:admin", c.TokensValue())
	dir := t.TempDir()
	path := filepath.Join(dir, "conform.toml")
	require.NoError(t, os.WriteFile(path, []byte(`profile = "long"
instances = 3
fault_phase = "90s"
faults = ["kill", "partition"]
users = [{ name = "ann", token = "t1" }]
admin = { name = "ops", token = "t2" }
env = ["A=b"]
`), 0o644))
	c, err = LoadConfig(path, "")
	require.NoError(t, err)
	require.Equal(t, 3, c.Instances)
	require.Equal(t, Duration(90*time.Second), c.FaultPhase)
	require.Equal(t, 12, c.Workspaces, "the long profile's")
	require.Equal(t, []string{"kill", "partition"}, c.Faults)
	require.Equal(t, "t1=ann,t2=ops:admin", c.TokensValue())

	for body, want := range map[string]string{
		`instances = 9`:          "instances 9",
		`faults = ["flood"]`:     "unknown fault kind",
		`colour = "red"`:         "colour",
		`time_scale = 0.5`:       "time_scale",
		`admin = { name = "a" }`: "",
	} {
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
		_, err := LoadConfig(path, "")
		if want == "" {
			continue
		}
		require.ErrorContains(t, err, want, body)
	}
	_, err = LoadConfig("", "medium")
	require.ErrorContains(t, err, "unknown profile")
}

// C12's bound fits in the quiet phase only on a compressed clock: at K =
// 1 it is out of reach and on the default allow-list with why; at K = 60
// the quiet phase holds for ConvergeBound/K.
func TestTheConvergenceBoundAndTheTimeScale(t *testing.T) {
	c, err := LoadConfig("", "short")
	require.NoError(t, err)
	require.Zero(t, c.convergeHold())
	why := c.Unreached()["c12-convergence"]
	require.Contains(t, why, "beyond the quiet phase (1m40s)")
	require.Contains(t, why, "time_scale 56 or more")
	c.TimeScale = 56
	require.Equal(t, time.Duration(float64(wsjudge.ConvergeBound)/56)+holdMargin, c.convergeHold())
	require.LessOrEqual(t, c.convergeHold(), time.Duration(c.QuietPhase))
	require.Empty(t, c.Unreached())
	c.TimeScale = 55
	require.Zero(t, c.convergeHold())
}

// The claim rule: a judged checker whose situation never arose fails the
// claim (exit 5) unless allowed; a checker not judgeable black-box is
// never among the unmet.
func TestTheClaimCountsOnlyTheJudgedCheckers(t *testing.T) {
	judged := []string{"c3-single-writer", "c12-convergence", "limits"}
	rep := &wsjudge.Report{Exercised: map[string]int{"c3-single-writer": 4, "c12-convergence": 0, "limits": 0, "ttl": 0}}
	res := &Result{Report: rep, Judged: judged, NotJudgeable: map[string]string{"ttl": whyBus},
		Unreached: map[string]string{"c12-convergence": "its bound is beyond the quiet phase"}}
	res.Claim = claim(rep, judged, []string{"c12-convergence"})
	require.False(t, res.Failed())
	require.Equal(t, []string{"limits"}, res.Unmet())
	require.False(t, res.Passed())
	require.Contains(t, res.Summary(), "NOT A PASS (1 obligations unmet)")
	var b strings.Builder
	require.NoError(t, res.WriteText(&b))
	require.Regexp(t, `\n  c12-convergence +its bound is beyond the quiet phase`, b.String())
	require.Contains(t, b.String(), "UNMET: the situation of limits never arose")
	require.Contains(t, b.String(), "not exercised (allowed)")
	js := res.JUnit().Suites[0]
	for _, c := range js.Cases {
		switch c.Name {
		case "limits":
			require.NotNil(t, c.Failure)
			require.Equal(t, "unmet", c.Failure.Type)
		case "c12-convergence", "ttl":
			require.NotNil(t, c.Skipped, c.Name)
		}
	}
	res.Claim = claim(rep, judged, []string{"c12-convergence", "limits"})
	require.True(t, res.Passed())
	require.NoError(t, CheckAllow([]string{"limits"}))
	require.ErrorContains(t, CheckAllow([]string{"limit"}), `unknown checker "limit"`)
}

// The engine's events of the run's workspaces become the engine's calls
// the checkers know; what the run's own commands (its faults) caused and
// other containers and volumes are left out.
func TestEngineEventsBecomeTheEnginesCalls(t *testing.T) {
	const id = "0b6f8c3e-4a1d-4e2b-9c7a-1f2e3d4c5b6a"
	const other = "11111111-2222-4333-8444-555555555555"
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	ew := &engineWatch{sync: "conform-sync-x"}
	msg := func(typ events.Type, action events.Action, name string, at time.Duration) events.Message {
		m := events.Message{Type: typ, Action: action, TimeNano: t0.Add(at).UnixNano()}
		if typ == events.VolumeEventType {
			m.Actor.ID = name
		} else {
			m.Actor.Attributes = map[string]string{"name": name}
		}
		return m
	}
	for _, m := range []events.Message{
		msg(events.VolumeEventType, events.ActionCreate, "ws-"+id+"-home", 1*time.Second),
		msg(events.ContainerEventType, events.ActionCreate, "ws-"+id, 2*time.Second),
		msg(events.ContainerEventType, events.ActionStart, "ws-"+id, 3*time.Second),
		msg(events.ContainerEventType, events.ActionDie, "ws-"+id, 4*time.Second),          // the run's docker kill
		msg(events.ContainerEventType, events.ActionStart, "ws-"+id+"-job", 5*time.Second), // a storage job: not the workspace's container
		msg(events.ContainerEventType, events.ActionDestroy, "ws-"+id, 6*time.Second),
		msg(events.VolumeEventType, events.ActionDestroy, "ws-"+id+"-home", 7*time.Second),
		msg(events.VolumeEventType, events.ActionDestroy, "ws-"+other+"-home", 8*time.Second), // another run's
	} {
		ew.record(m)
	}
	kill := []events.Action{events.ActionDie}
	ew.mine("ws-"+id, kill, t0.Add(3500*time.Millisecond), t0.Add(4500*time.Millisecond))
	// A second docker kill while the coordinator removes the container:
	// the removal is the coordinator's, not the kill's.
	ew.mine("ws-"+id, kill, t0.Add(5500*time.Millisecond), t0.Add(6500*time.Millisecond))
	out, own := ew.history(map[string]bool{id: true})
	require.Equal(t, 1, own)
	var got []string
	for _, s := range out {
		require.Equal(t, id, s.e.Workspace)
		require.Equal(t, engineInstance, s.e.Instance)
		got = append(got, string(s.e.Kind)+" "+s.e.Method)
	}
	require.Equal(t, []string{"call storage.Provision", "note docker.container.create", "call instances.Start",
		"call instances.Delete", "call storage.DeleteVolume"}, got)

	ew.offset, ew.within = 40*time.Millisecond, time.Millisecond
	ok, why := ew.sameClock()
	require.False(t, ok)
	require.Contains(t, why, "differ by 40ms")
	ew.offset = 2 * time.Millisecond
	ok, _ = ew.sameClock()
	require.True(t, ok)
}

// While the tour takes its workspace round, the drawn actions pick among
// the others; once it is done, among all.
func TestDrawnActionsLeaveTheToursWorkspaceAlone(t *testing.T) {
	w := &workload{ids: []string{"a", "b", "c"}, own: map[string]User{"a": {Name: "alice"}, "b": {Name: "bob"}, "c": {Name: "carol"}}, toured: "a"}
	seen := map[string]bool{}
	for n := range 12 {
		id, u, ok := w.pickDrawn(n)
		require.True(t, ok)
		require.NotEqual(t, "a", id)
		require.Equal(t, w.own[id], u)
		seen[id] = true
	}
	require.Equal(t, map[string]bool{"b": true, "c": true}, seen)
	w.toured = ""
	for n := range 12 {
		id, _, _ := w.pickDrawn(n)
		seen[id] = true
	}
	require.True(t, seen["a"])
	alone := &workload{ids: []string{"a"}, own: map[string]User{"a": {}}, toured: "a"}
	_, _, ok := alone.pickDrawn(0)
	require.False(t, ok, "with only the tour's workspace there is nothing to draw")
}
