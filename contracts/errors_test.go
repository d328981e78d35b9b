package contracts

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClassifyEveryCode(t *testing.T) {
	// 1.5: provider error codes and their reasons.
	type class struct {
		reason   Reason
		terminal bool
	}
	want := map[ErrorCode]class{
		CodeArchiveNotFound:      {ReasonDataLost, true},
		CodeMetaNotFound:         {ReasonDataLost, true},
		CodeChecksumMismatch:     {ReasonDataLost, true},
		CodeS3AccessError:        {ReasonUnreachable, false},
		CodeK8sAPIError:          {ReasonUnreachable, false},
		CodeDockerUnreachable:    {ReasonUnreachable, false},
		CodeTarExtractFailed:     {ReasonActionFailed, false},
		CodeVolumeCreateFailed:   {ReasonActionFailed, false},
		CodeContainerStartFailed: {ReasonActionFailed, false},
		CodeImagePullFailed:      {ReasonActionFailed, false},
		CodeHealthCheckFailed:    {ReasonActionFailed, false},
		CodeDiskFull:             {ReasonActionFailed, true},
		CodeContainerCreate:      {ReasonActionFailed, true},
		CodeVolumeNotFound:       {ReasonActionFailed, true},
		// 5.2: "in use" is an error; Classify's doc makes it retried.
		CodeVolumeInUse: {ReasonActionFailed, false},
	}
	require.Len(t, AllErrorCodes, len(want), "every code needs a row here")
	seen := map[ErrorCode]bool{}
	for _, code := range AllErrorCodes {
		require.False(t, seen[code], "duplicate %s", code)
		seen[code] = true
		c, ok := want[code]
		require.True(t, ok, "no expectation for %s", code)
		t.Run(fmt.Sprintf("1.5: %s → %s terminal=%v", code, c.reason, c.terminal), func(t *testing.T) {
			reason, terminal := Classify(code)
			require.Equal(t, c.reason, reason)
			require.Equal(t, c.terminal, terminal)
			// A code terminal at once is never one the reconciler retries
			// up to MaxAttempts, except the admin-only ActionFailed codes.
			if reason == ReasonDataLost {
				require.True(t, terminal)
			}
		})
	}
	t.Run("unknown code is a retried ActionFailed", func(t *testing.T) {
		reason, terminal := Classify("SOMETHING_NEW")
		require.Equal(t, ReasonActionFailed, reason)
		require.False(t, terminal)
	})
}

func TestReasonRetried(t *testing.T) {
	cases := []struct {
		name    string
		r       Reason
		retried bool
	}{
		{"1.5 row 1: Mismatch retried", ReasonMismatch, true},
		{"1.5 row 1: Unreachable retried", ReasonUnreachable, true},
		{"1.5 row 1: ActionFailed retried", ReasonActionFailed, true},
		{"1.5 row 2: Timeout not retried", ReasonTimeout, false},
		{"1.5 row 3: RetryExceeded not retried", ReasonRetryExceeded, false},
		{"1.5 row 4: DataLost not retried", ReasonDataLost, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.retried, tc.r.Retried())
		})
	}
}

func TestProviderError(t *testing.T) {
	e := NewProviderError(CodeDiskFull, "need %d bytes", 10)
	require.Equal(t, "DISK_FULL: need 10 bytes", e.Error())
	require.Equal(t, "DISK_FULL", (&ProviderError{Code: CodeDiskFull}).Error())

	wrapped := fmt.Errorf("archive w1: %w", e)
	require.Equal(t, CodeDiskFull, CodeOf(wrapped))
	// A transport failure (no provider code) counts as unreachable.
	require.Equal(t, CodeDockerUnreachable, CodeOf(errors.New("connection refused")))
	reason, terminal := Classify(CodeOf(errors.New("eof")))
	require.Equal(t, ReasonUnreachable, reason)
	require.False(t, terminal)
}

func TestErrorInfoCloneIsDeep(t *testing.T) {
	e := ErrorInfo{Reason: ReasonTimeout, Context: map[string]any{"operation": "ARCHIVING"}}
	c := e.Clone()
	c.Context["operation"] = "STARTING"
	require.Equal(t, "ARCHIVING", e.Context["operation"])
	require.Nil(t, ErrorInfo{}.Clone().Context)
}
