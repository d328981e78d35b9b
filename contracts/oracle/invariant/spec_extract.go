package invariant

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wsconverge/converge/contracts/oracle/internal/jsonscan"
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
// read in place: finding the value in the bytes is JSON syntax, shared
// with the reference daemon through package jsonscan (held to
// encoding/json by its tests), and a string without escapes, a boolean or
// a number found under keys without escapes is rendered here without
// decoding the body; anything else is decoded.
func specExtract(body []byte, rule string) (string, error) {
	if rule == "" {
		return "", fmt.Errorf("%w: the parse rule is empty", errSpecParse)
	}
	if strings.HasPrefix(rule, ".") || strings.HasSuffix(rule, ".") || strings.Contains(rule, "..") {
		return "", fmt.Errorf("%w: the parse rule %q has an empty segment", errSpecParse, rule)
	}
	if !jsonscan.Valid(body) {
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
	i := jsonscan.SkipSpace(b, 0)
	for more := true; more; {
		var seg string
		seg, rule, more = strings.Cut(rule, ".")
		if b[i] != '{' {
			return "", false
		}
		at, ok := jsonscan.LastMember(b, i, seg)
		if !ok {
			return "", false
		}
		i = at
	}
	switch c := b[i]; {
	case c == '"':
		raw, ok := jsonscan.PlainString(b, i)
		if !ok || len(raw) == 0 || !utf8.Valid(raw) {
			return "", false
		}
		return string(raw), true
	case c == 't':
		return "true", true
	case c == 'f':
		return "false", true
	case c == '-' || ('0' <= c && c <= '9'):
		f, err := strconv.ParseFloat(string(b[i:jsonscan.LiteralEnd(b, i)]), 64)
		if err != nil {
			return "", false
		}
		return specFormatDouble(f), true
	}
	return "", false
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
