package contracttest

import (
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// storeInput: values the table cannot hold (a NUL character, invalid
// UTF-8, more characters than a varchar column) are refused by every write
// with contracts.ErrInvalidInput and change nothing, on a fake exactly as
// on PostgreSQL; what it can hold (multi-byte characters up to the column's
// length, very long text) round-trips unchanged.
func storeInput(t *testing.T, x StoreTarget) {
	ctx := t.Context()
	r := rand.New(rand.NewPCG(21, 22))
	now := x.now()

	bad := map[string]string{
		"NUL":                    "before\x00after",
		"invalid UTF-8":          "caf\xe9",
		"a lone continuation":    "\x80",
		"a truncated 3-byte seq": "\xe2\x82",
	}
	textFields := map[string]func(w *contracts.Workspace, v string){
		"name":        func(w *contracts.Workspace, v string) { w.Name = v },
		"description": func(w *contracts.Workspace, v string) { w.Description = v },
		"memo":        func(w *contracts.Workspace, v string) { w.Memo = v },
		"image_ref":   func(w *contracts.Workspace, v string) { w.ImageRef = v },
		"error_info": func(w *contracts.Workspace, v string) {
			w.ErrorInfo = &contracts.ErrorInfo{Reason: contracts.ReasonMismatch, Message: v}
		},
	}
	for what, v := range bad {
		for field, set := range textFields {
			w := contracts.NewWorkspace(uuidFrom(r), uuidFrom(r), "n", "img:1", now)
			set(&w, v)
			err := x.Store.Insert(ctx, apiWriter, w)
			require.ErrorIs(t, err, contracts.ErrInvalidInput, "insert with %s in %s", what, field)
			_, gerr := x.Store.Get(ctx, w.ID)
			require.ErrorIs(t, gerr, contracts.ErrNotFound, "a refused insert writes nothing")
		}
	}

	row := contracts.NewWorkspace(uuidFrom(r), uuidFrom(r), "n", "img:1", now)
	x.insert(t, row)
	patchFields := map[string]func(v string) contracts.Patch{
		"name":          func(v string) contracts.Patch { return contracts.Patch{Name: contracts.Some(v)} },
		"description":   func(v string) contracts.Patch { return contracts.Patch{Description: contracts.Some(v)} },
		"memo":          func(v string) contracts.Patch { return contracts.Patch{Memo: contracts.Some(v)} },
		"error_message": func(v string) contracts.Patch { return contracts.Patch{ErrorMessage: contracts.Some(v)} },
		"error_info": func(v string) contracts.Patch {
			return contracts.Patch{ErrorInfo: contracts.Some(&contracts.ErrorInfo{Reason: contracts.ReasonMismatch, Context: map[string]any{"detail": v}})}
		},
	}
	for what, v := range bad {
		for field, mk := range patchFields {
			// Several columns at once: the valid one is not written either.
			p := mk(v)
			p.ErrorCount = contracts.Some(9)
			applied, err := x.Store.Update(ctx, apiWriter, row.ID, contracts.Cond{}, p)
			require.ErrorIs(t, err, contracts.ErrInvalidInput, "update with %s in %s", what, field)
			require.False(t, applied)
			err = x.Store.UpdateMany(ctx, healthWriter, []ports.RowUpdate{
				{ID: row.ID, Patch: contracts.Patch{ObservedAt: contracts.Some(now)}},
				{ID: row.ID, Patch: p},
			})
			require.ErrorIs(t, err, contracts.ErrInvalidInput, "update many with %s in %s", what, field)
		}
	}
	x.requireRow(t, row, "refused updates write nothing, not even the valid rows of a batch")

	// What fits round-trips exactly: lengths are characters, not bytes.
	fits := contracts.NewWorkspace(uuidFrom(r), uuidFrom(r), strings.Repeat("é", 255), strings.Repeat("😀", 512), now)
	fits.Description = strings.Repeat("ü", 1<<20) // very long text: 2 MiB
	fits.Memo = "tab\tnewline\nquote' backslash\\ emoji 🚀 and U+FFFD \uFFFD"
	x.insert(t, fits)
	x.requireRow(t, fits, "255 two-byte characters, 512 four-byte characters, 2 MiB of text")

	tooLong := contracts.NewWorkspace(uuidFrom(r), uuidFrom(r), strings.Repeat("é", 256), "img:1", now)
	require.ErrorIs(t, x.Store.Insert(ctx, apiWriter, tooLong), contracts.ErrInvalidInput, "256 characters in a varchar(255)")
	tooLong = contracts.NewWorkspace(uuidFrom(r), uuidFrom(r), "n", strings.Repeat("i", 513), now)
	require.ErrorIs(t, x.Store.Insert(ctx, apiWriter, tooLong), contracts.ErrInvalidInput, "513 characters in a varchar(512)")
	applied, err := x.Store.Update(ctx, apiWriter, fits.ID, contracts.Cond{}, contracts.Patch{Name: contracts.Some(strings.Repeat("n", 256))})
	require.ErrorIs(t, err, contracts.ErrInvalidInput)
	require.False(t, applied)
	x.requireRow(t, fits, "unchanged")

	huge := strings.Repeat("m", 8<<20)
	applied, err = x.Store.Update(ctx, apiWriter, fits.ID, contracts.Cond{}, contracts.Patch{Memo: contracts.Some(huge)})
	require.NoError(t, err, "an 8 MiB memo is text the table holds")
	require.True(t, applied)
	require.Equal(t, huge, x.get(t, fits.ID).Memo)
}

// storeLimitGuard: the running-limit guard of InsertWithinLimits and
// UpdateWithinLimits (SPEC 4.3 as amended).
func storeLimitGuard(t *testing.T, x StoreTarget) {
	ctx := t.Context()
	r := rand.New(rand.NewPCG(23, 24))
	now := x.now()
	l := contracts.Limits{MaxRunningPerUser: 2, MaxRunningGlobal: 4}
	alice, bob, carol := uuidFrom(r), uuidFrom(r), uuidFrom(r)
	mk := func(owner string, d contracts.DesiredState) contracts.Workspace {
		w := contracts.NewWorkspace(uuidFrom(r), owner, "n", "img:1", now)
		w.DesiredState = d
		return w
	}
	guardedInsert := func(w contracts.Workspace) error {
		t.Helper()
		return x.Store.InsertWithinLimits(ctx, apiWriter, w, l)
	}

	a1, a2 := mk(alice, contracts.DesiredRunning), mk(alice, contracts.DesiredRunning)
	require.NoError(t, guardedInsert(a1))
	require.NoError(t, guardedInsert(a2), "desired RUNNING counts: the second is the last that fits")
	a3 := mk(alice, contracts.DesiredRunning)
	err := guardedInsert(a3)
	var le *contracts.LimitExceeded
	require.ErrorAs(t, err, &le)
	want := []string{a1.ID, a2.ID}
	slices.Sort(want)
	require.Equal(t, &contracts.LimitExceeded{LimitType: contracts.LimitPerUser, Current: 2, Max: 2, RunningWorkspaces: want}, le,
		"per user, with the owner's counting workspaces in id order")
	_, gerr := x.Store.Get(ctx, a3.ID)
	require.ErrorIs(t, gerr, contracts.ErrNotFound, "a refused insert writes nothing")

	// A STANDBY insert passes the guard (nothing more would run)…
	a4 := mk(alice, contracts.DesiredStandby)
	x.insert(t, a4)
	// …but raising it is refused, and nothing is written.
	raise := contracts.Patch{DesiredState: contracts.Some(contracts.DesiredRunning)}
	cond := contracts.Cond{DesiredState: contracts.Some(contracts.DesiredStandby), Operation: contracts.Some(contracts.OpNone)}
	applied, err := x.Store.UpdateWithinLimits(ctx, apiWriter, a4.ID, cond, raise, l)
	require.ErrorAs(t, err, &le)
	require.Equal(t, contracts.LimitPerUser, le.LimitType)
	require.False(t, applied)
	x.requireRow(t, a4, "a refused update writes nothing")

	// A failed condition is no error and checks no limit.
	applied, err = x.Store.UpdateWithinLimits(ctx, apiWriter, a4.ID, contracts.Cond{DesiredState: contracts.Some(contracts.DesiredPending)}, raise, l)
	require.NoError(t, err)
	require.False(t, applied)

	// The row written is never counted against itself: a1 may be
	// re-raised, renamed… while alice is at her limit.
	applied, err = x.Store.UpdateWithinLimits(ctx, apiWriter, a1.ID, contracts.Cond{}, contracts.Patch{Name: contracts.Some("renamed")}, l)
	require.NoError(t, err)
	require.True(t, applied)

	// Health ERROR and soft-deleted rows do not count; observed RUNNING
	// does, whatever is desired.
	ok, err := x.Store.Update(ctx, healthWriter, a2.ID, contracts.Cond{}, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)})
	require.NoError(t, err)
	require.True(t, ok)
	applied, err = x.Store.UpdateWithinLimits(ctx, apiWriter, a4.ID, cond, raise, l)
	require.NoError(t, err, "a2 is in ERROR: alice has one counting")
	require.True(t, applied)
	require.Equal(t, contracts.DesiredRunning, x.get(t, a4.ID).DesiredState)

	b1 := mk(bob, contracts.DesiredStandby)
	x.insert(t, b1)
	ok, err = x.Store.Update(ctx, healthWriter, b1.ID, contracts.Cond{}, contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedRunning)})
	require.NoError(t, err)
	require.True(t, ok)
	gone := mk(bob, contracts.DesiredRunning)
	gone.DeletedAt = now
	x.insert(t, gone)

	// Global: a1, a4, b1 count (3 of 4): one more fits, then none.
	require.NoError(t, guardedInsert(mk(carol, contracts.DesiredRunning)))
	err = guardedInsert(mk(carol, contracts.DesiredRunning))
	require.ErrorAs(t, err, &le)
	require.Equal(t, &contracts.LimitExceeded{LimitType: contracts.LimitGlobal, Current: 4, Max: 4}, le,
		"global, without a running list")

	// A missing row is not found; a guarded insert of a duplicate id is
	// refused like any insert.
	_, err = x.Store.UpdateWithinLimits(ctx, apiWriter, uuidFrom(r), contracts.Cond{}, raise, l)
	require.ErrorIs(t, err, contracts.ErrNotFound)
	require.Error(t, x.Store.InsertWithinLimits(ctx, apiWriter, a1, contracts.Limits{MaxRunningPerUser: 100, MaxRunningGlobal: 100}))
}

// storeLimitConcurrency: 240 guarded writes at once — inserts and raises
// of 12 users — against limits of 2 per user and 15 overall. Whatever the
// interleaving, exactly 15 workspaces end up counting (12 users could
// reach 24, so the global limit is reached), no user has more than 2, and
// every refusal is a *contracts.LimitExceeded.
func storeLimitConcurrency(t *testing.T, x StoreTarget) {
	ctx := t.Context()
	r := rand.New(rand.NewPCG(25, 26))
	now := x.now()
	l := contracts.Limits{MaxRunningPerUser: 2, MaxRunningGlobal: 15}
	const users, perUser = 12, 20
	type job struct {
		insert contracts.Workspace
		raise  string
	}
	var jobs []job
	for range users {
		owner := uuidFrom(r)
		for i := range perUser {
			w := contracts.NewWorkspace(uuidFrom(r), owner, "n", "img:1", now)
			if i%2 == 0 {
				jobs = append(jobs, job{insert: w})
				continue
			}
			w.DesiredState = contracts.DesiredStandby
			x.insert(t, w)
			jobs = append(jobs, job{raise: w.ID})
		}
	}
	errs := make(chan error, len(jobs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if j.raise == "" {
				errs <- x.Store.InsertWithinLimits(ctx, apiWriter, j.insert, l)
				return
			}
			_, err := x.Store.UpdateWithinLimits(ctx, apiWriter, j.raise,
				contracts.Cond{DesiredState: contracts.Some(contracts.DesiredStandby)},
				contracts.Patch{DesiredState: contracts.Some(contracts.DesiredRunning)}, l)
			errs <- err
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	refused := 0
	for err := range errs {
		if err == nil {
			continue
		}
		var le *contracts.LimitExceeded
		require.ErrorAs(t, err, &le, "the only refusal is a limit")
		refused++
	}
	rows, err := x.Store.List(ctx, contracts.FilterRunning)
	require.NoError(t, err)
	require.Len(t, rows, l.MaxRunningGlobal, "the global limit is reached and never exceeded")
	per := map[string]int{}
	for i := range rows {
		per[rows[i].OwnerUserID]++
	}
	for owner, n := range per {
		require.LessOrEqual(t, n, l.MaxRunningPerUser, "user %s", owner)
	}
	require.Equal(t, len(jobs)-l.MaxRunningGlobal, refused)
}
