package cometrpc

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// String is the upper-cased hex of the bytes.
func TestHexBytesStringIsUpperHex(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		b := rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(rt, "bytes")
		require.Equal(rt, strings.ToUpper(hex.EncodeToString(b)), HexBytes(b).String())
	})
}
