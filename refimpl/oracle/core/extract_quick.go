package core

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wsconverge/converge/wire/jsonscan"
)

// quickScalar is Extract's answer for the common case, found without
// decoding the body into maps: body is one valid JSON object, every
// segment of rule is non-empty, the keys on the way hold no escape and no
// byte that is not valid UTF-8, and the value found is a string without
// escapes (of valid UTF-8), a boolean or a number in the double range,
// rendered non-empty. The value is then what scalarAt and Render give
// (json.Unmarshal would read the same keys and the same value: the last
// of duplicate keys wins, a number is strconv.ParseFloat of its literal).
// Anything else gives false and Extract takes its full path, with its
// errors.
func quickScalar(body []byte, rule string) (string, bool) {
	if rule[0] == '.' || rule[len(rule)-1] == '.' || strings.Contains(rule, "..") {
		return "", false
	}
	i, found, valid := jsonscan.Lookup(body, rule)
	if !valid || !found {
		return "", false
	}
	switch c := body[i]; {
	case c == '"':
		raw, ok := jsonscan.PlainString(body, i)
		if !ok || len(raw) == 0 || !utf8.Valid(raw) {
			return "", false
		}
		return string(raw), true
	case c == 't':
		return "true", true
	case c == 'f':
		return "false", true
	case c == '-' || (c >= '0' && c <= '9'):
		lit := body[i:jsonscan.LiteralEnd(body, i)]
		if jsonscan.Shortest(lit) {
			return string(lit), true // FormatFloat would write it as it stands
		}
		f, err := strconv.ParseFloat(string(lit), 64)
		if err != nil {
			return "", false
		}
		if f == 0 {
			f = 0 // negative zero renders as "0"
		}
		return strconv.FormatFloat(f, 'f', -1, 64), true
	}
	return "", false // null, an object or an array
}
