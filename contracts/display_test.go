package contracts

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDisplay(t *testing.T) {
	key := ArchiveKey("w1", "op1")
	cases := []struct {
		name string
		w    *Workspace
		want DisplayState
	}{
		{"1.3 row 1: DELETED any any → DELETED", row(withObserved(ObservedDeleted)), DisplayDeleted},
		{"1.3 row 1: DELETED beats ERROR (first match)", row(withObserved(ObservedDeleted), withHealth(HealthError), withArchiveKey(key)), DisplayDeleted},
		{"1.3 row 2: RUNNING ERROR → ERROR", row(withObserved(ObservedRunning), withHealth(HealthError)), DisplayError},
		{"1.3 row 2: STANDBY ERROR → ERROR", row(withObserved(ObservedStandby), withHealth(HealthError)), DisplayError},
		{"1.3 row 2: PENDING ERROR with archive_key → ERROR, not ARCHIVED", row(withHealth(HealthError), withArchiveKey(key)), DisplayError},
		{"1.3 row 3: RUNNING OK → RUNNING", row(withObserved(ObservedRunning)), DisplayRunning},
		{"1.3 row 3: RUNNING OK with archive_key → RUNNING", row(withObserved(ObservedRunning), withArchiveKey(key)), DisplayRunning},
		{"1.3 row 4: STANDBY OK → STANDBY", row(withObserved(ObservedStandby)), DisplayStandby},
		{"1.3 row 4: STANDBY OK with archive_key → STANDBY", row(withObserved(ObservedStandby), withArchiveKey(key)), DisplayStandby},
		{"1.3 row 5: PENDING OK null key → PENDING", row(), DisplayPending},
		{"1.3 row 6: PENDING OK set key → ARCHIVED", row(withArchiveKey(key)), DisplayArchived},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Display(tc.w))
		})
	}
}

func TestDisplayEveryCombination(t *testing.T) {
	// The 1.3 table as data, first match wins; every combination of its
	// three inputs must match exactly the row Display picks.
	type spec struct {
		observed []ObservedStatus // nil: any
		health   []HealthStatus   // nil: any
		key      int              // 0 any, 1 null, 2 set
		want     DisplayState
	}
	others := []ObservedStatus{ObservedPending, ObservedStandby, ObservedRunning}
	table := []spec{
		{[]ObservedStatus{ObservedDeleted}, nil, 0, DisplayDeleted},
		{others, []HealthStatus{HealthError}, 0, DisplayError},
		{[]ObservedStatus{ObservedRunning}, []HealthStatus{HealthOK}, 0, DisplayRunning},
		{[]ObservedStatus{ObservedStandby}, []HealthStatus{HealthOK}, 0, DisplayStandby},
		{[]ObservedStatus{ObservedPending}, []HealthStatus{HealthOK}, 1, DisplayPending},
		{[]ObservedStatus{ObservedPending}, []HealthStatus{HealthOK}, 2, DisplayArchived},
	}
	in := func(xs []ObservedStatus, x ObservedStatus) bool {
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
	inH := func(xs []HealthStatus, x HealthStatus) bool {
		return xs == nil || xs[0] == x
	}
	for _, o := range AllObserved {
		for _, h := range []HealthStatus{HealthOK, HealthError} {
			for _, k := range []string{"", ArchiveKey("w1", "op1")} {
				w := row(withObserved(o), withHealth(h), withArchiveKey(k))
				var want DisplayState
				for _, r := range table {
					keyOK := r.key == 0 || (r.key == 1) == (k == "")
					if in(r.observed, o) && inH(r.health, h) && keyOK {
						want = r.want
						break
					}
				}
				require.NotEmpty(t, want, "no 1.3 row for %s %s %q", o, h, k)
				require.Equal(t, want, Display(w), "%s %s %q", o, h, k)
			}
		}
	}
}
