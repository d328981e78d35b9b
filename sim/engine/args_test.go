package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSplitArgs(t *testing.T) {
	for in, want := range map[string][]string{
		`converge oracled`:                   {"converge", "oracled"},
		`  a   'b c'  "d \"e\" \$f" g\ h `:   {"a", "b c", `d "e" $f`, "g h"},
		`./d --home {home} --x=''`:           {"./d", "--home", "{home}", "--x="},
		`bin "--flag=it's" 'say "hi"'`:       {"bin", "--flag=it's", `say "hi"`},
		`/path/with\\backslash "a\nb" 'c\d'`: {`/path/with\backslash`, `a\nb`, `c\d`},
		"tab\tand\nnewline":                  {"tab", "and", "newline"},
	} {
		got, err := SplitArgs(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "   ", `a "b`, `a 'b`, `a\`} {
		_, err := SplitArgs(bad)
		require.Error(t, err, bad)
	}
}
