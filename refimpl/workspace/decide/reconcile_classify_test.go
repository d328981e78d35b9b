package decide

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

func TestClassify(t *testing.T) {
	never := time.Time{}
	expected := contracts.ArchiveKey("w1", "op1")
	in := func(d time.Duration) time.Time { return t0.Add(d) }
	cases := []struct {
		name        string
		w           *contracts.Workspace
		now         time.Time
		lastInvoked time.Time
		kind        StepKind
		op          contracts.Operation
		why         string // checked when set
	}{
		// Step 1.
		{"4.2 step 1: observed DELETED → nothing (terminal)",
			row(withObserved(contracts.ObservedDeleted), withDeleted()), in(time.Minute), never, StepNothing, "", ""},
		{"4.2 step 1: observed DELETED in ERROR → nothing",
			row(withObserved(contracts.ObservedDeleted), withDeleted(), withHealth(contracts.HealthError), withTerminal()), in(time.Minute), never, StepNothing, "", ""},
		{"4.2 step 1: DELETED with DELETING in progress → complete",
			row(withObserved(contracts.ObservedDeleted), withDeleted(), withOp(contracts.OpDeleting)), in(time.Minute), in(time.Second), StepComplete, contracts.OpDeleting, ""},
		{"4.2 step 1: DELETED with DELETING past its timeout → complete (completion first)",
			row(withObserved(contracts.ObservedDeleted), withDeleted(), withOp(contracts.OpDeleting)), in(time.Hour), in(time.Second), StepComplete, contracts.OpDeleting, ""},
		{"4.2 step 1: DELETED with ARCHIVING of a soft-deleted ws, key committed → complete",
			row(withObserved(contracts.ObservedDeleted), withDeleted(), withOp(contracts.OpArchiving), withOpID("op1"), withArchiveKey(expected)), in(time.Minute), in(time.Second), StepComplete, contracts.OpArchiving, ""},
		{"4.2 step 1: DELETED with ARCHIVING whose key is not committed → step 3 waits for it",
			row(withObserved(contracts.ObservedDeleted), withDeleted(), withOp(contracts.OpArchiving), withOpID("op1")), in(time.Minute), in(time.Second), StepWait, contracts.OpArchiving, ""},
		{"4.2 step 1: DELETED with ARCHIVING not invoked by this leader → step 3 resumes it",
			row(withObserved(contracts.ObservedDeleted), withDeleted(), withOp(contracts.OpArchiving), withOpID("op1")), in(time.Minute), never, StepExecute, contracts.OpArchiving, ""},
		{"4.2 step 1: DELETED with ARCHIVING past its timeout → step 3 times it out",
			row(withObserved(contracts.ObservedDeleted), withDeleted(), withOp(contracts.OpArchiving), withOpID("op1")), in(31 * time.Minute), in(time.Second), StepTimeout, contracts.OpArchiving, ""},

		// Step 2.
		{"4.2 step 2: health ERROR, op NONE → skip (C11)",
			row(withObserved(contracts.ObservedStandby), withHealth(contracts.HealthError), withTerminal()), in(time.Minute), never, StepSkipError, "", ""},
		{"4.2 step 2: health ERROR with desired ≠ observed → skip, no claim",
			row(withObserved(contracts.ObservedStandby), withHealth(contracts.HealthError), withDesired(contracts.DesiredRunning)), in(time.Minute), never, StepSkipError, "", ""},
		{"4.2 step 2 + SPEC 9: terminal error_info, health still OK, op NONE → skip",
			row(withObserved(contracts.ObservedStandby), withTerminal()), in(time.Minute), never, StepSkipError, "", ""},
		{"4.2 step 2: soft-deleted ERROR, op NONE → claim DELETING",
			row(withObserved(contracts.ObservedStandby), withHealth(contracts.HealthError), withTerminal(), withDeleted(), withDesired(contracts.DesiredPending)), in(time.Minute), never, StepClaim, contracts.OpDeleting, ""},
		{"4.2 step 2: soft-deleted, terminal error_info, health still OK, op NONE → claim DELETING",
			row(withObserved(contracts.ObservedRunning), withTerminal(), withDeleted(), withDesired(contracts.DesiredPending)), in(time.Minute), never, StepClaim, contracts.OpDeleting, ""},
		{"4.2 step 2: soft-deleted ERROR DELETING continues: not yet invoked → execute",
			row(withHealth(contracts.HealthError), withTerminal(), withDeleted(), withOp(contracts.OpDeleting)), in(time.Minute), never, StepExecute, contracts.OpDeleting, "resume"},
		{"4.2 step 2: soft-deleted ERROR DELETING continues: invoked → wait",
			row(withHealth(contracts.HealthError), withTerminal(), withDeleted(), withOp(contracts.OpDeleting)), in(time.Minute), in(time.Second), StepWait, contracts.OpDeleting, "awaiting observation"},
		{"4.2 step 2 + 4.2.5: soft-deleted ERROR DELETING past 10 min → timeout",
			row(withHealth(contracts.HealthError), withTerminal(), withDeleted(), withOp(contracts.OpDeleting)), in(10*time.Minute + time.Second), in(time.Second), StepTimeout, contracts.OpDeleting, ""},
		{"4.2 step 2: terminal error_info with op STARTING → enter ERROR (4.2.5)",
			row(withObserved(contracts.ObservedStandby), withOp(contracts.OpStarting), withTerminal()), in(time.Minute), in(time.Second), StepEnterError, contracts.OpStarting, ""},
		{"4.2 step 2: terminal error_info with op completed by observation → still enter ERROR",
			row(withObserved(contracts.ObservedRunning), withOp(contracts.OpStarting), withTerminal()), in(time.Minute), in(time.Second), StepEnterError, contracts.OpStarting, ""},
		{"4.2 step 2: health ERROR (no terminal info) with op STARTING → enter ERROR",
			row(withObserved(contracts.ObservedRunning), withHealth(contracts.HealthError), withOp(contracts.OpStarting)), in(time.Minute), in(time.Second), StepEnterError, contracts.OpStarting, ""},
		{"4.2 step 2: soft-deleted ERROR with ARCHIVING (not DELETING) → enter ERROR",
			row(withObserved(contracts.ObservedStandby), withHealth(contracts.HealthError), withTerminal(), withDeleted(), withOp(contracts.OpArchiving), withOpID("op1")), in(time.Minute), in(time.Second), StepEnterError, contracts.OpArchiving, ""},

		// Step 3.
		{"4.2 step 3: completion observed → complete",
			row(withObserved(contracts.ObservedRunning), withOp(contracts.OpStarting)), in(time.Minute), in(time.Second), StepComplete, contracts.OpStarting, ""},
		{"4.2.3: completion checked before timeout",
			row(withObserved(contracts.ObservedRunning), withOp(contracts.OpStarting)), in(time.Hour), in(time.Second), StepComplete, contracts.OpStarting, ""},
		{"4.2.3: past the timeout → timeout",
			row(withObserved(contracts.ObservedStandby), withOp(contracts.OpStarting)), in(5*time.Minute + time.Second), in(time.Second), StepTimeout, contracts.OpStarting, ""},
		{"4.2.3: exactly at the timeout → not yet (wait)",
			row(withObserved(contracts.ObservedStandby), withOp(contracts.OpStarting)), in(5 * time.Minute), in(time.Second), StepWait, contracts.OpStarting, ""},
		{"4.2.3: timeout before retry (a due retry is not made)",
			row(withObserved(contracts.ObservedStandby), withOp(contracts.OpStarting), withCount(1), withError(false, in(time.Minute))), in(6 * time.Minute), in(30 * time.Second), StepTimeout, contracts.OpStarting, ""},
		{"4.2.2 resuming: a leader that has not invoked the calls → execute (resume)",
			row(withObserved(contracts.ObservedStandby), withOp(contracts.OpStarting)), in(time.Minute), never, StepExecute, contracts.OpStarting, "resume"},
		{"4.2.2 resuming: resume after an old retried failure → execute",
			row(withObserved(contracts.ObservedStandby), withOp(contracts.OpStarting), withCount(1), withError(false, t0)), in(time.Minute), never, StepExecute, contracts.OpStarting, "resume"},
		{"4.2.4: resume still honours retry spacing of a fresh failure → wait",
			row(withObserved(contracts.ObservedStandby), withOp(contracts.OpStarting), withCount(1), withError(false, in(50*time.Second))), in(time.Minute), never, StepWait, contracts.OpStarting, "retry spacing"},
		{"4.2.2: invoked, no failure → wait for the observation",
			row(withObserved(contracts.ObservedStandby), withOp(contracts.OpStarting)), in(time.Minute), in(time.Second), StepWait, contracts.OpStarting, "awaiting observation"},
		{"4.2.4: failure after the last invocation, 29 s old → wait",
			row(withObserved(contracts.ObservedStandby), withOp(contracts.OpStarting), withCount(1), withError(false, in(10*time.Second))), in(39 * time.Second), in(5 * time.Second), StepWait, contracts.OpStarting, "retry spacing"},
		{"4.2.4: failure after the last invocation, exactly 30 s old → retry",
			row(withObserved(contracts.ObservedStandby), withOp(contracts.OpStarting), withCount(1), withError(false, in(10*time.Second))), in(40 * time.Second), in(5 * time.Second), StepExecute, contracts.OpStarting, "retry"},
		{"4.2.4: failure at the very instant of the last invocation, 30 s old → retry",
			row(withObserved(contracts.ObservedStandby), withOp(contracts.OpStarting), withCount(1), withError(false, in(5*time.Second))), in(35 * time.Second), in(5 * time.Second), StepExecute, contracts.OpStarting, "retry"},
		{"4.2.4: failure before the last invocation (already retried) → wait",
			row(withObserved(contracts.ObservedStandby), withOp(contracts.OpStarting), withCount(1), withError(false, in(5*time.Second))), in(2 * time.Minute), in(40 * time.Second), StepWait, contracts.OpStarting, "awaiting observation"},
		{"4.2 step 3: never plans a new operation (STARTING while desired PENDING)",
			row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredPending), withOp(contracts.OpStarting)), in(time.Minute), in(time.Second), StepWait, contracts.OpStarting, ""},
		{"4.2 step 3: soft-deleted healthy ARCHIVING continues",
			row(withObserved(contracts.ObservedStandby), withDeleted(), withDesired(contracts.DesiredPending), withOp(contracts.OpArchiving), withOpID("op1")), in(time.Minute), never, StepExecute, contracts.OpArchiving, "resume"},

		// Step 4.
		{"4.2 step 4: PENDING == PENDING → nothing", row(withDesired(contracts.DesiredPending)), in(time.Minute), never, StepNothing, "", "converged"},
		{"4.2 step 4: STANDBY == STANDBY → nothing", row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredStandby)), in(time.Minute), never, StepNothing, "", "converged"},
		{"4.2 step 4: RUNNING == RUNNING → nothing", row(withObserved(contracts.ObservedRunning)), in(time.Minute), never, StepNothing, "", "converged"},
		{"4.2 step 4: a retried error left on a converged row → nothing", row(withObserved(contracts.ObservedRunning), withError(false, t0)), in(time.Minute), never, StepNothing, "", "converged"},
		{"4.2 step 4: soft-deleted PENDING == PENDING is not converged → claim DELETING", row(withDeleted(), withDesired(contracts.DesiredPending)), in(time.Minute), never, StepClaim, contracts.OpDeleting, ""},

		// Step 5.
		{"4.2 step 5: PENDING → RUNNING claims PROVISIONING", row(), in(time.Minute), never, StepClaim, contracts.OpProvisioning, ""},
		{"4.2 step 5: STANDBY → PENDING claims ARCHIVING", row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredPending)), in(time.Minute), never, StepClaim, contracts.OpArchiving, ""},
		{"4.2 step 5: soft-deleted RUNNING claims STOPPING", row(withObserved(contracts.ObservedRunning), withDeleted(), withDesired(contracts.DesiredPending)), in(time.Minute), never, StepClaim, contracts.OpStopping, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := classify(tc.w, tc.now, tc.lastInvoked)
			require.Equal(t, tc.kind, s.Kind, "got %s (%s)", s.Kind, s.Why)
			require.Equal(t, tc.op, s.Op)
			require.NotEmpty(t, s.Why)
			if tc.why != "" {
				require.Equal(t, tc.why, s.Why)
			}
		})
	}
}

func TestClassifyClaimsWhatTheTableChooses(t *testing.T) {
	// Step 5 for every healthy, idle, non-converged row claims exactly
	// ChooseOperation's operation, and the claim's condition holds.
	for _, o := range contracts.AllObserved[:3] {
		for _, d := range contracts.AllDesired {
			for _, k := range []string{"", contracts.ArchiveKey("w1", "op0")} {
				for _, del := range []bool{false, true} {
					w := row(withObserved(o), withDesired(d), withArchiveKey(k))
					if del {
						withDeleted()(w)
					}
					name := fmt.Sprintf("%s desired=%s key=%v deleted=%v", o, d, k != "", del)
					s := classify(w, t0, time.Time{})
					if !del && string(o) == string(d) {
						require.Equal(t, StepNothing, s.Kind, name)
						continue
					}
					require.Equal(t, StepClaim, s.Kind, name)
					require.Equal(t, ChooseOperation(w), s.Op, name)
					require.True(t, ClaimCond(s.Op).Holds(w), name)
				}
			}
		}
	}
}

func TestStepKindString(t *testing.T) {
	names := map[StepKind]string{
		StepNothing: "nothing", StepSkipError: "skip-error", StepEnterError: "enter-error", StepClaim: "claim",
		StepComplete: "complete", StepTimeout: "timeout", StepExecute: "execute", StepWait: "wait",
	}
	for k, n := range names {
		require.Equal(t, n, k.String())
	}
	require.Equal(t, "step(99)", StepKind(99).String())
}

func TestNoClaimWhileAnOperationRuns(t *testing.T) {
	// C4 and 4.2 step 3: with an operation in progress the reconciler
	// never claims another; whatever it does concerns that operation.
	for _, op := range contracts.AllOperations[1:] {
		for _, o := range contracts.AllObserved {
			for _, h := range []contracts.HealthStatus{contracts.HealthOK, contracts.HealthError} {
				for _, d := range contracts.AllDesired {
					for _, del := range []bool{false, true} {
						for _, after := range []time.Duration{time.Second, time.Hour} {
							w := row(withObserved(o), withHealth(h), withDesired(d), withOp(op))
							if del {
								withDeleted()(w)
							}
							for _, last := range []time.Time{{}, t0} {
								s := classify(w, t0.Add(after), last)
								require.NotEqual(t, StepClaim, s.Kind, "%+v", w)
								if s.Kind != StepNothing {
									require.Equal(t, op, s.Op, "%s on %+v", s.Kind, w)
								}
							}
						}
					}
				}
			}
		}
	}
}
