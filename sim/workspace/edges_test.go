package workspace

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	wsref "github.com/wsconverge/converge/refimpl/workspace"
)

// The state-edge matrix follows a run: a workspace created for RUNNING is
// provisioned then started, a fault is counted against the operation in
// progress when it struck (none, here), and every edge it went through
// is one of the edges StateEdges lists.
func TestEdgesFollowTheRun(t *testing.T) {
	plan := &Plan{Faults: []Kind{FaultKillContainer}, Actions: []Action{
		{At: 0, Kind: UserCreate, N: 1, Desired: contracts.DesiredRunning},
		{At: 5 * time.Minute, Kind: FaultKillContainer},
		{At: 10 * time.Minute, Kind: UserDesire, Desired: contracts.DesiredStandby},
	}}
	res, err := Run(context.Background(), Config{Seed: 3, System: wsref.NewSystem(), Workload: Workload{Disabled: true},
		Duration: 20 * time.Minute, Plan: plan, Faults: FaultMix{Kinds: []Kind{FaultKillContainer}}})
	require.NoError(t, err)
	for _, e := range []string{
		"NONE→PROVISIONING@PENDING/RUNNING", "PROVISIONING→NONE@STANDBY/RUNNING",
		"NONE→STARTING@STANDBY/RUNNING", "STARTING→NONE@RUNNING/RUNNING",
		"NONE→STOPPING@RUNNING/STANDBY", "STOPPING→NONE@STANDBY/STANDBY",
	} {
		require.Positive(t, res.StateEdges[e], "%s in %v", e, res.StateEdges)
	}
	require.Equal(t, map[string]int{"kill-container×NONE": 1}, res.FaultEdges)
	all := StateEdges()
	for e := range res.StateEdges {
		require.Contains(t, all, e, "an edge the matrix lists")
	}
	unseen := Unseen(all, res.StateEdges)
	require.Len(t, unseen, len(all)-len(res.StateEdges))
	require.True(t, slices.IsSorted(all))
	require.Len(t, FaultEdges(FaultMix{Kinds: []Kind{FaultKillContainer, FaultCrash}}), 2*len(contracts.AllOperations))
	require.Equal(t, "crash×NONE", FaultEdges(FaultMix{Kinds: []Kind{FaultKillContainer, FaultCrash}})[0], "FaultKinds' order")
}

func TestCompactEdges(t *testing.T) {
	require.Equal(t, "crash×{NONE,DELETING} NONE→STARTING@{STANDBY/RUNNING,RUNNING/RUNNING} STARTING→ERROR@*/deleted",
		CompactEdges([]string{"crash×NONE", "crash×DELETING", "NONE→STARTING@STANDBY/RUNNING", "NONE→STARTING@RUNNING/RUNNING",
			"STARTING→ERROR@*/deleted"}))
	require.Empty(t, CompactEdges(nil))
}
