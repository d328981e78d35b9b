package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

var t0 = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// drawTime draws the zero time or a time with nanoseconds.
func drawTime(t *rapid.T, label string) time.Time {
	if rapid.Bool().Draw(t, label+"-null") {
		return time.Time{}
	}
	return t0.Add(time.Duration(rapid.Int64Range(0, 400*24*int64(time.Hour)).Draw(t, label)))
}

func drawText(t *rapid.T, label string) string {
	return rapid.OneOf(rapid.Just(""), rapid.String(), rapid.SampledFrom([]string{"a\"b\\c\n", "ünïcödé", "\u2028"})).Draw(t, label)
}

func drawErrorInfo(t *rapid.T) *contracts.ErrorInfo {
	if rapid.Bool().Draw(t, "error_info-null") {
		return nil
	}
	e := &contracts.ErrorInfo{
		Reason:     rapid.SampledFrom([]contracts.Reason{contracts.ReasonMismatch, contracts.ReasonTimeout, contracts.ReasonDataLost}).Draw(t, "reason"),
		Message:    drawText(t, "message"),
		IsTerminal: rapid.Bool().Draw(t, "terminal"),
		Operation:  rapid.SampledFrom(contracts.AllOperations).Draw(t, "ei-op"),
		ErrorCount: rapid.IntRange(0, 5).Draw(t, "ei-count"),
		OccurredAt: drawTime(t, "occurred"),
	}
	if rapid.Bool().Draw(t, "context") {
		// Context values cross as JSON values: strings stay strings.
		e.Context = map[string]any{"violation": drawText(t, "violation")}
	}
	return e
}

func drawWorkspace(t *rapid.T) contracts.Workspace {
	w := contracts.NewWorkspace(drawText(t, "id"), drawText(t, "owner"), drawText(t, "name"), drawText(t, "image"), drawTime(t, "created"))
	w.Description, w.Memo = drawText(t, "description"), drawText(t, "memo")
	if rapid.Bool().Draw(t, "home_ctx") {
		w.HomeCtx = &contracts.HomeCtx{RestoreMarker: drawText(t, "marker")}
	}
	w.ObservedStatus = rapid.SampledFrom(contracts.AllObserved).Draw(t, "observed")
	w.HealthStatus = rapid.SampledFrom([]contracts.HealthStatus{contracts.HealthOK, contracts.HealthError}).Draw(t, "health")
	w.ObservedAt = drawTime(t, "observed_at")
	w.Operation = rapid.SampledFrom(contracts.AllOperations).Draw(t, "op")
	w.OpStartedAt = drawTime(t, "op_started_at")
	w.OpID, w.ArchiveKey, w.ErrorMessage = drawText(t, "op_id"), drawText(t, "archive_key"), drawText(t, "error_message")
	w.ErrorCount = rapid.IntRange(0, 3).Draw(t, "count")
	w.ErrorInfo = drawErrorInfo(t)
	w.PreviousStatus = rapid.SampledFrom(append([]contracts.ObservedStatus{""}, contracts.AllObserved...)).Draw(t, "previous")
	w.DesiredState = rapid.SampledFrom(contracts.AllDesired).Draw(t, "desired")
	w.DeletedAt, w.LastAccessAt, w.UpdatedAt = drawTime(t, "deleted_at"), drawTime(t, "last_access_at"), drawTime(t, "updated")
	w.StandbyTTLSeconds, w.ArchiveTTLSeconds = rapid.IntRange(0, 1<<30).Draw(t, "sttl"), rapid.IntRange(0, 1<<30).Draw(t, "attl")
	return w
}

func drawPatch(t *rapid.T) contracts.Patch {
	var p contracts.Patch
	w := drawWorkspace(t)
	set := func(col string) bool { return rapid.Bool().Draw(t, "set-"+col) }
	if set("name") {
		p.Name = contracts.Some(w.Name)
	}
	if set("description") {
		p.Description = contracts.Some(w.Description)
	}
	if set("memo") {
		p.Memo = contracts.Some(w.Memo)
	}
	if set("home_ctx") {
		p.HomeCtx = contracts.Some(w.HomeCtx)
	}
	if set("observed") {
		p.ObservedStatus = contracts.Some(w.ObservedStatus)
	}
	if set("health") {
		p.HealthStatus = contracts.Some(w.HealthStatus)
	}
	if set("observed_at") {
		p.ObservedAt = contracts.Some(w.ObservedAt)
	}
	if set("op") {
		p.Operation = contracts.Some(w.Operation)
	}
	if set("op_started_at") {
		p.OpStartedAt = contracts.Some(w.OpStartedAt)
	}
	if set("op_id") {
		p.OpID = contracts.Some(w.OpID)
	}
	if set("archive_key") {
		p.ArchiveKey = contracts.Some(w.ArchiveKey)
	}
	if set("count") {
		p.ErrorCount = contracts.Some(w.ErrorCount)
	}
	if set("error_info") {
		p.ErrorInfo = contracts.Some(w.ErrorInfo)
	}
	if set("error_message") {
		p.ErrorMessage = contracts.Some(w.ErrorMessage)
	}
	if set("previous") {
		p.PreviousStatus = contracts.Some(w.PreviousStatus)
	}
	if set("desired") {
		p.DesiredState = contracts.Some(w.DesiredState)
	}
	if set("deleted_at") {
		p.DeletedAt = contracts.Some(w.DeletedAt)
	}
	if set("sttl") {
		p.StandbyTTLSeconds = contracts.Some(w.StandbyTTLSeconds)
	}
	if set("attl") {
		p.ArchiveTTLSeconds = contracts.Some(w.ArchiveTTLSeconds)
	}
	if set("last_access_at") {
		p.LastAccessAt = contracts.Some(w.LastAccessAt)
	}
	return p
}

// A row crosses the protocol unchanged: every column, nanoseconds, null
// and pointer columns included.
func TestWorkspaceRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := drawWorkspace(t)
		b, err := json.Marshal(FromWorkspace(&w))
		require.NoError(t, err)
		var back Workspace
		require.NoError(t, strictUnmarshal(b, &back))
		got, err := back.Contracts()
		require.NoError(t, err)
		require.Equal(t, w, got)
	})
}

// A patch crosses unchanged: the same columns assigned, the same values,
// and so the same canonical encoding in a history.
func TestPatchRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := drawPatch(t)
		b, err := json.Marshal(Patch{p})
		require.NoError(t, err)
		var back Patch
		require.NoError(t, json.Unmarshal(b, &back))
		require.Equal(t, p, back.Patch)
		require.Equal(t, history.AppendPatch(nil, &p), history.AppendPatch(nil, &back.Patch))
	})
}

func TestPatchExampleOfTheSpecification(t *testing.T) {
	var p Patch
	require.NoError(t, json.Unmarshal([]byte(`{"operation": "STARTING", "op_started_at": "2026-01-05T00:00:02Z", "error_info": null}`), &p))
	require.Equal(t, contracts.Patch{
		Operation:   contracts.Some(contracts.OpStarting),
		OpStartedAt: contracts.Some(t0.Add(2 * time.Second)),
		ErrorInfo:   contracts.Some[*contracts.ErrorInfo](nil),
	}, p.Patch)
	b, err := json.Marshal(p)
	require.NoError(t, err)
	require.JSONEq(t, `{"operation":"STARTING","op_started_at":"2026-01-05T00:00:02Z","error_info":null}`, string(b))
}

// Every column contracts.Patch can assign has a codec: a patch assigning
// all of them crosses with all of them.
func TestEveryUpdatableColumnHasACodec(t *testing.T) {
	var full contracts.Patch
	v := reflect.ValueOf(&full).Elem()
	for i := range v.NumField() {
		v.Field(i).FieldByName("Set").SetBool(true)
	}
	require.Equal(t, full.Columns(), PatchColumns())
	b, err := json.Marshal(Patch{full})
	require.NoError(t, err)
	var cols map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &cols))
	require.Len(t, cols, len(full.Columns()))
}

func TestPatchRejectsWhatTheStoreCouldNotHold(t *testing.T) {
	for in, want := range map[string]string{
		`{"operation": "STARTNG"}`:                      `operation: "STARTNG": want NONE`,
		`{"observd_status": "RUNNING"}`:                 `observd_status: not an updatable column`,
		`{"id": "x"}`:                                   `id: not an updatable column`,
		`{"op_started_at": "yesterday"}`:                `want RFC 3339`,
		`{"error_count": "3"}`:                          `want an integer`,
		`{"error_info": {"reason": "Oops"}}`:            `error_info.reason "Oops"`,
		`{"error_info": {"reason": "Timeout", "x": 1}}`: `unknown field "x"`,
		`[1]`:  `want an object`,
		`null`: `want an object`,
	} {
		var p Patch
		err := json.Unmarshal([]byte(in), &p)
		require.ErrorContains(t, err, want, in)
	}
}

func TestCondWriterFilter(t *testing.T) {
	c := contracts.Cond{Operation: contracts.Some(contracts.OpNone), NotTerminal: true}
	b, err := json.Marshal(FromCond(c))
	require.NoError(t, err)
	require.JSONEq(t, `{"operation":"NONE","not_terminal":true}`, string(b))
	var back Cond
	require.NoError(t, json.Unmarshal(b, &back))
	got, err := back.Contracts()
	require.NoError(t, err)
	require.Equal(t, c, got)
	bad := contracts.OpNone + "X"
	_, err = Cond{Operation: &bad}.Contracts()
	require.ErrorContains(t, err, "not an operation")

	w := contracts.Writer{Component: contracts.CompStateReconciler, Instance: "coord-1", Epoch: 3}
	gw, err := FromWriter(w).Contracts()
	require.NoError(t, err)
	require.Equal(t, w, gw)
	_, err = Writer{Component: "reconciler"}.Contracts()
	require.ErrorContains(t, err, `writer.component "reconciler"`)

	for f := contracts.FilterAll; f <= contracts.FilterRunning; f++ {
		back, err := FromFilter(f).Contracts()
		require.NoError(t, err)
		require.Equal(t, f, back)
	}
	_, err = Filter("everything").Contracts()
	require.ErrorContains(t, err, "want one of all, active, reconcile, ttl, running")
}

func TestTime(t *testing.T) {
	in := t0.Add(1500 * time.Millisecond).Add(7)
	b, err := json.Marshal(T(in))
	require.NoError(t, err)
	require.Equal(t, `"2026-01-05T00:00:01.500000007Z"`, string(b))
	b, err = json.Marshal(T(time.Time{}))
	require.NoError(t, err)
	require.Equal(t, `null`, string(b))
	var back Time
	require.NoError(t, json.Unmarshal([]byte(`"2026-01-05T01:00:01.5+01:00"`), &back))
	require.Equal(t, t0.Add(1500*time.Millisecond), back.Time, "any offset, kept in UTC")
	require.Error(t, json.Unmarshal([]byte(`12345`), &back))
	require.Error(t, json.Unmarshal([]byte(`"2026-01-05"`), &back))
}

// Every error a port returns crosses with its exact text, and errors.Is
// and errors.As see on the other side what they saw on this one.
func TestErrorsCrossWithTheirNameTextAndCause(t *testing.T) {
	pe := &contracts.ProviderError{Code: contracts.CodeDockerUnreachable, Message: "outage", Context: map[string]any{"endpoint": "docker"}}
	cases := []struct {
		err  error
		name string
		is   error
	}{
		{contracts.ErrNotFound, ErrNotFound, contracts.ErrNotFound},
		{fmt.Errorf("store: %w", contracts.ErrFenced), ErrFenced, contracts.ErrFenced},
		{contracts.ErrNotLeader, ErrNotLeader, contracts.ErrNotLeader},
		{fmt.Errorf("instance coord-1: %w", contracts.ErrCrashed), ErrCrashed, contracts.ErrCrashed},
		{contracts.ErrUnavailable, ErrUnavailable, contracts.ErrUnavailable},
		{fmt.Errorf("start: %w", pe), ErrProvider, nil},
		{errors.New("something else"), ErrOther, nil},
	}
	for _, c := range cases {
		e := FromError(c.err)
		b, err := json.Marshal(e)
		require.NoError(t, err)
		var back Error
		require.NoError(t, strictUnmarshal(b, &back))
		require.Equal(t, c.name, back.Name)
		got, invalid := back.Err()
		require.NoError(t, invalid)
		require.Equal(t, c.err.Error(), got.Error())
		if c.is != nil {
			require.ErrorIs(t, got, c.is)
		}
	}
	got, _ := FromError(fmt.Errorf("start: %w", pe)).Err()
	var gotPE *contracts.ProviderError
	require.ErrorAs(t, got, &gotPE)
	require.Equal(t, pe.Code, gotPE.Code)
	require.Equal(t, "outage", gotPE.Message)
	require.Equal(t, "docker", gotPE.Context["endpoint"])

	ae := &contracts.APIError{Status: 429, Code: contracts.APILimitExceeded, Message: "per_user limit",
		Limit: &contracts.LimitExceeded{LimitType: "per_user", Current: 2, Max: 2, RunningWorkspaces: []string{"a", "b"}}}
	got, invalid := FromError(ae).Err()
	require.NoError(t, invalid)
	require.Equal(t, ae, got, "an API rejection is the *APIError itself")

	_, invalid = (&Error{Name: "kaboom", Text: "x"}).Err()
	require.ErrorContains(t, invalid, `error name "kaboom"`)
	_, invalid = (&Error{Name: ErrAPI, Text: "x"}).Err()
	require.ErrorContains(t, invalid, "want a 4xx or 5xx status")
	_, invalid = (&Error{Name: ErrProvider, Text: "x"}).Err()
	require.ErrorContains(t, invalid, "want a code")
	require.Nil(t, FromError(nil))
}

func TestDecodeMessagesStrictly(t *testing.T) {
	m, err := DecodeFromChild([]byte(`{"type":"call","method":"store.get","args":{"id":"w1"},"leader":true}`))
	require.NoError(t, err)
	require.Equal(t, "store.get", m.Method)
	require.True(t, *m.Leader)
	for in, want := range map[string]string{
		`{"type":"call","methd":"store.get"}`: `unknown field "methd"`,
		`{"type":"hello"}`:                    `unknown message type "hello"`,
		`{"method":"store.get"}`:              `without a type`,
		`not json`:                            `not a protocol message`,
		`{"type":"done"} {"type":"done"}`:     `trailing data`,
	} {
		_, err := DecodeFromChild([]byte(in))
		require.ErrorContains(t, err, want, in)
	}
	h, err := DecodeFromHarness([]byte(`{"type":"step","now":"2026-01-05T00:00:01Z"}`))
	require.NoError(t, err)
	require.Equal(t, t0.Add(time.Second), h.Now.Time)
	_, err = DecodeFromHarness([]byte(`{"type":"call"}`))
	require.ErrorContains(t, err, `unknown message type "call"`)

	b, err := AppendOK(nil, Applied{Applied: true})
	require.NoError(t, err)
	require.Equal(t, `{"type":"ok","value":{"applied":true}}`+"\n", string(b))
}

// The row codec writes rows as encoding/json does, and reads back what it
// writes as encoding/json reads it.
func TestRowCodecAgreesWithEncodingJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rows := make([]contracts.Workspace, rapid.IntRange(0, 3).Draw(t, "n"))
		for i := range rows {
			rows[i] = drawWorkspace(t)
		}
		want, err := json.Marshal(FromWorkspaces(rows))
		require.NoError(t, err)
		got := AppendWorkspaces(nil, rows)
		require.Equal(t, string(want), string(got))
		var viaJSON []Workspace
		require.NoError(t, json.Unmarshal(got, &viaJSON))
		fast, ok := ParseWorkspaces(got)
		require.True(t, ok, "%s", got)
		require.Equal(t, viaJSON, fast)
		if len(rows) > 0 {
			one, ok := ParseWorkspace(AppendWorkspace(nil, &rows[0]))
			require.True(t, ok)
			require.Equal(t, viaJSON[0], one)
		}
	})
}

// agreeRows checks that a list ParseWorkspaces takes reads as with
// encoding/json.
func agreeRows(t *testing.T, raw []byte) bool {
	fast, ok := ParseWorkspaces(raw)
	if !ok {
		return false
	}
	var viaJSON []Workspace
	require.NoError(t, json.Unmarshal(raw, &viaJSON), "%s", raw)
	require.Equal(t, viaJSON, fast, "%s", raw)
	return true
}

func FuzzParseWorkspaces(f *testing.F) {
	w := contracts.NewWorkspace("w1", "u1", "dev", "img", t0)
	w.HomeCtx = &contracts.HomeCtx{RestoreMarker: "k"}
	w.ErrorInfo = &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, Message: "m", Context: map[string]any{"a": "b"}}
	f.Add(AppendWorkspaces(nil, []contracts.Workspace{w, w}))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, raw []byte) { agreeRows(t, raw) })
}

func TestAppendRFC3339IsRFC3339Nano(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		at := time.Unix(0, rapid.Int64().Draw(t, "ns")).In(time.FixedZone("x", rapid.IntRange(-50000, 50000).Draw(t, "offset")))
		if rapid.Bool().Draw(t, "round") {
			at = at.Truncate(time.Duration(rapid.SampledFrom([]int64{1e3, 1e6, 1e9}).Draw(t, "unit")))
		}
		require.Equal(t, at.UTC().Format(time.RFC3339Nano), string(AppendRFC3339(nil, at)))
	})
	far := time.Date(12026, 1, 5, 0, 0, 0, 5, time.UTC)
	require.Equal(t, far.Format(time.RFC3339Nano), string(AppendRFC3339(nil, far)))
}

// parseUTC reads what it accepts as time.Parse does, and accepts what
// AppendRFC3339 writes for a year of four digits.
func TestParseUTCIsTimeParse(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		at := time.Unix(rapid.Int64Range(-62135596800, 253402300799).Draw(t, "s"), rapid.Int64Range(0, 999999999).Draw(t, "ns")).UTC()
		text := AppendRFC3339(nil, at)
		got, ok := parseUTC(text)
		require.True(t, ok, "%s", text)
		require.True(t, at.Equal(got) && got.Location() == time.UTC, "%s: %v", text, got)
	})
	rapid.Check(t, func(t *rapid.T) {
		text := rapid.StringMatching(`[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{0,10})?Z?`).Draw(t, "text")
		got, ok := parseUTC([]byte(text))
		want, err := time.Parse(time.RFC3339Nano, text)
		if ok {
			require.NoError(t, err, "%s", text)
			require.Equal(t, want.UTC(), got, "%s", text)
		}
	})
	for _, s := range []string{"2024-02-29T23:59:59.999999999Z", "2023-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-01-01T24:00:00Z",
		"2026-01-01T00:60:00Z", "2026-01-01T00:00:60Z", "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00.1234567890Z", "+026-01-01T00:00:00Z"} {
		got, ok := parseUTC([]byte(s))
		want, err := time.Parse(time.RFC3339Nano, s)
		if ok {
			require.NoError(t, err, s)
			require.Equal(t, want.UTC(), got, s)
		}
	}
}

// A RowReader that remembers rows reads each list as ParseWorkspaces
// does, however the rows changed since it last read them, and what it
// returns is the caller's: changing a returned row's objects changes no
// later read.
func TestRowReaderReadsAsParseWorkspaces(t *testing.T) {
	require.Equal(t, `,"error_info":`, rowFields[errorInfoField].key)
	require.Equal(t, `,"home_ctx":`, rowFields[homeCtxField].key)
	rapid.Check(t, func(t *rapid.T) {
		r := NewRowReader()
		ids := []string{"a", "b", "c"}
		rows := make([]contracts.Workspace, len(ids))
		for i := range rows {
			rows[i] = drawWorkspace(t)
			rows[i].ID = ids[i]
		}
		for pass := range rapid.IntRange(1, 5).Draw(t, "passes") {
			for i := range rows {
				switch rapid.IntRange(0, 4).Draw(t, "change") {
				case 1: // a health pass
					rows[i].ObservedAt, rows[i].UpdatedAt = drawTime(t, "observed_at"), drawTime(t, "updated")
				case 2:
					rows[i] = drawWorkspace(t)
					rows[i].ID = ids[i]
				case 3:
					if rows[i].HomeCtx != nil {
						rows[i].HomeCtx = &contracts.HomeCtx{RestoreMarker: rows[i].HomeCtx.RestoreMarker + "x"}
					}
				}
			}
			raw := AppendWorkspaces(nil, rows)
			want, ok := ParseWorkspaces(raw)
			require.True(t, ok)
			got, ok := r.ParseWorkspaces(raw)
			require.True(t, ok, "pass %d", pass)
			require.Equal(t, want, got, "pass %d", pass)
			for i := range got {
				if got[i].HomeCtx != nil {
					got[i].HomeCtx.RestoreMarker = "changed by the caller"
				}
				if got[i].ErrorInfo != nil {
					got[i].ErrorInfo.Message = "changed by the caller"
					if got[i].ErrorInfo.Context != nil {
						got[i].ErrorInfo.Context["violation"] = "changed by the caller"
						got[i].ErrorInfo.Context["added"] = []any{"by the caller"}
					}
				}
			}
			one, ok := r.ParseWorkspace(AppendWorkspace(nil, &rows[0]))
			require.True(t, ok)
			require.Equal(t, want[0], one)
		}
	})
}

// A RowReader reading into the room of the last listing (AppendWorkspaces,
// as the Go client's store does) reads each list as ParseWorkspaces does,
// however long the last one was and whatever its rows held: nothing of
// an earlier row shows through.
func TestAppendWorkspacesReusesRoomWithoutLeftovers(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := NewRowReader()
		var room []Workspace
		for pass := range rapid.IntRange(1, 6).Draw(t, "passes") {
			rows := make([]contracts.Workspace, rapid.IntRange(0, 4).Draw(t, "rows"))
			for i := range rows {
				rows[i] = drawWorkspace(t)
				rows[i].ID = rapid.SampledFrom([]string{"a", "b", "c", "d"}).Draw(t, "id")
			}
			raw := AppendWorkspaces(nil, rows)
			want, ok := ParseWorkspaces(raw)
			require.True(t, ok)
			got, ok := r.AppendWorkspaces(room[:0], raw)
			require.True(t, ok, "pass %d", pass)
			require.Equal(t, want, got, "pass %d", pass)
			room = got
		}
		_, ok := r.AppendWorkspaces(room[:0], []byte(`[{"id":1}]`))
		require.False(t, ok, "a layout of its own is left to encoding/json")
	})
}

// An error_info taken from a row's last version is a deep copy: its
// context, however nested, reads as encoding/json reads it, and a caller
// changing what it got changes no later read.
func TestRowReaderCopiesNestedErrorContext(t *testing.T) {
	w := contracts.NewWorkspace("ws-1", "user", "name", "image", time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC))
	w.ErrorInfo = &contracts.ErrorInfo{Reason: contracts.ReasonMismatch, Message: "m",
		Context: map[string]any{"a": map[string]any{"b": []any{"c", 1.5, true, nil, map[string]any{"d": "e"}}}, "f": map[string]any{}}}
	raw := AppendWorkspaces(nil, []contracts.Workspace{w})
	want, ok := ParseWorkspaces(raw)
	require.True(t, ok)
	var viaJSON []Workspace
	require.NoError(t, json.Unmarshal(raw, &viaJSON))
	require.Equal(t, viaJSON, want)
	r := NewRowReader()
	for pass := range 3 {
		got, ok := r.ParseWorkspaces(raw)
		require.True(t, ok)
		require.Equal(t, want, got, "pass %d", pass)
		inner := got[0].ErrorInfo.Context["a"].(map[string]any)
		inner["b"].([]any)[4].(map[string]any)["d"] = "changed by the caller"
		inner["x"] = "added by the caller"
		got[0].ErrorInfo.Context["f"].(map[string]any)["g"] = 1.0
		// The next pass changes another field: error_info is taken
		// from the last version on both of the reader's ways.
		if pass == 1 {
			w.UpdatedAt = w.UpdatedAt.Add(time.Second)
			raw = AppendWorkspaces(nil, []contracts.Workspace{w})
			want, ok = ParseWorkspaces(raw)
			require.True(t, ok)
		}
	}
}
