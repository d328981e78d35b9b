package invariant

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// errSpecParse marks every parse or extraction failure of the judge's own
// reading of the Executor's steps (ORACLE-SPEC §3.4): the model then takes
// the "parse or extract failed" row.
var errSpecParse = errors.New("parse failure")

// specExtract is the Executor's parse, path, render and empty steps
// (ORACLE-SPEC §3.4, D17), read from the text rather than taken from
// package oracle: the body must be one JSON value, an object; the rule is
// split on "." and an empty rule or segment fails; each segment names a
// key, exact and case-sensitive, of the current value, which must be an
// object (no array indices); the value found is rendered by specRender,
// and an empty rendering fails. Where an object repeats a key, the last
// member counts, as encoding/json reads it (docs/choices.md 237).
//
// The model extracts every 200 answer of a run, so the common case is
// read in place: the body is checked by specQuickValid first (json.Valid
// when it is unsure), and a string without escapes, a boolean or a number
// found under keys without escapes is rendered without decoding the body;
// anything else is decoded.
func specExtract(body []byte, rule string) (string, error) {
	if rule == "" {
		return "", fmt.Errorf("%w: the parse rule is empty", errSpecParse)
	}
	if strings.HasPrefix(rule, ".") || strings.HasSuffix(rule, ".") || strings.Contains(rule, "..") {
		return "", fmt.Errorf("%w: the parse rule %q has an empty segment", errSpecParse, rule)
	}
	if !specQuickValid(body) && !json.Valid(body) {
		return "", fmt.Errorf("%w: the body is not one JSON value", errSpecParse)
	}
	if s, ok := specScalarInPlace(body, rule); ok {
		return s, nil
	}
	return specExtractDecoded(body, rule)
}

// specScalarInPlace walks a valid JSON body along rule and renders the
// value found when it is a string without escapes (valid UTF-8), a
// boolean or a number, every key on the way being free of escapes. Any
// other case, failures included, is false: specExtractDecoded decides.
func specScalarInPlace(b []byte, rule string) (string, bool) {
	i := specSpace(b, 0)
	for more := true; more; {
		var seg string
		seg, rule, more = strings.Cut(rule, ".")
		if b[i] != '{' {
			return "", false
		}
		at, ok := specMember(b, i, seg)
		if !ok {
			return "", false
		}
		i = at
	}
	switch c := b[i]; {
	case c == '"':
		end := bytes.IndexByte(b[i+1:], '"') + i + 1
		raw := b[i+1 : end]
		if len(raw) == 0 || bytes.IndexByte(raw, '\\') >= 0 || !utf8.Valid(raw) {
			return "", false
		}
		return string(raw), true
	case c == 't':
		return "true", true
	case c == 'f':
		return "false", true
	case c == '-' || ('0' <= c && c <= '9'):
		end := i
		for end < len(b) && ('0' <= b[end] && b[end] <= '9' || b[end] == '.' || b[end] == '-' || b[end] == '+' || b[end] == 'e' || b[end] == 'E') {
			end++
		}
		f, err := strconv.ParseFloat(string(b[i:end]), 64)
		if err != nil {
			return "", false
		}
		return specFormatDouble(f), true
	}
	return "", false
}

// specMember is where the value of the last member named key of the
// object at b[i] starts (b valid JSON); false when there is none or a key
// holds an escape.
func specMember(b []byte, i int, key string) (int, bool) {
	found, at := false, 0
	i = specSpace(b, i+1)
	for b[i] != '}' {
		end := bytes.IndexByte(b[i+1:], '"') + i + 1
		k := b[i+1 : end]
		if bytes.IndexByte(k, '\\') >= 0 || !utf8.Valid(k) {
			return 0, false
		}
		v := specSpace(b, specSpace(b, end+1)+1) // past the colon
		if string(k) == key {
			found, at = true, v
		}
		i = specSpace(b, specSkip(b, v))
		if b[i] == ',' {
			i = specSpace(b, i+1)
		}
	}
	return at, found
}

// specSkip is the index just past the JSON value at b[i] (b valid JSON).
func specSkip(b []byte, i int) int {
	depth := 0
	for {
		switch b[i] {
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
			i++
		}
		if depth == 0 && (i >= len(b) || specIsSpace(b[i]) || b[i] == ',' || b[i] == '}' || b[i] == ']') {
			return i
		}
	}
}

// specSpace is the index of the first byte at or after i that is not
// JSON white space.
func specSpace(b []byte, i int) int {
	for i < len(b) && specIsSpace(b[i]) {
		i++
	}
	return i
}

// specQuickValid reports that b is one JSON text by RFC 8259's grammar
// (white space, then one value, then white space), for the bodies sources
// serve, cheaper than json.Valid. It says false when unsure, which it is
// of a byte outside ASCII in a string and of nesting deeper than 64:
// json.Valid then decides. It never says true to a text json.Valid
// refuses (spec_test.go holds it so).
func specQuickValid(b []byte) bool {
	var open [64]byte // the closers of the open containers
	depth := 0
	i := specSpace(b, 0)
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return false
		}
		var ok bool
		switch c := b[i]; c {
		case '{', '[':
			if depth == len(open) {
				return false
			}
			open[depth] = c + 2 // '}' and ']' follow '{' and '[' by two
			depth++
			i = specSpace(b, i+1)
			if i < len(b) && b[i] == open[depth-1] {
				depth--
				i, ok = i+1, true
				break
			}
			if c == '{' {
				if i, ok = specQuickKey(b, i); !ok {
					return false
				}
			}
			continue
		case '"':
			i, ok = specQuickString(b, i)
		case 't':
			i, ok = specQuickLiteral(b, i, "true")
		case 'f':
			i, ok = specQuickLiteral(b, i, "false")
		case 'n':
			i, ok = specQuickLiteral(b, i, "null")
		default:
			i, ok = specQuickNumber(b, i)
		}
		if !ok {
			return false
		}
		// A value ended: close containers, or take a comma (and a key)
		// before the next value.
		for {
			i = specSpace(b, i)
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
			i = specSpace(b, i+1)
			if open[depth-1] == '}' {
				if i, ok = specQuickKey(b, i); !ok {
					return false
				}
			}
			break
		}
	}
}

// specQuickKey reads a member's key, white space and colon at b[i] and
// returns where the member's value may start.
func specQuickKey(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	i, ok := specQuickString(b, i)
	if !ok {
		return 0, false
	}
	i = specSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return 0, false
	}
	return specSpace(b, i+1), true
}

// specQuickString is the index past the ASCII string at b[i] (a quote):
// no control character, and only JSON's escapes.
func specQuickString(b []byte, i int) (int, bool) {
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
			if b[i] == 'u' {
				if i+4 >= len(b) {
					return 0, false
				}
				for _, h := range b[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return 0, false
					}
				}
				i += 4
			} else if strings.IndexByte(`"\/bfnrt`, b[i]) < 0 {
				return 0, false
			}
		}
	}
	return 0, false
}

// specQuickLiteral is the index past lit at b[i].
func specQuickLiteral(b []byte, i int, lit string) (int, bool) {
	if !bytes.HasPrefix(b[i:], []byte(lit)) {
		return 0, false
	}
	return i + len(lit), true
}

// specQuickNumber is the index past the number at b[i]: an optional
// minus, 0 or a digit 1–9 and more digits, optionally a dot and digits,
// optionally e or E, a sign and digits.
func specQuickNumber(b []byte, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(i)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
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
		j := digits(i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

// specIsSpace reports whether c is JSON white space.
func specIsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// specExtractDecoded is specExtract by decoding the body, numbers kept as
// their literal text.
func specExtractDecoded(body []byte, rule string) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("%w: the body does not decode: %w", errSpecParse, err)
	}
	if _, ok := v.(map[string]any); !ok {
		return "", fmt.Errorf("%w: the body is not a JSON object", errSpecParse)
	}
	for seg := range strings.SplitSeq(rule, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return "", fmt.Errorf("%w: %q of rule %q is looked up in a value that is not an object", errSpecParse, seg, rule)
		}
		if v, ok = obj[seg]; !ok {
			return "", fmt.Errorf("%w: no key %q for rule %q", errSpecParse, seg, rule)
		}
	}
	return specRender(v)
}

// specRender is §3.4's render and empty steps for a value decoded with
// UseNumber: a string is itself; a number is specFormatDouble of its
// literal's double; true and false are themselves; an object or an array is its
// compact JSON with the object keys sorted (numbers inside keep their
// literal text, and <, > and & are not escaped: docs/choices.md 237);
// null fails, and so does an empty result (the chain refuses empty
// raw_data).
func specRender(v any) (string, error) {
	var out string
	switch v := v.(type) {
	case nil:
		return "", fmt.Errorf("%w: the value is null", errSpecParse)
	case string:
		out = v
	case bool:
		out = strconv.FormatBool(v)
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return "", fmt.Errorf("%w: the number %s is not a double", errSpecParse, v)
		}
		out = specFormatDouble(f)
	default:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return "", fmt.Errorf("%w: the value does not encode: %w", errSpecParse, err)
		}
		out = strings.TrimSuffix(buf.String(), "\n")
	}
	if out == "" {
		return "", fmt.Errorf("%w: the value is empty", errSpecParse)
	}
	return out, nil
}

// specFormatDouble renders a number as §3.4 says: the shortest decimal
// that reads back as the same IEEE-754 double, in plain notation without
// an exponent. Negative zero reads back equal from "0", the shorter (a
// literal beyond the double range has no double: it fails before,
// docs/choices.md 237).
func specFormatDouble(f float64) string {
	if f == 0 {
		f = 0
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
