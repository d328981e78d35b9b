package wire

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// drawArgs draws arguments of every type AppendArgs knows, with text
// that needs escaping now and then.
func drawArgs(t *rapid.T) any {
	text := func(label string) string {
		return rapid.OneOf(rapid.StringMatching(`[a-z0-9-]{0,12}`), rapid.String()).Draw(t, label)
	}
	n := rapid.Int64Range(0, 1<<62).Draw(t, "n")
	switch rapid.IntRange(0, 9).Draw(t, "type") {
	case 0:
		return None{}
	case 1:
		return ID{ID: text("id")}
	case 2:
		return Key{Key: text("key")}
	case 3:
		return StoreList{Filter: Filter(text("filter"))}
	case 4:
		return TryAcquire{Holder: text("holder")}
	case 5:
		return Lease{Lease: n}
	case 6:
		return Listener{Listener: n}
	case 7:
		return Subscription{Subscription: n}
	case 8:
		return StoreMarkObserved{IDs: nil}
	}
	var at Time
	if rapid.Bool().Draw(t, "at") {
		at = T(time.Unix(rapid.Int64Range(0, 1<<33).Draw(t, "s"), rapid.Int64Range(0, 999999999).Draw(t, "ns")))
	}
	return StoreMarkObserved{
		Writer: Writer{Component: contracts.Component(text("component")), Instance: text("instance"),
			Epoch: rapid.Int64Range(-3, 1<<40).Draw(t, "epoch"), OnBehalf: contracts.Component(text("on_behalf"))},
		IDs: rapid.SliceOf(rapid.String()).Draw(t, "ids"), At: at,
	}
}

func TestAppendArgsIsJSONMarshal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := drawArgs(t)
		want, err := json.Marshal(a)
		require.NoError(t, err)
		got, ok := AppendArgs([]byte("x"), a)
		if m, isMark := a.(StoreMarkObserved); isMark && m.IDs == nil {
			require.False(t, ok)
			return
		}
		require.True(t, ok, "%T", a)
		require.Equal(t, "x"+string(want), string(got))
	})
	_, ok := AppendArgs(nil, StoreUpdate{})
	require.False(t, ok)
}

// readValueLines are values ReadValue takes or leaves, for each type.
var readValueLines = []string{
	`[]`, `null`, `["a","b"]`, `["a\u0041"]`, `["a",]`, `[1]`, `[ "a"]`, `"x"`, `"x\"y"`, `"x" `, `{"applied":true}`, `{"applied":false}`,
	`{"applied":1}`, `{"value":"v","ok":true}`, `{"value":"","ok":false}`, `{"value":"v","ok":true,"x":1}`, `{"ok":true,"value":"v"}`,
	`[{"workspace_id":"w1","running":true},{"workspace_id":"w2","running":false}]`, `[{"workspace_id":"w1","running":tru}]`,
	`[{"workspace_id":"w1"}]`, `[{"workspace_id":"w1","running":true,"x":1}]`, "[\"\xff\"]", `[{"workspace_id":"w1","observed_status":"RUNNING"}]`,
}

// agreeValue checks that what ReadValue takes, json.Unmarshal reads the
// same, for every type ReadValue knows.
func agreeValue(t require.TestingT, raw []byte) int {
	took := 0
	for _, a := range []func() (any, any){
		func() (any, any) { return new([]string), new([]string) },
		func() (any, any) { return new([]InstanceState), new([]InstanceState) },
		func() (any, any) { return new([]ports.Change), new([]ports.Change) },
		func() (any, any) { return new([]Message), new([]Message) },
		func() (any, any) { return new(string), new(string) },
		func() (any, any) { return new(BusValue), new(BusValue) },
		func() (any, any) { return new(Applied), new(Applied) },
	} {
		fast, slow := a()
		if !ReadValue(raw, fast) {
			continue
		}
		took++
		require.NoError(t, json.Unmarshal(raw, slow), "%s", raw)
		require.Equal(t, slow, fast, "%s", raw)
	}
	return took
}

func TestReadValueAgreesWithJSONUnmarshal(t *testing.T) {
	took := 0
	for _, l := range readValueLines {
		took += agreeValue(t, []byte(l))
	}
	require.Greater(t, took, 10)
	rapid.Check(t, func(t *rapid.T) {
		for _, v := range []any{
			rapid.SliceOf(rapid.String()).Draw(t, "strings"),
			rapid.String().Draw(t, "string"),
			BusValue{Value: rapid.String().Draw(t, "value"), OK: rapid.Bool().Draw(t, "ok")},
			[]InstanceState{{WorkspaceID: rapid.String().Draw(t, "ws"), Running: rapid.Bool().Draw(t, "running")}},
			Applied{Applied: rapid.Bool().Draw(t, "applied")},
		} {
			raw, err := json.Marshal(v)
			require.NoError(t, err)
			require.Positive(t, agreeValue(t, raw), "%s", raw)
		}
	})
}

func FuzzReadValueAgrees(f *testing.F) {
	for _, l := range readValueLines {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { agreeValue(t, raw) })
}

func TestAppendDoneIsJSONMarshal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		next := T(time.Unix(rapid.Int64Range(0, 1<<33).Draw(t, "s"), rapid.Int64Range(0, 999999999).Draw(t, "ns")))
		m := FromChild{Type: TDone, Next: &next}
		if rapid.Bool().Draw(t, "wake") {
			w := &Wake{EveryNs: rapid.Int64Range(1, 1<<40).Draw(t, "every"), Calls: []Call{}}
			for range rapid.IntRange(0, 3).Draw(t, "calls") {
				a := drawArgs(t)
				raw, err := json.Marshal(a)
				require.NoError(t, err)
				w.Calls = append(w.Calls, Call{Method: rapid.SampledFrom([]string{MLeaseCheck, MListenerPoll, "a.b"}).Draw(t, "method"), Args: raw})
			}
			if rapid.Bool().Draw(t, "until") {
				u := T(next.Add(time.Duration(rapid.Int64Range(1, 1<<40).Draw(t, "in"))))
				w.Until = &u
			}
			m.Wake = w
		}
		want, err := json.Marshal(m)
		require.NoError(t, err)
		got, ok := AppendDone(nil, next, m.Wake)
		if !ok {
			// Only arguments json.Marshal would rewrite are left to it.
			for _, c := range m.Wake.Calls {
				if !compactArgs(c.Args) {
					return
				}
			}
			t.Fatalf("AppendDone left %s", want)
		}
		require.Equal(t, string(want), string(got)+"}")
	})
	for _, args := range []string{`{"a": 1}`, `{"a":"<"}`, `{"a":"\u003c"}`, `{"a":"é"}`, `[1]`} {
		next := T(time.Unix(5, 0))
		w := &Wake{EveryNs: 1, Calls: []Call{{Method: "a", Args: json.RawMessage(args)}}}
		want, err := json.Marshal(FromChild{Type: TDone, Next: &next, Wake: w})
		require.NoError(t, err)
		if got, ok := AppendDone(nil, next, w); ok {
			require.Equal(t, string(want), string(got)+"}", args)
		}
	}
}
