package wire

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
	`{"type":"ok","value":{"applied":true}}`,
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
