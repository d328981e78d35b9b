package cometrpc

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
)

func TestParseQuery(t *testing.T) {
	for _, ok := range []string{
		oracle.QueryRegister, oracle.QueryUpdate, oracle.QueryComplete,
		"tm.event = 'Tx'", "  a.b-c_d EXISTS  ", "x='' AND y EXISTS AND z='a b AND c'", "tx.hash='ABC'",
		"é.ü='ß'", "_x='1'", "1a='v'",
	} {
		q, err := ParseQuery(ok)
		require.NoError(t, err, ok)
		require.Equal(t, ok, q.String())
	}
	for _, bad := range []string{
		"", "   ", "tm.event", "tm.event=", "tm.event=Tx", "tm.event='Tx", "tm.event='Tx' AND", "tm.event='Tx' OR x EXISTS",
		"tm.event='Tx' and x EXISTS", "a=5", "a>'1'", "a CONTAINS 'x'", "a<=5", "AND a EXISTS", "a exists",
		"'a'='b'", "a='1' b='2'", "a EXISTS EXISTS", "a == 'b'", ".a='b'",
	} {
		_, err := ParseQuery(bad)
		require.Error(t, err, bad)
	}
}

func TestQueryMatches(t *testing.T) {
	events := map[string][]string{
		"tm.event":       {"Tx"},
		"message.action": {"/a", "/guru.oracle.v1.MsgUpdateOracleRequestDoc"},
		"empty.key":      {},
		"blank.value":    {""},
	}
	cases := []struct {
		query string
		match bool
	}{
		{"tm.event='Tx'", true},
		{"tm.event='NewBlock'", false},
		{"tm.event='tx'", false},
		{oracle.QueryUpdate, true},
		{oracle.QueryRegister, false},
		{"message.action='/a' AND tm.event='Tx'", true},
		{"message.action EXISTS", true},
		{"missing.key EXISTS", false},
		{"empty.key EXISTS", false},
		{"blank.value EXISTS", true},
		{"blank.value=''", true},
		{"missing.key=''", false},
		{"tm.event='Tx' AND missing.key EXISTS", false},
	}
	for _, tc := range cases {
		q, err := ParseQuery(tc.query)
		require.NoError(t, err, tc.query)
		require.Equal(t, tc.match, q.Matches(events), tc.query)
		require.Equal(t, tc.match, q.MatchesLookup(pairs(events)), tc.query)
	}
	q, err := ParseQuery("a EXISTS")
	require.NoError(t, err)
	require.False(t, q.Matches(nil))
}

// pairs is a Lookup over key/value pairs, another shape than a map.
type pairs map[string][]string

func (p pairs) HasValue(key, value string) bool {
	for k, vs := range p {
		for _, v := range vs {
			if k == key && v == value {
				return true
			}
		}
	}
	return false
}

func (p pairs) Exists(key string) bool {
	for k, vs := range p {
		if k == key && len(vs) > 0 {
			return true
		}
	}
	return false
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{oracle.QueryComplete, oracle.QueryRegister, "a='b' AND c EXISTS", "a='", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQuery(s)
		if err != nil {
			return
		}
		require.Equal(t, s, q.String())
		require.NotEmpty(t, q.conds)
		// A query matches the events map made of its own conditions.
		events := map[string][]string{}
		for _, c := range q.conds {
			events[c.key] = append(events[c.key], c.value)
		}
		require.True(t, q.Matches(events))
	})
}
