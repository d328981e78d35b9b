package workspace

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	wsref "github.com/wsconverge/converge/refimpl/workspace"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

// Mutant is one broken variant.
type Mutant struct {
	// Name is the bug's stable name (the --mutant flag).
	Name string
	// Contract is the rule it breaks ("C8", "4.2.4", …).
	Contract string
	// Description says what the bug does, in a sentence.
	Description string
	// System builds the mutant.
	System ports.System
}

// entry is one mutant of the catalogue: how it bends the reference.
type entry struct {
	name, contract, desc string
	build                func(b *bend)
}

var entries = []entry{
	{"delete-volume-before-key", "C8", "ARCHIVING deletes the volume before committing archive_key", deleteVolumeBeforeKey},
	{"reconcile-error", "C11", "workspaces in ERROR are reconciled like healthy ones", reconcileError},
	{"gc-ignores-op-id", "C9", "the GC ignores op_id protection of an archive in progress", gcIgnoresOpID},
	{"non-owner-write", "C3", "the reconciler marks a workspace RUNNING itself when it claims STARTING", nonOwnerWrite},
	{"no-cas-claim", "C4", "claims are written without compare-and-set on operation = NONE", noCASClaim},
	{"running-to-pending", "C5", "RUNNING → PENDING is done as one ARCHIVING step", runningToPending},
	{"restore-without-marker", "C7", "RESTORING completes on observed STANDBY without the restore marker", restoreWithoutMarker},
	{"soft-delete-skips-archive", "4.2.1", "a soft-deleted STANDBY workspace is deleted at once instead of archived first", softDeleteSkipsArchive},
	{"early-timeout", "4.2.4", "the reconciler reads op_started_at ten minutes early: operations time out before their time", earlyTimeout},
	{"retry-exceeded-at-once", "4.2.4", "the reconciler reads error_count as 2 while an operation runs: its first failure is its last", retryExceededAtOnce},
	{"marker-made-up", "4.2.2", "RESTORING stores a restore marker of its own making instead of the one restore returned", markerMadeUp},
	{"no-resume", "4.2.2", "a new leader waits for the operations it took over to complete instead of invoking their actuator calls again", noResume},
	{"no-timeouts", "4.2.3", "operations never time out", noTimeouts},
	{"fourth-attempt", "4.2.4", "a failing operation gets a fourth attempt", fourthAttempt},
	{"no-retry-spacing", "4.2.4", "a failed actuator call is retried at once by a client-side retry loop, not 30 s later", noRetrySpacing},
	{"deposed-leader-keeps-acting", "C10", "a deposed leader keeps acting: no lock re-check, writes not fenced", deposedLeaderKeepsActing},
	{"restore-ignores-data-loss", "C12", "a failed restore (checksum mismatch, missing archive) is taken as done", restoreIgnoresDataLoss},
	{"new-op-id-on-retry", "C7", "a retried ARCHIVING takes a new op_id and uploads a second archive", newOpIDOnRetry},
	{"ttl-writes-desired", "C3", "the TTL Manager writes desired_state itself instead of through the API", ttlWritesDesired},
	{"health-running-if-exists", "C1", "the HealthMonitor reports a stopped container as RUNNING", healthRunningIfExists},
	{"gc-no-delay", "C9", "the GC deletes an orphan at first sighting, without the 2 h delay", gcNoDelay},
	{"complete-on-actuator", "C1", "an operation completes when its actuator returns, not when observed", completeOnActuator},
	{"start-without-volume-check", "C6", "a container without its volume is not flagged ERROR", startWithoutVolumeCheck},
	{"gc-leaves-meta", "C9", "the GC deletes an orphaned archive but leaves its .meta", gcLeavesMeta},
	{"gc-deletes-error-archives", "C9", "the GC deletes archives of workspaces in ERROR", gcDeletesErrorArchives},
	{"ttl-ignores-activity", "4.4", "the standby TTL stops workspaces with open connections or a running idle timer", ttlIgnoresActivity},
	{"never-stops", "C12", "the decision table misses RUNNING → STANDBY: a workspace asked to stand by keeps running", neverStops},
	{"no-completion-stamp", "4.2.2", "STARTING, STOPPING and RESTORING complete without the API stamping last_access_at first", noCompletionStamp},
	{"ttl-asleep", "4.4", "the TTL Manager's candidate query finds nothing: no TTL ever expires", ttlAsleep},
	{"create-without-stamp", "4.3", "POST creates a workspace without stamping last_access_at", createWithoutStamp},
	{"recover-keeps-count", "4.3", "the administrator's recovery resets error_info but not error_count", recoverKeepsCount},
	{"desired-in-error", "4.3", "the API accepts a desired-state change on a workspace in ERROR", desiredInError},
	{"delete-keeps-desired", "4.3", "DELETE sets deleted_at but leaves desired_state as it was", deleteKeepsDesired},
	{"wake-any-state", "4.4", "the proxy's auto-wake sets desired RUNNING on an ARCHIVED or PENDING workspace too", wakeAnyState},
	{"ignore-limits", "4.3", "the API accepts desired RUNNING over the per-user and global running limits", ignoreLimits},
	{"claim-without-op-started-at", "4.2.3", "claims set the operation but not op_started_at, so no timeout covers them", claimWithoutOpStartedAt},
	{"stale-last-access", "4.4", "last_access_at is stamped with a time read ten minutes earlier", staleLastAccess},
	{"no-lease-recheck", "C10", "the lock is checked once per tick, not again before each actuator call, and writes carry no fencing epoch (the sources' session lock alone)", noLeaseRecheck},
	{"hint-driven-reconciler", "C2", "the reconciler only looks at workspaces it got a change notification for, until it sees them at rest", hintDrivenReconciler},
	{"failed-listing-as-empty", "C1", "the HealthMonitor reads a failed container listing as \"no containers\"", failedListingAsEmpty},
	{"no-event-listener", "4.6", "no EventListener: change notifications are never forwarded to the bus", noEventListener},
	{"check-then-write", "4.3", "the API checks the running limits with a read, then writes unguarded: concurrent requests each see room", checkThenWrite},
	{"observed-at-on-change", "4.1", "the HealthMonitor writes observed_at only on the workspaces whose status it changes", observedAtOnChange},
	{"busy-poll", "3", "the HealthMonitor counts every workspace as busy: it observes every 2 s whatever the fleet's state", busyPoll},
	{"fixed-30s-poll", "3", "the leader polls every 30 s whatever the fleet's state, instead of adaptive periods", fixedPoll},
	{"gc-timer-forgotten", "4.5", "the GC never finds the orphan timers it started, so it never deletes an orphan", gcTimerForgotten},
	{"archiving-keeps-op-id", "4.2.2", "ARCHIVING completes without clearing op_id", archivingKeepsOpID},
	{"create-defaults-standby", "4.3", "POST without desired_state creates the workspace desired STANDBY, not RUNNING", createDefaultsStandby},
	{"recover-any-health", "4.3", "the recovery endpoint resets any workspace, not only one in ERROR", recoverAnyHealth},
	{"unreachable-terminal-at-once", "1.5", "an unreachable Docker is taken for a failed container create: ERROR at the first failure instead of three attempts", unreachableTerminalAtOnce},
	{"error-count-frozen", "4.2.4", "the reconciler reads error_count as 0: every failure is its first, and it never gives up", errorCountFrozen},
	{"recover-keeps-message", "4.3", "the administrator's recovery resets error_info and error_count but leaves error_message", recoverKeepsMessage},
	{"previous-status-desired", "4.2.5", "the ERROR entry records the desired state as previous_status instead of the observed one", previousStatusDesired},
	{"dataloss-retried", "4.2.4", "a restore that finds its archive missing or corrupt is retried like a failed extraction instead of entering ERROR at once", dataLossRetried},
	{"start-called-again", "4.2.2", "STARTING calls start again once it has succeeded (to make sure), with nothing failed between: an invocation that is no retry", startCalledAgain},
	{"resume-restamps-op-started", "4.2.3", "a leader that resumes an operation it took over writes op_started_at = now first: its timeout starts again at every failover", resumeRestampsOpStarted},
}

// Catalogue returns every mutant, in a stable order. Each is the
// unmodified reference (wsref.NewSystem) with one bug bent in from
// outside: its ports lie to it, or its calls go astray.
func Catalogue() []Mutant {
	out := make([]Mutant, 0, len(entries))
	for _, e := range entries {
		b := &bend{System: wsref.NewSystem(), name: "mutant:" + e.name}
		e.build(b)
		out = append(out, Mutant{Name: e.name, Contract: e.contract, Description: e.desc, System: b})
	}
	return out
}

// Lookup finds a mutant by name.
func Lookup(name string) (Mutant, error) {
	var names []string
	for _, m := range Catalogue() {
		if m.Name == name {
			return m, nil
		}
		names = append(names, m.Name)
	}
	return Mutant{}, fmt.Errorf("no mutant named %q (known: %s)", name, strings.Join(names, ", "))
}

// ---- C8, C7, C12: the storage side ---------------------------------------

type storageHook struct {
	ports.Storage
	archive func(ctx context.Context, id, opID string) (string, error)
	restore func(ctx context.Context, id, key string) (string, error)
	volumes func(ctx context.Context) ([]string, error)
}

func (s storageHook) Archive(ctx context.Context, id, opID string) (string, error) {
	if s.archive != nil {
		return s.archive(ctx, id, opID)
	}
	return s.Storage.Archive(ctx, id, opID)
}

func (s storageHook) Restore(ctx context.Context, id, key string) (string, error) {
	if s.restore != nil {
		return s.restore(ctx, id, key)
	}
	return s.Storage.Restore(ctx, id, key)
}

func (s storageHook) ListVolumes(ctx context.Context) ([]string, error) {
	if s.volumes != nil {
		return s.volumes(ctx)
	}
	return s.Storage.ListVolumes(ctx)
}

// deleteVolumeBeforeKey: the archive step also removes the container and
// the volume, before the coordinator commits archive_key.
func deleteVolumeBeforeKey(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		inner, insts := d.Storage, d.Instances
		d.Storage = storageHook{Storage: inner, archive: func(ctx context.Context, id, opID string) (string, error) {
			key, err := inner.Archive(ctx, id, opID)
			if err != nil {
				return key, err
			}
			if err := insts.Delete(ctx, id); err != nil {
				return "", err
			}
			return key, inner.DeleteVolume(ctx, id)
		}}
		return d
	}
}

// restoreIgnoresDataLoss: a failed restore reports success.
func restoreIgnoresDataLoss(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		inner := d.Storage
		d.Storage = storageHook{Storage: inner, restore: func(ctx context.Context, id, key string) (string, error) {
			marker, err := inner.Restore(ctx, id, key)
			if err != nil && !errors.Is(err, contracts.ErrCrashed) {
				return key, nil
			}
			return marker, err
		}}
		return d
	}
}

// newOpIDOnRetry: a retried ARCHIVING that has not committed its key
// forgets its op_id, so it writes a fresh one and archives again.
func newOpIDOnRetry(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		return withStore(d, func(f contracts.Filter, rows []contracts.Workspace) {
			if f != contracts.FilterReconcile {
				return
			}
			for i := range rows {
				w := &rows[i]
				if w.Operation == contracts.OpArchiving && w.ErrorCount > 0 && w.OpID != "" && w.ArchiveKey != contracts.ArchiveKey(w.ID, w.OpID) {
					w.OpID = ""
				}
			}
		}, nil)
	}
}

// restoreWithoutMarker: the reconciler reads a RESTORING workspace seen
// STANDBY as if its marker were already set, and completes it.
func restoreWithoutMarker(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		return withStore(d, func(f contracts.Filter, rows []contracts.Workspace) {
			if f != contracts.FilterReconcile {
				return
			}
			for i := range rows {
				w := &rows[i]
				if w.Operation == contracts.OpRestoring && w.ObservedStatus == contracts.ObservedStandby {
					w.HomeCtx = &contracts.HomeCtx{RestoreMarker: w.ArchiveKey}
				}
			}
		}, nil)
	}
}

// ---- C11, C5, C12, 4.2.3, 4.2.4: the reconciler's reading and writing -----

// reconcileError: the reconciler reads workspaces in ERROR as healthy.
func reconcileError(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		return withStore(d, func(f contracts.Filter, rows []contracts.Workspace) {
			if f != contracts.FilterReconcile {
				return
			}
			for i := range rows {
				w := &rows[i]
				if (w.HealthStatus == contracts.HealthError || w.Terminal()) && !w.Deleted() && w.Operation == contracts.OpNone {
					w.HealthStatus, w.ErrorInfo = contracts.HealthOK, nil
				}
			}
		}, nil)
	}
}

// runningToPending: a STOPPING claimed to reach PENDING is written as
// ARCHIVING, skipping STANDBY.
func runningToPending(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		store, ids := d.Store, d.IDs
		return withStore(d, nil, func(ctx context.Context, _ *contracts.Writer, id string, c *contracts.Cond, p *contracts.Patch) {
			if !isClaim(c, p) || p.Operation.V != contracts.OpStopping {
				return
			}
			w, err := store.Get(ctx, id)
			if err == nil && w.DesiredState == contracts.DesiredPending && !w.Deleted() {
				p.Operation = contracts.Some(contracts.OpArchiving)
				p.OpID = contracts.Some(ids.NewID())
			}
		})
	}
}

// neverStops: the reconciler reads a RUNNING workspace asked to stand by as
// if it were still wanted RUNNING.
func neverStops(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		return withStore(d, func(f contracts.Filter, rows []contracts.Workspace) {
			if f != contracts.FilterReconcile {
				return
			}
			for i := range rows {
				w := &rows[i]
				if !w.Deleted() && w.DesiredState == contracts.DesiredStandby && w.ObservedStatus == contracts.ObservedRunning {
					w.DesiredState = contracts.DesiredRunning
				}
			}
		}, nil)
	}
}

// noTimeouts: every operation looks as if it had just started.
func noTimeouts(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		clock := d.Clock
		return withStore(d, func(f contracts.Filter, rows []contracts.Workspace) {
			if f != contracts.FilterReconcile {
				return
			}
			for i := range rows {
				if rows[i].Operation != contracts.OpNone {
					rows[i].OpStartedAt = clock.Now()
				}
			}
		}, nil)
	}
}

// noRetrySpacing: the providers' client retries a failed call at once,
// twice more, inside the same tick (a naive retry loop around the SDK).
func noRetrySpacing(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		d.Instances = retryInstances{d.Instances}
		d.Storage = retryStorage{d.Storage}
		return d
	}
}

// again calls f up to three times while it fails with anything but a
// crash.
func again(f func() error) error {
	err := f()
	for i := 0; i < 2 && err != nil && !errors.Is(err, contracts.ErrCrashed); i++ {
		err = f()
	}
	return err
}

type retryInstances struct{ ports.Instances }

func (r retryInstances) Start(ctx context.Context, id, image string) error {
	return again(func() error { return r.Instances.Start(ctx, id, image) })
}

func (r retryInstances) Delete(ctx context.Context, id string) error {
	return again(func() error { return r.Instances.Delete(ctx, id) })
}

type retryStorage struct{ ports.Storage }

func (r retryStorage) Provision(ctx context.Context, id string) error {
	return again(func() error { return r.Storage.Provision(ctx, id) })
}

func (r retryStorage) DeleteVolume(ctx context.Context, id string) error {
	return again(func() error { return r.Storage.DeleteVolume(ctx, id) })
}

func (r retryStorage) Archive(ctx context.Context, id, opID string) (key string, err error) {
	err = again(func() error { key, err = r.Storage.Archive(ctx, id, opID); return err })
	return key, err
}

func (r retryStorage) Restore(ctx context.Context, id, key string) (marker string, err error) {
	err = again(func() error { marker, err = r.Storage.Restore(ctx, id, key); return err })
	return marker, err
}

// fourthAttempt: the third failure is recorded as retryable.
func fourthAttempt(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		return withStore(d, nil, func(_ context.Context, _ *contracts.Writer, _ string, _ *contracts.Cond, p *contracts.Patch) {
			e := p.ErrorInfo.V
			if !p.ErrorInfo.Set || e == nil || e.Reason != contracts.ReasonRetryExceeded || e.ErrorCount != decide.MaxAttempts {
				return
			}
			last, _ := e.Context["last_error"].(string)
			info := contracts.ErrorInfo{
				Reason: contracts.ReasonActionFailed, Message: last, Operation: e.Operation,
				ErrorCount: e.ErrorCount, Context: map[string]any{}, OccurredAt: e.OccurredAt,
			}
			*p = contracts.Patch{ErrorCount: contracts.Some(e.ErrorCount), ErrorInfo: contracts.Some(&info), ErrorMessage: contracts.Some(last)}
		})
	}
}

// softDeleteSkipsArchive: the coordinator reads a soft-deleted STANDBY
// row as if its health were ERROR, so the table sends it to DELETING
// instead of ARCHIVING: its volume, the user's data, goes unarchived.
func softDeleteSkipsArchive(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		return withStore(d, func(_ contracts.Filter, rows []contracts.Workspace) {
			for i := range rows {
				if w := &rows[i]; w.Deleted() && w.ObservedStatus == contracts.ObservedStandby && w.Operation == contracts.OpNone {
					w.HealthStatus = contracts.HealthError
				}
			}
		}, nil)
	}
}

// earlyTimeout: the reconciler's view of a running operation's
// op_started_at is ten minutes older than the row's.
func earlyTimeout(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		return withStore(d, func(_ contracts.Filter, rows []contracts.Workspace) {
			for i := range rows {
				if w := &rows[i]; w.Operation != contracts.OpNone && !w.OpStartedAt.IsZero() {
					w.OpStartedAt = w.OpStartedAt.Add(-10 * time.Minute)
				}
			}
		}, nil)
	}
}

// retryExceededAtOnce: the reconciler's view of a running operation
// shows two failures already, so its first failure exhausts the attempts.
func retryExceededAtOnce(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		return withStore(d, func(_ contracts.Filter, rows []contracts.Workspace) {
			for i := range rows {
				if w := &rows[i]; w.Operation != contracts.OpNone && w.ErrorCount < decide.MaxAttempts-1 {
					w.ErrorCount = decide.MaxAttempts - 1
				}
			}
		}, nil)
	}
}

// markerMadeUp: the restore marker the reconciler stores is not the one
// restore returned (a version suffix of its own), so no restore ever
// completes: each runs into its timeout.
func markerMadeUp(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		return withStore(d, nil, func(_ context.Context, _ *contracts.Writer, _ string, _ *contracts.Cond, p *contracts.Patch) {
			if p.HomeCtx.Set && p.HomeCtx.V != nil && p.HomeCtx.V.RestoreMarker != "" {
				hc := *p.HomeCtx.V
				hc.RestoreMarker += "#v1"
				p.HomeCtx.V = &hc
			}
		})
	}
}

// ---- C3, C4: writers and compare-and-set ---------------------------------

// nonOwnerWrite: claiming STARTING also writes observed_status RUNNING.
func nonOwnerWrite(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		return withStore(d, nil, func(_ context.Context, _ *contracts.Writer, _ string, c *contracts.Cond, p *contracts.Patch) {
			if isClaim(c, p) && p.Operation.V == contracts.OpStarting {
				p.ObservedStatus = contracts.Some(contracts.ObservedRunning)
			}
		})
	}
}

// noCASClaim: claims are written unconditionally.
func noCASClaim(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		return withStore(d, nil, func(_ context.Context, _ *contracts.Writer, _ string, c *contracts.Cond, p *contracts.Patch) {
			if isClaim(c, p) {
				*c = contracts.Cond{}
			}
		})
	}
}

// ttlWritesDesired: the TTL Manager's desired-state change is written as
// its own, not through the API service layer.
func ttlWritesDesired(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		return withStore(d, nil, func(_ context.Context, w *contracts.Writer, _ string, _ *contracts.Cond, p *contracts.Patch) {
			if w.OnBehalf == contracts.CompTTLManager && p.DesiredState.Set {
				*w = contracts.Writer{Component: contracts.CompTTLManager, Instance: w.Instance, Epoch: w.Epoch}
			}
		})
	}
}

// claimWithoutOpStartedAt: a claim's write drops op_started_at.
func claimWithoutOpStartedAt(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		return withStore(d, nil, func(_ context.Context, _ *contracts.Writer, _ string, c *contracts.Cond, p *contracts.Patch) {
			if isClaim(c, p) {
				p.OpStartedAt = contracts.Opt[time.Time]{}
			}
		})
	}
}

// staleLastAccess: the service layer's stamp of last_access_at is a time
// read ten minutes before (a cached "now"), earlier than the stamp it
// replaces when the operation followed the last one quickly.
func staleLastAccess(b *bend) {
	stale := func(d ports.Deps) ports.Deps {
		return withStore(d, nil, func(_ context.Context, _ *contracts.Writer, _ string, _ *contracts.Cond, p *contracts.Patch) {
			if p.LastAccessAt.Set && !p.LastAccessAt.V.IsZero() {
				p.LastAccessAt.V = p.LastAccessAt.V.Add(-10 * time.Minute)
			}
		})
	}
	b.coord, b.api = stale, stale
}

// ---- C10: leadership -----------------------------------------------------

type leaseHook struct {
	ports.Lease
	check func(ctx context.Context) error
}

func (l leaseHook) Check(ctx context.Context) error { return l.check(ctx) }

type leadershipHook struct {
	ports.Leadership
	lease func(ports.Lease) ports.Lease
}

func (l leadershipHook) TryAcquire(ctx context.Context, holder string) (ports.Lease, bool, error) {
	lease, ok, err := l.Leadership.TryAcquire(ctx, holder)
	if lease != nil {
		lease = l.lease(lease)
	}
	return lease, ok, err
}

// deposedLeaderKeepsActing: the lock is never re-checked and writes carry
// no fencing epoch, the observation pass's stamps (MarkObserved) included:
// with those fenced, a real store refuses the deposed leader's first
// HealthMonitor pass and the reference steps down, so the bug would show
// only in a race the successor's compare-and-set claims win.
func deposedLeaderKeepsActing(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		d.Leadership = leadershipHook{Leadership: d.Leadership, lease: func(l ports.Lease) ports.Lease {
			return leaseHook{Lease: l, check: func(ctx context.Context) error {
				// A crashed process still fails: only the lock is ignored.
				if err := l.Check(ctx); errors.Is(err, contracts.ErrCrashed) {
					return err
				}
				return nil
			}}
		}}
		d = withStore(d, nil, func(_ context.Context, w *contracts.Writer, _ string, _ *contracts.Cond, _ *contracts.Patch) {
			w.Epoch = 0
		})
		st := d.Store.(storeHook)
		st.mark = func(w *contracts.Writer) { w.Epoch = 0 }
		d.Store = st
		return d
	}
}

// noLeaseRecheck: the design of the sources, which rely on the session
// lock alone (SPEC 9): the lease answers its first check of each tick (the
// coordinator's Step) truly, and every later one with the answer it gave
// then, so the re-check before each actuator call is skipped; and writes
// carry no fencing epoch. Unlike deposed-leader-keeps-acting, a deposed
// leader stops at its next tick.
func noLeaseRecheck(b *bend) {
	var mu sync.Mutex
	ticks := map[string]*tickLease{}
	b.coord = func(d ports.Deps) ports.Deps {
		t := &tickLease{}
		mu.Lock()
		ticks[d.Instance] = t
		mu.Unlock()
		d.Leadership = leadershipHook{Leadership: d.Leadership, lease: func(l ports.Lease) ports.Lease {
			return leaseHook{Lease: l, check: func(ctx context.Context) error {
				err := l.Check(ctx)
				if errors.Is(err, contracts.ErrCrashed) {
					return err
				}
				t.mu.Lock()
				defer t.mu.Unlock()
				if t.checked {
					return t.answer
				}
				t.checked, t.answer = true, err
				return err
			}}
		}}
		return withStore(d, nil, func(_ context.Context, w *contracts.Writer, _ string, _ *contracts.Cond, _ *contracts.Patch) {
			w.Epoch = 0
		})
	}
	b.wrap = func(c ports.Coordinator, d ports.Deps) ports.Coordinator {
		mu.Lock()
		t := ticks[d.Instance]
		mu.Unlock()
		return tickCoordinator{Coordinator: c, t: t}
	}
}

// tickLease is one instance's lease answer within its current tick.
type tickLease struct {
	mu      sync.Mutex
	checked bool
	answer  error
}

// tickCoordinator starts a new tick of its lease at each Step.
type tickCoordinator struct {
	ports.Coordinator
	t *tickLease
}

func (c tickCoordinator) Step(ctx context.Context) (time.Time, error) {
	c.t.mu.Lock()
	c.t.checked = false
	c.t.mu.Unlock()
	return c.Coordinator.Step(ctx)
}

// hintDrivenReconciler: an edge-triggered reconciler. Every change
// notification the instance's listener receives puts its workspace in a
// work set; the reconciler's listing shows only the workspaces in the set,
// and one leaves it when the reconciler sees it at rest (no operation,
// observed as desired). A lost notification (drop-feed, break-feed, a
// failover before the listener starts) leaves its workspace unreconciled.
func hintDrivenReconciler(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		h := &hints{set: map[string]bool{}}
		d.Feed = hintFeed{ChangeFeed: d.Feed, h: h}
		return withStore(d, func(f contracts.Filter, rows []contracts.Workspace) {
			if f != contracts.FilterReconcile {
				return
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			for i := range rows {
				w := &rows[i]
				if !h.set[w.ID] {
					// Not hinted: the reconciler does not look at it (a row
					// read as terminal ERROR and soft-deleted is left alone
					// by the reference, observed DELETED by every design).
					w.ObservedStatus, w.Operation = contracts.ObservedDeleted, contracts.OpNone
					continue
				}
				if w.Operation == contracts.OpNone && string(w.ObservedStatus) == string(w.DesiredState) && !w.Deleted() {
					delete(h.set, w.ID)
				}
			}
		}, nil)
	}
}

// hints is an instance's set of workspaces with a pending notification.
type hints struct {
	mu  sync.Mutex
	set map[string]bool
}

type hintFeed struct {
	ports.ChangeFeed
	h *hints
}

func (f hintFeed) Listen(ctx context.Context) (ports.Listener, error) {
	l, err := f.ChangeFeed.Listen(ctx)
	if err != nil {
		return l, err
	}
	return hintListener{Listener: l, h: f.h}, nil
}

type hintListener struct {
	ports.Listener
	h *hints
}

func (l hintListener) Poll(ctx context.Context) ([]ports.Change, error) {
	cs, err := l.Listener.Poll(ctx)
	l.h.mu.Lock()
	for _, c := range cs {
		l.h.set[c.WorkspaceID] = true
	}
	l.h.mu.Unlock()
	return cs, err
}

// ---- C1, C6: what the HealthMonitor and the reconciler observe ------------

type instancesHook struct {
	ports.Instances
	list func(ctx context.Context) ([]ports.InstanceState, error)
}

func (i instancesHook) List(ctx context.Context) ([]ports.InstanceState, error) {
	return i.list(ctx)
}

// healthRunningIfExists: every listed container is reported running.
func healthRunningIfExists(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		inner := d.Instances
		d.Instances = instancesHook{Instances: inner, list: func(ctx context.Context) ([]ports.InstanceState, error) {
			l, err := inner.List(ctx)
			for i := range l {
				l[i].Running = true
			}
			return l, err
		}}
		return d
	}
}

// failedListingAsEmpty: a container listing that fails returns no
// containers and no error, as a client that swallows the error would.
func failedListingAsEmpty(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		inner := d.Instances
		d.Instances = instancesHook{Instances: inner, list: func(ctx context.Context) ([]ports.InstanceState, error) {
			l, err := inner.List(ctx)
			if err != nil && !errors.Is(err, contracts.ErrCrashed) {
				return nil, nil
			}
			return l, err
		}}
		return d
	}
}

// startWithoutVolumeCheck: the volume listing also names every workspace
// that has a container, so a container without its volume goes unseen.
func startWithoutVolumeCheck(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		inner, insts := d.Storage, d.Instances
		d.Storage = storageHook{Storage: inner, volumes: func(ctx context.Context) ([]string, error) {
			vols, err := inner.ListVolumes(ctx)
			if err != nil {
				return nil, err
			}
			cs, err := insts.List(ctx)
			if err != nil {
				return nil, err
			}
			for _, c := range cs {
				vols = append(vols, c.WorkspaceID)
			}
			return vols, nil
		}}
		return d
	}
}

// completeOnActuator: a successful actuator call also completes the
// operation at once, as the StateReconciler, without waiting to observe it.
func completeOnActuator(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		var epoch int64
		d.Leadership = leadershipHook{Leadership: d.Leadership, lease: func(l ports.Lease) ports.Lease {
			epoch = l.Epoch()
			return l
		}}
		store := d.Store
		complete := func(ctx context.Context, id string, op contracts.Operation, err error) error {
			if err != nil {
				return err
			}
			w, gerr := store.Get(ctx, id)
			if gerr != nil || w.Operation != op {
				return nil
			}
			wr := contracts.Writer{Component: contracts.CompStateReconciler, Instance: d.Instance, Epoch: epoch}
			_, uerr := store.Update(ctx, wr, id, contracts.Cond{Operation: contracts.Some(w.Operation)}, decide.CompletePatch(&w))
			return uerr
		}
		insts, storage := d.Instances, d.Storage
		d.Instances = actuatorHook{Instances: insts, after: complete}
		d.Storage = storageActuatorHook{Storage: storage, after: complete}
		return d
	}
}

// actuatorHook calls after when Start returns (it completes STARTING).
type actuatorHook struct {
	ports.Instances
	after func(ctx context.Context, id string, op contracts.Operation, err error) error
}

func (a actuatorHook) Start(ctx context.Context, id, image string) error {
	return a.after(ctx, id, contracts.OpStarting, a.Instances.Start(ctx, id, image))
}

// storageActuatorHook calls after when Provision returns (it completes
// PROVISIONING).
type storageActuatorHook struct {
	ports.Storage
	after func(ctx context.Context, id string, op contracts.Operation, err error) error
}

func (s storageActuatorHook) Provision(ctx context.Context, id string) error {
	return s.after(ctx, id, contracts.OpProvisioning, s.Storage.Provision(ctx, id))
}

// observedAtOnChange: the pass's stamp of the workspaces it observed
// unchanged (Store.MarkObserved) never reaches the store; the rows whose
// status changes still get theirs with the change.
func observedAtOnChange(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		d.Store = unstampedStore{d.Store}
		return d
	}
}

type unstampedStore struct{ ports.Store }

func (unstampedStore) MarkObserved(context.Context, contracts.Writer, []string, time.Time) error {
	return nil
}

// ---- C9: the Archive GC --------------------------------------------------

// gcView bends the GC's protection set (the full listing it loads).
func gcView(bendRow func(w *contracts.Workspace)) func(b *bend) {
	return func(b *bend) {
		b.coord = func(d ports.Deps) ports.Deps {
			return withStore(d, func(f contracts.Filter, rows []contracts.Workspace) {
				if f != contracts.FilterAll {
					return
				}
				for i := range rows {
					bendRow(&rows[i])
				}
			}, nil)
		}
	}
}

var (
	// gcIgnoresOpID: the GC does not see op_id.
	gcIgnoresOpID = gcView(func(w *contracts.Workspace) { w.OpID = "" })
	// gcDeletesErrorArchives: the GC sees workspaces in ERROR as healthy.
	gcDeletesErrorArchives = gcView(func(w *contracts.Workspace) {
		if w.HealthStatus == contracts.HealthError || w.Terminal() {
			w.HealthStatus, w.ErrorInfo = contracts.HealthOK, nil
		}
	})
)

type busHook struct {
	ports.Bus
	get func(ctx context.Context, key string) (string, bool, error)
}

func (b busHook) Get(ctx context.Context, key string) (string, bool, error) { return b.get(ctx, key) }

// gcNoDelay: an orphan timer never set reads as started three hours ago.
func gcNoDelay(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		inner, clock := d.Bus, d.Clock
		d.Bus = busHook{Bus: inner, get: func(ctx context.Context, key string) (string, bool, error) {
			v, ok, err := inner.Get(ctx, key)
			if err == nil && !ok && strings.HasPrefix(key, contracts.OrphanTimerKey("")) {
				return strconv.FormatInt(clock.Now().Add(-3*time.Hour).Unix(), 10), true, nil
			}
			return v, ok, err
		}}
		return d
	}
}

// gcTimerForgotten: the GC's reads of its orphan timers find nothing; its
// SETNX then keeps the first timer, which it never reads.
func gcTimerForgotten(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		inner := d.Bus
		d.Bus = busHook{Bus: inner, get: func(ctx context.Context, key string) (string, bool, error) {
			v, ok, err := inner.Get(ctx, key)
			if err == nil && strings.HasPrefix(key, contracts.OrphanTimerKey("")) {
				return "", false, nil
			}
			return v, ok, err
		}}
		return d
	}
}

// gcLeavesMeta: the coordinator's deletes of .meta objects answer
// success and do nothing.
func gcLeavesMeta(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		d.Objects = metaKeepingObjects{d.Objects}
		return d
	}
}

type metaKeepingObjects struct{ ports.Objects }

func (o metaKeepingObjects) Delete(ctx context.Context, key string) error {
	if contracts.IsMetaKey(key) {
		return nil
	}
	return o.Objects.Delete(ctx, key)
}

// ---- 4.4, 4.3: the TTL Manager and the API --------------------------------

// ttlIgnoresActivity: connection counts and idle timers read as absent.
func ttlIgnoresActivity(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		inner := d.Bus
		d.Bus = busHook{Bus: inner, get: func(ctx context.Context, key string) (string, bool, error) {
			if strings.HasPrefix(key, contracts.ConnKey("")) || strings.HasPrefix(key, contracts.IdleTimerKey("")) {
				return "", false, nil
			}
			return inner.Get(ctx, key)
		}}
		return d
	}
}

// ignoreLimits: the API runs with limits nobody reaches.
func ignoreLimits(b *bend) {
	b.api = func(d ports.Deps) ports.Deps {
		d.Limits = contracts.Limits{MaxRunningPerUser: 1 << 30, MaxRunningGlobal: 1 << 30}
		return d
	}
}

// checkThenWrite: the API's guarded writes are a read of the table, the
// limit check on what it read, then a plain write: not serialised with
// other requests' checks and writes.
func checkThenWrite(b *bend) {
	b.api = func(d ports.Deps) ports.Deps {
		d.Store = unguardedStore{d.Store}
		return d
	}
}

type unguardedStore struct{ ports.Store }

func (s unguardedStore) check(ctx context.Context, owner, id string, l contracts.Limits) error {
	rows, err := s.Store.List(ctx, contracts.FilterAll)
	if err != nil {
		return err
	}
	if le := contracts.CheckGuard(l, owner, id, func(yield func(*contracts.Workspace) bool) {
		for i := range rows {
			if !yield(&rows[i]) {
				return
			}
		}
	}); le != nil {
		return le
	}
	return nil
}

func (s unguardedStore) InsertWithinLimits(ctx context.Context, w contracts.Writer, ws contracts.Workspace, l contracts.Limits) error {
	if err := s.check(ctx, ws.OwnerUserID, ws.ID, l); err != nil {
		return err
	}
	return s.Store.Insert(ctx, w, ws)
}

func (s unguardedStore) UpdateWithinLimits(ctx context.Context, w contracts.Writer, id string, c contracts.Cond, p contracts.Patch, l contracts.Limits) (bool, error) {
	row, err := s.Store.Get(ctx, id)
	if err != nil {
		return false, err
	}
	if err := s.check(ctx, row.OwnerUserID, id, l); err != nil {
		return false, err
	}
	return s.Store.Update(ctx, w, id, c, p)
}

// noCompletionStamp: the coordinator's stamp of last_access_at through the
// API service layer, before it clears a completed operation, never
// reaches the store (the store answers as if it had).
func noCompletionStamp(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		d.Store = unstampedCompletions{d.Store}
		return d
	}
}

type unstampedCompletions struct{ ports.Store }

var lastAccessOnly = (&contracts.Patch{LastAccessAt: contracts.Some(time.Time{})}).Mask()

func (s unstampedCompletions) Update(ctx context.Context, w contracts.Writer, id string, c contracts.Cond, p contracts.Patch) (bool, error) {
	if w.Component == contracts.CompAPI && w.OnBehalf == contracts.CompStateReconciler && p.Mask() == lastAccessOnly {
		return true, nil
	}
	return s.Store.Update(ctx, w, id, c, p)
}

// ttlAsleep: the TTL Manager's scan for candidates returns no rows.
func ttlAsleep(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		d.Store = ttlBlindStore{d.Store}
		return d
	}
}

type ttlBlindStore struct{ ports.Store }

func (s ttlBlindStore) Scan(ctx context.Context, f contracts.Filter, fn func(*contracts.Workspace)) error {
	if f == contracts.FilterTTL {
		return s.Store.Scan(ctx, f, func(*contracts.Workspace) {})
	}
	return s.Store.Scan(ctx, f, fn)
}

func (s ttlBlindStore) List(ctx context.Context, f contracts.Filter) ([]contracts.Workspace, error) {
	rows, err := s.Store.List(ctx, f)
	if f == contracts.FilterTTL {
		rows = rows[:0]
	}
	return rows, err
}

// createWithoutStamp: the API's inserts reach the store without
// last_access_at.
func createWithoutStamp(b *bend) {
	b.api = func(d ports.Deps) ports.Deps {
		d.Store = unstampedCreates{d.Store}
		return d
	}
}

type unstampedCreates struct{ ports.Store }

func (s unstampedCreates) Insert(ctx context.Context, w contracts.Writer, ws contracts.Workspace) error {
	ws.LastAccessAt = time.Time{}
	return s.Store.Insert(ctx, w, ws)
}

func (s unstampedCreates) InsertWithinLimits(ctx context.Context, w contracts.Writer, ws contracts.Workspace, l contracts.Limits) error {
	ws.LastAccessAt = time.Time{}
	return s.Store.InsertWithinLimits(ctx, w, ws, l)
}

// unreachableTerminalAtOnce: the coordinator's container calls report
// DOCKER_UNREACHABLE as CONTAINER_CREATE_FAILED, which 1.5 makes terminal
// at once (the history keeps the error the world returned).
func unreachableTerminalAtOnce(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		d.Instances = unreachableAsCreate{d.Instances}
		return d
	}
}

type unreachableAsCreate struct{ ports.Instances }

func asCreateFailure(err error) error {
	var pe *contracts.ProviderError
	if errors.As(err, &pe) && pe.Code == contracts.CodeDockerUnreachable {
		return &contracts.ProviderError{Code: contracts.CodeContainerCreate, Message: pe.Message, Context: pe.Context}
	}
	return err
}

func (i unreachableAsCreate) Start(ctx context.Context, id, imageRef string) error {
	return asCreateFailure(i.Instances.Start(ctx, id, imageRef))
}

func (i unreachableAsCreate) Delete(ctx context.Context, id string) error {
	return asCreateFailure(i.Instances.Delete(ctx, id))
}

// errorCountFrozen: the reconciler's rows read error_count 0 while an
// operation runs, so each failure it records is its first.
func errorCountFrozen(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		return withStore(d, func(_ contracts.Filter, rows []contracts.Workspace) {
			for i := range rows {
				if w := &rows[i]; w.Operation != contracts.OpNone {
					w.ErrorCount = 0
				}
			}
		}, nil)
	}
}

// archivingKeepsOpID: the completion write of ARCHIVING loses its op_id
// reset.
func archivingKeepsOpID(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		return withStore(d, nil, func(_ context.Context, w *contracts.Writer, _ string, _ *contracts.Cond, p *contracts.Patch) {
			if w.Component == contracts.CompStateReconciler && p.Operation.Set && p.Operation.V == contracts.OpNone &&
				p.OpID.Set && p.OpID.V == "" && (!p.ErrorInfo.Set || p.ErrorInfo.V == nil) {
				p.OpID = contracts.Opt[string]{}
			}
		})
	}
}

// createDefaultsStandby: a POST that names no desired_state reaches the
// service asking for STANDBY.
func createDefaultsStandby(b *bend) {
	b.wrapAPI = func(api ports.API, _ ports.Deps) ports.API { return standbyByDefault{api} }
}

type standbyByDefault struct{ ports.API }

func (a standbyByDefault) Create(ctx context.Context, user string, req ports.CreateRequest) (contracts.Workspace, error) {
	if req.DesiredState == nil {
		standby := string(contracts.DesiredStandby)
		req.DesiredState = &standby
	}
	return a.API.Create(ctx, user, req)
}

// recoverAnyHealth: the recovery endpoint writes the reset without looking
// at the workspace's health.
func recoverAnyHealth(b *bend) {
	b.wrapAPI = func(api ports.API, d ports.Deps) ports.API { return blindRecovery{API: api, deps: d} }
}

type blindRecovery struct {
	ports.API
	deps ports.Deps
}

func (a blindRecovery) Recover(ctx context.Context, admin, id string) error {
	wr := contracts.Writer{Component: contracts.CompAdmin, Instance: a.deps.Instance}
	if _, err := a.deps.Store.Update(ctx, wr, id, contracts.Cond{}, contracts.RecoverPatch()); err != nil {
		return fmt.Errorf("recover %s: %w", id, err)
	}
	return nil
}

// recoverKeepsCount: the recovery write loses its error_count reset.
func recoverKeepsCount(b *bend) {
	recoverLoses(b, func(p *contracts.Patch) { p.ErrorCount = contracts.Opt[int]{} })
}

// recoverLoses bends the API: drop takes a reset out of the
// administrator's recovery write.
func recoverLoses(b *bend, drop func(p *contracts.Patch)) {
	b.api = func(d ports.Deps) ports.Deps {
		return withStore(d, nil, func(_ context.Context, w *contracts.Writer, _ string, _ *contracts.Cond, p *contracts.Patch) {
			if w.Component == contracts.CompAdmin {
				drop(p)
			}
		})
	}
}

// desiredInError: the API reads a workspace in ERROR as healthy, and its
// desired-state writes lose their not-terminal guard.
func desiredInError(b *bend) {
	b.api = func(d ports.Deps) ports.Deps {
		d = withStore(d, nil, func(_ context.Context, w *contracts.Writer, _ string, c *contracts.Cond, p *contracts.Patch) {
			if w.Component == contracts.CompAPI && p.DesiredState.Set {
				c.NotTerminal = false
			}
		})
		d.Store = errorBlindStore{d.Store}
		return d
	}
}

type errorBlindStore struct{ ports.Store }

func (s errorBlindStore) Get(ctx context.Context, id string) (contracts.Workspace, error) {
	w, err := s.Store.Get(ctx, id)
	if err == nil && w.Terminal() {
		w.ErrorInfo, w.HealthStatus = nil, contracts.HealthOK
	}
	return w, err
}

// deleteKeepsDesired: the soft delete's write loses its desired PENDING.
func deleteKeepsDesired(b *bend) {
	b.api = func(d ports.Deps) ports.Deps {
		return withStore(d, nil, func(_ context.Context, w *contracts.Writer, _ string, _ *contracts.Cond, p *contracts.Patch) {
			if w.Component == contracts.CompAPI && p.DeletedAt.Set {
				p.DesiredState = contracts.Opt[contracts.DesiredState]{}
			}
		})
	}
}

// ---- 4.6: events -----------------------------------------------------------

// noEventListener: the coordinator runs without an EventListener. Its
// change feed never delivers a notification (the listener is opened but
// stays silent), so nothing is forwarded to workspace:{id}; what it still
// publishes on a reconnect is the resynchronisation of rows changed
// before, which any listener does.
func noEventListener(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		d.Feed = silentFeed{d.Feed}
		return d
	}
}

type silentFeed struct{ ports.ChangeFeed }

func (f silentFeed) Listen(ctx context.Context) (ports.Listener, error) {
	l, err := f.ChangeFeed.Listen(ctx)
	if err != nil {
		return nil, err
	}
	return silentListener{l}, nil
}

type silentListener struct{ ports.Listener }

func (l silentListener) Poll(ctx context.Context) ([]ports.Change, error) {
	if _, err := l.Listener.Poll(ctx); err != nil {
		return nil, err
	}
	return nil, nil
}

// ---- 3: adaptive periods ----------------------------------------------------

// fixedPoll: the leader's loop sleeps a fixed 30 s between passes, busy
// fleet or idle (a standby still retries the election at its own pace).
func fixedPoll(b *bend) {
	b.wrap = func(c ports.Coordinator, d ports.Deps) ports.Coordinator {
		return fixedPollCoord{Coordinator: c, clock: d.Clock}
	}
}

type fixedPollCoord struct {
	ports.Coordinator
	clock ports.Clock
}

func (c fixedPollCoord) Step(ctx context.Context) (time.Time, error) {
	next, err := c.Coordinator.Step(ctx)
	if err != nil || !c.IsLeader() {
		return next, err
	}
	return c.clock.Now().Add(decide.PeriodIdle), nil
}

// busyPoll: the HealthMonitor's scan shows every idle workspace with an
// operation in progress, so the pass's fleet summary (and the period it
// sets) is always the busy one.
func busyPoll(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		return withStore(d, func(f contracts.Filter, rows []contracts.Workspace) {
			if f != contracts.FilterActive {
				return
			}
			for i := range rows {
				if rows[i].Operation == contracts.OpNone {
					rows[i].Operation = contracts.OpStarting
				}
			}
		}, nil)
	}
}

// wakeAnyState: the API reads every live PENDING workspace as STANDBY, so
// the proxy's auto-wake, which wakes STANDBY ones only, wakes them too.
func wakeAnyState(b *bend) {
	b.api = func(d ports.Deps) ports.Deps {
		d.Store = pendingAsStandby{d.Store}
		return d
	}
}

type pendingAsStandby struct{ ports.Store }

func (s pendingAsStandby) Get(ctx context.Context, id string) (contracts.Workspace, error) {
	w, err := s.Store.Get(ctx, id)
	if err == nil && !w.Deleted() && w.ObservedStatus == contracts.ObservedPending {
		w.ObservedStatus = contracts.ObservedStandby
	}
	return w, err
}

// noResume: the actuator calls a coordinator makes for an operation
// claimed before its leadership began answer success and do nothing, so
// an operation it took over is only ever waited for.
func noResume(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		st := &resumeSkip{store: d.Store, clock: d.Clock}
		d.Leadership = beganLeadership{Leadership: d.Leadership, st: st}
		d.Instances = skipInstances{Instances: d.Instances, st: st}
		d.Storage = skipStorage{Storage: d.Storage, st: st}
		return d
	}
}

type resumeSkip struct {
	store ports.Store
	clock ports.Clock
	began time.Time
}

// skip reports whether id's operation in progress was claimed before this
// instance's leadership began.
func (r *resumeSkip) skip(ctx context.Context, id string) bool {
	w, err := r.store.Get(ctx, id)
	return err == nil && w.Operation != contracts.OpNone && !w.OpStartedAt.IsZero() && w.OpStartedAt.Before(r.began)
}

type beganLeadership struct {
	ports.Leadership
	st *resumeSkip
}

func (l beganLeadership) TryAcquire(ctx context.Context, holder string) (ports.Lease, bool, error) {
	lease, ok, err := l.Leadership.TryAcquire(ctx, holder)
	if ok && err == nil {
		l.st.began = l.st.clock.Now()
	}
	return lease, ok, err
}

type skipInstances struct {
	ports.Instances
	st *resumeSkip
}

func (i skipInstances) Start(ctx context.Context, id, imageRef string) error {
	if i.st.skip(ctx, id) {
		return nil
	}
	return i.Instances.Start(ctx, id, imageRef)
}

func (i skipInstances) Delete(ctx context.Context, id string) error {
	if i.st.skip(ctx, id) {
		return nil
	}
	return i.Instances.Delete(ctx, id)
}

type skipStorage struct {
	ports.Storage
	st *resumeSkip
}

func (s skipStorage) Provision(ctx context.Context, id string) error {
	if s.st.skip(ctx, id) {
		return nil
	}
	return s.Storage.Provision(ctx, id)
}

func (s skipStorage) Restore(ctx context.Context, id, key string) (string, error) {
	if s.st.skip(ctx, id) {
		return key, nil
	}
	return s.Storage.Restore(ctx, id, key)
}

func (s skipStorage) Archive(ctx context.Context, id, opID string) (string, error) {
	if s.st.skip(ctx, id) {
		return contracts.ArchiveKey(id, opID), nil
	}
	return s.Storage.Archive(ctx, id, opID)
}

func (s skipStorage) DeleteVolume(ctx context.Context, id string) error {
	if s.st.skip(ctx, id) {
		return nil
	}
	return s.Storage.DeleteVolume(ctx, id)
}

// resumeRestampsOpStarted: before the first actuator call a new leader
// makes for an operation claimed before its leadership began, it writes
// op_started_at = now ("our attempt starts now"), as the reconciler, under
// its own epoch.
func resumeRestampsOpStarted(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		r := &restamp{store: d.Store, clock: d.Clock, inst: d.Instance}
		d.Leadership = restampLeadership{Leadership: d.Leadership, r: r}
		d.Instances = restampInstances{Instances: d.Instances, r: r}
		d.Storage = restampStorage{Storage: d.Storage, r: r}
		return d
	}
}

type restamp struct {
	store ports.Store
	clock ports.Clock
	inst  string
	began time.Time
	epoch int64
	done  map[string]bool
}

// touch rewrites id's op_started_at once per leadership when its
// operation was claimed before the leadership began.
func (r *restamp) touch(ctx context.Context, id string) {
	if r.done == nil || r.done[id] {
		return
	}
	w, err := r.store.Get(ctx, id)
	if err != nil || w.Operation == contracts.OpNone || w.OpStartedAt.IsZero() || !w.OpStartedAt.Before(r.began) {
		return
	}
	r.done[id] = true
	wr := contracts.Writer{Component: contracts.CompStateReconciler, Instance: r.inst, Epoch: r.epoch}
	_, _ = r.store.Update(ctx, wr, id, contracts.Cond{Operation: contracts.Some(w.Operation)}, contracts.Patch{OpStartedAt: contracts.Some(r.clock.Now())})
}

type restampLeadership struct {
	ports.Leadership
	r *restamp
}

func (l restampLeadership) TryAcquire(ctx context.Context, holder string) (ports.Lease, bool, error) {
	lease, ok, err := l.Leadership.TryAcquire(ctx, holder)
	if ok && err == nil && lease != nil {
		l.r.began, l.r.epoch, l.r.done = l.r.clock.Now(), lease.Epoch(), map[string]bool{}
	}
	return lease, ok, err
}

type restampInstances struct {
	ports.Instances
	r *restamp
}

func (i restampInstances) Start(ctx context.Context, id, imageRef string) error {
	i.r.touch(ctx, id)
	return i.Instances.Start(ctx, id, imageRef)
}

func (i restampInstances) Delete(ctx context.Context, id string) error {
	i.r.touch(ctx, id)
	return i.Instances.Delete(ctx, id)
}

type restampStorage struct {
	ports.Storage
	r *restamp
}

func (s restampStorage) Provision(ctx context.Context, id string) error {
	s.r.touch(ctx, id)
	return s.Storage.Provision(ctx, id)
}

func (s restampStorage) Restore(ctx context.Context, id, key string) (string, error) {
	s.r.touch(ctx, id)
	return s.Storage.Restore(ctx, id, key)
}

func (s restampStorage) Archive(ctx context.Context, id, opID string) (string, error) {
	s.r.touch(ctx, id)
	return s.Storage.Archive(ctx, id, opID)
}

func (s restampStorage) DeleteVolume(ctx context.Context, id string) error {
	s.r.touch(ctx, id)
	return s.Storage.DeleteVolume(ctx, id)
}

// recoverKeepsMessage: the recovery's write loses its error_message reset.
func recoverKeepsMessage(b *bend) {
	recoverLoses(b, func(p *contracts.Patch) { p.ErrorMessage = contracts.Opt[string]{} })
}

// previousStatusDesired: the ERROR entry's previous_status is the row's
// desired state (read again at the write).
func previousStatusDesired(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		st := d.Store
		return withStore(d, nil, func(ctx context.Context, w *contracts.Writer, id string, _ *contracts.Cond, p *contracts.Patch) {
			if w.Component != contracts.CompStateReconciler || !p.PreviousStatus.Set {
				return
			}
			if row, err := st.Get(ctx, id); err == nil {
				p.PreviousStatus.V = contracts.ObservedStatus(row.DesiredState)
			}
		})
	}
}

// dataLossRetried: the coordinator's storage provider maps the DataLost
// codes of a failed restore to TAR_EXTRACT_FAILED, which 1.5 retries.
func dataLossRetried(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		d.Storage = dataLossAsExtract{d.Storage}
		return d
	}
}

type dataLossAsExtract struct{ ports.Storage }

func (s dataLossAsExtract) Restore(ctx context.Context, id, key string) (string, error) {
	marker, err := s.Storage.Restore(ctx, id, key)
	var pe *contracts.ProviderError
	if errors.As(err, &pe) {
		if r, _ := contracts.Classify(pe.Code); r == contracts.ReasonDataLost {
			return marker, &contracts.ProviderError{Code: contracts.CodeTarExtractFailed, Message: pe.Message, Context: pe.Context}
		}
	}
	return marker, err
}

// startCalledAgain: the coordinator's instance controller follows every
// successful start with a second one, as a reconciler that re-invokes
// its idempotent calls at every tick does.
func startCalledAgain(b *bend) {
	b.coord = func(d ports.Deps) ports.Deps {
		d.Instances = startTwice{d.Instances}
		return d
	}
}

type startTwice struct{ ports.Instances }

func (i startTwice) Start(ctx context.Context, id, imageRef string) error {
	if err := i.Instances.Start(ctx, id, imageRef); err != nil {
		return err
	}
	return i.Instances.Start(ctx, id, imageRef)
}
