package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
)

func TestReady(t *testing.T) {
	now := at(sec(10))
	cases := []struct {
		name  string
		job   *oracle.Job
		ready bool
	}{
		{"3.3.2 ENABLED, Pending, NextRunTime passed → ready", job(), true},
		{"3.3.2 NextRunTime = now → ready", job(jNext(now)), true},
		{"3.3.2 NextRunTime after now → not ready", job(jNext(now.Add(time.Nanosecond))), false},
		{"3.3.2 PAUSED → not ready", job(jStatus(oracle.StatusPaused)), false},
		{"3.3.2 DISABLED → not ready", job(jStatus(oracle.StatusDisabled)), false},
		{"3.3.2 UNSPECIFIED → not ready", job(jStatus(oracle.StatusUnspecified)), false},
		{"2.5 Pending → ready", job(jExec(oracle.ExecPending)), true},
		{"2.5 Scheduled → ready", job(jExec(oracle.ExecScheduled)), true},
		{"2.5 Executing → not ready", job(jExec(oracle.ExecExecuting)), false},
		{"2.5 Completed → not ready", job(jExec(oracle.ExecCompleted)), false},
		{"2.5 Failed → ready", job(jExec(oracle.ExecFailed)), true},
		{"2.5 Cancelled → ready", job(jExec(oracle.ExecCancelled)), true},
		{"2.5 Retrying → not ready", job(jExec(oracle.ExecRetrying)), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.ready, Ready(tc.job, now))
		})
	}
}

func TestReadyOrder(t *testing.T) {
	now := at(sec(100))
	mk := func(id uint64, next time.Duration, opts ...func(*oracle.Job)) oracle.Job {
		j := job(append(opts, func(j *oracle.Job) { j.RequestID, j.ID, j.NextRunTime = id, JobID(id), at(next) })...)
		return *j
	}
	jobs := []oracle.Job{
		mk(9, sec(50)),
		mk(3, sec(50)),
		mk(4, sec(10)),
		mk(1, sec(101)), // not yet
		mk(2, sec(5), jExec(oracle.ExecExecuting)),  // already selected
		mk(5, sec(5), jStatus(oracle.StatusPaused)), // paused
		mk(6, sec(100)),                            // exactly now
		mk(8, sec(20), jExec(oracle.ExecFailed)),   // failed, retry time passed
		mk(7, sec(1), jExec(oracle.ExecCompleted)), // waiting for Complete
	}
	var ids []uint64
	for _, j := range ReadyOrder(jobs, now) {
		ids = append(ids, j.RequestID)
	}
	require.Equal(t, []uint64{4, 8, 3, 9, 6}, ids, "D19: by (NextRunTime, RequestID), ready jobs only")
	require.Empty(t, ReadyOrder(nil, now))
}

func TestMayStartExecution(t *testing.T) {
	require.True(t, MayStartExecution(job(jExec(oracle.ExecExecuting))))
	require.False(t, MayStartExecution(nil), "D12: the job was removed")
	require.False(t, MayStartExecution(job(jExec(oracle.ExecExecuting), jSuperseded())), "D12: a Complete superseded it")
	require.False(t, MayStartExecution(job(jExec(oracle.ExecExecuting), jStatus(oracle.StatusPaused))), "O11: paused while queued")
	require.False(t, MayStartExecution(job(jExec(oracle.ExecPending))))
}

func TestResultStale(t *testing.T) {
	r := oracle.JobResult{RequestID: 7, Nonce: 6}
	cases := []struct {
		name  string
		job   *oracle.Job
		stale bool
	}{
		{"3.5 job exists, ENABLED, assigned, Nonce + 1 = result.Nonce → fresh", job(), false},
		{"3.5 job gone → stale", nil, true},
		{"3.5 PAUSED → stale", job(jStatus(oracle.StatusPaused)), true},
		{"3.5 self left the account list → stale", job(func(j *oracle.Job) { j.AccountList = []string{peerA} }), true},
		{"D12 a Complete moved Nonce to 6 → stale", job(jNonce(6)), true},
		{"D11 a Complete skipped ahead → stale", job(jNonce(9)), true},
		{"result for an older round than Nonce + 1 → stale", job(jNonce(4)), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.stale, ResultStale(tc.job, r, self))
		})
	}
}
