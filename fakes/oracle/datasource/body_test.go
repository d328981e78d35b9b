package datasource

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// bodyConcat is Body as it was first written, by string concatenation from
// the innermost object out: the reference the one-buffer Body must match.
func bodyConcat(c Class, path, value string, t time.Time) []byte {
	segs := strings.Split(path, ".")
	leaf := value
	switch c {
	case ClassNull:
		leaf = "null"
	case ClassEmpty:
		leaf = `""`
	}
	last := segs[len(segs)-1]
	if c == ClassMissing {
		last += "_missing"
	}
	inner := "{" + quote(last) + ":" + leaf + "," + quote(sibling("unit", segs[len(segs)-1])) + `:"USD"}`
	for i := len(segs) - 2; i >= 0; i-- {
		inner = "{" + quote(segs[i]) + ":" + inner + "," + quote(sibling("source", segs[i])) + `:"converge"}`
	}
	ts := sibling("ts", segs[0])
	whole := inner[:len(inner)-1] + "," + quote(ts) + ":" + strconv.FormatInt(t.Unix(), 10) + "}"
	switch c {
	case ClassArray:
		whole = "[" + whole + "]"
	case ClassMalformed:
		whole = whole[:len(whole)/2]
	}
	return []byte(whole)
}

func TestBodyIsTheConcatenation(t *testing.T) {
	classes := []Class{ClassOK, ClassMalformed, ClassMissing, ClassNull, ClassArray, ClassEmpty}
	rapid.Check(t, func(rt *rapid.T) {
		c := rapid.SampledFrom(classes).Draw(rt, "class")
		path := rapid.StringMatching(`(ts|unit|source|a|b|<|"|é|)(\.(ts|unit|source|a|b|x\\y|)){0,4}`).Draw(rt, "path")
		value := rapid.StringMatching(`[0-9]{1,6}(\.[0-9]{1,6})?`).Draw(rt, "value")
		at := time.Unix(rapid.Int64Range(-1e10, 1e10).Draw(rt, "unix"), 0)
		require.Equal(t, string(bodyConcat(c, path, value, at)), string(Body(c, path, value, at)))
	})
}
