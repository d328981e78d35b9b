package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
)

type transitionCase struct {
	name    string
	job     *oracle.Job // nil: no job
	trig    oracle.Trigger
	now     time.Time
	rows    []oracle.Row
	want    *oracle.Job // nil: no job afterwards
	effects []oracle.Effect
}

// runTransitions checks each case and that Transition never modifies its
// input job.
func runTransitions(t *testing.T, cases []transitionCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var before *oracle.Job
			if tc.job != nil {
				c := tc.job.Clone()
				before = &c
			}
			o := Transition(tc.job, tc.trig, tc.now)
			require.Equal(t, tc.rows, o.Rows, "rows")
			require.Equal(t, tc.want, o.Job, "job")
			require.Equal(t, tc.effects, o.Effects, "effects")
			require.Equal(t, before, tc.job, "the input job was modified")

			// TransitionIn gives the same outcome, whatever its room held.
			var room Room
			TransitionIn(&room, job(jExec(oracle.ExecExecuting)), oracle.ExecutionEnd{Outcome: oracle.ExecSucceeded, Data: "9", StartedAt: t0}, t0)
			in := TransitionIn(&room, tc.job, tc.trig, tc.now)
			require.Equal(t, tc.rows, in.Rows, "rows in a room")
			require.Equal(t, tc.want, in.Job, "job in a room")
			require.Equal(t, tc.effects, in.Effects, "effects in a room")
			require.Equal(t, before, tc.job, "the input job was modified")
		})
	}
}

// A room's next transition leaves the rows an earlier outcome returned as
// they were (a trace keeps them), and every row has its shared list.
func TestTransitionInRowsAreNotTheRooms(t *testing.T) {
	var room Room
	j := job(jExec(oracle.ExecPending), jNext(t0))
	first := TransitionIn(&room, j, oracle.Select{}, t0)
	require.Equal(t, []oracle.Row{oracle.RowSelect}, first.Rows)
	require.True(t, room.Holds(first.Job))
	other := Room{}
	second := TransitionIn(&other, first.Job, oracle.ExecutionEnd{Outcome: oracle.ExecFetchFailed, Error: "x", StartedAt: t0}, t0)
	TransitionIn(&room, second.Job, oracle.Select{}, at(time.Hour))
	require.Equal(t, []oracle.Row{oracle.RowSelect}, first.Rows)
	require.Equal(t, []oracle.Row{oracle.RowFetchFailed}, second.Rows)
	seen := map[oracle.Row]bool{}
	for _, s := range rowSlices {
		require.Len(t, s, 1)
		require.False(t, seen[s[0]], "row %q twice", s[0])
		seen[s[0]] = true
	}
	require.Len(t, seen, 14, "every Row constant has a shared list")
}

// created is the job a creation at time now gives for doc(opts...).
func created(now time.Time, status oracle.ExecStatus, next time.Time, opts ...func(*oracle.RequestDoc)) *oracle.Job {
	d := doc(opts...)
	return job(func(j *oracle.Job) {
		j.Nonce = d.Nonce
		j.Status = d.Status
		j.Exec = oracle.ExecutionState{Status: status}
		j.NextRunTime = next
		j.CreatedAt, j.UpdatedAt = now, now
	})
}

func TestTransitionCreate(t *testing.T) {
	now := at(sec(100))
	runTransitions(t, []transitionCase{
		{
			name: "3.3.3 create: doc.nonce = 0 → Pending, NextRunTime now",
			trig: oracle.Create{Doc: doc(), Self: self}, now: now,
			rows: []oracle.Row{oracle.RowCreate}, want: created(now, oracle.ExecPending, now),
		},
		{
			name: "3.3.3 create, D14: doc.nonce > 0 → NextRunTime lastBT + Period",
			trig: oracle.Create{Doc: doc(withNonce(5)), Self: self, LastBlockTime: now.Add(-sec(10))}, now: now,
			rows: []oracle.Row{oracle.RowCreate}, want: created(now, oracle.ExecPending, now.Add(sec(20)), withNonce(5)),
		},
		{
			name: "3.3.3 create, D14: lastBT + Period in the past → now",
			trig: oracle.Create{Doc: doc(withNonce(5)), Self: self, LastBlockTime: now.Add(-sec(100))}, now: now,
			rows: []oracle.Row{oracle.RowCreate}, want: created(now, oracle.ExecPending, now, withNonce(5)),
		},
		{
			name: "3.3.3 create, D14: doc.nonce > 0 but no DataSet → now",
			trig: oracle.Create{Doc: doc(withNonce(5)), Self: self}, now: now,
			rows: []oracle.Row{oracle.RowCreate}, want: created(now, oracle.ExecPending, now, withNonce(5)),
		},
		{
			name: "3.3.3 create, D14: doc.nonce = 0 ignores a block time",
			trig: oracle.Create{Doc: doc(), Self: self, LastBlockTime: now}, now: now,
			rows: []oracle.Row{oracle.RowCreate}, want: created(now, oracle.ExecPending, now),
		},
		{
			name: "3.3.3 create: own submission for doc.nonce + 1 on chain → Completed, now + 24 h (D3)",
			trig: oracle.Create{Doc: doc(withNonce(5)), Self: self, SelfSubmitted: true, LastBlockTime: now}, now: now,
			rows: []oracle.Row{oracle.RowCreateSubmitted}, want: created(now, oracle.ExecCompleted, now.Add(24*time.Hour), withNonce(5)),
			effects: []oracle.Effect{&oracle.ArmWatchdog{At: now.Add(24 * time.Hour)}},
		},
		{
			name: "3.3.1 create: any status is stored (PAUSED)",
			trig: oracle.Create{Doc: doc(withStatus(oracle.StatusPaused)), Self: self}, now: now,
			rows: []oracle.Row{oracle.RowCreate}, want: created(now, oracle.ExecPending, now, withStatus(oracle.StatusPaused)),
		},
		{
			name: "3.3.1 create: self not in account_list → no job",
			trig: oracle.Create{Doc: doc(withAccounts(peerA, peerB)), Self: self}, now: now,
		},
		{
			name: "3.3.1 create, D8: no endpoints → no job",
			trig: oracle.Create{Doc: doc(withEndpoints()), Self: self}, now: now,
		},
		{
			name: "D8: endpoint = endpoints[AssignedIndex mod len]: index 2 of 2 endpoints → endpoint 0",
			trig: oracle.Create{Doc: doc(withAccounts(peerA, peerB, self)), Self: self}, now: now,
			rows: []oracle.Row{oracle.RowCreate},
			want: job(func(j *oracle.Job) {
				j.Nonce, j.NextRunTime, j.CreatedAt, j.UpdatedAt = 0, now, now, now
				j.URL, j.ParseRule = "http://src/r/7/e/0", "data.price"
				j.AccountList, j.AssignedIndex = []string{peerA, peerB, self}, 2
			}),
		},
		{
			name: "D8: AssignedIndex is the first position of self",
			trig: oracle.Create{Doc: doc(withAccounts(self, peerA, self)), Self: self}, now: now,
			rows: []oracle.Row{oracle.RowCreate},
			want: job(func(j *oracle.Job) {
				j.Nonce, j.NextRunTime, j.CreatedAt, j.UpdatedAt = 0, now, now, now
				j.URL, j.ParseRule = "http://src/r/7/e/0", "data.price"
				j.AccountList, j.AssignedIndex = []string{self, peerA, self}, 0
			}),
		},
		{
			name: "D9: Create on an existing job is an Update: Nonce, NextRunTime and state are kept",
			job:  job(jExec(oracle.ExecCompleted), jNext(at(time.Hour))),
			trig: oracle.Create{Doc: doc(withNonce(9), withPeriod(60)), Self: self}, now: now,
			rows: []oracle.Row{oracle.RowUpdate},
			want: job(jExec(oracle.ExecCompleted), jNext(at(time.Hour)), func(j *oracle.Job) {
				j.Period, j.UpdatedAt = sec(60), now
			}),
			effects: []oracle.Effect{oracle.RecheckResults{}},
		},
	})
}

func TestCreateDoesNotShareTheDocSlices(t *testing.T) {
	d := doc()
	o := Transition(nil, oracle.Create{Doc: d, Self: self}, t0)
	d.AccountList[0] = "guru1mutated"
	require.Equal(t, peerA, o.Job.AccountList[0])
}

func TestTransitionSelect(t *testing.T) {
	now := at(sec(10))
	selected := func(opts ...func(*oracle.Job)) *oracle.Job {
		return job(append(opts, func(j *oracle.Job) {
			j.Exec.Status, j.Exec.ExecNonce, j.Exec.StartedAt = oracle.ExecExecuting, j.Nonce, now
		})...)
	}
	runTransitions(t, []transitionCase{
		{name: "3.3.2 ready Pending → Executing, ExecNonce = Nonce", job: job(), trig: oracle.Select{}, now: now,
			rows: []oracle.Row{oracle.RowSelect}, want: selected()},
		{name: "3.3.2 NextRunTime = now is ready", job: job(jNext(now)), trig: oracle.Select{}, now: now,
			rows: []oracle.Row{oracle.RowSelect}, want: selected(jNext(now))},
		{name: "3.3.2 Failed is selectable", job: job(jExec(oracle.ExecFailed), jNonce(8)), trig: oracle.Select{}, now: now,
			rows: []oracle.Row{oracle.RowSelect}, want: selected(jNonce(8))},
		{name: "2.5 Scheduled is selectable", job: job(jExec(oracle.ExecScheduled)), trig: oracle.Select{}, now: now,
			rows: []oracle.Row{oracle.RowSelect}, want: selected()},
		{name: "2.5 Cancelled is selectable", job: job(jExec(oracle.ExecCancelled)), trig: oracle.Select{}, now: now,
			rows: []oracle.Row{oracle.RowSelect}, want: selected()},
		{name: "3.3.2 selection clears a stale Superseded flag", job: job(jExec(oracle.ExecFailed), jSuperseded()), trig: oracle.Select{}, now: now,
			rows: []oracle.Row{oracle.RowSelect}, want: selected()},
		{name: "3.3.2 NextRunTime in the future → not selected", job: job(jNext(now.Add(time.Nanosecond))), trig: oracle.Select{}, now: now,
			want: job(jNext(now.Add(time.Nanosecond)))},
		{name: "3.3.2 PAUSED → not selected", job: job(jStatus(oracle.StatusPaused)), trig: oracle.Select{}, now: now,
			want: job(jStatus(oracle.StatusPaused))},
		{name: "3.3.2 DISABLED → not selected", job: job(jStatus(oracle.StatusDisabled)), trig: oracle.Select{}, now: now,
			want: job(jStatus(oracle.StatusDisabled))},
		{name: "3.3.2 Executing → not selected again (D19)", job: job(jExec(oracle.ExecExecuting)), trig: oracle.Select{}, now: now,
			want: job(jExec(oracle.ExecExecuting))},
		{name: "3.3.2 Completed → not selected", job: job(jExec(oracle.ExecCompleted)), trig: oracle.Select{}, now: now,
			want: job(jExec(oracle.ExecCompleted))},
		{name: "2.5 Retrying → not selected", job: job(jExec(oracle.ExecRetrying)), trig: oracle.Select{}, now: now,
			want: job(jExec(oracle.ExecRetrying))},
		{name: "no job → nothing", trig: oracle.Select{}, now: now},
	})
}

func TestTransitionExecutionEnd(t *testing.T) {
	start, now := at(sec(5)), at(sec(12))
	executing := func(opts ...func(*oracle.Job)) *oracle.Job {
		return job(append([]func(*oracle.Job){jExec(oracle.ExecExecuting), jExecNonce(5), jNext(at(0)), func(j *oracle.Job) { j.Exec.StartedAt = start }}, opts...)...)
	}
	ended := func(status oracle.ExecStatus, opts ...func(*oracle.Job)) *oracle.Job {
		return executing(append([]func(*oracle.Job){func(j *oracle.Job) {
			j.Exec.Status, j.Exec.EndedAt, j.LastRunAt = status, now, start
		}}, opts...)...)
	}
	runTransitions(t, []transitionCase{
		{
			name: "3.3.3 superseded: Pending, NextRunTime unchanged, the result discarded",
			job:  executing(jSuperseded(), jNonce(6), jNext(at(sec(40)))),
			trig: oracle.ExecutionEnd{Outcome: oracle.ExecSucceeded, Data: "1.5", StartedAt: start}, now: now,
			rows: []oracle.Row{oracle.RowEndSuperseded}, want: ended(oracle.ExecPending, jNonce(6), jNext(at(sec(40)))),
		},
		{
			name: "3.3.3 superseded: Status ≠ ENABLED (paused while executing) → Pending",
			job:  executing(jStatus(oracle.StatusPaused)),
			trig: oracle.ExecutionEnd{Outcome: oracle.ExecFetchFailed, StartedAt: start}, now: now,
			rows: []oracle.Row{oracle.RowEndSuperseded}, want: ended(oracle.ExecPending, jStatus(oracle.StatusPaused)),
		},
		{
			name: "3.3.3 superseded: an execution dropped before any GET → Pending",
			job:  executing(),
			trig: oracle.ExecutionEnd{Outcome: oracle.ExecDropped}, now: now,
			rows: []oracle.Row{oracle.RowEndSuperseded},
			want: executing(func(j *oracle.Job) { j.Exec.Status, j.Exec.EndedAt = oracle.ExecPending, now }),
		},
		{
			name: "3.3.3 fetch failed → Failed, FailureCount++, now + 1 min",
			job:  executing(),
			trig: oracle.ExecutionEnd{Outcome: oracle.ExecFetchFailed, Error: "503", StartedAt: start}, now: now,
			rows: []oracle.Row{oracle.RowFetchFailed},
			want: ended(oracle.ExecFailed, jNext(now.Add(time.Minute)), func(j *oracle.Job) {
				j.Exec.Error, j.LastError, j.FailureCount = "503", "503", 1
			}),
		},
		{
			name: "3.3.3 parse failed → Failed, FailureCount++, now + 5 min",
			job:  executing(),
			trig: oracle.ExecutionEnd{Outcome: oracle.ExecParseFailed, Error: "no key", StartedAt: start}, now: now,
			rows: []oracle.Row{oracle.RowParseFailed},
			want: ended(oracle.ExecFailed, jNext(now.Add(5*time.Minute)), func(j *oracle.Job) {
				j.Exec.Error, j.LastError, j.FailureCount = "no key", "no key", 1
			}),
		},
		{
			name: "3.4 an empty value is a parse failure",
			job:  executing(),
			trig: oracle.ExecutionEnd{Outcome: oracle.ExecSucceeded, Data: "", StartedAt: start}, now: now,
			rows: []oracle.Row{oracle.RowParseFailed},
			want: ended(oracle.ExecFailed, jNext(now.Add(5*time.Minute)), func(j *oracle.Job) {
				j.Exec.Error, j.LastError, j.FailureCount = "empty value", "empty value", 1
			}),
		},
		{
			name: "3.3.3 success → Completed, RunCount++, result for ExecNonce + 1, watchdog at now + 24 h",
			job:  executing(),
			trig: oracle.ExecutionEnd{Outcome: oracle.ExecSucceeded, Data: "101.5", StartedAt: start}, now: now,
			rows: []oracle.Row{oracle.RowSucceeded},
			want: ended(oracle.ExecCompleted, jNext(now.Add(24*time.Hour)), func(j *oracle.Job) { j.RunCount = 1 }),
			effects: []oracle.Effect{
				&oracle.QueueResult{Result: oracle.JobResult{JobID: "req_7", RequestID: 7, Data: "101.5", Nonce: 6, ExecutedAt: start, Duration: sec(7)}},
				&oracle.ArmWatchdog{At: now.Add(24 * time.Hour)},
			},
		},
		{
			name: "3.3.3 success: the result's round comes from ExecNonce, not the current Nonce",
			job:  executing(jExecNonce(3)),
			trig: oracle.ExecutionEnd{Outcome: oracle.ExecSucceeded, Data: "x", StartedAt: start}, now: now,
			rows: []oracle.Row{oracle.RowSucceeded},
			want: ended(oracle.ExecCompleted, jExecNonce(3), jNext(now.Add(24*time.Hour)), func(j *oracle.Job) { j.RunCount = 1 }),
			effects: []oracle.Effect{
				&oracle.QueueResult{Result: oracle.JobResult{JobID: "req_7", RequestID: 7, Data: "x", Nonce: 4, ExecutedAt: start, Duration: sec(7)}},
				&oracle.ArmWatchdog{At: now.Add(24 * time.Hour)},
			},
		},
		{
			name: "3.3.1 removed job: the result is discarded",
			trig: oracle.ExecutionEnd{Outcome: oracle.ExecSucceeded, Data: "1"}, now: now,
		},
		{
			name: "an end for a job that is not Executing changes nothing",
			job:  job(jExec(oracle.ExecPending)),
			trig: oracle.ExecutionEnd{Outcome: oracle.ExecSucceeded, Data: "1"}, now: now,
			want: job(jExec(oracle.ExecPending)),
		},
	})
}

func TestTransitionSubmissionGaveUp(t *testing.T) {
	now := at(sec(50))
	waiting := func(opts ...func(*oracle.Job)) *oracle.Job {
		return job(append([]func(*oracle.Job){jExec(oracle.ExecCompleted), jNext(at(24 * time.Hour))}, opts...)...)
	}
	result := oracle.JobResult{JobID: "req_7", RequestID: 7, Data: "1", Nonce: 6}
	runTransitions(t, []transitionCase{
		{
			name: "3.3.3, D7: gave up, result not stale → Failed, now + 1 min",
			job:  waiting(), trig: oracle.SubmissionGaveUp{Result: result, Self: self, Reason: "code 13"}, now: now,
			rows: []oracle.Row{oracle.RowGaveUp},
			want: waiting(jExec(oracle.ExecFailed), jNext(now.Add(time.Minute)), func(j *oracle.Job) {
				j.Exec.Error, j.LastError = "code 13", "code 13"
			}),
		},
		{
			name: "3.3.3: stale result (a Complete moved Nonce on) → unchanged",
			job:  waiting(jNonce(6), jExec(oracle.ExecPending)), trig: oracle.SubmissionGaveUp{Result: result, Self: self}, now: now,
			want: waiting(jNonce(6), jExec(oracle.ExecPending)),
		},
		{
			name: "3.5 stale: request no longer ENABLED → unchanged",
			job:  waiting(jStatus(oracle.StatusPaused)), trig: oracle.SubmissionGaveUp{Result: result, Self: self}, now: now,
			want: waiting(jStatus(oracle.StatusPaused)),
		},
		{
			name: "3.5 stale: self no longer assigned → unchanged",
			job:  waiting(func(j *oracle.Job) { j.AccountList = []string{peerA} }), trig: oracle.SubmissionGaveUp{Result: result, Self: self}, now: now,
			want: waiting(func(j *oracle.Job) { j.AccountList = []string{peerA} }),
		},
		{
			name: "a job that is executing again keeps its state",
			job:  waiting(jExec(oracle.ExecExecuting)), trig: oracle.SubmissionGaveUp{Result: result, Self: self}, now: now,
			want: waiting(jExec(oracle.ExecExecuting)),
		},
		{name: "no job → nothing", trig: oracle.SubmissionGaveUp{Result: result, Self: self}, now: now},
	})
}

func TestTransitionComplete(t *testing.T) {
	now := at(sec(100))
	runTransitions(t, []transitionCase{
		{
			name: "3.3.3 Complete(n > Nonce): Nonce = n, Pending, NextRunTime bt + Period",
			job:  job(jExec(oracle.ExecCompleted), jNext(at(24*time.Hour))),
			trig: oracle.Complete{Nonce: 6, BlockTime: now.Add(-sec(10))}, now: now,
			rows: []oracle.Row{oracle.RowComplete}, want: job(jNonce(6), jNext(now.Add(sec(20)))),
			effects: []oracle.Effect{oracle.RecheckResults{}},
		},
		{
			name: "D16: bt + Period in the past is clamped to now (a delayed frame)",
			job:  job(jExec(oracle.ExecCompleted)),
			trig: oracle.Complete{Nonce: 6, BlockTime: now.Add(-sec(45))}, now: now,
			rows: []oracle.Row{oracle.RowComplete}, want: job(jNonce(6), jNext(now)),
			effects: []oracle.Effect{oracle.RecheckResults{}},
		},
		{
			name: "F16: a block time ahead of the clock is honoured",
			job:  job(jExec(oracle.ExecCompleted)),
			trig: oracle.Complete{Nonce: 6, BlockTime: now.Add(sec(5))}, now: now,
			rows: []oracle.Row{oracle.RowComplete}, want: job(jNonce(6), jNext(now.Add(sec(35)))),
			effects: []oracle.Effect{oracle.RecheckResults{}},
		},
		{
			name: "D12: Complete while Executing → Superseded, still Executing",
			job:  job(jExec(oracle.ExecExecuting), jExecNonce(5)),
			trig: oracle.Complete{Nonce: 6, BlockTime: now}, now: now,
			rows:    []oracle.Row{oracle.RowComplete},
			want:    job(jExec(oracle.ExecExecuting), jExecNonce(5), jSuperseded(), jNonce(6), jNext(now.Add(sec(30)))),
			effects: []oracle.Effect{oracle.RecheckResults{}},
		},
		{
			name: "3.3.1 Complete on a Failed job → Pending",
			job:  job(jExec(oracle.ExecFailed), jNext(at(sec(160)))),
			trig: oracle.Complete{Nonce: 6, BlockTime: now}, now: now,
			rows: []oracle.Row{oracle.RowComplete}, want: job(jNonce(6), jNext(now.Add(sec(30)))),
			effects: []oracle.Effect{oracle.RecheckResults{}},
		},
		{
			name: "D11: n > Nonce + 1 (missed rounds) is accepted as is",
			job:  job(jExec(oracle.ExecCompleted)),
			trig: oracle.Complete{Nonce: 9, BlockTime: now}, now: now,
			rows: []oracle.Row{oracle.RowComplete}, want: job(jNonce(9), jNext(now.Add(sec(30)))),
			effects: []oracle.Effect{oracle.RecheckResults{}},
		},
		{
			name: "3.3.3 Complete on a PAUSED job still moves its Nonce",
			job:  job(jStatus(oracle.StatusPaused)),
			trig: oracle.Complete{Nonce: 6, BlockTime: now}, now: now,
			rows: []oracle.Row{oracle.RowComplete}, want: job(jStatus(oracle.StatusPaused), jNonce(6), jNext(now.Add(sec(30)))),
			effects: []oracle.Effect{oracle.RecheckResults{}},
		},
		{
			name: "D11: n = Nonce (duplicate) → ignored",
			job:  job(jExec(oracle.ExecCompleted), jNext(at(time.Hour))),
			trig: oracle.Complete{Nonce: 5, BlockTime: now}, now: now,
			rows: []oracle.Row{oracle.RowCompleteStale}, want: job(jExec(oracle.ExecCompleted), jNext(at(time.Hour))),
		},
		{
			name: "D11: n < Nonce (reordered) → ignored",
			job:  job(jExec(oracle.ExecExecuting)),
			trig: oracle.Complete{Nonce: 2, BlockTime: now}, now: now,
			rows: []oracle.Row{oracle.RowCompleteStale}, want: job(jExec(oracle.ExecExecuting)),
		},
		{name: "3.3.1 no job → ignored", trig: oracle.Complete{Nonce: 6, BlockTime: now}, now: now},
	})
}

func TestTransitionUpdate(t *testing.T) {
	now := at(sec(70))
	newEndpoints := withEndpoints(oracle.Endpoint{URL: "http://new/0", ParseRule: "a"}, oracle.Endpoint{URL: "http://new/1", ParseRule: "b.c"}, oracle.Endpoint{URL: "http://new/2", ParseRule: "d"})
	gone := (*oracle.RequestDoc)(nil)
	ptr := func(d oracle.RequestDoc) *oracle.RequestDoc { return &d }
	runTransitions(t, []transitionCase{
		{
			name: "3.3.1, D10: Update sets URL, ParseRule, Period, Status, AccountList, AssignedIndex and nothing else",
			job:  job(jExec(oracle.ExecCompleted), jNext(at(24*time.Hour)), jExecNonce(5)),
			trig: oracle.Update{Doc: ptr(doc(newEndpoints, withPeriod(90), withStatus(oracle.StatusPaused), withAccounts(peerA, peerB, self), withNonce(42))), Self: self},
			now:  now, rows: []oracle.Row{oracle.RowUpdate},
			want: job(jExec(oracle.ExecCompleted), jNext(at(24*time.Hour)), jExecNonce(5), func(j *oracle.Job) {
				j.URL, j.ParseRule = "http://new/2", "d"
				j.Period, j.Status, j.UpdatedAt = sec(90), oracle.StatusPaused, now
				j.AccountList, j.AssignedIndex = []string{peerA, peerB, self}, 2
			}),
			effects: []oracle.Effect{oracle.RecheckResults{}},
		},
		{
			name: "D10: a bogus higher nonce in the doc never moves Nonce or re-arms the job",
			job:  job(jExec(oracle.ExecCompleted), jNext(at(24*time.Hour))),
			trig: oracle.Update{Doc: ptr(doc(withNonce(99))), Self: self}, now: now,
			rows:    []oracle.Row{oracle.RowUpdate},
			want:    job(jExec(oracle.ExecCompleted), jNext(at(24*time.Hour)), func(j *oracle.Job) { j.UpdatedAt = now }),
			effects: []oracle.Effect{oracle.RecheckResults{}},
		},
		{
			name: "3.3.1 DISABLED doc: the job is kept and stops running",
			job:  job(), trig: oracle.Update{Doc: ptr(doc(withStatus(oracle.StatusDisabled))), Self: self}, now: now,
			rows: []oracle.Row{oracle.RowUpdate}, want: job(jStatus(oracle.StatusDisabled), func(j *oracle.Job) { j.UpdatedAt = now }),
			effects: []oracle.Effect{oracle.RecheckResults{}},
		},
		{
			name: "3.3.1 self left account_list → removed",
			job:  job(jExec(oracle.ExecCompleted)), trig: oracle.Update{Doc: ptr(doc(withAccounts(peerA, peerB))), Self: self}, now: now,
			rows: []oracle.Row{oracle.RowRemove}, effects: []oracle.Effect{oracle.RecheckResults{}},
		},
		{
			name: "3.3.1 removed while Executing → the execution is aborted at once",
			job:  job(jExec(oracle.ExecExecuting)), trig: oracle.Update{Doc: ptr(doc(withAccounts(peerA))), Self: self}, now: now,
			rows: []oracle.Row{oracle.RowRemove}, effects: []oracle.Effect{oracle.AbortExecution{}, oracle.RecheckResults{}},
		},
		{
			name: "3.3.1 endpoints empty → removed",
			job:  job(), trig: oracle.Update{Doc: ptr(doc(withEndpoints())), Self: self}, now: now,
			rows: []oracle.Row{oracle.RowRemove}, effects: []oracle.Effect{oracle.RecheckResults{}},
		},
		{
			name: "3.3.4 doc gone → removed",
			job:  job(), trig: oracle.Update{Doc: gone, Self: self}, now: now,
			rows: []oracle.Row{oracle.RowRemove}, effects: []oracle.Effect{oracle.RecheckResults{}},
		},
		{name: "Update on an absent job does nothing (Create handles D9)", trig: oracle.Update{Doc: ptr(doc()), Self: self}, now: now},
	})
}

func TestTransitionReconcile(t *testing.T) {
	now := at(sec(300))
	runTransitions(t, []transitionCase{
		{
			name: "3.3.4 no job, assigned doc → create",
			trig: oracle.Reconcile{Doc: doc(withNonce(5)), Self: self, LastBlockTime: now.Add(-sec(5))}, now: now,
			rows: []oracle.Row{oracle.RowCreate}, want: created(now, oracle.ExecPending, now.Add(sec(25)), withNonce(5)),
		},
		{
			name: "3.8 no job, own submission already on chain → Completed, never re-submitted",
			trig: oracle.Reconcile{Doc: doc(withNonce(5)), Self: self, SelfSubmitted: true}, now: now,
			rows: []oracle.Row{oracle.RowCreateSubmitted}, want: created(now, oracle.ExecCompleted, now.Add(24*time.Hour), withNonce(5)),
			effects: []oracle.Effect{&oracle.ArmWatchdog{At: now.Add(24 * time.Hour)}},
		},
		{
			name: "3.3.4 no job, unassigned doc → nothing",
			trig: oracle.Reconcile{Doc: doc(withAccounts(peerA)), Self: self}, now: now,
		},
		{
			name: "3.3.4 job, doc.nonce = Nonce → Update rule only",
			job:  job(jExec(oracle.ExecCompleted), jNext(at(time.Hour))),
			trig: oracle.Reconcile{Doc: doc(withNonce(5), withPeriod(60)), Self: self}, now: now,
			rows:    []oracle.Row{oracle.RowUpdate},
			want:    job(jExec(oracle.ExecCompleted), jNext(at(time.Hour)), func(j *oracle.Job) { j.Period, j.UpdatedAt = sec(60), now }),
			effects: []oracle.Effect{oracle.RecheckResults{}},
		},
		{
			name: "3.3.4 job, doc.nonce < Nonce → Update rule only",
			job:  job(jNonce(8)),
			trig: oracle.Reconcile{Doc: doc(withNonce(5)), Self: self}, now: now,
			rows: []oracle.Row{oracle.RowUpdate}, want: job(jNonce(8), func(j *oracle.Job) { j.UpdatedAt = now }),
			effects: []oracle.Effect{oracle.RecheckResults{}},
		},
		{
			name: "3.3.4, D25: job, doc.nonce > Nonce → Update and act as Complete(doc.nonce, lastBT)",
			job:  job(jExec(oracle.ExecCompleted), jNext(at(24*time.Hour))),
			trig: oracle.Reconcile{Doc: doc(withNonce(7)), Self: self, LastBlockTime: now.Add(-sec(10))}, now: now,
			rows:    []oracle.Row{oracle.RowUpdate, oracle.RowComplete},
			want:    job(jNonce(7), jNext(now.Add(sec(20))), func(j *oracle.Job) { j.UpdatedAt = now }),
			effects: []oracle.Effect{oracle.RecheckResults{}, oracle.RecheckResults{}},
		},
		{
			name: "3.3.3 as Complete without OracleData: lastBT = now − Period → NextRunTime now",
			job:  job(jExec(oracle.ExecCompleted), jNext(at(24*time.Hour))),
			trig: oracle.Reconcile{Doc: doc(withNonce(7)), Self: self}, now: now,
			rows:    []oracle.Row{oracle.RowUpdate, oracle.RowComplete},
			want:    job(jNonce(7), jNext(now), func(j *oracle.Job) { j.UpdatedAt = now }),
			effects: []oracle.Effect{oracle.RecheckResults{}, oracle.RecheckResults{}},
		},
		{
			name: "3.3.4 job, doc.nonce > Nonce while Executing → Superseded",
			job:  job(jExec(oracle.ExecExecuting)),
			trig: oracle.Reconcile{Doc: doc(withNonce(6)), Self: self, LastBlockTime: now}, now: now,
			rows:    []oracle.Row{oracle.RowUpdate, oracle.RowComplete},
			want:    job(jExec(oracle.ExecExecuting), jSuperseded(), jNonce(6), jNext(now.Add(sec(30))), func(j *oracle.Job) { j.UpdatedAt = now }),
			effects: []oracle.Effect{oracle.RecheckResults{}, oracle.RecheckResults{}},
		},
		{
			name: "3.3.4 job, listed doc no longer assigned → removed",
			job:  job(),
			trig: oracle.Reconcile{Doc: doc(withNonce(9), withAccounts(peerA)), Self: self}, now: now,
			rows: []oracle.Row{oracle.RowRemove}, effects: []oracle.Effect{oracle.RecheckResults{}},
		},
	})
}

func TestTransitionWatchdog(t *testing.T) {
	due := at(24 * time.Hour)
	now := due.Add(sec(1))
	waiting := func(opts ...func(*oracle.Job)) *oracle.Job {
		return job(append([]func(*oracle.Job){jExec(oracle.ExecCompleted), jNext(due)}, opts...)...)
	}
	ptr := func(d oracle.RequestDoc) *oracle.RequestDoc { return &d }
	runTransitions(t, []transitionCase{
		{
			name: "D13: chain moved on (doc.nonce > Nonce) → as Complete(doc.nonce, lastBT)",
			job:  waiting(), trig: oracle.Watchdog{Doc: ptr(doc(withNonce(8))), Self: self, LastBlockTime: now.Add(-sec(20))}, now: now,
			rows:    []oracle.Row{oracle.RowUpdate, oracle.RowComplete},
			want:    job(jNonce(8), jNext(now.Add(sec(10))), func(j *oracle.Job) { j.UpdatedAt = now }),
			effects: []oracle.Effect{oracle.RecheckResults{}, oracle.RecheckResults{}},
		},
		{
			name: "D13: chain moved on, OracleData failed → NextRunTime now",
			job:  waiting(), trig: oracle.Watchdog{Doc: ptr(doc(withNonce(8))), Self: self}, now: now,
			rows:    []oracle.Row{oracle.RowUpdate, oracle.RowComplete},
			want:    job(jNonce(8), jNext(now), func(j *oracle.Job) { j.UpdatedAt = now }),
			effects: []oracle.Effect{oracle.RecheckResults{}, oracle.RecheckResults{}},
		},
		{
			name: "D13: round still open, own submission missing (evicted) → Failed, NextRunTime now",
			job:  waiting(), trig: oracle.Watchdog{Doc: ptr(doc(withNonce(5))), Self: self}, now: now,
			rows: []oracle.Row{oracle.RowUpdate, oracle.RowWatchdogRerun},
			want: waiting(jExec(oracle.ExecFailed), jNext(now), func(j *oracle.Job) {
				j.UpdatedAt, j.Exec.Error = now, "watchdog: own submission missing on chain"
			}),
			effects: []oracle.Effect{oracle.RecheckResults{}},
		},
		{
			name: "D13: round still open, own submission on chain → wait another 24 h",
			job:  waiting(), trig: oracle.Watchdog{Doc: ptr(doc(withNonce(5))), Self: self, SelfSubmitted: true}, now: now,
			rows:    []oracle.Row{oracle.RowUpdate, oracle.RowWatchdogWait},
			want:    waiting(jNext(now.Add(24*time.Hour)), func(j *oracle.Job) { j.UpdatedAt = now }),
			effects: []oracle.Effect{oracle.RecheckResults{}, &oracle.ArmWatchdog{At: now.Add(24 * time.Hour)}},
		},
		{
			name: "D13: the fresh doc unassigns self → removed",
			job:  waiting(), trig: oracle.Watchdog{Doc: ptr(doc(withAccounts(peerA))), Self: self}, now: now,
			rows: []oracle.Row{oracle.RowRemove}, effects: []oracle.Effect{oracle.RecheckResults{}},
		},
		{
			name: "D13: the doc is gone → removed",
			job:  waiting(), trig: oracle.Watchdog{Self: self}, now: now,
			rows: []oracle.Row{oracle.RowRemove}, effects: []oracle.Effect{oracle.RecheckResults{}},
		},
		{
			name: "D13: not due yet → nothing",
			job:  waiting(), trig: oracle.Watchdog{Doc: ptr(doc(withNonce(8))), Self: self}, now: due.Add(-time.Nanosecond),
			want: waiting(),
		},
		{
			name: "D13: a job that is not Completed → nothing",
			job:  waiting(jExec(oracle.ExecFailed)), trig: oracle.Watchdog{Doc: ptr(doc(withNonce(8))), Self: self}, now: now,
			want: waiting(jExec(oracle.ExecFailed)),
		},
		{name: "no job → nothing", trig: oracle.Watchdog{Doc: ptr(doc()), Self: self}, now: now},
	})
}

func TestWatchdogDue(t *testing.T) {
	due := at(time.Hour)
	require.True(t, WatchdogDue(*job(jExec(oracle.ExecCompleted), jNext(due)), due))
	require.True(t, WatchdogDue(*job(jExec(oracle.ExecCompleted), jNext(due)), due.Add(time.Second)))
	require.False(t, WatchdogDue(*job(jExec(oracle.ExecCompleted), jNext(due)), due.Add(-time.Nanosecond)))
	require.False(t, WatchdogDue(*job(jExec(oracle.ExecPending), jNext(due)), due))
	require.False(t, WatchdogDue(*job(jExec(oracle.ExecExecuting), jNext(due)), due))
}

// A whole round through the table: create, select, succeed, Complete, and
// the next round waits for bt + Period.
func TestTransitionRoundTrip(t *testing.T) {
	o := Transition(nil, oracle.Create{Doc: doc(), Self: self}, t0)
	require.True(t, Ready(o.Job, t0))
	o = Transition(o.Job, oracle.Select{}, t0)
	require.False(t, Ready(o.Job, t0.Add(time.Hour)), "an Executing job is never ready")
	o = Transition(o.Job, oracle.ExecutionEnd{Outcome: oracle.ExecSucceeded, Data: "3", StartedAt: t0}, at(sec(1)))
	require.Equal(t, uint64(1), o.Effects[0].(*oracle.QueueResult).Result.Nonce)
	require.False(t, Ready(o.Job, at(23*time.Hour)), "a Completed job waits for Complete")
	o = Transition(o.Job, oracle.Complete{Nonce: 1, BlockTime: at(sec(4))}, at(sec(5)))
	require.False(t, Ready(o.Job, at(sec(33))))
	require.True(t, Ready(o.Job, at(sec(34))))
	o = Transition(o.Job, oracle.Select{}, at(sec(34)))
	require.Equal(t, uint64(1), o.Job.Exec.ExecNonce)
}
