package oracle

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// quickCases are bodies and rules where quickScalar must agree with the
// full path (or leave the answer to it).
var quickCases = []struct{ body, rule string }{
	{`{"a":{"b":"hello"}}`, "a.b"},
	{`{"p":5}`, "p"},
	{`{"p":-0.0}`, "p"},
	{`{"p":1e400}`, "p"},
	{`{"p":1e400, "q": 2}`, "q"},
	{`{"p":1.7976931348623157e308}`, "p"},
	{`{"p":101.50000000000000000001}`, "p"},
	{` { "p" : true , "q" : false } `, "q"},
	{`{"p":true}`, "p"},
	{`{"p":null}`, "p"},
	{`{"p":""}`, "p"},
	{`{"p":"\u00e9"}`, "p"},
	{`{"p":"é中"}`, "p"},
	{"{\"p\":\"\xff\"}", "p"},
	{"{\"\xff\":1,\"p\":2}", "p"},
	{`{"p":1,"p":2}`, "p"},
	{`{"p":{"q":1},"p":{"r":2}}`, "p.q"},
	{`{"p":{"q":1},"p":{"r":2}}`, "p.r"},
	{`{"a\u0062":1,"ab":2}`, "ab"},
	{`{"ab":2,"a\u0062":1}`, "ab"},
	{`{"a":[{"b":1}]}`, "a.0.b"},
	{`{"a":[1,{"b":[2,{"c":"}"}]}],"b":"x\"}"}`, "b"},
	{`{"a":{"b":{"c":{"d":{"e":"deep"}}}}}`, "a.b.c.d.e"},
	{`{"a":5}`, "a.b"},
	{`[1,2]`, "0"},
	{`"x"`, "x"},
	{`{"p":1} {"p":2}`, "p"},
	{"{\"p\":1}\n\t ", "p"},
	{`{"p":`, "p"},
	{``, "p"},
	{`{}`, "p"},
	{`{"o":{"n":1.50}}`, "o"},
	{`{"o":[]}`, "o"},
	{`{"p":"a\\b"}`, "p"},
	{`{"p":0.30000000000000004}`, "p"},
	{`{"p":-1E+2}`, "p"},
	{`{"p":5e-324}`, "p"},
	{`{"p":1e-400}`, "p"},
	{`{"a":{"b":1}}`, "a.c"},
	{`{"a b":{"c":"d"}}`, "a b.c"},
	{`{"a":1}`, "a."},
	{`{"a":1}`, ".a"},
	{`{"a":{"":{"b":1}}}`, "a..b"},
}

func TestQuickScalarAgreesWithTheFullPath(t *testing.T) {
	for _, tc := range quickCases {
		checkQuick(t, []byte(tc.body), tc.rule)
	}
}

func checkQuick(t *testing.T, body []byte, rule string) {
	t.Helper()
	if rule == "" {
		return
	}
	got, ok := quickScalar(body, rule)
	if !ok {
		return
	}
	want, err := extractFull(body, rule)
	require.NoError(t, err, "body %q rule %q: the quick path answered %q", body, rule, got)
	require.Equal(t, want, got, "body %q rule %q", body, rule)
}

func FuzzQuickScalar(f *testing.F) {
	for _, tc := range quickCases {
		f.Add([]byte(tc.body), tc.rule)
	}
	f.Fuzz(func(t *testing.T, body []byte, rule string) { checkQuick(t, body, rule) })
}

func TestQuickScalarAnswersPlainBodies(t *testing.T) {
	for _, tc := range []struct{ body, rule, want string }{
		{`{"data":{"price":101.5,"unit":"USD"},"ts":1}`, "data.price", "101.5"},
		{`{"a":{"b":"hello"}}`, "a.b", "hello"},
		{`{"p":-0.0}`, "p", "0"},
		{`{"p":1,"p":true}`, "p", "true"},
	} {
		got, ok := quickScalar([]byte(tc.body), tc.rule)
		require.True(t, ok, tc.body)
		require.Equal(t, tc.want, got)
	}
}

// quickValid never says yes to what json.Valid refuses, and says yes to
// the valid ASCII documents it reads (nesting up to 64): random documents
// from encoding/json, the same with a byte changed, dropped or inserted,
// and strings of JSON's own characters.
func TestQuickValidIsJSONValid(t *testing.T) {
	leaf := rapid.OneOf(
		rapid.Map(rapid.Float64(), func(f float64) any { return f }),
		rapid.Map(rapid.Int64(), func(n int64) any { return n }),
		rapid.Map(rapid.StringMatching(`[ -~]{0,8}`), func(s string) any { return s }),
		rapid.Map(rapid.String(), func(s string) any { return s }),
		rapid.Just[any](true), rapid.Just[any](false), rapid.Just[any](nil))
	var value *rapid.Generator[any]
	value = rapid.Deferred(func() *rapid.Generator[any] {
		return rapid.OneOf(leaf,
			rapid.Map(rapid.SliceOfN(value, 0, 3), func(xs []any) any { return xs }),
			rapid.Map(rapid.MapOfN(rapid.StringMatching(`[a-z"\\]{0,3}`), value, 0, 3), func(m map[string]any) any { return m }))
	})
	token := rapid.SampledFrom([]string{"{", "}", "[", "]", ",", ":", `"`, `\`, "u", "0", "1", "-", "+", ".", "e", "E",
		"true", "false", "null", "tru", " ", "\n", "\t", "\x00", "\x1f", "a", "\xc3\xa9", "\\u00e9", "\\x"})
	rapid.Check(t, func(rt *rapid.T) {
		var b []byte
		if rapid.Bool().Draw(rt, "tokens") {
			for _, s := range rapid.SliceOfN(token, 0, 24).Draw(rt, "toks") {
				b = append(b, s...)
			}
		} else {
			var err error
			b, err = json.Marshal(value.Draw(rt, "doc"))
			require.NoError(rt, err)
			if rapid.Bool().Draw(rt, "indent") {
				var out bytes.Buffer
				require.NoError(rt, json.Indent(&out, b, " ", "\t"))
				b = out.Bytes()
			}
			ascii := !bytes.ContainsFunc(b, func(r rune) bool { return r >= 0x80 })
			if ascii {
				require.True(rt, quickValid(b), "a valid ASCII document: %q", b)
			}
			if len(b) > 0 && rapid.Bool().Draw(rt, "mangle") {
				i := rapid.IntRange(0, len(b)-1).Draw(rt, "at")
				switch rapid.IntRange(0, 2).Draw(rt, "how") {
				case 0:
					b[i] = rapid.SampledFrom([]byte(`{}[],:"\ 0-.eE+tfnu`)).Draw(rt, "byte")
				case 1:
					b = append(b[:i], b[i+1:]...)
				default:
					b = append(b[:i], append([]byte{rapid.Byte().Draw(rt, "ins")}, b[i:]...)...)
				}
			}
		}
		want := json.Valid(b)
		if quickValid(b) {
			require.True(rt, want, "quickValid took what json.Valid refuses: %q", b)
		}
		require.Equal(rt, want, validJSON(b))
	})
	deep := strings.Repeat("[", 65) + "1" + strings.Repeat("]", 65)
	require.False(t, quickValid([]byte(deep)), "deeper than 64: json.Valid decides")
	require.True(t, validJSON([]byte(deep)))
}
