package testenv

import (
	"context"
	"os"
	osexec "os/exec"
	"strconv"
	"testing"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/stretchr/testify/require"
)

// Only a container of this host and boot whose owner process has ended is
// an orphan; anything else (another host or boot, no labels, a live
// owner, a pid that is not a number) is left alone.
func TestOrphanedNeedsAnEndedOwnerOfThisHostAndBoot(t *testing.T) {
	dead := func(int) bool { return false }
	live := func(int) bool { return true }
	own := map[string]string{LabelOwnerPID: "4242", LabelOwnerBoot: "b1", LabelOwnerHost: "h1"}
	require.True(t, orphaned(own, "h1", "b1", dead))
	require.False(t, orphaned(own, "h1", "b1", live))
	require.False(t, orphaned(own, "h2", "b1", dead), "another host's")
	require.False(t, orphaned(own, "h1", "b2", dead), "an earlier boot's pid says nothing")
	require.False(t, orphaned(own, "h1", "", dead), "no boot id here")
	require.False(t, orphaned(map[string]string{}, "h1", "b1", dead), "no owner labels")
	require.False(t, orphaned(map[string]string{LabelOwnerPID: "x", LabelOwnerBoot: "b1", LabelOwnerHost: "h1"}, "h1", "b1", dead))
	require.True(t, processAlive(os.Getpid()))
}

// Reap removes a container whose owner process has ended and keeps one
// this process owns.
func TestReapRemovesTheContainersOfEndedProcesses(t *testing.T) {
	needDocker(t, "reap")
	ctx := context.Background()
	image, _ := imageFor(ctx, redisService)
	if !imagePresent(ctx, image) {
		t.Skipf("%s is not present (images/build.sh builds it)", image)
	}
	ended := osexec.Command("true")
	require.NoError(t, ended.Run())
	cli, err := client.New(client.FromEnv)
	require.NoError(t, err)
	defer cli.Close()
	create := func(pid int) string {
		t.Helper()
		l := ownerLabels()
		l[Label] = "reap-test"
		l[LabelOwnerPID] = strconv.Itoa(pid)
		res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{Config: &container.Config{Image: image, Labels: l}})
		require.NoError(t, err)
		t.Cleanup(func() { _, _ = cli.ContainerRemove(ctx, res.ID, client.ContainerRemoveOptions{Force: true}) })
		return res.ID
	}
	orphan, mine := create(ended.Process.Pid), create(os.Getpid())
	_, err = Reap(ctx)
	require.NoError(t, err)
	_, err = cli.ContainerInspect(ctx, orphan, client.ContainerInspectOptions{})
	require.Error(t, err, "the ended process's container is gone")
	_, err = cli.ContainerInspect(ctx, mine, client.ContainerInspectOptions{})
	require.NoError(t, err, "this process's container stays")
}
