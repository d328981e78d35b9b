package decide

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

func TestChooseOperationRows(t *testing.T) {
	key := contracts.ArchiveKey("w1", "op0")
	cases := []struct {
		name string
		w    *contracts.Workspace
		want contracts.Operation
	}{
		{"4.2.1 row 1: PENDING any any any deleted → DELETING", row(withDeleted(), withDesired(contracts.DesiredPending)), contracts.OpDeleting},
		{"4.2.1 row 1: PENDING ERROR with archive_key, deleted → DELETING", row(withDeleted(), withHealth(contracts.HealthError), withArchiveKey(key), withDesired(contracts.DesiredRunning)), contracts.OpDeleting},
		{"4.2.1 row 2: STANDBY ERROR deleted → DELETING", row(withObserved(contracts.ObservedStandby), withHealth(contracts.HealthError), withDeleted(), withDesired(contracts.DesiredPending)), contracts.OpDeleting},
		{"4.2.1 row 2: RUNNING ERROR deleted → DELETING", row(withObserved(contracts.ObservedRunning), withHealth(contracts.HealthError), withDeleted(), withDesired(contracts.DesiredPending)), contracts.OpDeleting},
		{"4.2.1 row 3: RUNNING OK deleted → STOPPING", row(withObserved(contracts.ObservedRunning), withDeleted(), withDesired(contracts.DesiredPending)), contracts.OpStopping},
		{"4.2.1 row 3: RUNNING OK deleted, desired RUNNING → STOPPING", row(withObserved(contracts.ObservedRunning), withDeleted(), withDesired(contracts.DesiredRunning)), contracts.OpStopping},
		{"4.2.1 row 4: STANDBY OK deleted → ARCHIVING", row(withObserved(contracts.ObservedStandby), withDeleted(), withDesired(contracts.DesiredPending)), contracts.OpArchiving},
		{"4.2.1 row 4: STANDBY OK deleted with archive_key → ARCHIVING", row(withObserved(contracts.ObservedStandby), withDeleted(), withArchiveKey(key)), contracts.OpArchiving},
		{"4.2.1 row 5: PENDING OK STANDBY null key → PROVISIONING", row(withDesired(contracts.DesiredStandby)), contracts.OpProvisioning},
		{"4.2.1 row 5: PENDING OK RUNNING null key → PROVISIONING", row(withDesired(contracts.DesiredRunning)), contracts.OpProvisioning},
		{"4.2.1 row 6: PENDING OK STANDBY set key → RESTORING", row(withDesired(contracts.DesiredStandby), withArchiveKey(key)), contracts.OpRestoring},
		{"4.2.1 row 6: PENDING OK RUNNING set key → RESTORING", row(withDesired(contracts.DesiredRunning), withArchiveKey(key)), contracts.OpRestoring},
		{"4.2.1 row 7: STANDBY OK RUNNING → STARTING", row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredRunning)), contracts.OpStarting},
		{"4.2.1 row 7: STANDBY OK RUNNING with archive_key (restored from it) → STARTING", row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredRunning), withArchiveKey(key), withMarker(key)), contracts.OpStarting},
		{"choice beyond 4.2.1: STANDBY OK RUNNING, volume never restored from archive_key → RESTORING", row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredRunning), withArchiveKey(key)), contracts.OpRestoring},
		{"choice beyond 4.2.1: STANDBY OK STANDBY, marker of another archive → RESTORING", row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredStandby), withArchiveKey(key), withMarker("archives/w1/old/home.tar.zst")), contracts.OpRestoring},
		{"4.2.1 row 8: STANDBY OK PENDING → ARCHIVING", row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredPending)), contracts.OpArchiving},
		{"4.2.1 row 8: STANDBY OK PENDING with an older archive_key → ARCHIVING", row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredPending), withArchiveKey(key), withMarker(key)), contracts.OpArchiving},
		{"4.2.1 row 8: STANDBY OK PENDING, volume never restored → ARCHIVING (under the key's op_id, see ClaimPatch)", row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredPending), withArchiveKey(key)), contracts.OpArchiving},
		{"4.2.1 row 9: RUNNING OK STANDBY → STOPPING", row(withObserved(contracts.ObservedRunning), withDesired(contracts.DesiredStandby)), contracts.OpStopping},
		{"4.2.1 row 9: RUNNING OK PENDING → STOPPING (step down first, C5)", row(withObserved(contracts.ObservedRunning), withDesired(contracts.DesiredPending)), contracts.OpStopping},

		{"4.2.1 no row: PENDING OK PENDING (converged)", row(withDesired(contracts.DesiredPending)), contracts.OpNone},
		{"4.2.1 no row: PENDING ERROR RUNNING not deleted", row(withHealth(contracts.HealthError)), contracts.OpNone},
		{"4.2.1 no row: STANDBY OK STANDBY (converged)", row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredStandby)), contracts.OpNone},
		{"4.2.1 no row: STANDBY ERROR RUNNING not deleted", row(withObserved(contracts.ObservedStandby), withHealth(contracts.HealthError)), contracts.OpNone},
		{"4.2.1 no row: RUNNING OK RUNNING (converged)", row(withObserved(contracts.ObservedRunning)), contracts.OpNone},
		{"4.2.1 no row: RUNNING ERROR STANDBY not deleted", row(withObserved(contracts.ObservedRunning), withHealth(contracts.HealthError), withDesired(contracts.DesiredStandby)), contracts.OpNone},
		{"4.2.1 no row: DELETED", row(withObserved(contracts.ObservedDeleted), withDeleted()), contracts.OpNone},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, ChooseOperation(tc.w))
		})
	}
}

// choiceRow is one row of the 4.2.1 table as data; nil or 0 means "any".
type choiceRow struct {
	observed []contracts.ObservedStatus
	health   []contracts.HealthStatus
	desired  []contracts.DesiredState
	key      int // 0 any, 1 null, 2 set
	deleted  bool
	op       contracts.Operation
}

var (
	pend, stby, runn = contracts.ObservedPending, contracts.ObservedStandby, contracts.ObservedRunning
	healthOK         = []contracts.HealthStatus{contracts.HealthOK}
	healthError      = []contracts.HealthStatus{contracts.HealthError}
	choiceTable      = []choiceRow{
		{[]contracts.ObservedStatus{pend}, nil, nil, 0, true, contracts.OpDeleting},
		{[]contracts.ObservedStatus{stby, runn}, healthError, nil, 0, true, contracts.OpDeleting},
		{[]contracts.ObservedStatus{runn}, healthOK, nil, 0, true, contracts.OpStopping},
		{[]contracts.ObservedStatus{stby}, healthOK, nil, 0, true, contracts.OpArchiving},
		{[]contracts.ObservedStatus{pend}, healthOK, []contracts.DesiredState{contracts.DesiredStandby, contracts.DesiredRunning}, 1, false, contracts.OpProvisioning},
		{[]contracts.ObservedStatus{pend}, healthOK, []contracts.DesiredState{contracts.DesiredStandby, contracts.DesiredRunning}, 2, false, contracts.OpRestoring},
		{[]contracts.ObservedStatus{stby}, healthOK, []contracts.DesiredState{contracts.DesiredRunning}, 0, false, contracts.OpStarting},
		{[]contracts.ObservedStatus{stby}, healthOK, []contracts.DesiredState{contracts.DesiredPending}, 0, false, contracts.OpArchiving},
		{[]contracts.ObservedStatus{runn}, healthOK, []contracts.DesiredState{contracts.DesiredStandby, contracts.DesiredPending}, 0, false, contracts.OpStopping},
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
func specChoice(t *testing.T, w *contracts.Workspace) contracts.Operation {
	t.Helper()
	found := contracts.OpNone
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
	for _, o := range contracts.AllObserved {
		for _, h := range []contracts.HealthStatus{contracts.HealthOK, contracts.HealthError} {
			for _, d := range contracts.AllDesired {
				for _, k := range []string{"", contracts.ArchiveKey("w1", "op0")} {
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
	from := map[contracts.Operation]contracts.ObservedStatus{
		contracts.OpProvisioning: contracts.ObservedPending, contracts.OpRestoring: contracts.ObservedPending,
		contracts.OpStarting: contracts.ObservedStandby, contracts.OpStopping: contracts.ObservedRunning, contracts.OpArchiving: contracts.ObservedStandby,
	}
	to := map[contracts.Operation]contracts.ObservedStatus{
		contracts.OpProvisioning: contracts.ObservedStandby, contracts.OpRestoring: contracts.ObservedStandby,
		contracts.OpStarting: contracts.ObservedRunning, contracts.OpStopping: contracts.ObservedStandby, contracts.OpArchiving: contracts.ObservedPending,
	}
	for _, o := range contracts.AllObserved {
		for _, h := range []contracts.HealthStatus{contracts.HealthOK, contracts.HealthError} {
			for _, d := range contracts.AllDesired {
				for _, k := range []string{"", contracts.ArchiveKey("w1", "op0")} {
					for _, del := range []bool{false, true} {
						w := row(withObserved(o), withHealth(h), withDesired(d), withArchiveKey(k))
						if k != "" {
							withMarker(k)(w) // restored from it: the state the table is written for
						}
						if del {
							withDeleted()(w)
						}
						op := ChooseOperation(w)
						if op == contracts.OpNone || op == contracts.OpDeleting {
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
	for _, o := range contracts.AllObserved {
		for _, d := range contracts.AllDesired {
			for _, op := range contracts.AllOperations {
				for _, del := range []bool{false, true} {
					for _, variant := range []string{"health", "terminal", "both"} {
						w := row(withObserved(o), withDesired(d), withOp(op))
						if del {
							withDeleted()(w)
						}
						if variant != "terminal" {
							withHealth(contracts.HealthError)(w)
						}
						if variant != "health" {
							withTerminal()(w)
						}
						for _, last := range []time.Time{{}, t0} {
							s := classify(w, t0.Add(time.Minute), last)
							if s.Kind == StepClaim || s.Kind == StepExecute {
								require.Equal(t, contracts.OpDeleting, s.Op, "%s %s on %s/%s op=%s deleted=%v", s.Kind, s.Op, variant, o, op, del)
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
	k := contracts.ArchiveKey("w1", "op0")
	for _, o := range contracts.AllObserved {
		for _, h := range []contracts.HealthStatus{contracts.HealthOK, contracts.HealthError} {
			for _, d := range contracts.AllDesired {
				for _, del := range []bool{false, true} {
					w := row(withObserved(o), withHealth(h), withDesired(d), withArchiveKey(k))
					if del {
						withDeleted()(w)
					}
					want := specChoice(t, w)
					if o == contracts.ObservedStandby && h == contracts.HealthOK && !del && d != contracts.DesiredPending {
						want = contracts.OpRestoring
					}
					require.Equal(t, want, ChooseOperation(w), "%s %s desired=%s deleted=%v", o, h, d, del)
				}
			}
		}
	}
}

func TestArchivingAnUnrestoredVolumeKeepsItsArchive(t *testing.T) {
	k := contracts.ArchiveKey("w1", "op0")
	w := row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredPending), withArchiveKey(k))
	p := ClaimPatch(w, contracts.OpArchiving, t0, "fresh-op")
	require.Equal(t, "op0", p.OpID.V, "the archive's own op_id: nothing is uploaded again")
	p.Apply(w, t0)
	require.Equal(t, ArchiveDeleteVolume, NextArchiveAction(w), "the volume is only deleted")

	restored := row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredPending), withArchiveKey(k), withMarker(k))
	require.Equal(t, "fresh-op", ClaimPatch(restored, contracts.OpArchiving, t0, "fresh-op").OpID.V, "a restored volume may hold newer data: a new archive")
}
