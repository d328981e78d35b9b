package oracle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wsconverge/converge/wire/jsonscan"
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
// member counts, as encoding/json reads it (docs/decisions/oracle-3-daemon.md, DR237).
//
// The model extracts every 200 answer of a run, so the common case is
// read in place: finding the value in the bytes is JSON syntax, shared
// with the reference daemon through package jsonscan (held to
// encoding/json by its tests), and a string without escapes, a boolean or
// a number found under keys without escapes is rendered here without
// decoding the body; anything else is decoded.
func specExtract(body []byte, rule string) (string, error) {
	v, from, to, err := specExtractSpan(body, rule)
	if from < to {
		return string(body[from:to]), nil
	}
	return v, err
}

// specExtractText is specExtract of text, read through body, a copy of
// its bytes: a rendering that is the body's own text (a string without
// escapes, a number already in its §3.4 form) is a substring of text, not
// a new string (the model keeps the value of every 200 answer).
func specExtractText(text string, body []byte, rule string) (string, error) {
	v, from, to, err := specExtractSpan(body, rule)
	if from < to {
		return text[from:to], nil
	}
	return v, err
}

// specExtractSpan is specExtract, its rendering given as body[from:to]
// (from < to) when it is the body's own text, else as v.
func specExtractSpan(body []byte, rule string) (v string, from, to int, err error) {
	if rule == "" {
		return "", 0, 0, fmt.Errorf("%w: the parse rule is empty", errSpecParse)
	}
	if strings.HasPrefix(rule, ".") || strings.HasSuffix(rule, ".") || strings.Contains(rule, "..") {
		return "", 0, 0, fmt.Errorf("%w: the parse rule %q has an empty segment", errSpecParse, rule)
	}
	at, found, valid := jsonscan.Lookup(body, rule)
	if !valid {
		return "", 0, 0, fmt.Errorf("%w: the body is not one JSON value", errSpecParse)
	}
	if found {
		if v, from, to, ok := specScalarAt(body, at); ok {
			return v, from, to, nil
		}
	}
	v, err = specExtractDecoded(body, rule)
	return v, 0, 0, err
}

// specScalarAt renders the value at b[i] of a valid JSON body, found
// along the rule with every key on the way free of escapes
// (jsonscan.Lookup), when it is a string without escapes (valid UTF-8), a
// boolean or a number: as b[from:to] (from < to) when the rendering is the
// literal's own text, else as s. Any other case is false:
// specExtractDecoded decides.
func specScalarAt(b []byte, i int) (s string, from, to int, ok bool) {
	switch c := b[i]; {
	case c == '"':
		raw, ok := jsonscan.PlainString(b, i)
		if !ok || len(raw) == 0 || !utf8.Valid(raw) {
			return "", 0, 0, false
		}
		return "", i + 1, i + 1 + len(raw), true // PlainString's text follows the quote
	case c == 't':
		return "true", 0, 0, true
	case c == 'f':
		return "false", 0, 0, true
	case c == '-' || ('0' <= c && c <= '9'):
		end := jsonscan.LiteralEnd(b, i)
		if jsonscan.Shortest(b[i:end]) {
			return "", i, end, true
		}
		f, err := strconv.ParseFloat(string(b[i:end]), 64)
		if err != nil {
			return "", 0, 0, false
		}
		var buf [32]byte
		if r := specAppendDouble(buf[:0], f); string(r) != string(b[i:end]) {
			return string(r), 0, 0, true
		}
		return "", i, end, true
	}
	return "", 0, 0, false
}

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
// literal text, and <, > and & are not escaped: docs/decisions/oracle-3-daemon.md, DR237);
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
// docs/decisions/oracle-3-daemon.md, DR237).
func specFormatDouble(f float64) string {
	var buf [32]byte
	return string(specAppendDouble(buf[:0], f))
}

// specAppendDouble appends specFormatDouble(f) to b.
func specAppendDouble(b []byte, f float64) []byte {
	if f == 0 {
		f = 0
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}
