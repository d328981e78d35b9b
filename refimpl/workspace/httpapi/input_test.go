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
