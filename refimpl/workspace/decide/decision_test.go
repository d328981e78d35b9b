package decide

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

var update = flag.Bool("update", false, "rewrite testdata/decisions.golden")

// ids is an op_id source for the tests: "new-op", "new-op-2", …, and
// how many it gave.
type ids struct{ n int }

func (g *ids) next() string {
	g.n++
	if g.n == 1 {
		return "new-op"
	}
	return fmt.Sprintf("new-op-%d", g.n)
}

func lease() Action { return Action{Kind: DoCheckLease} }
func call(p Port, id string) Action {
	return Action{Kind: DoCall, Call: Call{Port: p, Workspace: id}}
}
func write(w Write) Action { return Action{Kind: DoWrite, Write: w} }

// TestReconcileDecisions: a row, the time and this leader's last
// invocation give the whole decision: the opening write, the calls each
// after a lease re-check, the writes of their answers, and how a failure
// is recorded.
func TestReconcileDecisions(t *testing.T) {
	now := t0.Add(time.Minute)
	key := contracts.ArchiveKey("w1", "op1")
	failure := func(w *contracts.Workspace) Failure {
		return Failure{Operation: w.Operation, ErrorCount: w.ErrorCount, Observed: w.ObservedStatus, At: now}
	}
	claimed := func(op contracts.Operation, w *contracts.Workspace) *contracts.Workspace {
		after := w.Clone()
		after.Operation, after.OpStartedAt, after.ErrorCount = op, now, 0
		return &after
	}
	type want struct {
		step    Step
		actions func(w *contracts.Workspace) []Action
		again   bool
		failure func(w *contracts.Workspace) Failure // nil: none
		draws   int
	}
	cases := []struct {
		name        string
		w           *contracts.Workspace
		lastInvoked time.Time
		want        want
	}{
		{"4.2 step 4: converged → nothing to do",
			row(withObserved(contracts.ObservedRunning)), time.Time{},
			want{step: Step{Kind: StepNothing, Why: "converged"}}},
		{"4.2 step 3: in progress and invoked → wait",
			row(withOp(contracts.OpStarting), withObserved(contracts.ObservedStandby)), t0,
			want{step: Step{Kind: StepWait, Op: contracts.OpStarting, Why: "awaiting observation"}}},
		{"4.2.1 PENDING, desired RUNNING → claim PROVISIONING and provision",
			row(), time.Time{},
			want{step: Step{Kind: StepClaim, Op: contracts.OpProvisioning, Why: "observed PENDING, desired RUNNING"},
				actions: func(w *contracts.Workspace) []Action {
					return []Action{
						write(Write{Cond: ClaimCond(contracts.OpProvisioning), Patch: ClaimPatch(w, contracts.OpProvisioning, now, "new-op"), Settles: true}),
						{Kind: DoInvoke}, lease(), call(CallProvision, "w1"),
					}
				},
				failure: func(w *contracts.Workspace) Failure { return failure(claimed(contracts.OpProvisioning, w)) },
				draws:   1}},
		{"4.2.1 PENDING with an archive → claim RESTORING: provision, restore, record the marker",
			row(withArchiveKey(key)), time.Time{},
			want{step: Step{Kind: StepClaim, Op: contracts.OpRestoring, Why: "observed PENDING, desired RUNNING"},
				actions: func(w *contracts.Workspace) []Action {
					return []Action{
						write(Write{Cond: ClaimCond(contracts.OpRestoring), Patch: ClaimPatch(w, contracts.OpRestoring, now, "new-op"), Settles: true}),
						{Kind: DoInvoke}, lease(), call(CallProvision, "w1"),
						lease(), {Kind: DoCall, Call: Call{Port: CallRestore, Workspace: "w1", ArchiveKey: key}},
						write(Write{Cond: opCond(contracts.OpRestoring), Answer: AnswerRestoreMarker}),
					}
				},
				failure: func(w *contracts.Workspace) Failure { return failure(claimed(contracts.OpRestoring, w)) },
				draws:   1}},
		{"4.2.1 STANDBY, desired RUNNING → claim STARTING and start its image",
			row(withObserved(contracts.ObservedStandby)), time.Time{},
			want{step: Step{Kind: StepClaim, Op: contracts.OpStarting, Why: "observed STANDBY, desired RUNNING"},
				actions: func(w *contracts.Workspace) []Action {
					return []Action{
						write(Write{Cond: ClaimCond(contracts.OpStarting), Patch: ClaimPatch(w, contracts.OpStarting, now, "new-op"), Settles: true}),
						{Kind: DoInvoke}, lease(), {Kind: DoCall, Call: Call{Port: CallStart, Workspace: "w1", Image: "img:1"}},
					}
				},
				failure: func(w *contracts.Workspace) Failure { return failure(claimed(contracts.OpStarting, w)) },
				draws:   1}},
		{"4.2.1 STANDBY, desired PENDING → claim ARCHIVING under a new op_id and upload (the walk goes on from the key)",
			row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredPending)), time.Time{},
			want{step: Step{Kind: StepClaim, Op: contracts.OpArchiving, Why: "observed STANDBY, desired PENDING"},
				actions: func(w *contracts.Workspace) []Action {
					return []Action{
						write(Write{Cond: ClaimCond(contracts.OpArchiving), Patch: ClaimPatch(w, contracts.OpArchiving, now, "new-op"), Settles: true}),
						{Kind: DoInvoke}, lease(), {Kind: DoCall, Call: Call{Port: CallArchive, Workspace: "w1", OpID: "new-op"}},
						write(Write{Cond: opCond(contracts.OpArchiving), Answer: AnswerArchiveKey, Required: true}),
					}
				},
				again:   true,
				failure: func(w *contracts.Workspace) Failure { return failure(claimed(contracts.OpArchiving, w)) },
				draws:   1}},
		{"4.2.1 amended: an unrestored volume's ARCHIVING reuses its archive's op_id: nothing to upload, delete the volume",
			row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredPending), withArchiveKey(key)), time.Time{},
			want{step: Step{Kind: StepClaim, Op: contracts.OpArchiving, Why: "observed STANDBY, desired PENDING"},
				actions: func(w *contracts.Workspace) []Action {
					return []Action{
						write(Write{Cond: ClaimCond(contracts.OpArchiving), Patch: ClaimPatch(w, contracts.OpArchiving, now, "new-op"), Settles: true}),
						{Kind: DoInvoke}, lease(), call(CallDeleteInstance, "w1"), lease(), call(CallDeleteVolume, "w1"),
					}
				},
				failure: func(w *contracts.Workspace) Failure { return failure(claimed(contracts.OpArchiving, w)) },
				draws:   1}},
		{"4.2 step 2: a soft-deleted workspace in ERROR → claim DELETING: delete the container, then the volume",
			row(withDeleted(), withHealth(contracts.HealthError), withTerminal()), time.Time{},
			want{step: Step{Kind: StepClaim, Op: contracts.OpDeleting, Why: "soft-deleted workspace in ERROR"},
				actions: func(w *contracts.Workspace) []Action {
					return []Action{
						write(Write{Cond: ClaimCond(contracts.OpDeleting), Patch: ClaimPatch(w, contracts.OpDeleting, now, "new-op"), Settles: true}),
						{Kind: DoInvoke}, lease(), call(CallDeleteInstance, "w1"), lease(), call(CallDeleteVolume, "w1"),
					}
				},
				failure: func(w *contracts.Workspace) Failure { return failure(claimed(contracts.OpDeleting, w)) },
				draws:   1}},
		{"4.2.2 STARTING completes on RUNNING: stamp last_access_at, then write the completion",
			row(withOp(contracts.OpStarting), withObserved(contracts.ObservedRunning)), t0,
			want{step: Step{Kind: StepComplete, Op: contracts.OpStarting, Why: "completion observed"},
				actions: func(w *contracts.Workspace) []Action {
					return []Action{{Kind: DoTouch}, write(Write{Cond: opCond(contracts.OpStarting), Patch: CompletePatch(w), Settles: true})}
				}}},
		{"4.2.2 PROVISIONING completes on STANDBY without a stamp",
			row(withOp(contracts.OpProvisioning), withObserved(contracts.ObservedStandby)), t0,
			want{step: Step{Kind: StepComplete, Op: contracts.OpProvisioning, Why: "completion observed"},
				actions: func(w *contracts.Workspace) []Action {
					return []Action{write(Write{Cond: opCond(contracts.OpProvisioning), Patch: CompletePatch(w), Settles: true})}
				}}},
		{"4.2.3 past its timeout → the ERROR entry",
			row(withOp(contracts.OpStarting), withObserved(contracts.ObservedStandby), withOpStarted(t0.Add(-10*time.Minute))), t0,
			want{step: Step{Kind: StepTimeout, Op: contracts.OpStarting, Why: "exceeded 5m0s"},
				actions: func(w *contracts.Workspace) []Action {
					return []Action{write(Write{Cond: opCond(contracts.OpStarting), Patch: ErrorEntryPatch(w, TimeoutInfo(w, now)), Settles: true})}
				}}},
		{"4.2.5 a terminal error with an operation set → the ERROR entry",
			row(withOp(contracts.OpStarting), withObserved(contracts.ObservedStandby), withTerminal()), t0,
			want{step: Step{Kind: StepEnterError, Op: contracts.OpStarting, Why: "error with an operation in progress"},
				actions: func(w *contracts.Workspace) []Action {
					return []Action{write(Write{Cond: opCond(contracts.OpStarting), Patch: ErrorEntryPatch(w, EntryInfo(w, now)), Settles: true})}
				}}},
		{"4.2.2 resuming: STOPPING not invoked by this leader → delete the container",
			row(withOp(contracts.OpStopping), withObserved(contracts.ObservedRunning)), time.Time{},
			want{step: Step{Kind: StepExecute, Op: contracts.OpStopping, Why: "resume"},
				actions: func(*contracts.Workspace) []Action {
					return []Action{{Kind: DoInvoke}, lease(), call(CallDeleteInstance, "w1")}
				},
				failure: failure}},
		{"4.2.4 retry: a failure after the last invocation, 30 s old → invoke again",
			row(withOp(contracts.OpProvisioning), withCount(1), withError(false, t0.Add(20*time.Second))), t0.Add(10 * time.Second),
			want{step: Step{Kind: StepExecute, Op: contracts.OpProvisioning, Why: "retry"},
				actions: func(*contracts.Workspace) []Action {
					return []Action{{Kind: DoInvoke}, lease(), call(CallProvision, "w1")}
				},
				failure: failure}},
		{"4.2.2 ARCHIVING resume without an op_id: commit a new one first, then upload under it",
			row(withOp(contracts.OpArchiving), withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredPending)), time.Time{},
			want{step: Step{Kind: StepExecute, Op: contracts.OpArchiving, Why: "resume"},
				actions: func(*contracts.Workspace) []Action {
					return []Action{{Kind: DoInvoke},
						write(Write{Cond: opCond(contracts.OpArchiving), Patch: contracts.Patch{OpID: contracts.Some("new-op")}, Required: true}),
						lease(), {Kind: DoCall, Call: Call{Port: CallArchive, Workspace: "w1", OpID: "new-op"}},
						write(Write{Cond: opCond(contracts.OpArchiving), Answer: AnswerArchiveKey, Required: true}),
					}
				},
				again: true, failure: failure, draws: 1}},
		{"4.2.2 ARCHIVING resume with its archive committed: the container, then the volume (C8)",
			row(withOp(contracts.OpArchiving), withObserved(contracts.ObservedStandby), withOpID("op1"), withArchiveKey(key), withMarker(key)), time.Time{},
			want{step: Step{Kind: StepExecute, Op: contracts.OpArchiving, Why: "resume"},
				actions: func(*contracts.Workspace) []Action {
					return []Action{{Kind: DoInvoke}, lease(), call(CallDeleteInstance, "w1"), lease(), call(CallDeleteVolume, "w1")}
				},
				failure: failure}},
		{"4.2.2 ARCHIVING resume with the volume gone: nothing left to call",
			row(withOp(contracts.OpArchiving), withObserved(contracts.ObservedPending), withDeleted(), withOpID("op1")), time.Time{},
			want{step: Step{Kind: StepExecute, Op: contracts.OpArchiving, Why: "resume"},
				actions: func(*contracts.Workspace) []Action {
					return []Action{{Kind: DoInvoke}, lease(), {Kind: DoCall, Call: Call{Port: CallArchive, Workspace: "w1", OpID: "op1"}},
						write(Write{Cond: opCond(contracts.OpArchiving), Answer: AnswerArchiveKey, Required: true})}
				},
				again: true, failure: failure}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.w.Clone()
			g := &ids{}
			d := Reconcile(Input{Row: tc.w, Now: now, LastInvoked: tc.lastInvoked, NewID: g.next})
			require.Equal(t, before, *tc.w, "the decision leaves the row alone")
			want := Decision{Step: tc.want.step, Again: tc.want.again}
			if tc.want.actions != nil {
				want.Actions = tc.want.actions(&before)
			}
			if tc.want.failure != nil {
				want.Failure = tc.want.failure(&before)
			}
			require.Equal(t, want, d)
			require.Equal(t, tc.want.draws, g.n, "op_ids drawn")
		})
	}
}

// TestContinueTheArchiveWalk: the walk goes on from the key the storage
// gave: the expected one leads to the container and the volume; another
// is uploaded again.
func TestContinueTheArchiveWalk(t *testing.T) {
	now := t0.Add(time.Minute)
	key := contracts.ArchiveKey("w1", "op1")
	w := row(withOp(contracts.OpArchiving), withObserved(contracts.ObservedStandby), withOpID("op1"))
	g := &ids{}

	commit := ArchiveCommitPatch(key)
	committed := w.Clone()
	commit.Apply(&committed, now)
	d := Continue(&committed, now, g.next)
	require.Equal(t, Decision{Step: Step{Kind: StepExecute, Op: contracts.OpArchiving, Why: "continue"},
		Actions: []Action{lease(), call(CallDeleteInstance, "w1"), lease(), call(CallDeleteVolume, "w1")},
		Failure: FailureOf(w, now)}, d)

	other := ArchiveCommitPatch("archives/w1/other/home.tar.zst")
	elsewhere := w.Clone()
	other.Apply(&elsewhere, now)
	d = Continue(&elsewhere, now, g.next)
	require.True(t, d.Again)
	require.Equal(t, []Action{lease(), {Kind: DoCall, Call: Call{Port: CallArchive, Workspace: "w1", OpID: "op1"}},
		write(Write{Cond: opCond(contracts.OpArchiving), Answer: AnswerArchiveKey, Required: true})}, d.Actions)
	require.Zero(t, g.n, "no op_id drawn")
}

func TestWritePatchFor(t *testing.T) {
	key := contracts.ArchiveKey("w1", "op1")
	require.Equal(t, contracts.Patch{HomeCtx: contracts.Some(&contracts.HomeCtx{RestoreMarker: key})},
		Write{Answer: AnswerRestoreMarker}.PatchFor(key))
	require.Equal(t, ArchiveCommitPatch(key), Write{Answer: AnswerArchiveKey}.PatchFor(key))
	p := contracts.Patch{OpID: contracts.Some("op1")}
	require.Equal(t, p, Write{Patch: p}.PatchFor("ignored"))
}

// TestFailureIsFailurePatch: the failure a decision carries records a
// failed call as FailurePatch does on the row.
func TestFailureIsFailurePatch(t *testing.T) {
	now := t0.Add(time.Minute)
	for _, w := range []*contracts.Workspace{
		row(withOp(contracts.OpStarting), withObserved(contracts.ObservedStandby)),
		row(withOp(contracts.OpStarting), withObserved(contracts.ObservedStandby), withCount(2), withError(false, t0)),
		row(withOp(contracts.OpRestoring), withCount(1)),
	} {
		for _, code := range contracts.AllErrorCodes {
			ctx := map[string]any{"detail": "d"}
			p, terminal := FailureOf(w, now).Patch(code, "boom", ctx)
			wp, wterminal := FailurePatch(w, code, "boom", ctx, now)
			require.Equal(t, wp, p, code)
			require.Equal(t, wterminal, terminal, code)
		}
	}
}

// TestFailureRecord: an actuator's failure (a ProviderError, wrapped or
// not, or the provider being unavailable) is recorded as Patch says, under
// the failure's condition, settling the operation when it is terminal;
// any other error is not recorded.
func TestFailureRecord(t *testing.T) {
	now := t0.Add(time.Minute)
	w := row(withOp(contracts.OpStarting), withObserved(contracts.ObservedStandby), withCount(1), withError(false, t0))
	f := FailureOf(w, now)
	for _, code := range contracts.AllErrorCodes {
		pe := &contracts.ProviderError{Code: code, Message: "boom", Context: map[string]any{"detail": "d"}}
		for _, cause := range []error{pe, fmt.Errorf("start w1: %w", pe)} {
			got, ok := f.Record(cause)
			require.True(t, ok, code)
			p, terminal := f.Patch(code, cause.Error(), pe.Context)
			require.Equal(t, Write{Cond: opCond(contracts.OpStarting), Patch: p, Settles: terminal}, got, code)
		}
	}
	got, ok := f.Record(fmt.Errorf("list: %w", contracts.ErrUnavailable))
	require.True(t, ok)
	p, terminal := f.Patch(contracts.CodeDockerUnreachable, "list: unavailable", nil)
	require.Equal(t, Write{Cond: opCond(contracts.OpStarting), Patch: p, Settles: terminal}, got)

	for _, cause := range []error{errors.New("write w1: connection reset"), contracts.ErrFenced, contracts.ErrCrashed} {
		got, ok := f.Record(cause)
		require.False(t, ok, cause)
		require.Zero(t, got)
	}
}

// decisionRows are the rows the golden file decides on: every operation
// in every observed status, in and out of ERROR, soft-deleted or not,
// with and without an archive and an op_id, invoked or not.
func decisionRows(visit func(name string, w *contracts.Workspace, lastInvoked time.Time)) {
	key := contracts.ArchiveKey("w1", "op1")
	for _, op := range contracts.AllOperations {
		for _, obs := range contracts.AllObserved {
			for _, health := range []string{"ok", "error", "terminal"} {
				for _, deleted := range []bool{false, true} {
					for _, archive := range []string{"", "op_id", "committed", "restored"} {
						for _, invoked := range []bool{false, true} {
							if op == contracts.OpNone && invoked {
								continue
							}
							w := row(withObserved(obs), withDesired(contracts.DesiredRunning))
							if op != contracts.OpNone {
								withOp(op)(w)
							}
							switch health {
							case "error":
								withHealth(contracts.HealthError)(w)
							case "terminal":
								withHealth(contracts.HealthError)(w)
								withTerminal()(w)
							}
							if deleted {
								withDeleted()(w)
								withDesired(contracts.DesiredPending)(w)
							}
							switch archive {
							case "op_id":
								withOpID("op1")(w)
							case "committed":
								withOpID("op1")(w)
								withArchiveKey(key)(w)
							case "restored":
								withArchiveKey(key)(w)
								withMarker(key)(w)
							}
							var last time.Time
							if invoked {
								last = t0
							}
							name := fmt.Sprintf("%s %s health=%s deleted=%t archive=%s invoked=%t", op, obs, health, deleted, archive, invoked)
							visit(name, w, last)
						}
					}
				}
			}
		}
	}
}

// TestDecisionInvariants: on every row of decisionRows, every call
// follows a lease re-check and the Invoke, a stamp comes first, and a
// claim, a completion or an ERROR entry opens the actions.
func TestDecisionInvariants(t *testing.T) {
	now := t0.Add(time.Minute)
	n := 0
	decisionRows(func(name string, w *contracts.Workspace, last time.Time) {
		n++
		g := &ids{}
		d := Reconcile(Input{Row: w, Now: now, LastInvoked: last, NewID: g.next})
		invoked := false
		for i, a := range d.Actions {
			switch a.Kind {
			case DoCall:
				require.True(t, i > 0 && d.Actions[i-1].Kind == DoCheckLease, "%s: call %d without a lease re-check", name, i)
				require.True(t, invoked, "%s: call before the Invoke", name)
			case DoInvoke:
				invoked = true
			case DoTouch:
				require.Zero(t, i, "%s: the stamp comes first", name)
			}
			if a.Kind == DoWrite && a.Write.Settles {
				require.True(t, i == 0 || d.Actions[i-1].Kind == DoTouch, "%s: a settling write opens the decision", name)
			}
		}
		require.Equal(t, invoked, d.Failure != (Failure{}), "%s: a failure rule exactly when calls are made", name)
		require.LessOrEqual(t, g.n, 1, "%s: at most one op_id drawn", name)
	})
	require.Equal(t, 1248, n)
}

// goldenRows are the rows testdata/decisions.golden decides on: each
// operation in each observed status, healthy and live, without and with
// a committed archive, not invoked by this leader; then the shapes that
// take the other paths (invoked, terminal, soft-deleted, restored).
func goldenRows(visit func(name string, w *contracts.Workspace, lastInvoked time.Time)) {
	decisionRows(func(name string, w *contracts.Workspace, last time.Time) {
		healthy := strings.Contains(name, "health=ok ")
		live := strings.Contains(name, "deleted=false")
		plain := strings.Contains(name, "archive= ") || strings.Contains(name, "archive=committed")
		fresh := strings.HasSuffix(name, "invoked=false")
		other := strings.HasPrefix(name, string(contracts.OpArchiving)+" ") || strings.HasPrefix(name, string(contracts.OpRestoring)+" ") ||
			strings.HasPrefix(name, string(contracts.OpNone)+" ")
		switch {
		case healthy && live && plain && fresh:
		case other && strings.Contains(name, " STANDBY ") && (!healthy || !live || !plain || !fresh) && !strings.Contains(name, "health=error"):
		default:
			return
		}
		visit(name, w, last)
	})
}

// TestDecisionsGolden: the whole decision for every row of goldenRows, as
// text (testdata/decisions.golden; go test -run Golden -update rewrites
// it): a change of any decision shows in review.
func TestDecisionsGolden(t *testing.T) {
	now := t0.Add(time.Minute)
	var b strings.Builder
	goldenRows(func(name string, w *contracts.Workspace, last time.Time) {
		g := &ids{}
		d := Reconcile(Input{Row: w, Now: now, LastInvoked: last, NewID: g.next})
		fmt.Fprintf(&b, "%s\n  → %s\n", name, render(d))
	})
	path := filepath.Join("testdata", "decisions.golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -run Golden -update to write it")
	require.Equal(t, string(want), b.String())
}

// render is a decision as text, one action a line.
func render(d Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", d.Kind)
	if d.Op != contracts.OpNone {
		fmt.Fprintf(&b, " %s", d.Op)
	}
	fmt.Fprintf(&b, " (%s)", d.Why)
	for _, a := range d.Actions {
		b.WriteString("\n      ")
		switch a.Kind {
		case DoWrite:
			b.WriteString("write " + renderWrite(a.Write))
		case DoCall:
			b.WriteString("call " + renderCall(a.Call))
		default:
			b.WriteString(a.Kind.String())
		}
	}
	if d.Again {
		b.WriteString("\n      again from the row the answer leaves")
	}
	if d.Failure != (Failure{}) {
		fmt.Fprintf(&b, "\n      on failure: error_count %d → %d", d.Failure.ErrorCount, d.Failure.ErrorCount+1)
	}
	return b.String()
}

func renderWrite(w Write) string {
	var cols []string
	for _, c := range w.Patch.Columns() {
		v := history.PatchValue(&w.Patch, c)
		if c == contracts.ColErrorInfo && w.Patch.ErrorInfo.V != nil {
			v = string(w.Patch.ErrorInfo.V.Reason)
			if w.Patch.ErrorInfo.V.IsTerminal {
				v += ",terminal"
			}
		}
		cols = append(cols, string(c)+"="+v)
	}
	switch w.Answer {
	case AnswerRestoreMarker:
		cols = append(cols, "home_ctx=restore_marker=<answer>")
	case AnswerArchiveKey:
		cols = append(cols, "archive_key=<answer>", "home_ctx=restore_marker=<answer>")
	}
	s := "[" + history.CondString(&w.Cond) + "] " + strings.Join(cols, " ")
	if w.Settles {
		s += " (settles)"
	}
	if w.Required {
		s += " (required)"
	}
	return s
}

func renderCall(c Call) string {
	args := []string{c.Workspace}
	switch c.Port {
	case CallRestore:
		args = append(args, c.ArchiveKey)
	case CallArchive:
		args = append(args, c.OpID)
	case CallStart:
		args = append(args, c.Image)
	}
	return c.Port.String() + "(" + strings.Join(args, ", ") + ")"
}
