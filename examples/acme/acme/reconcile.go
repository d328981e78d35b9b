package acme

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts"
)

// reconcileAll is one StateReconciler pass (SPEC 4.2): every workspace,
// from the DB alone. A failure on one workspace skips it for this pass;
// losing the leadership ends the pass. It returns the adaptive period for
// the next one.
func (c *coordinator) reconcileAll(ctx context.Context) (time.Duration, error) {
	// Every row, not just the reconcile index: an unrestored STANDBY
	// workspace is at its desired state yet still needs a RESTORING.
	rows, err := c.deps.Store.List(ctx, contracts.FilterAll)
	if err != nil {
		return 0, fmt.Errorf("state reconciler: list workspaces: %w", err)
	}
	busy := false
	for i := range rows {
		w := &rows[i]
		if w.ObservedStatus == contracts.ObservedDeleted && w.Operation == contracts.OpNone {
			continue // step 1: terminal
		}
		claimed, err := c.reconcile(ctx, w)
		busy = busy || claimed
		if err != nil {
			if deposed(err) {
				return 0, err
			}
			c.log.Warn("workspace skipped this pass", "workspace", w.ID, "err", err)
		}
	}
	if busy {
		return periodBusy, nil
	}
	return period(rows), nil
}

// reconcile is SPEC 4.2's steps 2–5 for one workspace; claimed reports
// whether it started an operation.
func (c *coordinator) reconcile(ctx context.Context, w *contracts.Workspace) (claimed bool, err error) {
	if inError(w) {
		switch {
		case w.Deleted() && w.Operation == contracts.OpNone:
			// Deletion is retried at the retry pace, not in a spin.
			if w.ErrorInfo != nil && c.now().Sub(w.ErrorInfo.OccurredAt) < retryInterval {
				return false, nil
			}
			return c.claim(ctx, w, contracts.OpDeleting)
		case w.Deleted() && w.Operation == contracts.OpDeleting:
			return false, c.progress(ctx, w)
		case w.Operation != contracts.OpNone:
			return false, c.enterError(ctx, w, errorOnEntry(w, c.now()), nil)
		}
		return false, nil // C11: skip
	}
	if w.Operation != contracts.OpNone {
		return false, c.progress(ctx, w)
	}
	op, ok := choose(w)
	if !ok {
		return false, nil
	}
	return c.claim(ctx, w, op)
}

// errorOnEntry is the terminal error_info an operation is ended with when
// the workspace turned out to be in ERROR while it ran: the terminal
// error_info it carries, or, for health ERROR without one (the
// HealthMonitor found a container without volume but error_info was
// already taken by a pending retry), that violation.
func errorOnEntry(w *contracts.Workspace, now time.Time) *contracts.ErrorInfo {
	if w.Terminal() {
		e := w.ErrorInfo.Clone()
		return &e
	}
	e := containerWithoutVolume(now)
	e.Operation = w.Operation
	return e
}

// claim starts op on w by compare-and-set (SPEC 4.2 step 5, C4) and, if
// it won, makes the operation's actuator calls at once.
func (c *coordinator) claim(ctx context.Context, w *contracts.Workspace, op contracts.Operation) (bool, error) {
	now := c.now()
	p := contracts.Patch{
		Operation:   contracts.Some(op),
		OpStartedAt: contracts.Some(now),
		ErrorCount:  contracts.Some(0),
	}
	switch {
	case op == contracts.OpArchiving:
		// The op_id is committed with the claim, before anything else:
		// the one an ERROR entry kept, if any (SPEC 4.2.2).
		p.OpID = contracts.Some(w.OpID)
		if w.OpID == "" {
			p.OpID = contracts.Some(archiveOpID(w, c.deps.IDs.NewID))
		}
	case w.OpID != "":
		// An op_id kept by an ERROR entry protected an archive that is
		// no longer needed: the volume may change from now on.
		p.OpID = contracts.Some("")
	}
	if op == contracts.OpRestoring {
		// A marker left from an earlier restore of the same key must not
		// complete this one before it has restored anything.
		p.HomeCtx = contracts.Some[*contracts.HomeCtx](nil)
	}
	cond := contracts.Cond{
		Operation:    contracts.Some(contracts.OpNone),
		DesiredState: contracts.Some(w.DesiredState),
		NotDeleted:   !w.Deleted(),
		NotTerminal:  op != contracts.OpDeleting,
	}
	ok, err := c.deps.Store.Update(ctx, c.writer(contracts.CompStateReconciler), w.ID, cond, p)
	if err != nil {
		return false, fmt.Errorf("claim %s: %w", op, err)
	}
	if !ok {
		return false, nil // the row moved on: next pass
	}
	c.trigger(ctx, w.ID)
	p.Apply(w, now)
	return true, c.execute(ctx, w)
}

// progress is SPEC 4.2 step 3 for an operation in progress: completion
// first, then the timeout, then resuming or retrying it.
func (c *coordinator) progress(ctx context.Context, w *contracts.Workspace) error {
	now := c.now()
	if completed(w) {
		return c.complete(ctx, w)
	}
	if elapsed := now.Sub(w.OpStartedAt); elapsed > timeout(w.Operation) {
		return c.enterError(ctx, w, &contracts.ErrorInfo{
			Reason:     contracts.ReasonTimeout,
			Message:    fmt.Sprintf("%s did not complete within %s", w.Operation, timeout(w.Operation)),
			IsTerminal: true,
			Operation:  w.Operation,
			ErrorCount: w.ErrorCount,
			Context:    map[string]any{"operation": string(w.Operation), "elapsed_seconds": int64(elapsed / time.Second)},
			OccurredAt: now,
		}, nil)
	}
	if e := w.ErrorInfo; e != nil && !e.IsTerminal && now.Sub(e.OccurredAt) < retryInterval {
		return nil // a retry waits 30 s after the failure
	}
	if at, ok := c.failedAt[w.ID]; ok && now.Sub(at) < retryInterval {
		return nil
	}
	if c.term.invoked[w.ID] == attemptOf(w) {
		return nil // already invoked: wait for the observation or the timeout
	}
	return c.execute(ctx, w)
}

// execute makes the actuator calls of w's operation, in SPEC 4.2.2's
// order, re-checking the lease before each. They are idempotent, so a
// leader resuming an operation another one began simply makes them again.
func (c *coordinator) execute(ctx context.Context, w *contracts.Workspace) error {
	at := attemptOf(w)
	err := c.actuate(ctx, w)
	var failed *actionError
	switch {
	case errors.As(err, &failed):
		c.failedAt[w.ID] = c.now()
		delete(c.term.invoked, w.ID)
		return c.recordFailure(ctx, w, failed)
	case err != nil:
		return err
	}
	c.term.invoked[w.ID] = at
	return nil
}

// actionError is a failed actuator call.
type actionError struct {
	action string
	err    error
}

func (e *actionError) Error() string { return e.action + ": " + e.err.Error() }
func (e *actionError) Unwrap() error { return e.err }

// call makes one actuator call, after re-checking the lease.
func (c *coordinator) call(ctx context.Context, action string, f func() error) error {
	if err := c.checkLease(ctx); err != nil {
		return err
	}
	if err := f(); err != nil {
		return &actionError{action: action, err: err}
	}
	return nil
}

func (c *coordinator) actuate(ctx context.Context, w *contracts.Workspace) error {
	id := w.ID
	inst, stor := c.deps.Instances, c.deps.Storage
	provision := func() error { return stor.Provision(ctx, id) }
	removeContainer := func() error { return inst.Delete(ctx, id) }
	removeVolume := func() error { return stor.DeleteVolume(ctx, id) }
	switch w.Operation {
	case contracts.OpProvisioning:
		return c.call(ctx, "provision", provision)
	case contracts.OpRestoring:
		if err := c.call(ctx, "provision", provision); err != nil {
			return err
		}
		var marker string
		if err := c.call(ctx, "restore", func() (err error) {
			marker, err = stor.Restore(ctx, id, w.ArchiveKey)
			return err
		}); err != nil {
			return err
		}
		return c.reconcilerWrite(ctx, w, contracts.Patch{HomeCtx: contracts.Some(&contracts.HomeCtx{RestoreMarker: marker})})
	case contracts.OpStarting:
		if w.ObservedStatus != contracts.ObservedStandby && w.ObservedStatus != contracts.ObservedRunning {
			// C6: never start without a volume. The volume vanished
			// after the claim; the timeout ends the operation.
			return nil
		}
		return c.call(ctx, "start", func() error { return inst.Start(ctx, id, w.ImageRef) })
	case contracts.OpStopping:
		return c.call(ctx, "stop", removeContainer)
	case contracts.OpArchiving:
		if want := contracts.ArchiveKey(id, w.OpID); w.ArchiveKey != want {
			var key string
			if err := c.call(ctx, "archive", func() (err error) {
				key, err = stor.Archive(ctx, id, w.OpID)
				return err
			}); err != nil {
				return err
			}
			// C8: archive_key is committed before the volume goes. The
			// archive is a copy of the volume, so the volume holds it.
			p := contracts.Patch{ArchiveKey: contracts.Some(key), HomeCtx: contracts.Some(&contracts.HomeCtx{RestoreMarker: key})}
			if err := c.reconcilerWrite(ctx, w, p); err != nil {
				return err
			}
		}
		if w.ObservedStatus == contracts.ObservedPending || w.ObservedStatus == contracts.ObservedDeleted {
			return nil // only completion is left
		}
		// A stopped leftover container still holds the volume, and C8
		// wants the container gone first.
		if err := c.call(ctx, "remove container", removeContainer); err != nil {
			return err
		}
		return c.call(ctx, "delete volume", removeVolume)
	case contracts.OpDeleting:
		if err := c.call(ctx, "remove container", removeContainer); err != nil {
			return err
		}
		return c.call(ctx, "delete volume", removeVolume)
	}
	return fmt.Errorf("no actuator for operation %q", w.Operation)
}

// reconcilerWrite writes p to w while its operation is still the one in
// progress, and applies it to w.
func (c *coordinator) reconcilerWrite(ctx context.Context, w *contracts.Workspace, p contracts.Patch) error {
	ok, err := c.deps.Store.Update(ctx, c.writer(contracts.CompStateReconciler), w.ID,
		contracts.Cond{Operation: contracts.Some(w.Operation)}, p)
	switch {
	case err != nil:
		return fmt.Errorf("write %v during %s: %w", p.Columns(), w.Operation, err)
	case !ok:
		return fmt.Errorf("write %v: %s is no longer in progress", p.Columns(), w.Operation)
	}
	p.Apply(w, c.now())
	return nil
}

// recordFailure records a failed actuator call (SPEC 4.2.4): a retried
// error, or the ERROR entry when the error is terminal or the attempts are
// used up.
func (c *coordinator) recordFailure(ctx context.Context, w *contracts.Workspace, failed *actionError) error {
	now := c.now()
	count := w.ErrorCount + 1
	code := codeOf(failed.err)
	reason, terminal := classify(code)
	info := &contracts.ErrorInfo{
		Reason:     reason,
		Message:    failed.Error(),
		IsTerminal: terminal,
		Operation:  w.Operation,
		ErrorCount: count,
		Context:    failureContext(reason, code, failed, w),
		OccurredAt: now,
	}
	if !terminal && count >= maxAttempts {
		info = &contracts.ErrorInfo{
			Reason:     contracts.ReasonRetryExceeded,
			Message:    fmt.Sprintf("%s failed %d times: %s", w.Operation, count, failed.Error()),
			IsTerminal: true,
			Operation:  w.Operation,
			ErrorCount: count,
			Context:    map[string]any{"max_retries": maxAttempts, "last_error": failed.Error()},
			OccurredAt: now,
		}
	}
	if info.IsTerminal {
		return c.enterError(ctx, w, info, &count)
	}
	return c.reconcilerWrite(ctx, w, contracts.Patch{
		ErrorCount:   contracts.Some(count),
		ErrorInfo:    contracts.Some(info),
		ErrorMessage: contracts.Some(info.Message),
	})
}

// codeOf is the SPEC 1.5 code of a provider error; a transport failure
// (no provider error) is an unreachable provider.
func codeOf(err error) contracts.ErrorCode {
	var pe *contracts.ProviderError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return contracts.CodeDockerUnreachable
}

// failureContext is error_info.context for a failure (SPEC 1.5 examples).
func failureContext(reason contracts.Reason, code contracts.ErrorCode, failed *actionError, w *contracts.Workspace) (ctx map[string]any) {
	if reason == contracts.ReasonDataLost { // a failed call's context includes its code too (SPEC 1.5)
		defer func() { ctx["code"] = string(code) }()
	}
	switch reason {
	case contracts.ReasonDataLost:
		return map[string]any{"archive_key": w.ArchiveKey, "detail": string(code)}
	case contracts.ReasonUnreachable:
		return map[string]any{"endpoint": failed.action, "code": string(code)}
	}
	return map[string]any{"action": failed.action, "code": string(code)}
}

// enterError is SPEC 4.2.5's ERROR entry, in one write: the operation
// ends, the terminal error is recorded, op_id is kept (it protects the
// archive, C9). count, when set, is the failure count to record with it.
func (c *coordinator) enterError(ctx context.Context, w *contracts.Workspace, info *contracts.ErrorInfo, count *int) error {
	p := contracts.Patch{
		Operation:      contracts.Some(contracts.OpNone),
		OpStartedAt:    contracts.Some(time.Time{}),
		ErrorInfo:      contracts.Some(info),
		ErrorMessage:   contracts.Some(info.Message),
		PreviousStatus: contracts.Some(w.ObservedStatus),
	}
	if count != nil {
		p.ErrorCount = contracts.Some(*count)
	}
	delete(c.term.invoked, w.ID)
	if err := c.reconcilerWrite(ctx, w, p); err != nil {
		return fmt.Errorf("enter ERROR (%s): %w", info.Reason, err)
	}
	c.trigger(ctx, w.ID)
	return nil
}

// complete ends w's operation once its condition was observed (SPEC
// 4.2.2), stamping last_access_at first where the spec asks.
func (c *coordinator) complete(ctx context.Context, w *contracts.Workspace) error {
	now := c.now()
	if stampsAccess(w.Operation) {
		if err := c.svc.stampAccess(ctx, c.writer(contracts.CompAPI), w, now); err != nil {
			return err
		}
	}
	p := contracts.Patch{
		Operation:    contracts.Some(contracts.OpNone),
		OpStartedAt:  contracts.Some(time.Time{}),
		ErrorCount:   contracts.Some(0),
		ErrorInfo:    contracts.Some[*contracts.ErrorInfo](nil),
		ErrorMessage: contracts.Some(""),
	}
	if w.Operation == contracts.OpArchiving {
		p.OpID = contracts.Some("")
	}
	delete(c.term.invoked, w.ID)
	delete(c.failedAt, w.ID)
	if err := c.reconcilerWrite(ctx, w, p); err != nil {
		return fmt.Errorf("complete: %w", err)
	}
	c.trigger(ctx, w.ID)
	return nil
}
