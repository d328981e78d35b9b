package keys

import (
	"testing"

	"github.com/decred/dcrd/bech32"
	"github.com/stretchr/testify/require"
)

func bechWithPrefix(prefix string, b []byte) (string, error) {
	return bech32.EncodeFromBase256(prefix, b)
}

func mustEncodeRaw(t *testing.T, b []byte) string {
	t.Helper()
	s, err := bech32.EncodeFromBase256(Prefix, b)
	require.NoError(t, err)
	return s
}
