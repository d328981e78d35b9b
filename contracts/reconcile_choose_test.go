package contracts

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestChooseOperationRows(t *testing.T) {
	key := ArchiveKey("w1", "op0")
	cases := []struct {
		name string
		w    *Workspace
		want Operation
	}{
		{"4.2.1 row 1: PENDING any any any deleted → DELETING", row(withDeleted(), withDesired(DesiredPending)), OpDeleting},
		{"4.2.1 row 1: PENDING ERROR with archive_key, deleted → DELETING", row(withDeleted(), withHealth(HealthError), withArchiveKey(key), withDesired(DesiredRunning)), OpDeleting},
		{"4.2.1 row 2: STANDBY ERROR deleted → DELETING", row(withObserved(ObservedStandby), withHealth(HealthError), withDeleted(), withDesired(DesiredPending)), OpDeleting},
		{"4.2.1 row 2: RUNNING ERROR deleted → DELETING", row(withObserved(ObservedRunning), withHealth(HealthError), withDeleted(), withDesired(DesiredPending)), OpDeleting},
		{"4.2.1 row 3: RUNNING OK deleted → STOPPING", row(withObserved(ObservedRunning), withDeleted(), withDesired(DesiredPending)), OpStopping},
		{"4.2.1 row 3: RUNNING OK deleted, desired RUNNING → STOPPING", row(withObserved(ObservedRunning), withDeleted(), withDesired(DesiredRunning)), OpStopping},
		{"4.2.1 row 4: STANDBY OK deleted → ARCHIVING", row(withObserved(ObservedStandby), withDeleted(), withDesired(DesiredPending)), OpArchiving},
		{"4.2.1 row 4: STANDBY OK deleted with archive_key → ARCHIVING", row(withObserved(ObservedStandby), withDeleted(), withArchiveKey(key)), OpArchiving},
		{"4.2.1 row 5: PENDING OK STANDBY null key → PROVISIONING", row(withDesired(DesiredStandby)), OpProvisioning},
		{"4.2.1 row 5: PENDING OK RUNNING null key → PROVISIONING", row(withDesired(DesiredRunning)), OpProvisioning},
		{"4.2.1 row 6: PENDING OK STANDBY set key → RESTORING", row(withDesired(DesiredStandby), withArchiveKey(key)), OpRestoring},
		{"4.2.1 row 6: PENDING OK RUNNING set key → RESTORING", row(withDesired(DesiredRunning), withArchiveKey(key)), OpRestoring},
		{"4.2.1 row 7: STANDBY OK RUNNING → STARTING", row(withObserved(ObservedStandby), withDesired(DesiredRunning)), OpStarting},
		{"4.2.1 row 7: STANDBY OK RUNNING with archive_key (restored from it) → STARTING", row(withObserved(ObservedStandby), withDesired(DesiredRunning), withArchiveKey(key), withMarker(key)), OpStarting},
		{"choice beyond 4.2.1: STANDBY OK RUNNING, volume never restored from archive_key → RESTORING", row(withObserved(ObservedStandby), withDesired(DesiredRunning), withArchiveKey(key)), OpRestoring},
		{"choice beyond 4.2.1: STANDBY OK STANDBY, marker of another archive → RESTORING", row(withObserved(ObservedStandby), withDesired(DesiredStandby), withArchiveKey(key), withMarker("archives/w1/old/home.tar.zst")), OpRestoring},
		{"4.2.1 row 8: STANDBY OK PENDING → ARCHIVING", row(withObserved(ObservedStandby), withDesired(DesiredPending)), OpArchiving},
		{"4.2.1 row 8: STANDBY OK PENDING with an older archive_key → ARCHIVING", row(withObserved(ObservedStandby), withDesired(DesiredPending), withArchiveKey(key), withMarker(key)), OpArchiving},
		{"4.2.1 row 8: STANDBY OK PENDING, volume never restored → ARCHIVING (under the key's op_id, see ClaimPatch)", row(withObserved(ObservedStandby), withDesired(DesiredPending), withArchiveKey(key)), OpArchiving},
		{"4.2.1 row 9: RUNNING OK STANDBY → STOPPING", row(withObserved(ObservedRunning), withDesired(DesiredStandby)), OpStopping},
		{"4.2.1 row 9: RUNNING OK PENDING → STOPPING (step down first, C5)", row(withObserved(ObservedRunning), withDesired(DesiredPending)), OpStopping},

		{"4.2.1 no row: PENDING OK PENDING (converged)", row(withDesired(DesiredPending)), OpNone},
		{"4.2.1 no row: PENDING ERROR RUNNING not deleted", row(withHealth(HealthError)), OpNone},
		{"4.2.1 no row: STANDBY OK STANDBY (converged)", row(withObserved(ObservedStandby), withDesired(DesiredStandby)), OpNone},
		{"4.2.1 no row: STANDBY ERROR RUNNING not deleted", row(withObserved(ObservedStandby), withHealth(HealthError)), OpNone},
		{"4.2.1 no row: RUNNING OK RUNNING (converged)", row(withObserved(ObservedRunning)), OpNone},
		{"4.2.1 no row: RUNNING ERROR STANDBY not deleted", row(withObserved(ObservedRunning), withHealth(HealthError), withDesired(DesiredStandby)), OpNone},
		{"4.2.1 no row: DELETED", row(withObserved(ObservedDeleted), withDeleted()), OpNone},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, ChooseOperation(tc.w))
		})
	}
}

// choiceRow is one row of the 4.2.1 table as data; nil or 0 means "any".
type choiceRow struct {
	observed []ObservedStatus
	health   []HealthStatus
	desired  []DesiredState
	key      int // 0 any, 1 null, 2 set
	deleted  bool
	op       Operation
}

var (
	pend, stby, runn = ObservedPending, ObservedStandby, ObservedRunning
	healthOK         = []HealthStatus{HealthOK}
	healthError      = []HealthStatus{HealthError}
	choiceTable      = []choiceRow{
		{[]ObservedStatus{pend}, nil, nil, 0, true, OpDeleting},
		{[]ObservedStatus{stby, runn}, healthError, nil, 0, true, OpDeleting},
		{[]ObservedStatus{runn}, healthOK, nil, 0, true, OpStopping},
		{[]ObservedStatus{stby}, healthOK, nil, 0, true, OpArchiving},
		{[]ObservedStatus{pend}, healthOK, []DesiredState{DesiredStandby, DesiredRunning}, 1, false, OpProvisioning},
		{[]ObservedStatus{pend}, healthOK, []DesiredState{DesiredStandby, DesiredRunning}, 2, false, OpRestoring},
		{[]ObservedStatus{stby}, healthOK, []DesiredState{DesiredRunning}, 0, false, OpStarting},
		{[]ObservedStatus{stby}, healthOK, []DesiredState{DesiredPending}, 0, false, OpArchiving},
		{[]ObservedStatus{runn}, healthOK, []DesiredState{DesiredStandby, DesiredPending}, 0, false, OpStopping},
	}
)

func contains[T comparable](xs []T, x T) bool {
	if xs == nil {
		return true
	}
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// specChoice is the 4.2.1 table applied literally: the operation of the
// rows that match (at most one may), or NONE.
func specChoice(t *testing.T, w *Workspace) Operation {
	t.Helper()
	found := OpNone
	n := 0
	for _, r := range choiceTable {
		keyOK := r.key == 0 || (r.key == 1) == (w.ArchiveKey == "")
		if contains(r.observed, w.ObservedStatus) && contains(r.health, w.HealthStatus) &&
			contains(r.desired, w.DesiredState) && keyOK && r.deleted == w.Deleted() {
			found = r.op
			n++
		}
	}
	require.LessOrEqual(t, n, 1, "4.2.1 rows overlap for %+v", w)
	return found
}

func TestChooseOperationEveryCombination(t *testing.T) {
	for _, o := range AllObserved {
		for _, h := range []HealthStatus{HealthOK, HealthError} {
			for _, d := range AllDesired {
				for _, k := range []string{"", ArchiveKey("w1", "op0")} {
					for _, del := range []bool{false, true} {
						w := row(withObserved(o), withHealth(h), withDesired(d), withArchiveKey(k))
						if k != "" {
							withMarker(k)(w) // restored from it: the state the table is written for
						}
						if del {
							withDeleted()(w)
						}
						name := fmt.Sprintf("%s %s desired=%s key=%v deleted=%v", o, h, d, k != "", del)
						require.Equal(t, specChoice(t, w), ChooseOperation(w), name)
					}
				}
			}
		}
	}
}

func TestChosenOperationsMoveOneLevel(t *testing.T) {
	// C5 (and C6): every operation but DELETING moves exactly one level,
	// and STARTING only ever starts from STANDBY (the volume exists).
	from := map[Operation]ObservedStatus{
		OpProvisioning: ObservedPending, OpRestoring: ObservedPending,
		OpStarting: ObservedStandby, OpStopping: ObservedRunning, OpArchiving: ObservedStandby,
	}
	to := map[Operation]ObservedStatus{
		OpProvisioning: ObservedStandby, OpRestoring: ObservedStandby,
		OpStarting: ObservedRunning, OpStopping: ObservedStandby, OpArchiving: ObservedPending,
	}
	for _, o := range AllObserved {
		for _, h := range []HealthStatus{HealthOK, HealthError} {
			for _, d := range AllDesired {
				for _, k := range []string{"", ArchiveKey("w1", "op0")} {
					for _, del := range []bool{false, true} {
						w := row(withObserved(o), withHealth(h), withDesired(d), withArchiveKey(k))
						if k != "" {
							withMarker(k)(w) // restored from it: the state the table is written for
						}
						if del {
							withDeleted()(w)
						}
						op := ChooseOperation(w)
						if op == OpNone || op == OpDeleting {
							continue
						}
						require.Equal(t, from[op], o, "%s chosen from %s", op, o)
						a, _ := o.Level()
						b, _ := to[op].Level()
						require.Equal(t, 10, max(a-b, b-a), "%s from %s", op, o)
					}
				}
			}
		}
	}
}

func TestNoOperationButDeletingStartsInError(t *testing.T) {
	// C11: on health ERROR or a terminal error_info the reconciler claims
	// nothing but DELETING, and executes nothing but DELETING.
	for _, o := range AllObserved {
		for _, d := range AllDesired {
			for _, op := range AllOperations {
				for _, del := range []bool{false, true} {
					for _, variant := range []string{"health", "terminal", "both"} {
						w := row(withObserved(o), withDesired(d), withOp(op))
						if del {
							withDeleted()(w)
						}
						if variant != "terminal" {
							withHealth(HealthError)(w)
						}
						if variant != "health" {
							withTerminal()(w)
						}
						for _, last := range []time.Time{{}, t0} {
							s := ReconcileStep(w, t0.Add(time.Minute), last)
							if s.Kind == StepClaim || s.Kind == StepExecute {
								require.Equal(t, OpDeleting, s.Op, "%s %s on %s/%s op=%s deleted=%v", s.Kind, s.Op, variant, o, op, del)
								require.True(t, del, "only a soft-deleted workspace")
							}
						}
					}
				}
			}
		}
	}
}

// The one choice beyond the 4.2.1 table: a STANDBY volume never restored
// from archive_key (a RESTORING failed after provisioning it) is restored
// before it is started or kept; every other combination is the table's.
func TestChooseOperationUnrestoredVolume(t *testing.T) {
	k := ArchiveKey("w1", "op0")
	for _, o := range AllObserved {
		for _, h := range []HealthStatus{HealthOK, HealthError} {
			for _, d := range AllDesired {
				for _, del := range []bool{false, true} {
					w := row(withObserved(o), withHealth(h), withDesired(d), withArchiveKey(k))
					if del {
						withDeleted()(w)
					}
					want := specChoice(t, w)
					if o == ObservedStandby && h == HealthOK && !del && d != DesiredPending {
						want = OpRestoring
					}
					require.Equal(t, want, ChooseOperation(w), "%s %s desired=%s deleted=%v", o, h, d, del)
				}
			}
		}
	}
}

func TestArchivingAnUnrestoredVolumeKeepsItsArchive(t *testing.T) {
	k := ArchiveKey("w1", "op0")
	w := row(withObserved(ObservedStandby), withDesired(DesiredPending), withArchiveKey(k))
	p := ClaimPatch(w, OpArchiving, t0, "fresh-op")
	require.Equal(t, "op0", p.OpID.V, "the archive's own op_id: nothing is uploaded again")
	p.Apply(w, t0)
	require.Equal(t, ArchiveDeleteVolume, NextArchiveAction(w), "the volume is only deleted")

	restored := row(withObserved(ObservedStandby), withDesired(DesiredPending), withArchiveKey(k), withMarker(k))
	require.Equal(t, "fresh-op", ClaimPatch(restored, OpArchiving, t0, "fresh-op").OpID.V, "a restored volume may hold newer data: a new archive")
}
