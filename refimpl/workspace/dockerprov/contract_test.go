package dockerprov

import (
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/contracttest"
	"github.com/wsconverge/converge/refimpl/workspace/s3objects"
)

// stop kills the workspace container of id behind the provider's back and
// waits until the engine reports it stopped.
func (tp *testProvider) stop(t *testing.T, id string) {
	t.Helper()
	ctx := t.Context()
	name := contracts.ContainerName(id)
	_, err := tp.cli.ContainerKill(ctx, name, client.ContainerKillOptions{Signal: "KILL"})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		info, err := tp.cli.ContainerInspect(ctx, name, client.ContainerInspectOptions{})
		return err == nil && !isRunning(info.Container.State)
	}, 10*time.Second, 20*time.Millisecond, "%s stops", name)
}

func (tp *testProvider) writeFile(t *testing.T, id, path string, data []byte) {
	t.Helper()
	require.NoError(t, tp.WriteFile(t.Context(), id, path, data))
}

func (tp *testProvider) readFiles(t *testing.T, id string) map[string][]byte {
	t.Helper()
	files, err := tp.ReadFiles(t.Context(), id)
	require.NoError(t, err)
	return files
}

func TestContractInstances(t *testing.T) {
	tp := newProvider(t, nil)
	contracttest.Instances(t, func(*testing.T) contracttest.InstancesTarget {
		return contracttest.InstancesTarget{
			Instances: tp,
			Storage:   tp,
			ImageRef:  agentImage(),
			Stop:      tp.stop,
		}
	})
}

func TestContractStorage(t *testing.T) {
	e := newS3Env(t)
	objs, err := s3objects.New(t.Context(), e.cfg.Endpoint, e.cfg.AccessKey, e.cfg.SecretKey, e.cfg.Bucket, e.cfg.Secure)
	require.NoError(t, err)
	contracttest.Storage(t, func(*testing.T) contracttest.StorageTarget {
		return contracttest.StorageTarget{
			Storage:   e.tp,
			Instances: e.tp,
			Objects:   objs,
			ImageRef:  agentImage(),
			WriteFile: e.tp.writeFile,
			ReadFiles: e.tp.readFiles,
		}
	})
}
