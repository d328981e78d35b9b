package tx

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/wire/keys"
	signingv1beta1 "github.com/wsconverge/converge/wire/proto/cosmos/tx/signing/v1beta1"
	txv1beta1 "github.com/wsconverge/converge/wire/proto/cosmos/tx/v1beta1"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
)

func buildDecode(t *testing.T, s keys.Signer, env Envelope, msgs ...proto.Message) *Tx {
	t.Helper()
	b, err := Build(s, env, msgs...)
	require.NoError(t, err)
	tx, err := Decode(b.TxBytes)
	require.NoError(t, err)
	return tx
}

func requireCode(t *testing.T, err error, code uint32) {
	t.Helper()
	var ce *CodeError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, code, ce.Code, ce.Log())
}

func TestValidateBasic(t *testing.T) {
	self := goldenKey.PubKey().Address()
	mod := keys.PrivKeyFromSeed("moderator").PubKey().Address()
	ok := SubmissionMsg(self, 7, 15, "101.5")
	mut := func(f func(*oraclev1.MsgSubmitOracleData)) proto.Message {
		m := proto.Clone(ok).(*oraclev1.MsgSubmitOracleData)
		f(m)
		return m
	}
	doc := &oraclev1.OracleRequestDoc{Name: "x"}
	cases := []struct {
		name string
		msgs []proto.Message
		code uint32 // 0: valid
	}{
		{"4.3 a valid submission", []proto.Message{ok}, 0},
		{"4.3 no message → 18", nil, 18},
		{"4.3 authority_address not bech32 → 7", []proto.Message{mut(func(m *oraclev1.MsgSubmitOracleData) { m.AuthorityAddress = "self" })}, 7},
		{"4.3 authority_address of another chain → 7", []proto.Message{mut(func(m *oraclev1.MsgSubmitOracleData) {
			m.AuthorityAddress = strings.Replace(self, "guru", "cosmos", 1)
		})}, 7},
		{"4.3 provider not bech32 → 7", []proto.Message{mut(func(m *oraclev1.MsgSubmitOracleData) { m.DataSet.Provider = "" })}, 7},
		{"4.3 no data set → 18", []proto.Message{mut(func(m *oraclev1.MsgSubmitOracleData) { m.DataSet = nil })}, 18},
		{"4.3 request_id 0 → 18", []proto.Message{mut(func(m *oraclev1.MsgSubmitOracleData) { m.DataSet.RequestId = 0 })}, 18},
		{"4.3 raw_data empty → 18", []proto.Message{mut(func(m *oraclev1.MsgSubmitOracleData) { m.DataSet.RawData = "" })}, 18},
		{"2.3 signature empty → 18", []proto.Message{mut(func(m *oraclev1.MsgSubmitOracleData) { m.DataSet.Signature = "" })}, 18},
		{"4.3 nonce 0 is not a stateless error", []proto.Message{mut(func(m *oraclev1.MsgSubmitOracleData) { m.DataSet.Nonce = 0 })}, 0},
		{"4.3 a valid register", []proto.Message{RegisterMsg(mod, doc)}, 0},
		{"4.3 register with a bad moderator → 7", []proto.Message{RegisterMsg("moderator", doc)}, 7},
		{"4.3 register without a doc → 18", []proto.Message{RegisterMsg(mod, nil)}, 18},
		{"4.3 a valid update", []proto.Message{UpdateMsg(mod, doc, "")}, 0},
		{"4.3 update with a bad moderator → 7", []proto.Message{UpdateMsg("", doc, "")}, 7},
		{"4.3 update without a doc → 18", []proto.Message{UpdateMsg(mod, nil, "")}, 18},
		{"4.3 the second message is checked too", []proto.Message{ok, mut(func(m *oraclev1.MsgSubmitOracleData) { m.DataSet.RawData = "" })}, 18},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tx := buildDecode(t, keys.StandInSigner{Key: goldenKey}, goldenEnvelope(), tc.msgs...)
			err := ValidateBasic(tx)
			if tc.code == 0 {
				require.NoError(t, err)
				return
			}
			requireCode(t, err, tc.code)
		})
	}
}

func TestVerifySignature(t *testing.T) {
	self := goldenKey.PubKey().Address()
	msg := SubmissionMsg(self, 7, 15, "101.5")
	env := goldenEnvelope()
	real := buildDecode(t, keys.KeySigner{Key: goldenKey}, env, msg)

	require.NoError(t, VerifySignature(real, env.ChainID, env.AccountNumber), "D26: a real signature verifies")
	requireCode(t, VerifySignature(real, "guru_631-2", env.AccountNumber), 4)
	requireCode(t, VerifySignature(real, env.ChainID, env.AccountNumber+1), 4)

	standIn := buildDecode(t, keys.StandInSigner{Key: goldenKey}, env, msg)
	requireCode(t, VerifySignature(standIn, env.ChainID, env.AccountNumber), 4)

	// Signed by another key than the signer field names.
	intruder := buildDecode(t, keys.KeySigner{Key: keys.PrivKeyFromSeed("intruder")}, env, msg)
	requireCode(t, VerifySignature(intruder, env.ChainID, env.AccountNumber), 8)

	// Two signatures, and a sign mode other than DIRECT.
	two := buildDecode(t, keys.KeySigner{Key: goldenKey}, env, msg)
	two.Raw.Signatures = append(two.Raw.Signatures, two.Raw.Signatures[0])
	requireCode(t, VerifySignature(two, env.ChainID, env.AccountNumber), 4)

	amino := buildDecode(t, keys.KeySigner{Key: goldenKey}, env, msg)
	amino.AuthInfo.SignerInfos[0].ModeInfo = &txv1beta1.ModeInfo{Sum: &txv1beta1.ModeInfo_Single_{
		Single: &txv1beta1.ModeInfo_Single{Mode: signingv1beta1.SignMode_SIGN_MODE_LEGACY_AMINO_JSON}}}
	requireCode(t, VerifySignature(amino, env.ChainID, env.AccountNumber), 4)

	noKey := buildDecode(t, keys.KeySigner{Key: goldenKey}, env, msg)
	noKey.AuthInfo.SignerInfos[0].PublicKey = nil
	requireCode(t, VerifySignature(noKey, env.ChainID, env.AccountNumber), 8)
}

func TestBuildIsDeterministicAndDecodes(t *testing.T) {
	self := goldenKey.PubKey().Address()
	env := goldenEnvelope()
	a := goldenSubmission(t)
	b := goldenSubmission(t)
	require.Equal(t, a, b, "D24: the same result, sequence and gas give the same bytes")

	env.Sequence++
	c, err := Build(KeySignerFor(goldenKey), env, SubmissionMsg(self, 7, 15, "101.5"))
	require.NoError(t, err)
	require.NotEqual(t, a.Hash, c.Hash, "another sequence is another tx")

	env.Sequence--
	env.GasLimit = oracle.AdjustGas(env.GasLimit, 1.5)
	env.FeeAmount, err = oracle.FeeAmount(oracle.DefaultGasPrices, env.GasLimit)
	require.NoError(t, err)
	d := buildDecode(t, KeySignerFor(goldenKey), env, SubmissionMsg(self, 7, 15, "101.5"))
	require.Equal(t, uint64(105000), d.GasLimit())
	require.Equal(t, []Coin{{Denom: "agxn", Amount: "66150000000000000"}}, d.FeeCoins())

	sum := sha256.Sum256(a.TxBytes)
	require.Equal(t, strings.ToUpper(hex.EncodeToString(sum[:])), a.Hash)
	require.Len(t, a.Hash, 64)
	require.Equal(t, strings.ToUpper(a.Hash), a.Hash)

	signDoc, err := SignBytes(a.BodyBytes, a.AuthInfoBytes, oracle.DefaultChainID, 12)
	require.NoError(t, err)
	require.Equal(t, a.SignBytes, signDoc)
	var sd txv1beta1.SignDoc
	require.NoError(t, proto.Unmarshal(signDoc, &sd))
	require.Equal(t, "guru_631-1", sd.GetChainId())
	require.Equal(t, uint64(12), sd.GetAccountNumber())
}

type failingSigner struct{ keys.StandInSigner }

func (failingSigner) Sign([]byte) ([]byte, error) { return nil, errSignerDown }

var errSignerDown = errors.New("signer port down")

func TestBuildReportsASignerFailure(t *testing.T) {
	_, err := Build(failingSigner{keys.StandInSigner{Key: goldenKey}}, goldenEnvelope(), SubmissionMsg("x", 1, 1, "1"))
	require.ErrorIs(t, err, errSignerDown)
	_, err = Build(MemoSigner{Signer: failingSigner{keys.StandInSigner{Key: goldenKey}}}, goldenEnvelope(), SubmissionMsg("x", 1, 1, "1"))
	require.ErrorIs(t, err, errSignerDown, "under a MemoSigner too")
}

// signOnly is a signer known only by its methods.
type signOnly struct{ s keys.Signer }

func (o signOnly) PubKey() keys.PubKey             { return o.s.PubKey() }
func (o signOnly) Sign(doc []byte) ([]byte, error) { return o.s.Sign(doc) }

// The stand-in signs into the tx's own array; the bytes are those of its
// Sign.
func TestBuildWithTheStandInIsItsSign(t *testing.T) {
	stand := keys.StandInSigner{Key: goldenKey}
	msg := SubmissionMsg(goldenKey.PubKey().Address(), 7, 15, "101.5")
	want, err := Build(signOnly{stand}, goldenEnvelope(), msg)
	require.NoError(t, err)
	for _, s := range []keys.Signer{stand, MemoSigner{Signer: stand, Memo: &Memo{}}} {
		got, err := Build(s, goldenEnvelope(), msg)
		require.NoError(t, err)
		require.Equal(t, want.TxBytes, got.TxBytes)
		require.Equal(t, want.Hash, got.Hash)
		require.Equal(t, want.Tx.Raw.GetSignatures(), got.Tx.Raw.GetSignatures())
	}
}

func FuzzDecode(f *testing.F) {
	g, err := Build(keys.KeySigner{Key: goldenKey}, goldenEnvelope(), SubmissionMsg(goldenKey.PubKey().Address(), 7, 15, "101.5"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(g.TxBytes)
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0x00, 0x12, 0x00})
	f.Add(g.TxBytes[:len(g.TxBytes)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		tx, err := Decode(b)
		if err != nil {
			var ce *CodeError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, uint32(oracle.CodeTxDecode), ce.Code)
			require.NotEmpty(t, ce.Reason)
			return
		}
		// Whatever decodes is fully usable: every accessor works and every
		// message is one of the three oracle messages.
		require.Len(t, tx.Msgs, len(tx.Body.GetMessages()))
		for _, m := range tx.Msgs {
			switch m.(type) {
			case *oraclev1.MsgSubmitOracleData, *oraclev1.MsgRegisterOracleRequestDoc, *oraclev1.MsgUpdateOracleRequestDoc:
			default:
				t.Fatalf("decoded a %T", m)
			}
		}
		_ = ValidateBasic(tx)
		_ = VerifySignature(tx, oracle.DefaultChainID, 0)
		_, _ = tx.PubKey()
		_ = tx.String()
		require.Equal(t, Hash(b), tx.Hash())
		// A canonical re-encoding of what was decoded decodes to the same.
		again, err := Decode(mustMarshal(t, tx.Raw))
		require.NoError(t, err)
		require.True(t, proto.Equal(tx.Body, again.Body))
	})
}

func TestBuildWithoutAKey(t *testing.T) {
	_, err := Build(keys.StandInSigner{}, goldenEnvelope(), SubmissionMsg("x", 1, 1, "1"))
	require.ErrorIs(t, err, keys.ErrNoKey)
}

// Built.Tx is what Decode gives for the built bytes, part for part.
func TestBuiltTxIsTheDecodedTx(t *testing.T) {
	self := goldenKey.PubKey().Address()
	doc := &oraclev1.OracleRequestDoc{Name: "n", Period: 5, AccountList: []string{self}, Quorum: 1,
		Endpoints: []*oraclev1.OracleEndpoint{{Url: "http://x/r/1/e/0", ParseRule: "a.b"}}}
	for _, msgs := range [][]proto.Message{
		{SubmissionMsg(self, 7, 15, "101.5")},
		{RegisterMsg(self, doc), UpdateMsg(self, doc, "why")},
	} {
		b, err := Build(keys.StandInSigner{Key: goldenKey}, goldenEnvelope(), msgs...)
		require.NoError(t, err)
		d, err := Decode(b.TxBytes)
		require.NoError(t, err)
		require.Equal(t, d.Bytes, b.Tx.Bytes)
		require.True(t, proto.Equal(d.Raw, b.Tx.Raw))
		require.True(t, proto.Equal(d.Body, b.Tx.Body))
		require.True(t, proto.Equal(d.AuthInfo, b.Tx.AuthInfo))
		require.Len(t, b.Tx.Msgs, len(d.Msgs))
		for i := range d.Msgs {
			require.True(t, proto.Equal(d.Msgs[i], b.Tx.Msgs[i]))
		}
		require.Equal(t, d.String(), b.Tx.String())
	}
}

// HashOfSum is the upper-case hex of the sum, as hex and strings write it.
func TestHashOfSumIsUpperHex(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var sum [32]byte
		copy(sum[:], rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(rt, "sum"))
		require.Equal(rt, strings.ToUpper(hex.EncodeToString(sum[:])), HashOfSum(sum))
	})
}

// BuildSubmission gives Build's bytes for SubmissionMsg's message, and
// declines what Build declines (a raw value that is not UTF-8 goes the
// library's way and fails).
func TestBuildSubmissionIsBuildOfTheMsg(t *testing.T) {
	self := goldenKey.PubKey().Address()
	for _, raw := range []string{"101.5", "", "\"quoted\"", strings.Repeat("9", 300)} {
		want, err := Build(keys.StandInSigner{Key: goldenKey}, goldenEnvelope(), SubmissionMsg(self, 7, 15, raw))
		require.NoError(t, err)
		got, err := BuildSubmission(keys.StandInSigner{Key: goldenKey}, goldenEnvelope(), self, 7, 15, raw)
		require.NoError(t, err)
		require.Equal(t, want.TxBytes, got.TxBytes, "%q", raw)
		require.Equal(t, want.Hash, got.Hash)
		decoded, err := Decode(got.TxBytes)
		require.NoError(t, err)
		require.True(t, proto.Equal(decoded.Msgs[0], got.Tx.Msgs[0]), "Tx holds what the bytes decode to")
	}
	_, errBuild := Build(keys.StandInSigner{Key: goldenKey}, goldenEnvelope(), SubmissionMsg(self, 7, 15, "\xff"))
	_, errSub := BuildSubmission(keys.StandInSigner{Key: goldenKey}, goldenEnvelope(), self, 7, 15, "\xff")
	require.Error(t, errSub)
	require.Equal(t, errBuild.Error(), errSub.Error())
}
