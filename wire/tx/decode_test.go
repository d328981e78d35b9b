package tx

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/wire/keys"
	"github.com/wsconverge/converge/wire/proto/cosmos/evm/crypto/v1/ethsecp256k1"
	txv1beta1 "github.com/wsconverge/converge/wire/proto/cosmos/tx/v1beta1"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
)

func mustMarshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := Marshal(m)
	require.NoError(t, err)
	return b
}

func mustPack(t *testing.T, m proto.Message) *anypb.Any {
	t.Helper()
	a, err := Pack(m)
	require.NoError(t, err)
	return a
}

// bytesField appends field num as a length-delimited value.
func bytesField(b []byte, num protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), v)
}

// txRaw assembles TxRaw bytes from body and auth info bytes and one signature.
func txRaw(body, auth []byte) []byte {
	b := bytesField(nil, 1, body)
	b = bytesField(b, 2, auth)
	return bytesField(b, 3, make([]byte, 65))
}

// withUnknown appends an unknown field to the canonical bytes of m.
func withUnknown(t *testing.T, m proto.Message, num protowire.Number) []byte {
	t.Helper()
	b := mustMarshal(t, (m))
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), 1)
}

func submitAny(value []byte) *anypb.Any {
	return &anypb.Any{TypeUrl: TypeURL(&oraclev1.MsgSubmitOracleData{}), Value: value}
}

func TestDecodeRejects(t *testing.T) {
	g := goldenSubmission(t)
	body, auth := g.BodyBytes, g.AuthInfoBytes
	submit := SubmissionMsg(goldenKey.PubKey().Address(), 7, 15, "101.5")
	bodyWith := func(anys ...*anypb.Any) []byte {
		return mustMarshal(t, (&txv1beta1.TxBody{Messages: anys}))
	}
	authWithPub := func(a *anypb.Any) []byte {
		return mustMarshal(t, (&txv1beta1.AuthInfo{SignerInfos: []*txv1beta1.SignerInfo{{PublicKey: a, Sequence: 1}}}))
	}
	cases := []struct {
		name string
		tx   []byte
		kind error
	}{
		{"4.3 TxRaw fields out of order (2 before 1)",
			bytesField(bytesField(nil, 2, auth), 1, body), ErrNonCanonical},
		{"4.3 TxRaw signatures before auth info",
			bytesField(bytesField(bytesField(nil, 1, body), 3, []byte{1}), 2, auth), ErrNonCanonical},
		{"4.3 TxRaw length prefix not minimal",
			append([]byte{0x0a, 0x80 | 0x01, 0x00}, 'x'), ErrNonCanonical},
		{"4.3 TxRaw tag not minimal",
			append([]byte{0x8a, 0x00, 0x01}, 'x'), ErrNonCanonical},
		{"4.3 TxRaw field with a varint wire type",
			protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 5), ErrNonCanonical},
		{"4.3 TxRaw unknown field 4",
			bytesField(txRaw(body, auth), 4, []byte{1}), ErrUnknownField},
		{"4.3 TxRaw truncated",
			txRaw(body, auth)[:20], ErrMalformed},
		{"4.3 TxBody unknown critical field 7",
			txRaw(withUnknown(t, &txv1beta1.TxBody{}, 7), auth), ErrUnknownField},
		{"4.3 TxBody unknown field 2048 (bit 11 clear: critical)",
			txRaw(withUnknown(t, &txv1beta1.TxBody{}, 2048), auth), ErrUnknownField},
		{"4.3 TxBody memo with a varint wire type",
			txRaw(protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), 1), auth), ErrUnknownField},
		{"4.3 TxBody memo that is not UTF-8",
			txRaw(bytesField(nil, 2, []byte{0xff, 0xfe}), auth), ErrMalformed},
		{"4.3 AuthInfo unknown non-critical field (AuthInfo is strict)",
			txRaw(body, withUnknown(t, &txv1beta1.AuthInfo{}, 1025)), ErrUnknownField},
		{"4.3 unknown critical field inside a SignerInfo",
			txRaw(body, bytesField(nil, 1, withUnknown(t, &txv1beta1.SignerInfo{Sequence: 1}, 9))), ErrUnknownField},
		{"4.3 unknown critical field inside the message",
			txRaw(bodyWith(submitAny(withUnknown(t, submit, 9))), auth), ErrUnknownField},
		{"4.3 unknown field inside an Any itself",
			txRaw(bytesField(nil, 1, withUnknown(t, submitAny(nil), 3)), auth), ErrUnknownField},
		{"4.3 unknown message type URL",
			txRaw(bodyWith(&anypb.Any{TypeUrl: "/cosmos.bank.v1beta1.MsgSend"}), auth), ErrUnknownTypeURL},
		{"4.3 a public key where a message belongs",
			txRaw(bodyWith(mustPack(t, (&ethsecp256k1.PubKey{Key: goldenKey.PubKey().Bytes()}))), auth), ErrUnknownTypeURL},
		{"4.3 a message where a public key belongs",
			txRaw(body, authWithPub(mustPack(t, (submit)))), ErrUnknownTypeURL},
		{"4.3 a secp256k1 (cosmos) public key type",
			txRaw(body, authWithPub(&anypb.Any{TypeUrl: "/cosmos.crypto.secp256k1.PubKey", Value: []byte{0x0a, 0}})), ErrUnknownTypeURL},
		{"4.3 an extension option",
			txRaw(mustMarshal(t, (&txv1beta1.TxBody{ExtensionOptions: []*anypb.Any{{TypeUrl: "/x.Ext"}}})), auth), ErrUnknownTypeURL},
		{"4.3 a non-critical extension option with an unknown type",
			txRaw(mustMarshal(t, (&txv1beta1.TxBody{NonCriticalExtensionOptions: []*anypb.Any{{TypeUrl: "/x.Ext"}}})), auth), ErrUnknownTypeURL},
		{"4.3 message bytes that are not protobuf",
			txRaw(bodyWith(submitAny([]byte{0x0a, 0x05, 'a'})), auth), ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.tx)
			require.ErrorIs(t, err, tc.kind)
			var ce *CodeError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, uint32(oracle.CodeTxDecode), ce.Code)
			require.Contains(t, ce.Log(), ": tx parse error")
		})
	}
}

func TestDecodeAccepts(t *testing.T) {
	g := goldenSubmission(t)
	submit := SubmissionMsg(goldenKey.PubKey().Address(), 7, 15, "101.5")

	t.Run("4.3 an unknown non-critical field in TxBody is accepted and flagged", func(t *testing.T) {
		tx, err := Decode(txRaw(withUnknown(t, &txv1beta1.TxBody{Messages: []*anypb.Any{mustPack(t, (submit))}}, 1025), g.AuthInfoBytes))
		require.NoError(t, err)
		require.True(t, tx.BodyHasUnknownNonCriticals)
		require.Len(t, tx.Msgs, 1)
	})
	t.Run("4.3 an unknown non-critical field inside a TxBody message is accepted", func(t *testing.T) {
		tx, err := Decode(txRaw(mustMarshal(t, (&txv1beta1.TxBody{Messages: []*anypb.Any{submitAny(withUnknown(t, submit, 1030))}})), g.AuthInfoBytes))
		require.NoError(t, err)
		require.Len(t, tx.Msgs, 1)
	})
	t.Run("4.3 field 3072 has bit 11 set: non-critical", func(t *testing.T) {
		_, err := Decode(txRaw(withUnknown(t, &txv1beta1.TxBody{}, 3072), g.AuthInfoBytes))
		require.NoError(t, err)
	})
	t.Run("ADR-027 repeated signatures (3, 3) are in order", func(t *testing.T) {
		b := bytesField(bytesField(bytesField(bytesField(nil, 1, g.BodyBytes), 2, g.AuthInfoBytes), 3, []byte{1}), 3, []byte{2})
		tx, err := Decode(b)
		require.NoError(t, err)
		require.Len(t, tx.Raw.Signatures, 2)
	})
	t.Run("an empty tx decodes (ValidateBasic rejects it)", func(t *testing.T) {
		tx, err := Decode(nil)
		require.NoError(t, err)
		require.Empty(t, tx.Signer())
		_, ok := tx.Sequence()
		require.False(t, ok)
		var ce *CodeError
		require.ErrorAs(t, ValidateBasic(tx), &ce)
		require.Equal(t, uint32(oracle.CodeInvalidRequest), ce.Code)
	})
	t.Run("register and update messages", func(t *testing.T) {
		mod := keys.PrivKeyFromSeed("moderator")
		doc := &oraclev1.OracleRequestDoc{Name: "btc", Period: 30, AccountList: []string{mod.PubKey().Address()}}
		b, err := Build(keys.StandInSigner{Key: mod}, Envelope{ChainID: oracle.DefaultChainID, GasLimit: 1},
			RegisterMsg(mod.PubKey().Address(), doc), UpdateMsg(mod.PubKey().Address(), doc, "why"))
		require.NoError(t, err)
		tx, err := Decode(b.TxBytes)
		require.NoError(t, err)
		require.Len(t, tx.Msgs, 2)
		require.Equal(t, mod.PubKey().Address(), tx.Signer())
		require.True(t, proto.Equal(RegisterMsg(mod.PubKey().Address(), doc), tx.Msgs[0]))
		require.True(t, proto.Equal(UpdateMsg(mod.PubKey().Address(), doc, "why"), tx.Msgs[1]))
		require.Empty(t, tx.Submissions())
		require.Empty(t, tx.FeeCoins(), "no fee amount, no coin")
	})
}

// Every message type a tx can carry has its message fields listed at
// start, so the walk never lists them again.
func TestMessageFieldsCoverTheSchema(t *testing.T) {
	for _, m := range []proto.Message{&oraclev1.MsgRegisterOracleRequestDoc{}, &oraclev1.OracleRequestDoc{},
		&oraclev1.OracleEndpoint{}, &oraclev1.MsgSubmitOracleData{}, &oraclev1.SubmitDataSet{},
		&txv1beta1.SignerInfo{}, &txv1beta1.ModeInfo_Single{}, &txv1beta1.Fee{}, &anypb.Any{}} {
		_, ok := messageFieldsOf[m.ProtoReflect().Descriptor()]
		require.True(t, ok, "%s", m.ProtoReflect().Descriptor().FullName())
	}
	fds := messageFieldsOf[(&txv1beta1.AuthInfo{}).ProtoReflect().Descriptor()]
	var names []string
	for _, fd := range fds {
		names = append(names, string(fd.Name()))
	}
	require.Equal(t, []string{"signer_infos", "fee", "tip"}, names)
}

// An unknown field deep in a message is reported with its path.
func TestUnknownFieldPath(t *testing.T) {
	doc := &oraclev1.OracleRequestDoc{Name: "x", Endpoints: []*oraclev1.OracleEndpoint{{Url: "u"}, {Url: "v"}}}
	doc.Endpoints[1].ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 9, protowire.VarintType), 1))
	err := checkUnknown(doc.ProtoReflect(), true, "doc")
	require.ErrorContains(t, err, "doc.endpoints[1]: unknown critical field 9")
}
