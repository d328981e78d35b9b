package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

// TestTextInputOverHTTP: what the store cannot hold is a 400 with a JSON
// body over HTTP too — a NUL escaped in JSON, raw bytes that are not
// UTF-8 (never silently replaced) — and lengths are characters.
func TestTextInputOverHTTP(t *testing.T) {
	e := newEnv(t)
	id := e.create(alice, `{"name":"dev","image_ref":"img","desired_state":"PENDING"}`)
	item := "/api/v1/workspaces/" + id
	for body, want := range map[string]string{
		`{"name":"a\u0000b","image_ref":"img"}`:                 "name",
		`{"name":"n","image_ref":"img\u0000"}`:                  "image_ref",
		`{"name":"n","image_ref":"img","description":"\u0000"}`: "description",
		"{\"name\":\"caf\xe9\",\"image_ref\":\"img\"}":          "not valid UTF-8",
	} {
		errObj := e.call(http.MethodPost, "/api/v1/workspaces", alice, body).errorOf(t, http.StatusBadRequest, contracts.APIBadRequest)
		require.Contains(t, errObj["message"], want, body)
	}
	for body, want := range map[string]string{
		`{"memo":"m\u0000"}`:         "memo",
		"{\"memo\":\"\xff\"}":        "not valid UTF-8",
		`{"description":"x\u0000y"}`: "description",
	} {
		errObj := e.call(http.MethodPatch, item, alice, body).errorOf(t, http.StatusBadRequest, contracts.APIBadRequest)
		require.Contains(t, errObj["message"], want, body)
	}
	require.Equal(t, "dev", e.row(id).Name, "nothing was written")

	name := strings.Repeat("é", 255)
	created := e.create(alice, `{"name":"`+name+`","image_ref":"img","desired_state":"PENDING"}`)
	require.Equal(t, name, e.row(created).Name, "255 two-byte characters fit")
	e.call(http.MethodPost, "/api/v1/workspaces", alice, `{"name":"`+name+`é","image_ref":"img"}`).
		errorOf(t, http.StatusBadRequest, contracts.APIBadRequest)
}

// JSON that encoding/json would read loosely is refused with 400 (issue
// 23): a lone surrogate escape (stored as U+FFFD otherwise), a field name
// in another case (matched ignoring case otherwise), a key given twice
// (the last won otherwise). A surrogate pair is a character, and nested
// objects are not fields.
func TestStrictJSON(t *testing.T) {
	e := newEnv(t)
	id := e.create(alice, `{"name":"dev","image_ref":"img","desired_state":"PENDING"}`)
	item := "/api/v1/workspaces/" + id
	for body, want := range map[string]string{
		`{"name":"a\ud800b","image_ref":"img"}`:        `lone UTF-16 surrogate`,
		`{"name":"a\udc00","image_ref":"img"}`:         `lone UTF-16 surrogate`,
		`{"name":"a\ud800\u0041","image_ref":"img"}`:   `lone UTF-16 surrogate`,
		`{"name":"a\\ud800","image_ref":"img\ud83d"}`:  `lone UTF-16 surrogate`,
		`{"Name":"n","image_ref":"img"}`:               `unknown field "Name" (field names are case-sensitive)`,
		`{"name":"n","IMAGE_REF":"img"}`:               `unknown field "IMAGE_REF"`,
		`{"name":"n","image_ref":"img","name":"m"}`:    `field "name" appears more than once`,
		`{"name":"n","image_ref":"a","image_ref":"b"}`: `field "image_ref" appears more than once`,
	} {
		errObj := e.call(http.MethodPost, "/api/v1/workspaces", alice, body).errorOf(t, http.StatusBadRequest, contracts.APIBadRequest)
		require.Contains(t, errObj["message"], want, body)
	}
	for body, want := range map[string]string{
		`{"memo":"\ud800"}`:              "lone UTF-16 surrogate",
		`{"Memo":"m"}`:                   `unknown field "Memo"`,
		`{"memo":"a","memo":"b"}`:        `field "memo" appears more than once`,
		`{"memo":"a","Memo":"b"}`:        `unknown field "Memo"`,
		`{"desired_State":"RUNNING"}`:    `unknown field "desired_State"`,
		`{"memo":{"x":1,"x":2}}`:         `field "x" appears more than once`,
		`{"memo":"m","desired_state":1}`: `must be a string`,
	} {
		errObj := e.call(http.MethodPatch, item, alice, body).errorOf(t, http.StatusBadRequest, contracts.APIBadRequest)
		require.Contains(t, errObj["message"], want, body)
	}
	require.Empty(t, e.row(id).Memo, "nothing was written")

	// A surrogate pair escapes one character; an escaped backslash
	// before "ud800" is text.
	r := e.call(http.MethodPatch, item, alice, `{"memo":"\ud83d\ude00 \\ud800"}`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Equal(t, "😀 \\ud800", e.row(id).Memo)
}
