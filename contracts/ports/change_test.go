package ports

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/contracts"
)

// A string drawn from plain text and from the characters json.Marshal
// treats specially.
func jsonString() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.SampledFrom([]string{"", "RUNNING", "3f2c9a1e-5b7d-4c0e-8a6f-0123456789ab", "archives/w/op/home.tar.zst"}),
		rapid.StringMatching(`[ -~]{0,12}`),
		rapid.String(),
		rapid.SampledFrom([]string{"a<b", "a&b", "x>y", "q\"q", `b\s`, "tab\t", "\u2028", "\xff", "é", "\x7f"}),
	)
}

func TestChangeAppendJSONIsJSONMarshal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := Change{
			WorkspaceID:    jsonString().Draw(t, "id"),
			ObservedStatus: contracts.ObservedStatus(jsonString().Draw(t, "observed")),
			HealthStatus:   contracts.HealthStatus(jsonString().Draw(t, "health")),
			Operation:      contracts.Operation(jsonString().Draw(t, "operation")),
			DesiredState:   contracts.DesiredState(jsonString().Draw(t, "desired")),
			Deleted:        rapid.Bool().Draw(t, "deleted"),
			ArchiveKey:     jsonString().Draw(t, "archive key"),
			ErrorMessage:   jsonString().Draw(t, "error message"),
			ErrorCount:     rapid.IntRange(-3, 1<<40).Draw(t, "error count"),
			Display:        contracts.DisplayState(jsonString().Draw(t, "display")),
			At: time.Unix(rapid.Int64Range(-1<<36, 1<<36).Draw(t, "unix"), rapid.Int64Range(0, 999999999).Draw(t, "nanos")).
				In(rapid.SampledFrom([]*time.Location{time.UTC, time.FixedZone("x", 3600+1800), time.FixedZone("y", -7*3600)}).Draw(t, "zone")),
		}
		want, wantErr := json.Marshal(c)
		got, err := c.AppendJSON([]byte("prefix"))
		if wantErr != nil {
			require.Error(t, err)
			return
		}
		require.NoError(t, err)
		require.Equal(t, "prefix"+string(want), string(got))
	})
}

func TestChangeAppendJSONOfARow(t *testing.T) {
	w := contracts.NewWorkspace("3f2c9a1e-5b7d-4c0e-8a6f-0123456789ab", "u1", "n", "img", time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC))
	c := ChangeOf(&w, w.CreatedAt)
	want, err := json.Marshal(c)
	require.NoError(t, err)
	got, err := c.AppendJSON(nil)
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(got))
	require.Equal(t, string(want), string(got))
}
