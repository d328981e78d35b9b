package decide

import (
	"errors"
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts"
)

// Input is what the StateReconciler knows of one workspace on one tick.
type Input struct {
	// Row is the workspace as the reconcile listing read it.
	Row *contracts.Workspace
	// Now is the tick's time.
	Now time.Time
	// LastInvoked is when this leader last invoked the actuator calls of
	// the row's operation in progress (zero if it has not since it became
	// leader, or for another operation or claim): see Reconcile.
	LastInvoked time.Time
	// NewID draws an op_id. A claim draws one (whether or not the claim
	// uses it), and so does an ARCHIVING that finds none; nothing else
	// does.
	NewID func() string
}

// Decision is the StateReconciler's whole decision for one workspace on
// one tick (SPEC 4.2), as data: the step it takes (Kind, Op, Why) and the
// actions that carry it out, in order. The shell carries them out one
// after the other (check the lease, act, record) and decides nothing: the
// values only an action's answer gives (a restore marker, an archive key,
// a failed call's error) go through pure functions of the decision
// (Write.PatchFor, Failure.Patch).
type Decision struct {
	Step
	// Actions are the claim, completion or ERROR entry that opens the
	// step, then, when the step invokes the operation's actuator calls, an
	// Invoke and the calls, each after a lease re-check (SPEC 3.1), with
	// the writes that record their answers.
	Actions []Action
	// Again: the last action's answer decides what comes next (ARCHIVING's
	// upload commits whatever key the storage gave): once every action
	// is carried out, the shell asks Continue for the rest of the walk.
	Again bool
	// Failure records a failed actuator call (SPEC 4.2.4); it applies
	// from the Invoke on.
	Failure Failure
}

// ActionKind says what an Action does.
type ActionKind int

// Action kinds.
const (
	// DoTouch stamps last_access_at through the API service layer (the
	// completion of RESTORING, STARTING and STOPPING, SPEC 4.2.2).
	DoTouch ActionKind = iota
	// DoWrite makes Write as the StateReconciler.
	DoWrite
	// DoInvoke marks the start of the operation's actuator calls: the
	// leader notes that it invoked them (SPEC 4.2.2, "Resuming"), and a
	// failed call from here on is recorded as Failure says.
	DoInvoke
	// DoCheckLease re-checks the leader lock: every actuator call follows
	// one (SPEC 3.1).
	DoCheckLease
	// DoCall invokes an actuator call.
	DoCall
)

var actionNames = [...]string{"touch", "write", "invoke", "check-lease", "call"}

func (k ActionKind) String() string {
	if int(k) < len(actionNames) {
		return actionNames[k]
	}
	return fmt.Sprintf("action(%d)", int(k))
}

// Action is one thing the shell does.
type Action struct {
	Kind  ActionKind
	Write Write // for DoWrite
	Call  Call  // for DoCall
}

// Write is one compare-and-set write of the StateReconciler.
type Write struct {
	Cond  contracts.Cond
	Patch contracts.Patch
	// Answer names what of the previous call's answer the write records,
	// on top of Patch (PatchFor).
	Answer Answer
	// Settles: the write changes the operation in progress (a claim, a
	// completion, an ERROR entry). When it applies, the leader forgets
	// its invocation of the previous operation and publishes
	// monitor:trigger (a hint, C2); when it does not, the tick ends for
	// this workspace.
	Settles bool
	// Required: when the write does not apply the operation changed under
	// the reconciler, and the tick ends for this workspace with an error.
	Required bool
}

// Answer is what of a call's answer a write records.
type Answer int

// Answers.
const (
	// AnswerNone: the write records nothing of an answer.
	AnswerNone Answer = iota
	// AnswerRestoreMarker: Restore's marker, as home_ctx.restore_marker.
	AnswerRestoreMarker
	// AnswerArchiveKey: Archive's key, committed with ArchiveCommitPatch.
	AnswerArchiveKey
)

// PatchFor is the patch to write once the previous call answered answer.
func (w Write) PatchFor(answer string) contracts.Patch {
	switch w.Answer {
	case AnswerRestoreMarker:
		return contracts.Patch{HomeCtx: contracts.Some(&contracts.HomeCtx{RestoreMarker: answer})}
	case AnswerArchiveKey:
		return ArchiveCommitPatch(answer)
	}
	return w.Patch
}

// Port names an actuator call.
type Port int

// Actuator calls (ports.Storage and ports.Instances).
const (
	CallProvision Port = iota
	CallRestore
	CallArchive
	CallStart
	CallDeleteInstance
	CallDeleteVolume
)

var portNames = [...]string{"Provision", "Restore", "Archive", "Start", "DeleteInstance", "DeleteVolume"}

func (p Port) String() string {
	if int(p) < len(portNames) {
		return portNames[p]
	}
	return fmt.Sprintf("port(%d)", int(p))
}

// Call is one actuator call and its arguments.
type Call struct {
	Port Port
	// Workspace is the workspace the call is for.
	Workspace string
	// Image is Start's image; ArchiveKey is Restore's archive; OpID is
	// Archive's op_id.
	Image, ArchiveKey, OpID string
}

// Reconcile is the StateReconciler's decision for one workspace on one
// tick: SPEC 4.2's steps 1–5 (completion, timeout, ERROR entry, resume
// or retry, choice and claim) and everything each step writes and calls.
// A leader that has not invoked the operation's actuator calls since it
// became leader resumes by invoking them (4.2.2, "Resuming"); otherwise
// it only re-invokes them as a retry, once a failure recorded after its
// last invocation is RetryInterval old (4.2.4).
func Reconcile(in Input) Decision {
	w := in.Row
	d := Decision{Step: classify(w, in.Now, in.LastInvoked)}
	switch d.Kind {
	case StepClaim:
		claim := Write{Cond: ClaimCond(d.Op), Patch: ClaimPatch(w, d.Op, in.Now, in.NewID()), Settles: true}
		// The calls are those of the row as the claim leaves it.
		after := w.Clone()
		claim.Patch.Apply(&after, in.Now)
		d.Actions = append(d.Actions, Action{Kind: DoWrite, Write: claim})
		d.execute(&after, in.Now, in.NewID)
	case StepComplete:
		if StampsLastAccess(w.Operation) {
			d.Actions = append(d.Actions, Action{Kind: DoTouch})
		}
		d.Actions = append(d.Actions, Action{Kind: DoWrite, Write: Write{Cond: opCond(w.Operation), Patch: CompletePatch(w), Settles: true}})
	case StepTimeout:
		d.Actions = append(d.Actions, Action{Kind: DoWrite, Write: Write{Cond: opCond(w.Operation), Patch: ErrorEntryPatch(w, TimeoutInfo(w, in.Now)), Settles: true}})
	case StepEnterError:
		d.Actions = append(d.Actions, Action{Kind: DoWrite, Write: Write{Cond: opCond(w.Operation), Patch: ErrorEntryPatch(w, EntryInfo(w, in.Now)), Settles: true}})
	case StepExecute:
		d.execute(w, in.Now, in.NewID)
	}
	return d
}

// Continue is the rest of an operation's actuator calls once a decision
// that asked for it (Again) is carried out, from the row as its writes
// left it: no Invoke (the calls go on under the same invocation).
func Continue(w *contracts.Workspace, now time.Time, newID func() string) Decision {
	d := Decision{Step: Step{Kind: StepExecute, Op: w.Operation, Why: "continue"}}
	d.calls(w, newID)
	d.Failure = FailureOf(w, now)
	return d
}

// execute appends the Invoke and the calls of w's operation.
func (d *Decision) execute(w *contracts.Workspace, now time.Time, newID func() string) {
	d.Actions = append(d.Actions, Action{Kind: DoInvoke})
	d.calls(w, newID)
	d.Failure = FailureOf(w, now)
}

// calls appends the actuator calls of w's operation (SPEC 4.2.2), each
// after a lease re-check, and the writes that record their answers.
func (d *Decision) calls(w *contracts.Workspace, newID func() string) {
	id := w.ID
	switch w.Operation {
	case contracts.OpProvisioning:
		d.call(Call{Port: CallProvision, Workspace: id})
	case contracts.OpRestoring:
		d.call(Call{Port: CallProvision, Workspace: id})
		d.call(Call{Port: CallRestore, Workspace: id, ArchiveKey: w.ArchiveKey})
		// The marker is recorded if the operation is still RESTORING; a
		// write that finds another has nothing to record.
		d.write(Write{Cond: opCond(contracts.OpRestoring), Answer: AnswerRestoreMarker})
	case contracts.OpStarting:
		d.call(Call{Port: CallStart, Workspace: id, Image: w.ImageRef})
	case contracts.OpStopping:
		d.call(Call{Port: CallDeleteInstance, Workspace: id})
	case contracts.OpArchiving:
		d.archive(w, newID)
	case contracts.OpDeleting:
		d.call(Call{Port: CallDeleteInstance, Workspace: id})
		d.call(Call{Port: CallDeleteVolume, Workspace: id})
	}
}

// archive walks ARCHIVING from wherever it stands (SPEC 4.2.2 and its
// resume rules): op_id committed first, then the archive, then
// archive_key, then the container (if any is left over) and only then the
// volume (C8). The archive's key is the storage's answer: the walk goes on
// from the row its commit leaves (Again).
func (d *Decision) archive(w *contracts.Workspace, newID func() string) {
	opID := w.OpID
	action := NextArchiveAction(w)
	if action == ArchiveEnsureOpID {
		opID = newID()
		d.write(Write{Cond: opCond(contracts.OpArchiving), Patch: contracts.Patch{OpID: contracts.Some(opID)}, Required: true})
		after := *w
		after.OpID = opID
		action = NextArchiveAction(&after)
	}
	switch action {
	case ArchiveUpload:
		d.call(Call{Port: CallArchive, Workspace: w.ID, OpID: opID})
		d.write(Write{Cond: opCond(contracts.OpArchiving), Answer: AnswerArchiveKey, Required: true})
		d.Again = true
	case ArchiveDeleteVolume:
		d.call(Call{Port: CallDeleteInstance, Workspace: w.ID})
		d.call(Call{Port: CallDeleteVolume, Workspace: w.ID})
	}
}

// call appends c after a lease re-check.
func (d *Decision) call(c Call) {
	d.Actions = append(d.Actions, Action{Kind: DoCheckLease}, Action{Kind: DoCall, Call: c})
}

func (d *Decision) write(w Write) { d.Actions = append(d.Actions, Action{Kind: DoWrite, Write: w}) }

// opCond conditions a write on the operation still being the one the
// reconciler acts on.
func opCond(op contracts.Operation) contracts.Cond {
	return contracts.Cond{Operation: contracts.Some(op)}
}

// Failure is how a failed actuator call is recorded (SPEC 4.2.4): what
// of the row FailurePatch reads, and the time.
type Failure struct {
	Operation  contracts.Operation
	ErrorCount int
	Observed   contracts.ObservedStatus
	At         time.Time
}

// FailureOf is the failure rule of w's operation at now.
func FailureOf(w *contracts.Workspace, now time.Time) Failure {
	return Failure{Operation: w.Operation, ErrorCount: w.ErrorCount, Observed: w.ObservedStatus, At: now}
}

// Cond is the condition of the failure's write: the operation is still
// the one that failed.
func (f Failure) Cond() contracts.Cond { return opCond(f.Operation) }

// Record is the write that records cause, an error met while carrying out
// the operation's calls, and ok reports whether it is one to record: an
// actuator's failure (a contracts.ProviderError, or the provider being
// unavailable) is; anything else (a failed DB write) is not, and the tick
// ends for the workspace without a write. The write settles the operation
// when the failure is terminal (the ERROR entry, Patch).
func (f Failure) Record(cause error) (w Write, ok bool) {
	var pe *contracts.ProviderError
	if !errors.As(cause, &pe) && !errors.Is(cause, contracts.ErrUnavailable) {
		return Write{}, false
	}
	var ctx map[string]any
	if pe != nil {
		ctx = pe.Context // Patch copies it
	}
	p, terminal := f.Patch(contracts.CodeOf(cause), cause.Error(), ctx)
	return Write{Cond: f.Cond(), Patch: p, Settles: terminal}, true
}
