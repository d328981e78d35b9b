package tx

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/wire/keys"
	txv1beta1 "github.com/wsconverge/converge/wire/proto/cosmos/tx/v1beta1"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
)

// decodeStrict is Decode without its fast path.
func decodeStrict(b []byte) (*Tx, error) {
	saved := fastDecode
	fastDecode = false
	defer func() { fastDecode = saved }()
	return Decode(b)
}

func requireSameTx(t require.TestingT, want, got *Tx) {
	require.Equal(t, want.Bytes, got.Bytes)
	require.True(t, proto.Equal(want.Raw, got.Raw))
	require.True(t, proto.Equal(want.Body, got.Body))
	require.True(t, proto.Equal(want.AuthInfo, got.AuthInfo))
	require.Len(t, got.Msgs, len(want.Msgs))
	for i := range want.Msgs {
		require.True(t, proto.Equal(want.Msgs[i], got.Msgs[i]))
	}
	require.Equal(t, want.BodyHasUnknownNonCriticals, got.BodyHasUnknownNonCriticals)
}

// The drawn inputs of a build: short strings (often empty) and numbers
// of every size.
var (
	drawnStr = rapid.OneOf(rapid.Just(""), rapid.StringMatching(`[a-z0-9.]{1,12}`))
	drawnNum = rapid.OneOf(rapid.Just(uint64(0)), rapid.Uint64Range(1, 1000), rapid.Uint64())
)

// drawEnvelope draws an envelope of drawn strings and numbers.
func drawEnvelope(rt *rapid.T) Envelope {
	return Envelope{ChainID: drawnStr.Draw(rt, "chain"), AccountNumber: drawnNum.Draw(rt, "acc"),
		Sequence: drawnNum.Draw(rt, "seq"), GasLimit: drawnNum.Draw(rt, "gas"), FeeAmount: drawnStr.Draw(rt, "fee"),
		FeeDenom: drawnStr.Draw(rt, "denom"), Memo: drawnStr.Draw(rt, "memo")}
}

// The fast path takes every tx Build makes and gives what the strict path
// gives; on mangled bytes it either declines or agrees with the strict
// path, which then accepts them too.
func TestFastDecodeAgreesWithStrict(t *testing.T) {
	key := keys.PrivKeyFromSeed("fast")
	self := key.PubKey().Address()
	str, num := drawnStr, drawnNum
	rapid.Check(t, func(rt *rapid.T) {
		env := drawEnvelope(rt)
		var msgs []proto.Message
		for i := rapid.IntRange(0, 3).Draw(rt, "msgs"); i > 0; i-- {
			if rapid.Bool().Draw(rt, "submit") {
				msgs = append(msgs, SubmissionMsg(self, num.Draw(rt, "r"), num.Draw(rt, "n"), str.Draw(rt, "raw")))
			} else {
				msgs = append(msgs, UpdateMsg(self, &oraclev1.OracleRequestDoc{RequestId: num.Draw(rt, "id"),
					Endpoints: []*oraclev1.OracleEndpoint{{Url: str.Draw(rt, "url")}}}, str.Draw(rt, "why")))
			}
		}
		b, err := Build(keys.StandInSigner{Key: key}, env, msgs...)
		require.NoError(rt, err)
		fast, ok := decodeCanonical(b.TxBytes)
		require.True(rt, ok, "the fast path takes what Build writes")
		strict, err := decodeStrict(b.TxBytes)
		require.NoError(rt, err)
		requireSameTx(rt, strict, fast)

		// Mangle: flip a byte, cut, or splice in an unknown field.
		mangled := append([]byte(nil), b.TxBytes...)
		switch rapid.IntRange(0, 4).Draw(rt, "how") {
		case 0:
			i := rapid.IntRange(0, len(mangled)-1).Draw(rt, "at")
			mangled[i] ^= byte(rapid.IntRange(1, 255).Draw(rt, "xor"))
		case 1:
			mangled = mangled[:rapid.IntRange(0, len(mangled)-1).Draw(rt, "cut")]
		case 2:
			field := protowire.Number(rapid.SampledFrom([]int{4, 9, 1025, 2049}).Draw(rt, "field"))
			mangled = protowire.AppendVarint(protowire.AppendTag(mangled, field, protowire.VarintType), 1)
		case 3:
			if len(b.Tx.Body.Messages) == 0 {
				return
			}
			// A non-critical field inside a message's value.
			body := proto.Clone(b.Tx.Body).(*txv1beta1.TxBody)
			body.Messages[0].Value = protowire.AppendVarint(protowire.AppendTag(body.Messages[0].Value, 1030, protowire.VarintType), 3)
			mangled = encodeTxRaw(&txv1beta1.TxRaw{BodyBytes: encodeTxBody(body), AuthInfoBytes: b.AuthInfoBytes,
				Signatures: b.Tx.Raw.Signatures})
		default:
			body := protowire.AppendVarint(protowire.AppendTag(append([]byte(nil), b.BodyBytes...), 1030, protowire.VarintType), 7)
			mangled = encodeTxRaw(&txv1beta1.TxRaw{BodyBytes: body, AuthInfoBytes: b.AuthInfoBytes, Signatures: b.Tx.Raw.Signatures})
		}
		fast, ok = decodeCanonical(mangled)
		strict, err = decodeStrict(mangled)
		if ok {
			require.NoError(rt, err, "the fast path accepted what the strict path rejects")
			requireSameTx(rt, strict, fast)
		}
		viaDecode, derr := Decode(mangled)
		require.Equal(rt, err == nil, derr == nil)
		if err == nil {
			requireSameTx(rt, strict, viaDecode)
		} else {
			require.Equal(rt, err.Error(), derr.Error(), "the same rejection either way")
		}
	})
}

// parseSubmit takes a submission's canonical bytes and gives what the
// strict unmarshal gives; on mangled bytes it either declines or agrees.
func TestParseSubmitAgreesWithStrict(t *testing.T) {
	str := rapid.OneOf(rapid.Just(""), rapid.StringMatching(`[a-z0-9.]{1,12}`), rapid.String())
	num := rapid.OneOf(rapid.Just(uint64(0)), rapid.Uint64())
	rapid.Check(t, func(rt *rapid.T) {
		m := SubmissionMsg(str.Draw(rt, "self"), num.Draw(rt, "r"), num.Draw(rt, "n"), str.Draw(rt, "raw"))
		if rapid.Bool().Draw(rt, "no data set") {
			m.DataSet = nil
		}
		b, err := Marshal(m)
		require.NoError(rt, err)
		if rapid.Bool().Draw(rt, "mangle") && len(b) > 0 {
			b = append([]byte(nil), b...)
			i := rapid.IntRange(0, len(b)-1).Draw(rt, "at")
			b[i] ^= byte(rapid.IntRange(1, 255).Draw(rt, "xor"))
		}
		p := &parts{}
		got, ok := p.parseSubmit(b)
		want := &oraclev1.MsgSubmitOracleData{}
		strictErr := unmarshalStrict(b, want, true)
		if !ok {
			return
		}
		require.NoError(rt, strictErr, "the fast path took what the strict one refuses")
		require.True(rt, proto.Equal(want, got))
		_, again := p.parseSubmit(b)
		require.False(rt, again, "a tx's parts hold one submission")
	})
}

// A string field is a substring of the tx's bytes copied once: str gives
// string(val) for any slice of them and for a slice from elsewhere, and
// what it gives does not change when the bytes do.
func TestPartsStrIsStringOfVal(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		src := []byte(rapid.String().Draw(rt, "src"))
		other := []byte(rapid.String().Draw(rt, "other"))
		p := &parts{src: src}
		var vals [][]byte
		var want []string
		for range rapid.IntRange(1, 6).Draw(rt, "fields") {
			from := other
			if rapid.Bool().Draw(rt, "from src") {
				from = src
			}
			i := rapid.IntRange(0, len(from)).Draw(rt, "i")
			j := rapid.IntRange(i, len(from)).Draw(rt, "j")
			val := from[i:j]
			if rapid.Bool().Draw(rt, "limit cap") {
				val = from[i:j:j]
			}
			vals = append(vals, val)
			want = append(want, string(val))
		}
		var got []string
		for _, val := range vals {
			ok := true
			got = append(got, p.str(val, &ok))
			require.Equal(rt, utf8.Valid(val), ok)
		}
		require.Equal(rt, want, got)
		for i := range src {
			src[i] ^= 0xff
		}
		for i := range other {
			other[i] ^= 0xff
		}
		require.Equal(rt, want, got, "the strings do not share the bytes")
	})
}

// Whatever builtPubKey takes, unpack accepts: the fast decoder skips the
// strict unmarshal only for keys it would have let through.
func TestBuiltPubKeyUnpacks(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		value := drawPubKeyValue(rt)
		url := rapid.SampledFrom([]string{TypeURLPubKey, TypeURLPubKey + "x", "/cosmos.crypto.secp256k1.PubKey", ""}).Draw(rt, "url")
		a := &anypb.Any{TypeUrl: url, Value: value}
		if builtPubKey(a) {
			_, err := unpack(a, pubKeyTypes, false)
			require.NoError(rt, err)
		}
	})
	b, err := Build(keys.StandInSigner{Key: keys.PrivKeyFromSeed("built")}, Envelope{ChainID: "c", FeeDenom: "d", FeeAmount: "1"})
	require.NoError(t, err)
	require.True(t, builtPubKey(b.Tx.AuthInfo.SignerInfos[0].PublicKey), "Build's key takes the fast path")
}
