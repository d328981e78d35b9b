package datasource

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/refimpl/oracle/core"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func TestParsePath(t *testing.T) {
	for _, tc := range []struct {
		path string
		r    uint64
		k    int
		ok   bool
	}{
		{"/r/7/e/0", 7, 0, true},
		{"/r/18446744073709551615/e/12", 18446744073709551615, 12, true},
		{"/r/7/e/1?x=1", 7, 1, true},
		{"/r/0/e/0", 0, 0, false},
		{"/r/7/e/-1", 0, 0, false},
		{"/r/07/e/1", 0, 0, false},
		{"/r/7/e/01", 0, 0, false},
		{"/r/7/e/", 0, 0, false},
		{"/r/x/e/1", 0, 0, false},
		{"/r/7/e/1/", 0, 0, false},
		{"r/7/e/1", 0, 0, false},
		{"/q/7/e/1", 0, 0, false},
		{"/", 0, 0, false},
	} {
		r, k, ok := ParsePath(tc.path)
		require.Equal(t, tc.ok, ok, tc.path)
		if ok {
			require.Equal(t, tc.r, r, tc.path)
			require.Equal(t, tc.k, k, tc.path)
			require.Equal(t, strings.Split(tc.path, "?")[0], Path(r, k))
		}
	}
	require.Equal(t, "http://127.0.0.1:9/r/3/e/2", URL("http://127.0.0.1:9/", 3, 2))
}

// Values have at least ten significant digits, render back to the same
// text (ORACLE-SPEC 3.4), move with time, and depend only on the seed,
// the request, the endpoint and the second.
func TestValues(t *testing.T) {
	a, b := New(1, nil), New(1, nil)
	seen := map[string]bool{}
	for i := 0; i < 2000; i++ {
		at := t0.Add(time.Duration(i) * 1300 * time.Millisecond)
		r, k := uint64(i%7+1), i%3
		v := a.Value(r, k, at)
		require.Equal(t, v, b.Value(r, k, at))
		require.Equal(t, v, a.Value(r, k, at.Truncate(time.Second)), "a value is constant within a second")
		digits := strings.TrimLeft(strings.ReplaceAll(v, ".", ""), "0")
		require.GreaterOrEqual(t, len(digits), 10, v)
		require.NotEqual(t, byte('0'), v[len(v)-1], v)
		got, err := core.Extract(Body(ClassOK, "data.price", v, at), "data.price")
		require.NoError(t, err)
		require.Equal(t, v, got, "the value renders back to its text")
		seen[v] = true
	}
	require.Greater(t, len(seen), 1900, "values move")
	require.NotEqual(t, New(1, nil).Value(1, 0, t0), New(2, nil).Value(1, 0, t0), "another seed, other values")
	require.NotEqual(t, a.Value(1, 0, t0), a.Value(1, 1, t0), "endpoints differ")
}

// Each class's body is what its name says, for the daemon's extraction.
func TestBodies(t *testing.T) {
	for _, path := range []string{"price", "data.price", "a.b.c", "unit", "ts", "data.unit", "source.x"} {
		for _, c := range []Class{ClassOK, ClassMalformed, ClassMissing, ClassNull, ClassArray, ClassEmpty} {
			body := Body(c, path, "12345.678901", t0)
			got, err := core.Extract(body, path)
			if c == ClassOK {
				require.NoError(t, err, "%s %s: %s", path, c, body)
				require.Equal(t, "12345.678901", got, "%s: %s", path, body)
				continue
			}
			require.ErrorIs(t, err, core.ErrParse, "%s %s: %s", path, c, body)
		}
	}
	require.Contains(t, string(Body(ClassNull, "data.price", "1", t0)), `"price":null`)
	require.Contains(t, string(Body(ClassEmpty, "data.price", "1", t0)), `"price":""`)
	require.True(t, strings.HasPrefix(string(Body(ClassArray, "price", "1", t0)), "["))
}

func TestGetDrawsFromTheScript(t *testing.T) {
	var recs []history.Event
	s := New(3, func(e history.Event) { recs = append(recs, e) })
	sc := Flaky("data.price")
	sc.Latency = [2]time.Duration{time.Second, 3 * time.Second}
	require.NoError(t, s.Set(4, sc))
	counts := map[Class]int{}
	for i := 0; i < 3000; i++ {
		at := t0.Add(time.Duration(i) * time.Second)
		o := s.Get(at, "http://127.0.0.1:1/r/4/e/1", nil)
		counts[o.Class]++
		require.Equal(t, uint64(4), o.RequestID)
		require.Equal(t, 1, o.Endpoint)
		switch o.Class {
		case ClassHang:
			require.Equal(t, at.Add(DefaultHangFor), o.DoneAt)
			require.False(t, o.Answered())
		case ClassReset:
			require.False(t, o.Answered())
		case ClassStatus:
			require.Contains(t, []int{500, 502, 503, 404, 429}, o.Status)
		default:
			require.Equal(t, 200, o.Status)
		}
		if o.Class != ClassHang {
			require.GreaterOrEqual(t, o.DoneAt.Sub(at), time.Second)
			require.LessOrEqual(t, o.DoneAt.Sub(at), 3*time.Second)
		}
		s.Done(o)
	}
	for _, c := range Classes {
		require.Positive(t, counts[c], "3000 GETs draw %s", c)
	}
	require.Greater(t, counts[ClassOK], 2100)
	require.Len(t, recs, 6000)
	require.Equal(t, history.PhaseRecv, recs[0].Src.Phase)
	require.Equal(t, history.PhaseDone, recs[1].Src.Phase)
	require.Equal(t, recs[0].Src.Exchange, recs[1].Src.Exchange)
}

// The same seed and GETs give the same outcomes, whatever other endpoints
// are asked meanwhile.
func TestGetIsDeterministicPerEndpoint(t *testing.T) {
	run := func(interleave bool) []Outcome {
		s := New(9, nil)
		require.NoError(t, s.Set(1, Flaky("p")))
		require.NoError(t, s.Set(2, Flaky("p")))
		var out []Outcome
		for i := 0; i < 200; i++ {
			at := t0.Add(time.Duration(i) * time.Second)
			if interleave {
				s.Get(at, Path(2, 0), nil)
			}
			o := s.Get(at, Path(1, 0), nil)
			o.Exchange = 0
			out = append(out, o)
		}
		return out
	}
	require.Equal(t, run(false), run(true))
}

func TestWindowsAndUnknownEndpoints(t *testing.T) {
	var recs []history.Event
	s := New(1, func(e history.Event) { recs = append(recs, e) })
	require.NoError(t, s.Set(5, Healthy("price")))
	require.NoError(t, s.AddWindow(5, Window{From: t0.Add(10 * time.Second), To: t0.Add(20 * time.Second), Endpoint: 1,
		Class: ClassNull}))
	require.NoError(t, s.AddWindow(5, Window{From: t0.Add(15 * time.Second), To: t0.Add(30 * time.Second), Endpoint: -1,
		Class: ClassStatus}))
	for _, tc := range []struct {
		at   time.Duration
		k    int
		want Class
	}{
		{9 * time.Second, 1, ClassOK}, {10 * time.Second, 1, ClassNull}, {19 * time.Second, 1, ClassNull},
		{15 * time.Second, 0, ClassStatus}, {20 * time.Second, 1, ClassStatus}, {30 * time.Second, 1, ClassOK},
	} {
		require.Equal(t, tc.want, s.Get(t0.Add(tc.at), Path(5, tc.k), nil).Class, "%s e%d", tc.at, tc.k)
	}
	o := s.Get(t0, "/r/6/e/0", nil)
	require.Equal(t, ClassUnknown, o.Class)
	require.Equal(t, 404, o.Status)
	require.Equal(t, t0, o.DoneAt)
	o = s.Get(t0, "/nope", []history.Header{{Name: "User-Agent", Value: "Oracle-Daemon/1.0"}, {Name: "Accept", Value: "application/json"}})
	require.Equal(t, ClassUnknown, o.Class)
	s.Abort(o, t0.Add(time.Second))
	last, prev := recs[len(recs)-1].Src, recs[len(recs)-2].Src
	require.Equal(t, []history.Header{{Name: "Accept", Value: "application/json"}, {Name: "User-Agent", Value: "Oracle-Daemon/1.0"}},
		prev.Headers, "headers are recorded sorted")
	require.Equal(t, "/nope", prev.Path)
	require.True(t, last.Aborted)
	require.Empty(t, last.Body, "an aborted GET served no body")
	require.Equal(t, t0.Add(time.Second), recs[len(recs)-1].At)

	require.Error(t, s.AddWindow(99, Window{Class: ClassNull}))
	require.Error(t, s.AddWindow(5, Window{Class: "weird"}))
	require.Error(t, s.Set(1, Script{Mix: []Weight{{"weird", 1}}}))
	require.Error(t, s.Set(1, Script{Path: "a..b"}))
	require.Error(t, s.Set(1, Script{Statuses: []int{200}}))
	require.Error(t, s.Set(1, Script{Latency: [2]time.Duration{-1, 0}}))
}

// quote writes what json.Marshal writes, on its direct path and off it.
func TestQuoteIsMarshal(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := rapid.OneOf(rapid.StringMatching(`[a-zA-Z0-9_ .-]{0,12}`), rapid.String()).Draw(rt, "s")
		b, err := json.Marshal(s)
		require.NoError(rt, err)
		require.Equal(rt, string(b), quote(s))
	})
	for _, s := range []string{`a"b`, `a\b`, "<", ">", "&", "\x7f", "\x1f", "é", "\u2028"} {
		b, err := json.Marshal(s)
		require.NoError(t, err)
		require.Equal(t, string(b), quote(s), "%q", s)
	}
}

// parsePathBySplit is ParsePath as it was, with strings.Split: the
// reference the split-free one is held to.
func parsePathBySplit(path string) (r uint64, k int, ok bool) {
	path, _, _ = strings.Cut(path, "?")
	parts := strings.Split(path, "/")
	if len(parts) != 5 || parts[0] != "" || parts[1] != "r" || parts[3] != "e" {
		return 0, 0, false
	}
	r, err := strconv.ParseUint(parts[2], 10, 64)
	if err != nil || r == 0 {
		return 0, 0, false
	}
	k, err = strconv.Atoi(parts[4])
	if err != nil || k < 0 || strconv.Itoa(k) != parts[4] || strconv.FormatUint(r, 10) != parts[2] {
		return 0, 0, false
	}
	return r, k, true
}

func TestParsePathIsTheSplitOne(t *testing.T) {
	part := rapid.SampledFrom([]string{"", "/", "r", "e", "0", "1", "7", "12", "007", "-1", "x", "?", "?a=1", "//",
		"18446744073709551615", "18446744073709551616"})
	rapid.Check(t, func(rt *rapid.T) {
		var b strings.Builder
		for _, p := range rapid.SliceOfN(part, 0, 12).Draw(rt, "parts") {
			b.WriteString(p)
		}
		path := b.String()
		if rapid.Bool().Draw(rt, "shaped") {
			path = "/r/" + rapid.SampledFrom([]string{"1", "42", "0", "x", "01"}).Draw(rt, "r") + "/e/" +
				rapid.SampledFrom([]string{"0", "3", "12", "-1", "03", "a/b"}).Draw(rt, "k") +
				rapid.SampledFrom([]string{"", "?q", "/", "/x"}).Draw(rt, "tail")
		}
		wr, wk, wok := parsePathBySplit(path)
		r, k, ok := ParsePath(path)
		require.Equal(rt, []any{wr, wk, wok}, []any{r, k, ok}, "%q", path)
	})
}
