package contracttest

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// changes collects what a listener delivers.
type changes struct {
	l    ports.Listener
	wait time.Duration
	got  []ports.Change
}

func listen(t *testing.T, x StoreTarget) *changes {
	t.Helper()
	l, err := x.Feed.Listen(t.Context())
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return &changes{l: l, wait: x.Wait}
}

// until polls until a change of workspace id has arrived (a marker write
// made after everything the test wants delivered or not) and returns
// everything received so far. Notifications arrive in commit order, so
// when the marker is there, so is everything written before it.
func (c *changes) until(t *testing.T, id string) []ports.Change {
	t.Helper()
	awaitSignal(t, c.wait, "change notification of "+id, c.l.Ready(), func() bool {
		got, err := c.l.Poll(t.Context())
		require.NoError(t, err)
		c.got = append(c.got, got...)
		for _, ch := range c.got {
			if ch.WorkspaceID == id {
				return true
			}
		}
		return false
	})
	out := c.got
	c.got = nil
	return out
}

// changeOf is the notification row id's current state must produce (At
// left zero: the suite does not compare it).
func (x StoreTarget) changeOf(t *testing.T, id string) ports.Change {
	t.Helper()
	w := x.get(t, id)
	return ports.ChangeOf(&w, time.Time{})
}

func withoutAt(cs []ports.Change) []ports.Change {
	out := make([]ports.Change, len(cs))
	for i, c := range cs {
		c.At = time.Time{}
		out[i] = c
	}
	return out
}

func storeFeed(t *testing.T, x StoreTarget) {
	ctx := t.Context()
	r := rand.New(rand.NewPCG(17, 18))
	now := x.now()
	newRow := func(name string) contracts.Workspace {
		return contracts.NewWorkspace(uuidFrom(r), uuidFrom(r), name, "img:1", now)
	}
	update := func(id string, c contracts.Cond, p contracts.Patch) bool {
		t.Helper()
		x.tick(t)
		applied, err := x.Store.Update(ctx, apiWriter, id, c, p)
		require.NoError(t, err)
		return applied
	}

	before := newRow("inserted before listening")
	x.insert(t, before)

	feed := listen(t, x)
	row := newRow("watched")
	x.insert(t, row)
	want := []ports.Change{x.changeOf(t, row.ID)}
	require.Equal(t, want, withoutAt(feed.until(t, row.ID)), "an insert notifies; earlier writes do not")

	// Writes that change no notify column notify nobody.
	require.True(t, update(row.ID, contracts.Cond{}, contracts.Patch{Name: contracts.Some("renamed"), Memo: contracts.Some("m")}))
	require.True(t, update(row.ID, contracts.Cond{}, contracts.Patch{ObservedStatus: contracts.Some(row.ObservedStatus)}),
		"a notify column set to its current value")
	require.False(t, update(row.ID, contracts.Cond{Operation: contracts.Some(contracts.OpDeleting)},
		contracts.Patch{Operation: contracts.Some(contracts.OpStarting)}), "a refused CAS")
	x.tick(t)
	require.NoError(t, x.Store.MarkObserved(ctx, healthWriter, []string{row.ID}, x.now()))
	// Writes that change a notify column notify once each.
	want = nil
	require.True(t, update(row.ID, contracts.Cond{}, contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedRunning)}))
	want = append(want, x.changeOf(t, row.ID))
	ei := errInfo(x.now())
	require.True(t, update(row.ID, contracts.Cond{}, contracts.Patch{
		HealthStatus: contracts.Some(contracts.HealthError), ErrorInfo: contracts.Some(&ei),
		ErrorMessage: contracts.Some(ei.Message), ErrorCount: contracts.Some(1),
	}))
	want = append(want, x.changeOf(t, row.ID))
	require.True(t, update(row.ID, contracts.Cond{}, contracts.Patch{DeletedAt: contracts.Some(x.now())}))
	want = append(want, x.changeOf(t, row.ID))
	err2 := ei
	err2.Message = "another message"
	require.True(t, update(row.ID, contracts.Cond{}, contracts.Patch{ErrorInfo: contracts.Some(&err2)}),
		"error_info changing inside")
	want = append(want, x.changeOf(t, row.ID))

	// The other listener opened now sees only what follows.
	late := listen(t, x)
	require.True(t, update(row.ID, contracts.Cond{}, contracts.Patch{
		Operation: contracts.Some(contracts.OpDeleting), ArchiveKey: contracts.Some(contracts.ArchiveKey(row.ID, "op")),
	}))
	last := x.changeOf(t, row.ID)
	want = append(want, last)
	marker := newRow("marker")
	x.insert(t, marker)
	markerChange := x.changeOf(t, marker.ID)
	want = append(want, markerChange)

	require.Equal(t, want, withoutAt(feed.until(t, marker.ID)),
		"exactly one notification per notify-column change, in order, then the marker")
	require.Equal(t, []ports.Change{last, markerChange}, withoutAt(late.until(t, marker.ID)),
		"a listener sees only what is written after it listened")
	require.NoError(t, late.l.Close())
}
