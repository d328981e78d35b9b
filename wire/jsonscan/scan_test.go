package jsonscan

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

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
		require.Equal(rt, want, Valid(b))
	})
	deep := strings.Repeat("[", 65) + "1" + strings.Repeat("]", 65)
	require.False(t, quickValid([]byte(deep)), "deeper than 64: json.Valid decides")
	require.True(t, Valid([]byte(deep)))
}

// LastMember, SkipValue, PlainString and LiteralEnd find what
// encoding/json decodes: the last of duplicate keys, each member's value.
func TestLastMemberFindsWhatTheDecoderKeeps(t *testing.T) {
	b := []byte(` { "a" : 1 , "b":{"c":[1,{"d":2}]}, "s":"x y", "a": -2.5e3 ,"t":true, "e":"\\n", "n":null } `)
	require.True(t, Valid(b))
	i := SkipSpace(b, 0)
	at, ok := LastMember(b, i, "a")
	require.True(t, ok)
	require.Equal(t, "-2.5e3", string(b[at:LiteralEnd(b, at)]), "the last of duplicate keys")
	at, ok = LastMember(b, i, "s")
	require.True(t, ok)
	raw, ok := PlainString(b, at)
	require.True(t, ok)
	require.Equal(t, "x y", string(raw))
	at, ok = LastMember(b, i, "e")
	require.True(t, ok)
	_, ok = PlainString(b, at)
	require.False(t, ok, "an escape is left to the decoder")
	at, ok = LastMember(b, i, "b")
	require.True(t, ok)
	end := SkipValue(b, at)
	require.Equal(t, `{"c":[1,{"d":2}]}`, string(b[at:end]))
	at, ok = LastMember(b, i, "t")
	require.True(t, ok)
	require.Equal(t, "true", string(b[at:LiteralEnd(b, at)]))
	_, ok = LastMember(b, i, "missing")
	require.False(t, ok)
	_, ok = LastMember([]byte(`{"\u0061":1}`), 0, "a")
	require.False(t, ok, "a key with an escape is left to the decoder")
	_, ok = LastMember([]byte(`{}`), 0, "a")
	require.False(t, ok)
}

func TestNumberEndReadsTheGrammar(t *testing.T) {
	for _, c := range []struct {
		in  string
		end int
		ok  bool
	}{{"0", 1, true}, {"-0.5e+3,", 7, true}, {"12]", 2, true}, {"01", 1, true}, {"-", 0, false}, {"1.", 0, false},
		{"1e", 0, false}, {".5", 0, false}, {"+1", 0, false}} {
		end, ok := NumberEnd([]byte(c.in), 0)
		require.Equal(t, c.ok, ok, c.in)
		if ok {
			require.Equal(t, c.end, end, c.in)
		}
	}
}

// Lookup says what Valid says and, for a valid body, finds what Walk
// finds (LastMember down the path): random documents whose objects repeat
// keys, escape some, hold empty objects and nest arrays, with white space,
// some mangled, on paths of up to four keys.
func TestLookupIsValidAndWalk(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	keys := []string{`"a"`, `"a"`, `"b"`, `"b"`, `"c"`, `""`, `"\u0061"`, `"a\"b"`, `"é"`}
	spaces := []string{"", "", " ", "\n\t"}
	pick := func(xs []string) string { return xs[rnd.IntN(len(xs))] }
	var value func(b []byte, depth int) []byte
	value = func(b []byte, depth int) []byte {
		b = append(b, pick(spaces)...)
		kind := rnd.IntN(6)
		if depth >= 4 {
			kind = rnd.IntN(3)
		}
		switch kind {
		case 0:
			b = append(b, pick([]string{"1", "-2.5e3", "true", "false", "null", "0"})...)
		case 1:
			b = append(b, pick([]string{`"x"`, `""`, `"\n"`, `"a b"`})...)
		case 2:
			b = append(b, pick([]string{"{}", "[]", "{ }", "{}"})...)
		case 3:
			b = append(b, '[')
			for j := range 1 + rnd.IntN(3) {
				if j > 0 {
					b = append(b, ',')
				}
				b = value(b, depth+1)
			}
			b = append(b, ']')
		default:
			b = append(b, '{')
			for j := range 1 + rnd.IntN(4) {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, pick(spaces)...)
				b = append(b, pick(keys)...)
				b = append(b, pick(spaces)...)
				b = append(b, ':')
				b = value(b, depth+1)
			}
			b = append(b, '}')
		}
		return append(b, pick(spaces)...)
	}
	for range 300_000 {
		b := value(nil, 0)
		if rnd.IntN(5) == 0 {
			mangle := `{}[],:"\ a`
			b[rnd.IntN(len(b))] = mangle[rnd.IntN(len(mangle))]
		}
		var segs []string
		for range 1 + rnd.IntN(4) {
			segs = append(segs, pick([]string{"a", "b", "a", "b", "c", ""}))
		}
		path := strings.Join(segs, ".")
		at, found, valid := Lookup(b, path)
		require.Equal(t, Valid(b), valid, "%q", b)
		if !valid {
			continue
		}
		wantAt, wantFound := Walk(b, path)
		require.Equal(t, wantFound, found, "%q at %q", b, path)
		if found {
			require.Equal(t, wantAt, at, "%q at %q", b, path)
		}
	}
	long := strings.Repeat("a.", maxPathKeys) + "a"
	body := []byte(strings.Repeat(`{"a":`, maxPathKeys+1) + "1" + strings.Repeat("}", maxPathKeys+1))
	at, found, valid := Lookup(body, long)
	require.True(t, valid && found, "a path longer than maxPathKeys is walked")
	require.Equal(t, "1", string(body[at:at+1]))
}

// Shortest says yes only to a literal that ParseFloat and FormatFloat
// ('f', -1, a negative zero as 0) render as itself, and to the common
// ones: random literals of digits, points, signs and exponents.
func TestShortestIsTheRendering(t *testing.T) {
	for _, lit := range []string{"0", "1", "-1", "101.5", "0.001", "123456789012345", "-0.5", "100", "99.99"} {
		require.True(t, Shortest([]byte(lit)), lit)
	}
	for _, lit := range []string{"-0", "-0.0", "1.50", "1e3", "1E-2", "1234567890123456", "0.10"} {
		require.False(t, Shortest([]byte(lit)), lit)
	}
	rapid.Check(t, func(rt *rapid.T) {
		lit := rapid.StringMatching(`-?(0|[1-9][0-9]{0,20})(\.[0-9]{1,25})?([eE][+-]?[0-9]{1,3})?`).Draw(rt, "lit")
		if !Shortest([]byte(lit)) {
			return
		}
		f, err := strconv.ParseFloat(lit, 64)
		require.NoError(rt, err)
		require.Equal(rt, lit, render(f))
	})
	rnd := rand.New(rand.NewPCG(3, 4))
	for range 200_000 {
		var b []byte
		if rnd.IntN(3) == 0 {
			b = append(b, '-')
		}
		if rnd.IntN(4) == 0 {
			b = append(b, '0')
		} else {
			b = append(b, byte('1'+rnd.IntN(9)))
			for range rnd.IntN(17) {
				b = append(b, byte('0'+rnd.IntN(10)))
			}
		}
		if rnd.IntN(2) == 0 {
			b = append(b, '.')
			for range 1 + rnd.IntN(20) {
				b = append(b, "0000123456789"[rnd.IntN(13)])
			}
		}
		if !Shortest(b) {
			continue
		}
		f, err := strconv.ParseFloat(string(b), 64)
		require.NoError(t, err)
		require.Equal(t, string(b), render(f))
	}
}

// render is the 'f' rendering Shortest stands for.
func render(f float64) string {
	if f == 0 {
		f = 0
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
