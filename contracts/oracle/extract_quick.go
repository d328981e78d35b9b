package oracle

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
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
	if !json.Valid(body) {
		return "", false
	}
	i := skipSpace(body, 0)
	for {
		seg, rest, more := strings.Cut(rule, ".")
		if body[i] != '{' {
			return "", false
		}
		start, ok := lastMember(body, i, seg)
		if !ok {
			return "", false
		}
		i = start
		if !more {
			break
		}
		rule = rest
	}
	switch c := body[i]; {
	case c == '"':
		end := i + 1
		for body[end] != '"' {
			if body[end] == '\\' {
				return "", false
			}
			end++
		}
		raw := body[i+1 : end]
		if len(raw) == 0 || !utf8.Valid(raw) {
			return "", false
		}
		return string(raw), true
	case c == 't':
		return "true", true
	case c == 'f':
		return "false", true
	case c == '-' || (c >= '0' && c <= '9'):
		end := i + 1
		for end < len(body) && isNumberByte(body[end]) {
			end++
		}
		f, err := strconv.ParseFloat(string(body[i:end]), 64)
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

// lastMember is where the value of the last member named key starts in
// the object at b[i] (b is valid JSON), or false when the object has no
// such member or a key that quickScalar leaves to the decoder.
func lastMember(b []byte, i int, key string) (int, bool) {
	found := -1
	i = skipSpace(b, i+1)
	if b[i] == '}' {
		return 0, false
	}
	for {
		// b[i] is the opening quote of a key
		end := i + 1
		for b[end] != '"' {
			if b[end] == '\\' {
				return 0, false
			}
			end++
		}
		k := b[i+1 : end]
		if !utf8.Valid(k) {
			return 0, false
		}
		i = skipSpace(b, end+1) // at ':'
		i = skipSpace(b, i+1)   // at the value
		if string(k) == key {
			found = i
		}
		i = skipSpace(b, skipValue(b, i))
		if b[i] == '}' {
			break
		}
		i = skipSpace(b, i+1) // past ','
	}
	return found, found >= 0
}

// skipValue is the index just past the value starting at b[i] (b is
// valid JSON).
func skipValue(b []byte, i int) int {
	depth := 0
	for {
		switch c := b[i]; c {
		case '"':
			i++
			for b[i] != '"' {
				if b[i] == '\\' {
					i++
				}
				i++
			}
			i++
		case '{', '[':
			depth++
			i++
		case '}', ']':
			depth--
			i++
		default:
			if isSpace(c) || c == ',' || c == ':' {
				i++
			} else { // a number or a literal
				for i < len(b) && isNumberByte(b[i]) {
					i++
				}
			}
		}
		if depth == 0 {
			return i
		}
	}
}

// isNumberByte reports whether c can belong to a number or a literal
// (true, false, null).
func isNumberByte(c byte) bool {
	return c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}
