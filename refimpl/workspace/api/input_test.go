package api

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// TestTextFieldsRejectWhatTheStoreCannotHold: SPEC 4.3. Every text field
// of a request (name, description, memo, image_ref) with a NUL character
// or invalid UTF-8 is a 400 naming the field, on create and on edit;
// lengths are counted in characters.
func TestTextFieldsRejectWhatTheStoreCannotHold(t *testing.T) {
	s, w := newService(t)
	ctx := t.Context()
	ws, err := s.Create(ctx, "alice", ports.CreateRequest{Name: "dev", ImageRef: "img", DesiredState: str("PENDING")})
	require.NoError(t, err)

	bad := map[string]string{"NUL": "a\x00b", "invalid UTF-8": "a\xffb", "lone continuation byte": "\x80"}
	for what, v := range bad {
		for field, req := range map[string]ports.CreateRequest{
			"name":        {Name: v, ImageRef: "img"},
			"image_ref":   {Name: "n", ImageRef: v},
			"description": {Name: "n", ImageRef: "img", Description: v},
		} {
			_, err := s.Create(ctx, "alice", req)
			ae := requireAPIError(t, err, 400, contracts.APIBadRequest)
			require.Contains(t, ae.Message, field, "%s in %s", what, field)
			require.NotContains(t, ae.Message, v, "the value is never echoed")
		}
		for field, req := range map[string]ports.PatchRequest{
			"name":        {Name: str(v)},
			"description": {Description: str(v)},
			"memo":        {Memo: str(v)},
		} {
			_, err := s.Patch(ctx, "alice", ws.ID, req)
			ae := requireAPIError(t, err, 400, contracts.APIBadRequest)
			require.Contains(t, ae.Message, field, "%s in %s", what, field)
		}
	}
	got, err := w.Store.Get(ctx, ws.ID)
	require.NoError(t, err)
	require.Equal(t, "dev", got.Name, "nothing was written")

	name255 := strings.Repeat("é", 255) // 510 bytes, 255 characters
	made, err := s.Create(ctx, "alice", ports.CreateRequest{Name: name255, ImageRef: strings.Repeat("ü", 512), DesiredState: str("PENDING")})
	require.NoError(t, err, "255 multi-byte characters fit a name")
	require.Equal(t, name255, made.Name)
	_, err = s.Create(ctx, "alice", ports.CreateRequest{Name: name255 + "é", ImageRef: "img"})
	requireAPIError(t, err, 400, contracts.APIBadRequest)
	_, err = s.Patch(ctx, "alice", ws.ID, ports.PatchRequest{Name: str(name255 + "é")})
	requireAPIError(t, err, 400, contracts.APIBadRequest)
	_, err = s.Create(ctx, "alice", ports.CreateRequest{Name: "n", ImageRef: strings.Repeat("ü", 513)})
	requireAPIError(t, err, 400, contracts.APIBadRequest)

	long := strings.Repeat("ü", maxTextChars) // twice as many bytes
	_, err = s.Patch(ctx, "alice", ws.ID, ports.PatchRequest{Memo: str(long)})
	require.NoError(t, err, "memo is bounded in characters, not bytes")
	_, err = s.Patch(ctx, "alice", ws.ID, ports.PatchRequest{Memo: str(long + "ü")})
	requireAPIError(t, err, 400, contracts.APIBadRequest)
}

// TestStoreRejectionsBecome400: a value only the store refuses (here a
// table that holds less than the API allows) is still a 400, never a 500.
func TestStoreRejectionsBecome400(t *testing.T) {
	err := storeError("create", &contracts.LimitExceeded{LimitType: contracts.LimitGlobal, Current: 3, Max: 3})
	ae := requireAPIError(t, err, 429, contracts.APILimitExceeded)
	require.Equal(t, contracts.LimitGlobal, ae.Limit.LimitType)
	err = storeError("create", contracts.CheckText(contracts.ColName, "\x00"))
	requireAPIError(t, err, 400, contracts.APIBadRequest)
	require.NotErrorAs(t, storeError("create", contracts.ErrUnavailable), new(*contracts.APIError))
}
