package history

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

func TestOffset(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{0, "+00:00:00.000"},
		{1500 * time.Millisecond, "+00:00:01.500"},
		{2*time.Hour + 3*time.Minute + 4*time.Second + 5*time.Millisecond, "+02:03:04.005"},
		{26*time.Hour + 30*time.Minute, "+1d02:30:00.000"},
		{-90 * time.Second, "-00:01:30.000"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, Offset(c.d), "offset %s", c.d)
	}
}

func TestLineWrite(t *testing.T) {
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	p := contracts.Patch{Operation: contracts.Some(contracts.OpStarting), ErrorInfo: contracts.Some[*contracts.ErrorInfo](nil)}
	c := contracts.Cond{Operation: contracts.Some(contracts.OpNone), NotTerminal: true} // a claim's
	e := Event{
		Seq: 42, At: start.Add(5*time.Minute + 2100*time.Millisecond), Kind: KindWrite,
		Instance: "coord-1", Component: contracts.CompStateReconciler, Epoch: 2,
		Workspace: "1a2b3c4d-0000-4000-8000-000000000000", Patch: &p, Cond: &c, Applied: true,
	}
	require.Equal(t,
		"+00:05:02.100 #42 db.write coord-1/state_reconciler e2 ws=1a2b3c4d operation=STARTING error_info=null if operation=NONE,not-terminal applied",
		Line(e, start))

	e.Applied = false
	e.Err = contracts.ErrFenced.Error()
	require.Contains(t, Line(e, start), " not-applied ERR fenced")
}

func TestLineCallAndInsert(t *testing.T) {
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	call := Event{Seq: 7, At: start.Add(time.Hour), Kind: KindCall, Instance: "coord-2", Workspace: "ws-a",
		Method: "storage.Archive", Args: "op=x", Result: "archives/ws-a/x/home.tar.zst"}
	require.Equal(t, "+01:00:00.000 #7 call coord-2 ws=ws-a storage.Archive op=x -> archives/ws-a/x/home.tar.zst", Line(call, start))

	row := contracts.NewWorkspace("ws-b", "user-1", "n", "img", start)
	ins := Event{Seq: 8, At: start, Kind: KindInsert, Component: contracts.CompAPI, Workspace: "ws-b", Row: &row}
	require.Equal(t, "+00:00:00.000 #8 db.insert api ws=ws-b owner=user-1 desired=RUNNING", Line(ins, start))

	lines := Timeline([]Event{call, ins}, start)
	require.Len(t, lines, 2)
	require.Equal(t, Line(ins, start), lines[1])
}

func TestShortIDAndCond(t *testing.T) {
	require.Equal(t, "1a2b3c4d", ShortID("1a2b3c4d-0000-4000-8000-000000000000"))
	require.Equal(t, "ws-a", ShortID("ws-a"))
	require.Equal(t, "", CondString(&contracts.Cond{}))
	require.Equal(t, "desired_state=RUNNING,not-deleted,error_info=null",
		CondString(&contracts.Cond{DesiredState: contracts.Some(contracts.DesiredRunning), NotDeleted: true, ErrorInfoNull: true}))
}

func TestRecorderTail(t *testing.T) {
	r := NewRecorder()
	for i := 0; i < 5; i++ {
		r.Add(Event{Kind: KindNote, Method: string(rune('a' + i))})
		r.Add(Event{Kind: KindCall, Method: "instances.List", Result: "3"})
	}
	tail := r.Tail(2, nil)
	require.Len(t, tail, 2)
	require.Equal(t, "e", tail[0].Method)
	require.Equal(t, int64(10), tail[1].Seq)
	require.Len(t, r.Tail(0, nil), 10)
	require.Len(t, r.Tail(20, nil), 10)

	notRoutine := func(e *Event) bool { return !Routine(e) }
	tail = r.Tail(3, notRoutine)
	require.Equal(t, []string{"c", "d", "e"}, []string{tail[0].Method, tail[1].Method, tail[2].Method})
	require.Len(t, r.Tail(0, notRoutine), 5)
}

func TestRoutine(t *testing.T) {
	require.True(t, Routine(&Event{Kind: KindCall, Method: "storage.ListVolumes"}))
	require.True(t, Routine(&Event{Kind: KindCall, Method: "objects.List", Args: "archives/"}))
	require.False(t, Routine(&Event{Kind: KindCall, Method: "instances.List", Err: "DOCKER_UNREACHABLE"}))
	require.False(t, Routine(&Event{Kind: KindCall, Method: "instances.Start", Workspace: "w"}))
	require.True(t, Routine(&Event{Kind: KindNote, Method: NoteHealthPass, Result: "4 rows observed"}))
	require.False(t, Routine(&Event{Kind: KindNote, Method: "failure"}))
	require.False(t, Routine(&Event{Kind: KindAPI, Method: "api.List"}))
}
