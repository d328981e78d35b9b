package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ErrParse marks every parse or extraction failure of the Executor: the job
// then retries after ParseFailureRetry (ORACLE-SPEC 3.4).
var ErrParse = errors.New("parse failure")

// Extract is the Executor's parse, path and render steps (ORACLE-SPEC 3.4,
// D17): body must be one JSON object (nothing after it but white space);
// rule is split on "." and each segment names a key (exact, case-sensitive)
// of the current value, which must be an object (no array indexing); the
// value found is rendered by Render. Every failure wraps ErrParse.
func Extract(body []byte, rule string) (string, error) {
	if rule == "" {
		return "", fmt.Errorf("%w: empty parse rule", ErrParse)
	}
	if s, ok := quickScalar(body, rule); ok {
		return s, nil
	}
	return extractFull(body, rule)
}

// extractFull is Extract without its quick path.
func extractFull(body []byte, rule string) (string, error) {
	path := strings.Split(rule, ".")
	for i, seg := range path {
		if seg == "" {
			return "", fmt.Errorf("%w: parse rule %q has an empty segment at %d", ErrParse, rule, i)
		}
	}
	if v, ok := scalarAt(body, path); ok {
		return render(v, rule)
	}
	return extractDecoded(body, rule, path)
}

// scalarAt is the value at path when body is one JSON object and that
// value a string, a boolean or a number, found with json.Unmarshal, which
// costs less than the streaming decoder extractDecoded needs for
// UseNumber. A number then comes as the float64 that strconv.ParseFloat
// makes of its literal, which Render writes exactly as it writes the
// literal's json.Number. Anything else gives false and extractDecoded
// decides, with its errors: a body that is not one JSON value, a number
// beyond the double range, a non-object on the path, a missing key, a
// null, an object or an array (whose numbers keep their literal text).
func scalarAt(body []byte, path []string) (any, bool) {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, false
	}
	for _, seg := range path {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[seg]; !ok {
			return nil, false
		}
	}
	switch v.(type) {
	case string, bool, float64:
		return v, true
	}
	return nil, false
}

// extractDecoded is Extract by the streaming decoder, numbers kept as
// their literal text.
func extractDecoded(body []byte, rule string, path []string) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var top any
	if err := dec.Decode(&top); err != nil {
		return "", fmt.Errorf("%w: body is not JSON: %v", ErrParse, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", fmt.Errorf("%w: body has data after its JSON value", ErrParse)
	}
	cur, ok := top.(map[string]any)
	if !ok {
		return "", fmt.Errorf("%w: body is %s, not a JSON object", ErrParse, kindOf(top))
	}
	var v any = cur
	for i, seg := range path {
		obj, ok := v.(map[string]any)
		if !ok {
			return "", fmt.Errorf("%w: %q is %s, not an object", ErrParse, strings.Join(path[:i], "."), kindOf(v))
		}
		if v, ok = obj[seg]; !ok {
			return "", fmt.Errorf("%w: no key %q at %q", ErrParse, seg, strings.Join(path[:i+1], "."))
		}
	}
	return render(v, rule)
}

// render is Render of the value a rule found.
func render(v any, rule string) (string, error) {
	s, err := Render(v)
	if err != nil {
		return "", fmt.Errorf("value at %q: %w", rule, err)
	}
	return s, nil
}

// Render turns a JSON value, as decoded with json.Decoder.UseNumber, into the
// string a submission carries (ORACLE-SPEC 3.4):
//   - a string is itself;
//   - a number is the shortest decimal that round-trips to the same IEEE-754
//     double, in plain notation without exponent ("5", "0.1",
//     "1000000000000000000000"); negative zero is "0"; a number beyond the
//     double range is a parse failure;
//   - true and false are "true" and "false";
//   - an object or array is compact JSON with object keys sorted (numbers
//     inside keep their literal text, strings are not HTML-escaped);
//   - null is a parse failure.
//
// An empty result is a parse failure: the chain rejects empty raw_data.
func Render(v any) (string, error) {
	var out string
	switch v := v.(type) {
	case nil:
		return "", fmt.Errorf("%w: null", ErrParse)
	case string:
		out = v
	case bool:
		out = strconv.FormatBool(v)
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return "", fmt.Errorf("%w: number %s is not a finite double", ErrParse, v)
		}
		if f == 0 {
			f = 0 // negative zero renders as "0"
		}
		out = strconv.FormatFloat(f, 'f', -1, 64)
	case float64:
		return Render(json.Number(strconv.FormatFloat(v, 'g', -1, 64)))
	case map[string]any, []any:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return "", fmt.Errorf("%w: %v", ErrParse, err)
		}
		out = strings.TrimSuffix(buf.String(), "\n")
	default:
		return "", fmt.Errorf("%w: unsupported value %T", ErrParse, v)
	}
	if out == "" {
		return "", fmt.Errorf("%w: empty value", ErrParse)
	}
	return out, nil
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
