package core

import (
	"testing"

	"github.com/stretchr/testify/require"
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
