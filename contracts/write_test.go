package contracts

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var allComponents = []Component{
	CompAPI, CompAdmin, CompHealthMonitor, CompStateReconciler,
	CompTTLManager, CompArchiveGC, CompEventListener, CompProxy,
}

// updatableColumns are the columns a Patch can assign, in table order.
var updatableColumns = []Column{
	ColName, ColDescription, ColMemo, ColHomeCtx,
	ColObservedStatus, ColHealthStatus, ColObservedAt,
	ColOperation, ColOpStartedAt, ColOpID, ColArchiveKey,
	ColErrorCount, ColErrorInfo, ColErrorMessage, ColPreviousStatus,
	ColDesiredState, ColDeletedAt, ColStandbyTTLSeconds, ColArchiveTTLSeconds, ColLastAccessAt,
}

// patchOf assigns column col alone. error_info is set to a retried
// ActionFailed, which is not the HealthMonitor's exception.
func patchOf(t *testing.T, col Column) Patch {
	t.Helper()
	var p Patch
	switch col {
	case ColName:
		p.Name = Some("n2")
	case ColDescription:
		p.Description = Some("d2")
	case ColMemo:
		p.Memo = Some("m2")
	case ColHomeCtx:
		p.HomeCtx = Some(&HomeCtx{RestoreMarker: "k"})
	case ColObservedStatus:
		p.ObservedStatus = Some(ObservedStandby)
	case ColHealthStatus:
		p.HealthStatus = Some(HealthError)
	case ColObservedAt:
		p.ObservedAt = Some(t0.Add(time.Second))
	case ColOperation:
		p.Operation = Some(OpStarting)
	case ColOpStartedAt:
		p.OpStartedAt = Some(t0.Add(2 * time.Second))
	case ColOpID:
		p.OpID = Some("op9")
	case ColArchiveKey:
		p.ArchiveKey = Some("archives/w1/op9/home.tar.zst")
	case ColErrorCount:
		p.ErrorCount = Some(2)
	case ColErrorInfo:
		p.ErrorInfo = Some(&ErrorInfo{Reason: ReasonActionFailed, Message: "x", OccurredAt: t0})
	case ColErrorMessage:
		p.ErrorMessage = Some("x")
	case ColPreviousStatus:
		p.PreviousStatus = Some(ObservedRunning)
	case ColDesiredState:
		p.DesiredState = Some(DesiredPending)
	case ColDeletedAt:
		p.DeletedAt = Some(t0.Add(3 * time.Second))
	case ColStandbyTTLSeconds:
		p.StandbyTTLSeconds = Some(60)
	case ColArchiveTTLSeconds:
		p.ArchiveTTLSeconds = Some(600)
	case ColLastAccessAt:
		p.LastAccessAt = Some(t0.Add(4 * time.Second))
	default:
		t.Fatalf("column %s is not updatable", col)
	}
	return p
}

// fullPatch assigns every updatable column.
func fullPatch(t *testing.T) Patch {
	t.Helper()
	var p Patch
	for _, c := range updatableColumns {
		q := patchOf(t, c)
		mergeInto(&p, &q)
	}
	return p
}

// mergeInto copies every field src sets into dst (by reflection, so it does
// not rely on Columns, which the tests check).
func mergeInto(dst, src *Patch) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	for i := range s.NumField() {
		if s.Field(i).FieldByName("Set").Bool() {
			d.Field(i).Set(s.Field(i))
		}
	}
}

func TestPatchColumnsOneByOne(t *testing.T) {
	require.Equal(t, len(updatableColumns), reflect.TypeFor[Patch]().NumField(), "a Patch field per updatable column")
	for _, c := range updatableColumns {
		p := patchOf(t, c)
		require.Equal(t, []Column{c}, p.Columns(), "%s", c)
		require.False(t, p.Empty(), "%s", c)
	}
	var empty Patch
	require.True(t, empty.Empty())
	require.Empty(t, empty.Columns())
	p := fullPatch(t)
	require.Equal(t, updatableColumns, p.Columns(), "table order")
}

func TestPatchApply(t *testing.T) {
	w := row(withMarker("old"), withError(false, t0))
	p := fullPatch(t)
	later := t0.Add(time.Hour)
	p.Apply(w, later)

	want := *row(withMarker("old"), withError(false, t0))
	want.Name, want.Description, want.Memo = "n2", "d2", "m2"
	want.HomeCtx = &HomeCtx{RestoreMarker: "k"}
	want.ObservedStatus, want.HealthStatus, want.ObservedAt = ObservedStandby, HealthError, t0.Add(time.Second)
	want.Operation, want.OpStartedAt, want.OpID = OpStarting, t0.Add(2*time.Second), "op9"
	want.ArchiveKey = "archives/w1/op9/home.tar.zst"
	want.ErrorCount = 2
	want.ErrorInfo = &ErrorInfo{Reason: ReasonActionFailed, Message: "x", OccurredAt: t0}
	want.ErrorMessage, want.PreviousStatus = "x", ObservedRunning
	want.DesiredState, want.DeletedAt = DesiredPending, t0.Add(3*time.Second)
	want.StandbyTTLSeconds, want.ArchiveTTLSeconds = 60, 600
	want.LastAccessAt = t0.Add(4 * time.Second)
	want.UpdatedAt = later
	require.Equal(t, want, *w)

	// Pointer values are copied, not shared with the patch.
	p.HomeCtx.V.RestoreMarker = "mutated"
	p.ErrorInfo.V.Message = "mutated"
	require.Equal(t, "k", w.RestoreMarker())
	require.Equal(t, "x", w.ErrorInfo.Message)
}

func TestPatchApplyNullsAndNothing(t *testing.T) {
	w := row(withMarker("m"), withTerminal())
	before := w.Clone()
	var none Patch
	none.Apply(w, t0.Add(time.Minute))
	before.UpdatedAt = t0.Add(time.Minute)
	require.Equal(t, before, *w, "an empty patch only stamps updated_at")

	clear := Patch{HomeCtx: Some[*HomeCtx](nil), ErrorInfo: Some[*ErrorInfo](nil), OpID: Some(""), DeletedAt: Some(time.Time{})}
	w = row(withMarker("m"), withTerminal(), withOpID("op1"), withDeleted())
	clear.Apply(w, t0)
	require.Nil(t, w.HomeCtx)
	require.Nil(t, w.ErrorInfo)
	require.Empty(t, w.OpID)
	require.False(t, w.Deleted())
}

func TestCondHolds(t *testing.T) {
	cases := []struct {
		name  string
		c     Cond
		w     *Workspace
		holds bool
	}{
		{"empty cond holds", Cond{}, row(withOp(OpStarting), withTerminal(), withDeleted()), true},
		{"operation equal", Cond{Operation: Some(OpNone)}, row(), true},
		{"operation differs", Cond{Operation: Some(OpNone)}, row(withOp(OpStarting)), false},
		{"desired equal", Cond{DesiredState: Some(DesiredRunning)}, row(), true},
		{"desired differs", Cond{DesiredState: Some(DesiredStandby)}, row(), false},
		{"not terminal: no error", Cond{NotTerminal: true}, row(), true},
		{"not terminal: retried error", Cond{NotTerminal: true}, row(withError(false, t0)), true},
		{"not terminal: terminal error", Cond{NotTerminal: true}, row(withTerminal()), false},
		{"not deleted: live", Cond{NotDeleted: true}, row(), true},
		{"not deleted: soft-deleted", Cond{NotDeleted: true}, row(withDeleted()), false},
		{"error_info null: null", Cond{ErrorInfoNull: true}, row(), true},
		{"error_info null: retried error set", Cond{ErrorInfoNull: true}, row(withError(false, t0)), false},
		{"all set, all hold", Cond{Operation: Some(OpNone), DesiredState: Some(DesiredRunning), NotTerminal: true, NotDeleted: true, ErrorInfoNull: true}, row(), true},
		{"all set, one fails", Cond{Operation: Some(OpNone), DesiredState: Some(DesiredRunning), NotTerminal: true, NotDeleted: true, ErrorInfoNull: true}, row(withDeleted()), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.holds, tc.c.Holds(tc.w))
		})
	}
}

func TestOwnersTable(t *testing.T) {
	// 1.1's owner column, for every updatable column.
	spec := map[Column]Component{
		ColName: CompAPI, ColDescription: CompAPI, ColMemo: CompAPI,
		ColHomeCtx:        CompStateReconciler,
		ColObservedStatus: CompHealthMonitor, ColHealthStatus: CompHealthMonitor, ColObservedAt: CompHealthMonitor,
		ColOperation: CompStateReconciler, ColOpStartedAt: CompStateReconciler, ColOpID: CompStateReconciler,
		ColArchiveKey: CompStateReconciler, ColErrorCount: CompStateReconciler, ColErrorInfo: CompStateReconciler,
		ColErrorMessage: CompStateReconciler, ColPreviousStatus: CompStateReconciler,
		ColDesiredState: CompAPI, ColDeletedAt: CompAPI, ColStandbyTTLSeconds: CompAPI,
		ColArchiveTTLSeconds: CompAPI, ColLastAccessAt: CompAPI,
	}
	require.Len(t, Owners, len(updatableColumns))
	for _, col := range updatableColumns {
		owner, ok := spec[col]
		require.True(t, ok, "%s", col)
		require.Equal(t, []Component{owner}, Owners[col], "%s has a single writer (C3)", col)
		for _, c := range allComponents {
			t.Run(fmt.Sprintf("1.1 %s: %s", col, c), func(t *testing.T) {
				require.Equal(t, c == owner, OwnerAllowed(col, c))

				p := patchOf(t, col)
				ok, bad := WriteAllowed(Writer{Component: c}, row(), &p)
				want := c == owner
				if c == CompAdmin {
					// C3 exception: recovery resets error_info, error_count
					// and error_message only.
					want = col == ColErrorInfo && p.ErrorInfo.V == nil ||
						col == ColErrorCount && p.ErrorCount.V == 0 ||
						col == ColErrorMessage && p.ErrorMessage.V == ""
				}
				require.Equal(t, want, ok)
				if want {
					require.Empty(t, bad)
				} else {
					require.Equal(t, col, bad)
				}
			})
		}
	}
	for _, col := range []Column{ColID, ColOwnerUserID, ColImageRef, ColInstanceBackend, ColStorageBackend, ColHomeStoreKey, ColCreatedAt, ColUpdatedAt} {
		for _, c := range allComponents {
			require.False(t, OwnerAllowed(col, c), "%s is not updatable (insert or bookkeeping only)", col)
		}
	}
}

func TestWriteAllowedNamesTheFirstBadColumn(t *testing.T) {
	p := Patch{Operation: Some(OpStarting), DesiredState: Some(DesiredRunning)}
	ok, bad := WriteAllowed(Writer{Component: CompStateReconciler}, row(), &p)
	require.False(t, ok)
	require.Equal(t, ColDesiredState, bad)
	ok, bad = WriteAllowed(Writer{Component: CompAPI}, row(), &p)
	require.False(t, ok)
	require.Equal(t, ColOperation, bad)
}

func cwvInfo() *ErrorInfo {
	return &ErrorInfo{
		Reason: ReasonMismatch, IsTerminal: true, OccurredAt: t0,
		Context: map[string]any{"violation": ViolationContainerWithoutVolume},
	}
}

func TestHealthMonitorErrorInfoException(t *testing.T) {
	nonTerminal := cwvInfo()
	nonTerminal.IsTerminal = false
	otherReason := cwvInfo()
	otherReason.Reason = ReasonActionFailed
	otherViolation := cwvInfo()
	otherViolation.Context = map[string]any{"violation": "Other"}
	noContext := cwvInfo()
	noContext.Context = nil

	cases := []struct {
		name    string
		before  *Workspace
		p       Patch
		allowed bool
	}{
		{"C3: HM sets terminal ContainerWithoutVolume while error_info is null", row(), Patch{ErrorInfo: Some(cwvInfo())}, true},
		{"C3: with its own observation columns", row(), Patch{HealthStatus: Some(HealthError), ObservedAt: Some(t0), ErrorInfo: Some(cwvInfo())}, true},
		{"C3: only once: error_info already set (retried)", row(withError(false, t0)), Patch{ErrorInfo: Some(cwvInfo())}, false},
		{"C3: only once: error_info already set (terminal)", row(withTerminal()), Patch{ErrorInfo: Some(cwvInfo())}, false},
		{"C3: not terminal refused", row(), Patch{ErrorInfo: Some(nonTerminal)}, false},
		{"C3: another reason refused", row(), Patch{ErrorInfo: Some(otherReason)}, false},
		{"C3: another violation refused", row(), Patch{ErrorInfo: Some(otherViolation)}, false},
		{"C3: no violation context refused", row(), Patch{ErrorInfo: Some(noContext)}, false},
		{"C3: clearing error_info refused", row(withTerminal()), Patch{ErrorInfo: Some[*ErrorInfo](nil)}, false},
		{"C3: unknown prior row refused", nil, Patch{ErrorInfo: Some(cwvInfo())}, false},
		{"C3: error_message is not part of the exception", row(), Patch{ErrorInfo: Some(cwvInfo()), ErrorMessage: Some("x")}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ok, _ := WriteAllowed(Writer{Component: CompHealthMonitor}, tc.before, &tc.p)
			require.Equal(t, tc.allowed, ok)
		})
	}
	// The exception is the HealthMonitor's alone.
	for _, c := range []Component{CompAPI, CompTTLManager, CompArchiveGC, CompProxy, CompEventListener} {
		p := Patch{ErrorInfo: Some(cwvInfo())}
		ok, bad := WriteAllowed(Writer{Component: c}, row(), &p)
		require.False(t, ok, "%s", c)
		require.Equal(t, ColErrorInfo, bad)
	}
}

func TestAdminException(t *testing.T) {
	cases := []struct {
		name    string
		p       Patch
		allowed bool
	}{
		{"C3: admin resets error_info and error_count", RecoverPatch(), true},
		{"C3: admin resets error_info alone", Patch{ErrorInfo: Some[*ErrorInfo](nil)}, true},
		{"C3 amended: admin clears error_message with error_info", Patch{ErrorInfo: Some[*ErrorInfo](nil), ErrorMessage: Some("")}, true},
		{"C3: admin may not set error_message", Patch{ErrorInfo: Some[*ErrorInfo](nil), ErrorMessage: Some("fixed")}, false},
		{"C3: admin may not set error_info", Patch{ErrorInfo: Some(&ErrorInfo{Reason: ReasonMismatch})}, false},
		{"C3: admin may not set error_count", Patch{ErrorCount: Some(2)}, false},
		{"C3: admin may not write operation", Patch{ErrorCount: Some(0), Operation: Some(OpNone)}, false},
		{"C3: admin may not write desired_state", Patch{DesiredState: Some(DesiredRunning)}, false},
		{"C3: admin may not write health_status", Patch{HealthStatus: Some(HealthOK)}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ok, _ := WriteAllowed(Writer{Component: CompAdmin}, row(withTerminal(), withHealth(HealthError)), &tc.p)
			require.Equal(t, tc.allowed, ok)
		})
	}
}
