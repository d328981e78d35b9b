package core

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExtract(t *testing.T) {
	cases := []struct {
		name string
		body string
		rule string
		want string // "" means a parse failure
	}{
		{"3.4 string → itself", `{"a":{"b":"hello"}}`, "a.b", "hello"},
		{"3.4 integer", `{"p":5}`, "p", "5"},
		{"3.4 decimal", `{"p":0.1}`, "p", "0.1"},
		{"3.4 trailing zeros go", `{"p":5.000}`, "p", "5"},
		{"3.4 large number in plain notation", `{"p":1e21}`, "p", "1000000000000000000000"},
		{"3.4 small number in plain notation", `{"p":1.5e-7}`, "p", "0.00000015"},
		{"3.4 shortest round-trip of a 17-digit double", `{"p":0.30000000000000004}`, "p", "0.30000000000000004"},
		{"3.4 more digits than a double holds round to the double", `{"p":101.50000000000000000001}`, "p", "101.5"},
		{"3.4 ≥ 10 significant digits survive", `{"p":12345.67891234}`, "p", "12345.67891234"},
		{"3.4 negative", `{"p":-42.25}`, "p", "-42.25"},
		{"3.4 negative zero is 0", `{"p":-0.0}`, "p", "0"},
		{"3.4 max double", `{"p":1.7976931348623157e308}`, "p", "17976931348623157" + strings.Repeat("0", 292)},
		{"3.4 beyond the double range → parse failure", `{"p":1e400}`, "p", ""},
		{"3.4 true", `{"ok":true}`, "ok", "true"},
		{"3.4 false", `{"ok":false}`, "ok", "false"},
		{"3.4 object → compact JSON, keys sorted", `{"o": { "z":1, "a":[ 2, "x" ], "m":{"b":null,"a":true} }}`, "o", `{"a":[2,"x"],"m":{"a":true,"b":null},"z":1}`},
		{"3.4 array → compact JSON", `{"o":[ 3 , {"b":1,"a":2} ]}`, "o", `[3,{"a":2,"b":1}]`},
		{"3.4 nested numbers keep their text", `{"o":{"n":1.50}}`, "o", `{"n":1.50}`},
		{"3.4 no HTML escaping", `{"o":{"s":"<&>"}}`, "o", `{"s":"<&>"}`},
		{"3.4 empty array is a value", `{"o":[]}`, "o", `[]`},
		{"3.4 null → parse failure", `{"p":null}`, "p", ""},
		{"3.4 empty string → parse failure", `{"p":""}`, "p", ""},
		{"3.4 unicode string", `{"p":"\u00e9\u4e2d"}`, "p", "é中"},
		{"3.4 top-level array → parse failure", `[1,2]`, "0", ""},
		{"3.4 top-level string → parse failure", `"x"`, "x", ""},
		{"3.4 top-level number → parse failure", `5`, "p", ""},
		{"3.4 top-level null → parse failure", `null`, "p", ""},
		{"3.4 malformed JSON → parse failure", `{"p":`, "p", ""},
		{"3.4 empty body → parse failure", ``, "p", ""},
		{"3.4 trailing data → parse failure", `{"p":1} {"p":2}`, "p", ""},
		{"3.4 trailing white space is fine", "{\"p\":1}\n\t ", "p", "1"},
		{"3.4 missing key → parse failure", `{"a":{"b":1}}`, "a.c", ""},
		{"3.4 keys are case-sensitive", `{"Price":1}`, "price", ""},
		{"D17 no array indexing", `{"a":[{"b":1}]}`, "a.0.b", ""},
		{"3.4 descending into a scalar → parse failure", `{"a":5}`, "a.b", ""},
		{"3.4 empty rule → parse failure", `{"":1}`, "", ""},
		{"3.4 empty segment → parse failure", `{"a":{"":{"b":1}}}`, "a..b", ""},
		{"3.4 leading dot → parse failure", `{"a":1}`, ".a", ""},
		{"3.4 trailing dot → parse failure", `{"a":1}`, "a.", ""},
		{"3.4 a key with spaces", `{"a b":{"c":"d"}}`, "a b.c", "d"},
		{"3.4 duplicate keys: the last wins", `{"p":1,"p":2}`, "p", "2"},
		{"3.4 deep path", `{"a":{"b":{"c":{"d":{"e":"deep"}}}}}`, "a.b.c.d.e", "deep"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Extract([]byte(tc.body), tc.rule)
			if tc.want == "" {
				require.ErrorIs(t, err, ErrParse)
				require.Empty(t, got)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestRenderNumbersRoundTrip(t *testing.T) {
	for _, f := range []float64{0, 1, -1, 0.1, 1.0 / 3, math.Pi, 1e21, 1e22, 123456789.123456789, 5e-324, math.MaxFloat64, 2.5e-8, 9007199254740993} {
		s, err := Render(json.Number(strconv.FormatFloat(f, 'g', -1, 64)))
		require.NoError(t, err)
		require.NotContains(t, s, "e", "plain notation for %v", f)
		back, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err)
		require.Equal(t, f, back, "round trip of %v via %q", f, s)
	}
	s, err := Render(float64(2.5))
	require.NoError(t, err)
	require.Equal(t, "2.5", s)
}

// FuzzExtract checks the Executor's contract on arbitrary bodies and rules:
// no panic; a result is never empty; a failure always wraps ErrParse; a
// numeric result round-trips to the double the body held; a rendered object
// or array is valid JSON equal to the original value.
func FuzzExtract(f *testing.F) {
	for _, seed := range []struct{ body, rule string }{
		{`{"a":{"b":1.5}}`, "a.b"},
		{`{"a":"x"}`, "a"},
		{`{"a":[1,{"c":null}]}`, "a"},
		{`{"a":{"z":1,"y":{"x":true}}}`, "a"},
		{`{"a":1e400}`, "a"},
		{`[1]`, "a"},
		{`{"a":-0}`, "a"},
		{`{"a":""}`, "a..b"},
	} {
		f.Add([]byte(seed.body), seed.rule)
	}
	f.Fuzz(func(t *testing.T, body []byte, rule string) {
		got, err := Extract(body, rule)
		if err != nil {
			require.ErrorIs(t, err, ErrParse)
			require.Empty(t, got)
			return
		}
		require.NotEmpty(t, got)
		// Find the raw value at the path to compare with.
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.UseNumber()
		var v any
		require.NoError(t, dec.Decode(&v))
		for _, seg := range strings.Split(rule, ".") {
			v = v.(map[string]any)[seg]
		}
		switch v := v.(type) {
		case json.Number:
			want, err := strconv.ParseFloat(string(v), 64)
			require.NoError(t, err)
			back, err := strconv.ParseFloat(got, 64)
			require.NoError(t, err)
			require.Equal(t, want, back)
			require.NotContains(t, got, "e")
		case map[string]any, []any:
			var back any
			d := json.NewDecoder(strings.NewReader(got))
			d.UseNumber()
			require.NoError(t, d.Decode(&back))
			require.Equal(t, v, back)
		case string:
			require.Equal(t, v, got)
		case bool:
			require.Equal(t, strconv.FormatBool(v), got)
		default:
			t.Fatalf("extracted %q from a %T", got, v)
		}
	})
}

// FuzzExtractScalarPath: Extract, whose scalars take json.Unmarshal's
// path, gives what the streaming decode gives — the same string or the
// same error text — for any body and rule.
func FuzzExtractScalarPath(f *testing.F) {
	for _, seed := range []struct{ body, rule string }{
		{`{"data":{"price":101.5,"unit":"USD"},"source":"x","ts":1}`, "data.price"},
		{`{"a":"x\u00e9","a":"y"}`, "a"},
		{`{"a":[1,{"c":null}]}`, "a"},
		{`{"a":1e400}`, "a"},
		{`{"a":-0}`, "a"},
		{`{"a":123456789012345678901234567890}`, "a"},
		{`{"a":""}`, "a"},
		{`{"a":true} x`, "a"},
		{`{"a":"\ud800"}`, "a"},
		{`{"a":{"b":1.50}}`, "a"},
	} {
		f.Add([]byte(seed.body), seed.rule)
	}
	f.Fuzz(func(t *testing.T, body []byte, rule string) {
		got, err := Extract(body, rule)
		path := strings.Split(rule, ".")
		if rule == "" || slices.Contains(path, "") {
			require.Error(t, err)
			return
		}
		want, werr := extractDecoded(body, rule, path)
		require.Equal(t, want, got)
		if werr != nil {
			require.EqualError(t, err, werr.Error())
		} else {
			require.NoError(t, err)
		}
	})
}

// BenchmarkExtract is Extract on a body like the simulator's sources
// serve.
func BenchmarkExtract(b *testing.B) {
	body := []byte(`{"data":{"price":101.5,"unit":"USD"},"source":"converge","ts":1893456000}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Extract(body, "data.price"); err != nil {
			b.Fatal(err)
		}
	}
}
