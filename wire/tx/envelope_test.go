package tx

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/wire/keys"
	"github.com/wsconverge/converge/wire/proto/cosmos/evm/crypto/v1/ethsecp256k1"
	txv1beta1 "github.com/wsconverge/converge/wire/proto/cosmos/tx/v1beta1"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
)

// The hand-written envelope encoding is the library's deterministic
// marshalling of the same messages, on random envelopes and messages
// (zero values, empty strings and large numbers included).
func TestEnvelopeEncodingIsTheLibrarys(t *testing.T) {
	key := keys.PrivKeyFromSeed("envelope")
	self := key.PubKey().Address()
	str := rapid.OneOf(rapid.Just(""), rapid.String(), rapid.StringMatching(`[0-9]{1,30}`))
	num := rapid.OneOf(rapid.Just(uint64(0)), rapid.Uint64Range(1, 300), rapid.Uint64())
	rapid.Check(t, func(rt *rapid.T) {
		env := Envelope{ChainID: str.Draw(rt, "chain"), AccountNumber: num.Draw(rt, "account"),
			Sequence: num.Draw(rt, "seq"), GasLimit: num.Draw(rt, "gas"), FeeAmount: str.Draw(rt, "fee"),
			FeeDenom: str.Draw(rt, "denom"), Memo: str.Draw(rt, "memo")}
		var msgs []proto.Message
		for i := rapid.IntRange(0, 3).Draw(rt, "msgs"); i > 0; i-- {
			switch rapid.IntRange(0, 2).Draw(rt, "kind") {
			case 0:
				msgs = append(msgs, SubmissionMsg(self, num.Draw(rt, "r"), num.Draw(rt, "n"), str.Draw(rt, "raw")))
			case 1:
				msgs = append(msgs, RegisterMsg(self, &oraclev1.OracleRequestDoc{Name: str.Draw(rt, "name"),
					Period: uint32(num.Draw(rt, "period")), AccountList: []string{self, str.Draw(rt, "acc")}}))
			default:
				msgs = append(msgs, UpdateMsg(self, &oraclev1.OracleRequestDoc{}, str.Draw(rt, "reason")))
			}
		}
		b, err := Build(keys.StandInSigner{Key: key}, env, msgs...)
		if err != nil {
			require.ErrorContains(rt, err, "not UTF-8") // rapid.String draws invalid UTF-8 too
			return
		}
		body, err := Marshal(b.Tx.Body)
		require.NoError(rt, err)
		require.Equal(rt, body, b.BodyBytes)
		auth, err := Marshal(b.Tx.AuthInfo)
		require.NoError(rt, err)
		require.Equal(rt, auth, b.AuthInfoBytes)
		signDoc, err := Marshal(&txv1beta1.SignDoc{BodyBytes: body, AuthInfoBytes: auth, ChainId: env.ChainID,
			AccountNumber: env.AccountNumber})
		require.NoError(rt, err)
		require.Equal(rt, signDoc, b.SignBytes)
		raw, err := Marshal(b.Tx.Raw)
		require.NoError(rt, err)
		require.Equal(rt, raw, b.TxBytes)
		pk, err := Marshal(&ethsecp256k1.PubKey{Key: key.PubKey().Bytes()})
		require.NoError(rt, err)
		require.Equal(rt, pk, b.Tx.AuthInfo.SignerInfos[0].PublicKey.Value)
		require.Equal(rt, TypeURL(&ethsecp256k1.PubKey{}), b.Tx.AuthInfo.SignerInfos[0].PublicKey.TypeUrl)
		// The parts share one array: each is capped at its end, so that
		// appending to one never writes over the next.
		for _, part := range [][]byte{b.BodyBytes, b.AuthInfoBytes, b.SignBytes, b.TxBytes,
			b.Tx.AuthInfo.SignerInfos[0].PublicKey.Value} {
			require.Equal(rt, len(part), cap(part))
		}
		for i, m := range msgs {
			want, err := Pack(m)
			require.NoError(rt, err)
			require.True(rt, proto.Equal(want, b.Tx.Body.Messages[i]), "message %d is Pack's", i)
		}
		d, err := Decode(b.TxBytes)
		require.NoError(rt, err, "whatever Build writes decodes")
		require.True(rt, proto.Equal(d.Body, b.Tx.Body))
		require.True(rt, proto.Equal(d.AuthInfo, b.Tx.AuthInfo))
	})
}

// Empty and odd shapes the generic marshaller writes in a particular way:
// a set but empty sub-message, a zero mode, an empty signature.
func TestEnvelopeEdgeShapes(t *testing.T) {
	auth := &txv1beta1.AuthInfo{
		SignerInfos: []*txv1beta1.SignerInfo{{}, {ModeInfo: &txv1beta1.ModeInfo{}},
			{ModeInfo: &txv1beta1.ModeInfo{Sum: &txv1beta1.ModeInfo_Single_{Single: &txv1beta1.ModeInfo_Single{}}}}},
		Fee: &txv1beta1.Fee{Payer: "p", Granter: "g"},
	}
	want, err := Marshal(auth)
	require.NoError(t, err)
	require.Equal(t, want, encodeAuthInfo(auth))
	require.Empty(t, encodeAuthInfo(&txv1beta1.AuthInfo{}))
	raw := &txv1beta1.TxRaw{Signatures: [][]byte{nil, {1}}}
	want, err = Marshal(raw)
	require.NoError(t, err)
	require.Equal(t, want, encodeTxRaw(raw))
	body := &txv1beta1.TxBody{TimeoutHeight: 9}
	want, err = Marshal(body)
	require.NoError(t, err)
	require.Equal(t, want, encodeTxBody(body))
}

// marshalSubmit writes the library's deterministic bytes for any submission
// it takes, and takes every one without unknown fields and with UTF-8
// strings.
func TestMarshalSubmitIsTheLibrarys(t *testing.T) {
	str := rapid.OneOf(rapid.String(), rapid.StringMatching(`[a-z0-9]{0,60}`), rapid.Just(""))
	rapid.Check(t, func(rt *rapid.T) {
		m := &oraclev1.MsgSubmitOracleData{AuthorityAddress: str.Draw(rt, "authority")}
		if rapid.Bool().Draw(rt, "data set") {
			m.DataSet = &oraclev1.SubmitDataSet{
				RequestId: rapid.OneOf(rapid.Just(uint64(0)), rapid.Uint64()).Draw(rt, "request"),
				Nonce:     rapid.OneOf(rapid.Just(uint64(0)), rapid.Uint64()).Draw(rt, "nonce"),
				RawData:   str.Draw(rt, "raw"),
				Provider:  str.Draw(rt, "provider"),
				Signature: str.Draw(rt, "signature"),
			}
		}
		got, ok := marshalSubmit(m)
		require.True(rt, ok)
		want, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		require.NoError(rt, err)
		require.Equal(rt, want, got)
	})
	bad := &oraclev1.MsgSubmitOracleData{AuthorityAddress: "\xff"}
	_, ok := marshalSubmit(bad)
	require.False(t, ok)
	_, err := Pack(bad)
	require.Error(t, err, "the generic path refuses what is not UTF-8")
	unknown := &oraclev1.MsgSubmitOracleData{DataSet: &oraclev1.SubmitDataSet{}}
	unknown.DataSet.ProtoReflect().SetUnknown([]byte{0x30, 0x01})
	_, ok = marshalSubmit(unknown)
	require.False(t, ok)
	a, err := Pack(unknown)
	require.NoError(t, err)
	want, _ := proto.MarshalOptions{Deterministic: true}.Marshal(unknown)
	require.Equal(t, want, a.Value)
	require.Equal(t, TypeURL(unknown), a.TypeUrl)
}
