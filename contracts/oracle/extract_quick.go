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
	if !validJSON(body) {
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

// validJSON is json.Valid(b), with quickValid in front of it.
func validJSON(b []byte) bool { return quickValid(b) || json.Valid(b) }

// quickValid reports that b is one valid JSON value, for the bodies
// sources serve: a strict reading of the grammar as encoding/json's
// scanner reads it that never says yes to what json.Valid refuses, and
// says no (leaving json.Valid to decide) to anything it does not read: a
// byte outside ASCII, nesting deeper than 64. The scanner was two fifths
// of extracting a value, which the daemon and the checkers do for every
// GET. TestQuickValidIsJSONValid holds it to json.Valid.
func quickValid(b []byte) bool {
	var open [64]byte // the closing brackets of the containers open
	depth := 0
	i := skipSpace(b, 0)
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return false
		}
		var ok bool
		switch c := b[i]; c {
		case '{', '[':
			end := byte('}')
			if c == '[' {
				end = ']'
			}
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == end {
				i++ // an empty container is a whole value
				break
			}
			if depth == len(open) {
				return false
			}
			open[depth] = end
			depth++
			if end == '}' {
				if i, ok = memberKey(b, i); !ok {
					return false
				}
			}
			continue
		case '"':
			if i, ok = skipJSONString(b, i); !ok {
				return false
			}
		case 't':
			if i, ok = skipLiteral(b, i, "true"); !ok {
				return false
			}
		case 'f':
			if i, ok = skipLiteral(b, i, "false"); !ok {
				return false
			}
		case 'n':
			if i, ok = skipLiteral(b, i, "null"); !ok {
				return false
			}
		default:
			if i, ok = skipJSONNumber(b, i); !ok {
				return false
			}
		}
		// A value ended just before b[i]: close containers, or go on to
		// the next element or member.
		for {
			i = skipSpace(b, i)
			if depth == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			if b[i] == open[depth-1] {
				depth--
				i++
				continue
			}
			if b[i] != ',' {
				return false
			}
			i = skipSpace(b, i+1)
			if open[depth-1] == '}' {
				if i, ok = memberKey(b, i); !ok {
					return false
				}
			}
			break
		}
	}
}

// memberKey reads a member's key and colon at b[i] and returns where its
// value starts.
func memberKey(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	i, ok := skipJSONString(b, i)
	if !ok {
		return 0, false
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return 0, false
	}
	return skipSpace(b, i+1), true
}

// skipJSONString is the index past the string starting at b[i] (a quote):
// no control character, only the escapes JSON has, ASCII only.
func skipJSONString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20 || c >= 0x80:
			return 0, false
		case c == '\\':
			i++
			if i >= len(b) {
				return 0, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return 0, false
				}
				for _, h := range b[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return 0, false
					}
				}
				i += 4
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

// skipLiteral is the index past lit at b[i].
func skipLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// skipJSONNumber is the index past the number at b[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func skipJSONNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return 0, false
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = skipDigits(b, i)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := skipDigits(b, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := skipDigits(b, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
