package archive

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

func TestExitCodeTable(t *testing.T) {
	// The statuses are an interface with the provider: pin every value.
	want := map[contracts.ErrorCode]int{
		contracts.CodeArchiveNotFound:      10,
		contracts.CodeMetaNotFound:         11,
		contracts.CodeChecksumMismatch:     12,
		contracts.CodeS3AccessError:        13,
		contracts.CodeTarExtractFailed:     14,
		contracts.CodeDiskFull:             15,
		contracts.CodeVolumeNotFound:       16,
		contracts.CodeK8sAPIError:          30,
		contracts.CodeDockerUnreachable:    31,
		contracts.CodeVolumeCreateFailed:   32,
		contracts.CodeContainerStartFailed: 33,
		contracts.CodeImagePullFailed:      34,
		contracts.CodeHealthCheckFailed:    35,
		contracts.CodeContainerCreate:      36,
		contracts.CodeVolumeInUse:          37,
	}
	for code, n := range want {
		t.Run(string(code), func(t *testing.T) {
			require.Equal(t, n, ExitCode(code))
			back, ok := CodeOfExit(n)
			require.True(t, ok)
			require.Equal(t, code, back)
		})
	}
}

func TestExitCodesCoverEveryCodeDistinctly(t *testing.T) {
	seen := map[int]contracts.ErrorCode{}
	for _, code := range contracts.AllErrorCodes {
		n := ExitCode(code)
		require.NotContains(t, []int{ExitOK, ExitFailed, ExitUsage}, n, "code %s", code)
		require.Less(t, n, 125, "code %s collides with Docker's and signal statuses", code)
		prev, dup := seen[n]
		require.False(t, dup, "codes %s and %s share exit status %d", prev, code, n)
		seen[n] = code
	}
	require.Len(t, seen, len(contracts.AllErrorCodes))
}

func TestExitCodeUnknown(t *testing.T) {
	require.Equal(t, ExitFailed, ExitCode("NO_SUCH_CODE"))
	require.Equal(t, ExitFailed, ExitCode(""))
	for _, n := range []int{ExitOK, ExitFailed, ExitUsage, 9, 17, 125, 137, -1} {
		_, ok := CodeOfExit(n)
		require.False(t, ok, "status %d", n)
	}
}
