package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wsconverge/converge/contracts"
)

// MaxBodyBytes is the largest request body accepted (413 beyond).
const MaxBodyBytes = 64 << 10

func badRequest(field, format string, args ...any) *fieldError {
	return &fieldError{APIError: apiError(http.StatusBadRequest, contracts.APIBadRequest, fmt.Sprintf(format, args...)), field: field}
}

func tooLarge() *fieldError {
	return &fieldError{APIError: apiError(http.StatusRequestEntityTooLarge, contracts.APITooLarge,
		"request body is larger than "+strconv.Itoa(MaxBodyBytes)+" bytes")}
}

// decodeBody reads one JSON object from the body into dst, rejecting a
// Content-Type other than application/json (415), bodies over MaxBodyBytes
// (413), a body that is not UTF-8, and anything but a single JSON object
// whose fields dst knows with the right types (400, naming the field).
func decodeBody(w http.ResponseWriter, r *http.Request, dst any) *fieldError {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if ct == "" || err != nil || mt != "application/json" {
		return &fieldError{APIError: apiError(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType,
			"Content-Type must be application/json")}
	}
	if r.ContentLength > MaxBodyBytes {
		return tooLarge()
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge()
		}
		return badRequest("", "reading the request body failed: %v", err)
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return badRequest("", "request body is required: a JSON object")
	}
	if !utf8.Valid(trimmed) {
		// JSON is UTF-8 (RFC 8259); encoding/json would quietly turn bad
		// bytes into U+FFFD and store something the client never sent.
		return badRequest("", "request body is not valid UTF-8")
	}
	if !json.Valid(trimmed) {
		return syntaxError(trimmed)
	}
	if trimmed[0] != '{' {
		return badRequest("", "request body must be a JSON object")
	}
	if loneSurrogate(trimmed) {
		// encoding/json would store U+FFFD for it: something the client
		// never sent, as with invalid UTF-8.
		return badRequest("", `request body holds a \u escape of a lone UTF-16 surrogate (such as \ud800), which is no character`)
	}
	if fe := checkKeys(trimmed, dst); fe != nil {
		return fe
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	return nil
}

// syntaxError locates the first syntax error of an invalid body (json.Valid
// does not say where) or notes trailing data after a valid value.
func syntaxError(body []byte) *fieldError {
	dec := json.NewDecoder(bytes.NewReader(body))
	var v any
	err := dec.Decode(&v)
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return badRequest("", "invalid JSON at byte %d: %v", se.Offset, se)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("", "invalid JSON: unexpected end of input")
	case err == nil:
		return badRequest("", "request body must hold a single JSON object")
	}
	return badRequest("", "invalid JSON: %v", err)
}

func decodeError(err error) *fieldError {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return badRequest("", "request body must be a JSON object")
		}
		return badRequest(te.Field, "field %q must be %s, not %s", te.Field, describe(te.Type), te.Value)
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		field, uerr := strconv.Unquote(name)
		if uerr != nil {
			field = name
		}
		return badRequest(field, "unknown field %q", field)
	}
	return badRequest("", "invalid JSON: %v", err)
}

// describe names a Go type as a JSON type for messages.
func describe(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// loneSurrogate reports whether a valid JSON text escapes a UTF-16
// surrogate that is not half of a pair (\ud800 alone, or a low half
// first).
func loneSurrogate(body []byte) bool {
	inString := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case !inString:
			inString = c == '"'
		case c == '"':
			inString = false
		case c == '\\' && i+1 < len(body):
			i++
			if body[i] != 'u' {
				continue
			}
			r, ok := hex4(body, i+1)
			if !ok {
				continue
			}
			i += 4
			switch {
			case r >= 0xdc00 && r <= 0xdfff:
				return true
			case r >= 0xd800 && r <= 0xdbff:
				if i+2 >= len(body) || body[i+1] != '\\' || body[i+2] != 'u' {
					return true
				}
				lo, ok := hex4(body, i+3)
				if !ok || lo < 0xdc00 || lo > 0xdfff {
					return true
				}
				i += 6
			}
		}
	}
	return false
}

// hex4 reads four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[i:i+4]), 16, 32)
	return rune(n), err == nil
}

// checkKeys walks a valid JSON object and refuses, with a 400 naming the
// key, a key that appears twice in one object (encoding/json keeps the
// last silently) and a top-level key that is not exactly one of dst's
// field names (encoding/json matches them ignoring case).
func checkKeys(body []byte, dst any) *fieldError {
	known := map[string]bool{}
	t := reflect.TypeOf(dst)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct {
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name != "" && name != "-" {
				known[name] = true
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	// Each open container: its keys seen so far (nil for an array), and
	// whether the next string token of an object is a key.
	type level struct {
		keys   map[string]bool
		expect bool
	}
	var stack []*level
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // the body is valid JSON: io.EOF
		}
		var top *level
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if key, isStr := tok.(string); isStr && top != nil && top.keys != nil && top.expect {
			if top.keys[key] {
				return badRequest(key, "field %q appears more than once", key)
			}
			if len(stack) == 1 && len(known) > 0 && !known[key] {
				return badRequest(key, "unknown field %q (field names are case-sensitive)", key)
			}
			top.keys[key] = true
			top.expect = false
			continue
		}
		if top != nil && top.keys != nil {
			top.expect = true // a value ends: the next string is a key
		}
		switch tok {
		case json.Delim('{'):
			if top != nil && top.keys != nil {
				top.expect = false
			}
			stack = append(stack, &level{keys: map[string]bool{}, expect: true})
		case json.Delim('['):
			stack = append(stack, &level{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].keys != nil {
				stack[len(stack)-1].expect = true
			}
		}
	}
}
