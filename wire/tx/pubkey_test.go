package tx

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/wire/keys"
	"github.com/wsconverge/converge/wire/proto/cosmos/evm/crypto/v1/ethsecp256k1"
)

// PubKeyKey reads any bytes as proto.Unmarshal does: the key of the
// shape Build writes in place, every other shape (another length, another
// field, junk) as the message decoder decides.
func TestPubKeyKeyIsUnmarshal(t *testing.T) {
	built := encodePubKeyValue(make([]byte, 33))
	require.Len(t, built, 35)
	rapid.Check(t, func(rt *rapid.T) {
		value := drawPubKeyValue(rt)
		var pk ethsecp256k1.PubKey
		werr := proto.Unmarshal(value, &pk)
		got, err := PubKeyKey(value)
		if werr != nil {
			require.Error(rt, err)
			return
		}
		require.NoError(rt, err)
		require.Equal(rt, len(pk.GetKey()), len(got))
		require.Equal(rt, string(pk.GetKey()), string(got))
	})
}

// encodePubKey writes encodePubKeyValue of the key's bytes.
func TestEncodePubKeyIsEncodePubKeyValue(t *testing.T) {
	for _, seed := range []string{"a", "b", "c", "d"} {
		k := keys.PrivKeyFromSeed(seed).PubKey()
		require.Equal(t, encodePubKeyValue(k.Bytes()), encodePubKey(k))
	}
}

// drawPubKeyValue draws a public key's encoded value: the shape Build
// writes (33 key bytes behind their tag and length), sometimes with one
// byte spoiled, or any short run of bytes.
func drawPubKeyValue(rt *rapid.T) []byte {
	if !rapid.Bool().Draw(rt, "built shape") {
		return rapid.SliceOfN(rapid.Byte(), 0, 40).Draw(rt, "value")
	}
	value := encodePubKeyValue(rapid.SliceOfN(rapid.Byte(), 33, 33).Draw(rt, "key"))
	if rapid.Bool().Draw(rt, "spoil") {
		i := rapid.IntRange(0, len(value)-1).Draw(rt, "at")
		value[i] = rapid.Byte().Draw(rt, "byte")
	}
	return value
}
