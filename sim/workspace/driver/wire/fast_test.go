package wire

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/contracts"
)

// Lines the fast paths take, lines they must leave to the strict decoder,
// and near misses of both.
var fastPathLines = []string{
	`{"type":"call","method":"lease.check","args":{"lease":1}}`,
	`{"type":"call","method":"lease.check","args":{"lease":1},"leader":true}`,
	`{"type":"call","method":"store.get","args":{"id":"w1"},"leader":false}`,
	`{"type":"call","method":"store.get","args":{"id":"w1","leader":true}}`,
	`{"type":"call","method":"store.get","args":{"id":"w1"},"leader":true,"leader":false}`,
	`{"type":"call","method":"store.get","args":{"id":"w1"},"method":"bus.get"}`,
	`{"type":"call","method":"store.get","args":{"id":"w1"}} {"type":"done"}`,
	`{"type":"call","method":"store.get","args":{"id":"w1"},"bogus":1}`,
	`{"type":"call","method":"store.get","args":{"id":"w1"}`,
	`{"type":"call","method":"store.get","args":[1]}`,
	`{"type":"call","method":"store.get","args":null}`,
	`{"type":"call","method":"store.get","args":}`,
	`{"type":"call","method":"store.gét","args":{}}`,
	`{"type":"call","method":"store\"get","args":{}}`,
	`{"type":"call","method":"","args":{}}`,
	`{"type":"call","method":"a","args":{"x":"}"}}`,
	`{"type":"call","method":"a","args":{"x":1}},"leader":true}`,
	`{"type":"call","method":"a","args":{"x":1}{"y":2}}`,
	`{"type":"call","method":"a", "args":{}}`,
	`{"type":"done","next":"2026-01-05T00:00:01Z","leader":true}`,
	`{"type":"done","next":"2026-01-05T00:00:01.000000001+02:00","leader":false}`,
	`{"type":"done","next":"2026-01-05T00:00:01Z","leader":true,"leader":false}`,
	`{"type":"done","next":"2026-01-05T00:00:01Z","leader":tru}`,
	`{"type":"done","next":"yesterday","leader":true}`,
	`{"type":"done","next":"2026-01-05T00:00:01\u005a","leader":true}`,
	`{"type":"done","next":"","leader":true}`,
	`{"type":"done","next":null,"leader":true}`,
	`{"type":"done","next":"2026-01-05T00:00:01Z","wake":{"calls":[{"method":"lease.check","args":{"lease":1}},{"method":"listener.poll","args":{"listener":2}}],"every_ns":1000000000,"until":"2026-01-05T00:00:30Z"},"leader":true}`,
	`{"type":"done","next":"2026-01-05T00:00:01Z","wake":{"calls":[{"method":"leadership.try_acquire","args":{"holder":"c\"1"}}],"every_ns":1000000000},"leader":false}`,
	`{"type":"done","next":"2026-01-05T00:00:01Z","wake":{"calls":[],"every_ns":1},"leader":false}`,
	`{"type":"done","next":"2026-01-05T00:00:01Z","wake":{"calls":[{"method":"a","args":{"x":"}"}}],"every_ns":01},"leader":false}`,
	`{"type":"done","next":"2026-01-05T00:00:01Z","wake":{"calls":[{"method":"a","args":{"x":[}}],"every_ns":1},"leader":false}`,
	`{"type":"done","next":"2026-01-05T00:00:01Z","wake":{"calls":[{"method":"a","args":{}}],"every_ns":1,"until":null},"leader":false}`,
	`{"type":"done","next":"2026-01-05T00:00:01Z","wake":{"calls":[{"method":"a","args":{}}],"every_ns":1},"leader":false,"x":1}`,
	`{"type":"batch","calls":[{"method":"store.list","args":{"filter":"active"}},{"method":"instances.list","args":{}}]}`,
	`{"type":"batch","calls":[{"method":"store.list","args":{"filter":"active"}}],"leader":true}`,
	`{"type":"batch","calls":[]}`,
	`{"type":"batch","calls":[{"method":"a","args":{}}],"leader":true,"leader":false}`,
	`{"type":"batch","calls":[{"method":"a","args":{}}]`,
	`{"type":"batch","calls":[{"method":"a","args":{"x":[1,{"y":"}"}]}}]}`,
	`{"type":"ok","value":{"applied":true}}`,
	`{"type":"step","now":"2026-01-05T00:00:01Z","answers":[{"type":"ok","value":null},{"type":"ok","value":[{"id":"w1","kind":"update"}]}]}`,
	`{"type":"step","now":"2026-01-05T00:00:01Z","answers":[{"type":"ok","value":{"ok":false}}]}`,
	`{"type":"step","now":"2026-01-05T00:00:01Z","answers":[{"type":"ok","value":null},{"type":"error","error":{"kind":"crashed","message":"x"}}]}`,
	`{"type":"step","now":"2026-01-05T00:00:01Z","answers":[]}`,
	`{"type":"step","now":"2026-01-05T00:00:01Z","answers":[{"type":"ok","value":nul}]}`,
	`{"type":"step","now":"2026-01-05T00:00:01Z","answers":[{"type":"ok","value":[1,]}]}`,
	`{"type":"step","now":"2026-01-05T00:00:01Z","answers":[{"type":"ok","value":[1]}],"x":1}`,
	`{"type":"step","now":"2026-01-05T00:00:01Z","answers":[{"type":"ok","value":[1]} ]}`,
	`{"type":"step","now":"2026-01-05T00:00:01Z","answers":[{"type":"ok","value":"s"}]}`,
	`{"type":"step","now":"2026-01-05T00:00:01Z","answers":[{"type":"ok","value":{"a":"]}"}},{"type":"ok","value":null}]}`,
	`{"type":"step","now":"2026-01-05T00:00:01Z","answers":[{"type":"ok","value":null}]`,
	`{"type":"ok","value":null}`,
	`{"type":"ok","value":[]}`,
	`{"type":"ok","value":"x"}`,
	`{"type":"ok","value":1}`,
	`{"type":"ok","value":1,"bogus":2}`,
	`{"type":"ok","value":{"a":1}}}`,
	`{"type":"ok","value":}`,
	`{"type":"ok","value":{"a":1}{"b":2}}`,
	`{"type":"step","now":"2026-01-05T00:00:01Z"}`,
	`{"type":"step","now":"2026-01-05T00:00:01.5-07:00"}`,
	`{"type":"step","now":"2026-01-05T00:00:01Z","now":"2027-01-05T00:00:01Z"}`,
	`{"type":"step","now":"never"}`,
	`{"type":"step","now":"2026-01-05T00:00:01Z\"}`,
	`{"type":"api","now":"2026-01-05T00:00:29.320652387Z","method":"create","args":{"user":"user-12","create":{"name":"ws-12","image_ref":"registry.local/workspace:1","standby_ttl_seconds":931,"archive_ttl_seconds":9142}}}`,
	`{"type":"api","now":"2026-01-05T00:00:29Z","method":"wake","args":{"id":"a"}}`,
	`{"type":"api","now":"2026-01-05T00:00:29Z","method":"wake","args":{"id":"a"},"args":{"id":"b"}}`,
	`{"type":"api","now":"2026-01-05T00:00:29Z","method":"wake","args":{"id":"a"},"x":1}`,
	`{"type":"api","now":"2026-01-05T00:00:29Z","method":"wake","args":{"id":"a"}{"id":"b"}}`,
	`{"type":"api","now":"2026-01-05T00:00:29Z","method":"wake","args":{"id":"a"} }`,
	`{"type":"api","now":"2026-01-05T00:00:29Z","method":"wake","args":{"id":"}"}}`,
	`{"type":"api","now":"2026-01-05T00:00:29Z","method":"wake","args":{"id":"a}}`,
	`{"type":"api","now":"2026-01-05T00:00:29Z","method":"wake","args":[1]}`,
	`{"type":"api","now":"2026-01-05T00:00:29Z","method":"wake","args":null}`,
	`{"type":"api","now":"2026-01-05T00:00:29Z","method":"Wake","args":{}}`,
	`{"type":"api","now":"2026-01-05T00:00:29Z","method":"","args":{}}`,
	`{"type":"api","now":"soon","method":"wake","args":{}}`,
	`{"type":"api","now":"2026-01-05T00:00:29\u005a","method":"wake","args":{}}`,
	`{"type":"api","now":"2026-01-05T00:00:29Z","method":"wake"}`,
	`{"type":"done","value":{"id":"w1","owner_user_id":"u","description":null,"home_ctx":{}}}`,
	`{"type":"done","value":[{"id":"w1"},{"id":"w2"}]}`,
	`{"type":"done","value":[]}`,
	`{"type":"done","value":{}}`,
	`{"type":"done","value":null}`,
	`{"type":"done","value":"x"}`,
	`{"type":"done","value":{"id":"w1"},"value":{"id":"w2"}}`,
	`{"type":"done","value":{"id":"w1"},"leader":true}`,
	`{"type":"done","value":{"id":"w1"}{"id":"w2"}}`,
	`{"type":"done","value":{"id":"w1"} }`,
	`{"type":"done","value":{"id":"}"}}`,
	`{"type":"done","value":{"id":"w1"}}}`,
	`{"type":"done","value":[1,]}`,
}

// agree checks one line: when a fast path reads it, the strict decoder
// reads it too, to the same message.
func agree(t *testing.T, line []byte) (child, harness bool) {
	t.Helper()
	if fast, ok := fastFromChild(line); ok {
		var strict FromChild
		require.NoError(t, strictUnmarshal(line, &strict), "%s", line)
		require.Equal(t, strict, fast, "%s", line)
		child = true
	}
	if fast, ok := fastFromHarness(line); ok {
		var strict FromHarness
		require.NoError(t, strictUnmarshal(line, &strict), "%s", line)
		require.Equal(t, strict, fast, "%s", line)
		harness = true
	}
	return child, harness
}

func TestFastPathsAgreeWithTheStrictDecoder(t *testing.T) {
	took := 0
	for _, l := range fastPathLines {
		c, h := agree(t, []byte(l))
		if c || h {
			took++
		}
	}
	// The ones that must go fast: what the Go client and the harness
	// write.
	for _, l := range fastPathLines[:3] {
		_, ok := fastFromChild([]byte(l))
		require.True(t, ok, l)
	}
	_, ok := fastFromChild([]byte(`{"type":"done","next":"2026-01-05T00:00:01Z","leader":true}`))
	require.True(t, ok)
	_, ok = fastFromHarness([]byte(`{"type":"ok","value":{"applied":true}}`))
	require.True(t, ok)
	// A done with a wake-up as the Go client writes it: encoding/json's
	// object, the leader flag appended.
	next, until := T(t0.Add(time.Second)), T(t0.Add(30*time.Second))
	b, err := json.Marshal(FromChild{Type: TDone, Next: &next, Wake: &Wake{
		Calls:   []Call{{Method: MLeaseCheck, Args: json.RawMessage(`{"lease":1}`)}, {Method: MListenerPoll, Args: json.RawMessage(`{"listener":2}`)}},
		EveryNs: int64(time.Second), Until: &until}})
	require.NoError(t, err)
	line := append(b[:len(b)-1], `,"leader":true}`...)
	m, ok := fastFromChild(line)
	require.True(t, ok, "%s", line)
	require.Len(t, m.Wake.Calls, 2)
	agree(t, line)
	// An API request as the harness writes it, and its done with a
	// value as the Go client writes it.
	args, err := json.Marshal(APIArgs{User: "user-1", ID: "w1"})
	require.NoError(t, err)
	api, err := AppendLine(nil, FromHarness{Type: TAPI, Now: &next, Method: APIGet, Args: args})
	require.NoError(t, err)
	_, ok = fastFromHarness(api[:len(api)-1])
	require.True(t, ok, "%s", api)
	row := AppendWorkspace(nil, &contracts.Workspace{ID: "w1", HomeCtx: &contracts.HomeCtx{}})
	done, err := json.Marshal(FromChild{Type: TDone, Value: row})
	require.NoError(t, err)
	_, ok = fastFromChild(done)
	require.True(t, ok, "%s", done)
	require.Less(t, took, len(fastPathLines), "near misses go the strict way")
	require.Greater(t, took, 8)
}

// The lines the harness writes by hand are the ones AppendLine writes.
func TestHandWrittenLinesAreAppendLines(t *testing.T) {
	for _, now := range []time.Time{t0, t0.Add(1500 * time.Millisecond), t0.Add(time.Nanosecond), {}} {
		n := T(now)
		want, err := AppendLine(nil, FromHarness{Type: TStep, Now: &n})
		require.NoError(t, err)
		require.Equal(t, string(want), string(AppendStep(nil, n)))
	}
	for _, v := range []struct {
		value any
		raw   json.RawMessage
	}{{nil, json.RawMessage("null")}, {EmptyList, json.RawMessage("[]")}, {[]Message{}, json.RawMessage("[]")}} {
		want, err := AppendLine(nil, FromHarness{Type: TOK, Value: v.raw})
		require.NoError(t, err)
		got, err := AppendOK(nil, v.value)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
	}
}

func FuzzFastPathsAgree(f *testing.F) {
	for _, l := range fastPathLines {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) { agree(t, line) })
}

// Arguments the fast readers take, leave, and nearly take.
var fastArgsLines = []string{
	`{}`, `{ }`, `{"lease":7}`, `{"lease":0}`, `{"lease":07}`, `{"lease":-1}`, `{"lease":1e3}`, `{"lease":7,"x":1}`,
	`{"lease":123456789012345678}`, `{"lease":9223372036854775807}`, `{"lease": 7}`, `{"listener":2}`, `{"subscription":3}`,
	`{"holder":"coord-1"}`, `{"holder":""}`, `{"holder":"a\"b"}`, `{"holder":"a\u0041"}`, `{"holder":"ünï"}`, "{\"holder\":\"\xff\"}",
	"{\"holder\":\"a\tb\"}", `{"id":"3f2c-1"}`, `{"id":"x","id":"y"}`, `{"key":"archives/w/o/home.tar.zst"}`, `{"filter":"active"}`,
	`{"filter":"nope"}`, `{"id":null}`, `{"id":1}`, `{"lease":"7"}`,
	`{"writer":{"component":"HealthMonitor","instance":"coord-1","epoch":3},"ids":["a","b"],"at":"2026-01-05T00:00:01.5Z"}`,
	`{"writer":{"component":"HealthMonitor"},"ids":[],"at":null}`, `{"writer":{"component":"api","on_behalf":"TTLManager"},"ids":null,"at":"2026-01-05T00:00:01Z"}`,
	`{"writer":{"component":"x","epoch":0},"ids":["a\u0041"],"at":"2026-01-05T00:00:01Z"}`, `{"writer":{"component":"x"},"ids":["a",],"at":null}`,
	`{"writer":{"component":"x"},"ids":["a"],"at":"2026-01-05T00:00:01\u005a"}`, `{"writer":{"component":"x"},"ids":["a"],"at":"2026-02-30T00:00:01Z"}`,
	`{"writer":{"component":"x"},"ids":["a"],"at":"2026-01-05T00:00:01+01:00"}`, `{"writer":{"component":"x","epoch":-2},"ids":[1],"at":null}`,
	`{"writer":{"component":"x"},"ids":["a"],"at":null} `, `{"writer":{"component":"x"},"ids":["a"],"at":null,"x":1}`,
}

// agreeArgs checks that a fast reader that takes raw reads what the
// strict decoder reads.
func agreeArgs(t interface {
	require.TestingT
	Helper()
}, raw []byte) int {
	t.Helper()
	took := 0
	for _, a := range []func() (FastArgs, any){
		func() (FastArgs, any) { return new(None), new(None) },
		func() (FastArgs, any) { return new(Lease), new(Lease) },
		func() (FastArgs, any) { return new(Listener), new(Listener) },
		func() (FastArgs, any) { return new(Subscription), new(Subscription) },
		func() (FastArgs, any) { return new(TryAcquire), new(TryAcquire) },
		func() (FastArgs, any) { return new(ID), new(ID) },
		func() (FastArgs, any) { return new(Key), new(Key) },
		func() (FastArgs, any) { return new(StoreList), new(StoreList) },
		func() (FastArgs, any) { return new(StoreMarkObserved), new(StoreMarkObserved) },
	} {
		fast, strict := a()
		if !fast.DecodeFast(raw) {
			continue
		}
		took++
		require.NoError(t, strictUnmarshal(raw, strict), "%s", raw)
		require.Equal(t, strict, fast, "%s", raw)
	}
	return took
}

func TestFastArgsAgreeWithTheStrictDecoder(t *testing.T) {
	took := 0
	for _, l := range fastArgsLines {
		took += agreeArgs(t, []byte(l))
	}
	require.Greater(t, took, 10)
	require.Less(t, took, len(fastArgsLines))
	var l Lease
	require.True(t, l.DecodeFast([]byte(`{"lease":7}`)))
	require.Equal(t, int64(7), l.Lease)
}

func FuzzFastArgsAgree(f *testing.F) {
	for _, l := range fastArgsLines {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { agreeArgs(t, raw) })
}

// What the Go client writes for store.mark_observed, the fast reader
// takes, and reads as the strict decoder does.
func TestFastMarkObservedReadsWhatTheClientWrites(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := StoreMarkObserved{
			Writer: Writer{Component: contracts.Component(rapid.StringMatching(`[A-Za-z]{1,12}`).Draw(t, "component")),
				Instance: rapid.SampledFrom([]string{"", "coord-1", "api-2"}).Draw(t, "instance"),
				Epoch:    rapid.Int64Range(0, 1<<40).Draw(t, "epoch"),
				OnBehalf: contracts.Component(rapid.SampledFrom([]string{"", "TTLManager"}).Draw(t, "on_behalf"))},
			IDs: rapid.SliceOf(rapid.StringMatching(`[a-z0-9-]{1,36}`)).Draw(t, "ids"),
			At:  T(time.Unix(rapid.Int64Range(0, 1<<33).Draw(t, "s"), rapid.Int64Range(0, 999999999).Draw(t, "ns"))),
		}
		raw, err := json.Marshal(a)
		require.NoError(t, err)
		var fast StoreMarkObserved
		require.True(t, fast.DecodeFast(raw), "%s", raw)
		agreeArgs(t, raw)
	})
}
