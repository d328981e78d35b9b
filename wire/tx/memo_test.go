package tx

import (
	"crypto/sha256"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/wire/keys"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
)

// A memo gives back, once, the submission just built through its signer,
// as Decode and SHA-256 give it; other bytes (another build, mangled
// bytes, the same bytes a second time) are decoded as without a memo.
func TestMemoGivesWhatDecodeGives(t *testing.T) {
	key := keys.PrivKeyFromSeed("memo")
	self := key.PubKey().Address()
	rapid.Check(t, func(rt *rapid.T) {
		var memo Memo
		signer := MemoSigner{Signer: keys.StandInSigner{Key: key}, Memo: &memo}
		env := drawEnvelope(rt)
		msgs := []proto.Message{SubmissionMsg(self, drawnNum.Draw(rt, "r"), drawnNum.Draw(rt, "n"), drawnStr.Draw(rt, "raw"))}
		if rapid.Bool().Draw(rt, "update") {
			msgs = append(msgs, UpdateMsg(self, &oraclev1.OracleRequestDoc{RequestId: 1}, "why"))
		}
		b, err := Build(signer, env, msgs...)
		require.NoError(rt, err)
		plain, err := Build(keys.StandInSigner{Key: key}, env, msgs...)
		require.NoError(rt, err)
		require.Equal(rt, plain.TxBytes, b.TxBytes, "a memo does not change the tx")

		sent := append([]byte(nil), b.TxBytes...)
		if rapid.Bool().Draw(rt, "mangle") {
			sent[rapid.IntRange(0, len(sent)-1).Draw(rt, "at")] ^= 1
		}
		want, wantErr := Decode(sent)
		for i := range 2 { // the second take decodes
			got, sum, hash, err := memo.DecodeSummed(sent)
			require.Equal(rt, sha256.Sum256(sent), sum)
			require.Equal(rt, Hash(sent), hash)
			if wantErr != nil {
				require.EqualError(rt, err, wantErr.Error())
				continue
			}
			require.NoError(rt, err)
			requireSameTx(rt, want, got)
			if i == 0 && len(msgs) == 1 && string(sent) == string(b.TxBytes) {
				require.Same(rt, b.Tx, got, "the build comes back")
			} else {
				require.NotSame(rt, b.Tx, got)
			}
		}
	})
}

// A nil memo decodes.
func TestNilMemoDecodes(t *testing.T) {
	key := keys.PrivKeyFromSeed("memo")
	b, err := Build(keys.StandInSigner{Key: key}, Envelope{ChainID: "c"}, SubmissionMsg(key.PubKey().Address(), 1, 2, "3"))
	require.NoError(t, err)
	var m *Memo
	got, sum, hash, err := m.DecodeSummed(b.TxBytes)
	require.NoError(t, err)
	require.Equal(t, sha256.Sum256(b.TxBytes), sum)
	require.Equal(t, b.Hash, hash)
	requireSameTx(t, b.Tx, got)
}
