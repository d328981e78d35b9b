package decide

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

func TestProtected(t *testing.T) {
	current := contracts.ArchiveKey("w1", "op1") // w1's archive_key
	inflight := contracts.ArchiveKey("w1", "op2")
	stale := contracts.ArchiveKey("w1", "op0")
	foreign := contracts.ArchiveKey("w2", "op9")
	cases := []struct {
		name      string
		w         *contracts.Workspace
		key       string
		protected bool
	}{
		{"C9: the archive at archive_key", row(withArchiveKey(current)), current, true},
		{"C9: .meta follows archive_key's archive", row(withArchiveKey(current)), contracts.MetaKey(current), true},
		{"C9: an older archive of a healthy ws → unprotected", row(withArchiveKey(current)), stale, false},
		{"C9: an older archive's .meta → unprotected", row(withArchiveKey(current)), contracts.MetaKey(stale), false},
		{"C9: under archives/{id}/{op_id}/ while op_id is set", row(withArchiveKey(current), withOpID("op2"), withOp(contracts.OpArchiving)), inflight, true},
		{"C9: the .meta under op_id's prefix", row(withOpID("op2")), contracts.MetaKey(inflight), true},
		{"C9: any object under op_id's prefix", row(withOpID("op2")), contracts.OpPrefix("w1", "op2") + "partial.tmp", true},
		{"C9: op_id's prefix protects nothing once op_id is null", row(withArchiveKey(current)), inflight, false},
		{"C9: any archive of a ws whose health is ERROR", row(withArchiveKey(current), withHealth(contracts.HealthError)), stale, true},
		{"C9: any .meta of a ws whose health is ERROR", row(withHealth(contracts.HealthError)), contracts.MetaKey(stale), true},
		{"C9: a terminal error_info protects like ERROR", row(withTerminal()), stale, true},
		{"C9: a retried error does not protect", row(withError(false, t0)), stale, false},
		{"C9: soft-deleted protects not even archive_key", row(withArchiveKey(current), withDeleted()), current, false},
		{"C9: soft-deleted protects not op_id's prefix", row(withOpID("op2"), withDeleted()), inflight, false},
		{"C9: soft-deleted in ERROR protects nothing", row(withHealth(contracts.HealthError), withTerminal(), withDeleted()), stale, false},
		{"C9: another workspace's key is not protected by an ERROR row", row(withHealth(contracts.HealthError), withOpID("op9")), foreign, false},
		{"C9: another workspace's key under the same op_id → unprotected", row(withOpID("op9")), foreign, false},
		{"C9: no row → unprotected", nil, current, false},
		{"C9: a malformed key is not protected by an ERROR row", row(withHealth(contracts.HealthError)), "archives/w1", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.protected, Protected(tc.w, tc.key))
		})
	}
}

func TestGCDecide(t *testing.T) {
	cases := []struct {
		name      string
		protected bool
		timerSet  bool
		age       time.Duration
		want      GCAction
	}{
		{"4.5: protected → clear its timer", true, false, 0, GCClearTimer},
		{"4.5: protected with an old timer → clear, never delete", true, true, 5 * time.Hour, GCClearTimer},
		{"4.5: unprotected, first sighting → start a timer", false, false, 0, GCStartTimer},
		{"4.5: unprotected, no timer (Redis lost it) → start again", false, false, 5 * time.Hour, GCStartTimer},
		{"4.5: unprotected, timer just started → wait", false, true, 0, GCWait},
		{"4.5: unprotected, timer 1 s short of 2 h → wait", false, true, 2*time.Hour - time.Second, GCWait},
		{"4.5: unprotected, orphaned exactly 2 h → delete", false, true, 2 * time.Hour, GCDelete},
		{"4.5: unprotected, orphaned 3 h → delete", false, true, 3 * time.Hour, GCDelete},
	}
	now := t0.Add(10 * time.Hour)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			first := time.Time{}
			if tc.timerSet {
				first = now.Add(-tc.age)
			}
			require.Equal(t, tc.want, GCDecide(tc.protected, first, tc.timerSet, now))
		})
	}
	require.Equal(t, 2*time.Hour, OrphanDelay)
	for a, n := range map[GCAction]string{GCClearTimer: "clear-timer", GCStartTimer: "start-timer", GCWait: "wait", GCDelete: "delete"} {
		require.Equal(t, n, a.String())
	}
}
