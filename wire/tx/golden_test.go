package tx

import (
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/wire/keys"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
)

// The golden submission: the provider key of seed "golden-provider", account
// 12, sequence 34, the default gas and fee, request 7 round 15, value 101.5.
var goldenKey = keys.PrivKeyFromSeed("golden-provider")

func goldenEnvelope() Envelope {
	fee, _ := oracle.FeeAmount(oracle.DefaultGasPrices, oracle.DefaultGasLimit)
	return Envelope{ChainID: oracle.DefaultChainID, AccountNumber: 12, Sequence: 34, GasLimit: oracle.DefaultGasLimit, FeeAmount: fee}
}

func goldenSubmission(t *testing.T) Built {
	t.Helper()
	self := goldenKey.PubKey().Address()
	b, err := Build(KeySignerFor(goldenKey), goldenEnvelope(), SubmissionMsg(self, 7, 15, "101.5"))
	require.NoError(t, err)
	return b
}

// KeySignerFor is the real signer of k.
func KeySignerFor(k keys.PrivKey) keys.Signer { return keys.KeySigner{Key: k} }

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	h, err := os.ReadFile("testdata/" + name)
	require.NoError(t, err)
	b, err := hex.DecodeString(strings.TrimSpace(string(h)))
	require.NoError(t, err)
	return b
}

// The golden file was written by this builder once and its structure checked
// independently with `protoc --decode` (see testdata/README.md); the test
// pins the bytes so that any change to the encoding shows.
func TestBuildMatchesGoldenBytes(t *testing.T) {
	b := goldenSubmission(t)
	if os.Getenv("CONVERGE_UPDATE_GOLDEN") == "1" {
		require.NoError(t, os.WriteFile("testdata/submit_tx.hex", []byte(hex.EncodeToString(b.TxBytes)+"\n"), 0o644))
	}
	require.Equal(t, hex.EncodeToString(readGolden(t, "submit_tx.hex")), hex.EncodeToString(b.TxBytes))
}

// A SubmitDataSet encoded by hand from the field numbers of ORACLE-SPEC 2.3:
// 1 request_id, 2 nonce, 3 raw_data, 4 provider, 5 signature.
func TestSubmitDataSetBytesByHand(t *testing.T) {
	got, err := Marshal(&oraclev1.SubmitDataSet{RequestId: 7, Nonce: 300, RawData: "1.5", Provider: "p", Signature: "ab"})
	require.NoError(t, err)
	want := []byte{
		0x08, 0x07, // 1: varint 7
		0x10, 0xac, 0x02, // 2: varint 300
		0x1a, 0x03, '1', '.', '5', // 3: "1.5"
		0x22, 0x01, 'p', // 4: "p"
		0x2a, 0x02, 'a', 'b', // 5: "ab"
	}
	require.Equal(t, want, got)

	got, err = Marshal(&oraclev1.MsgSubmitOracleData{AuthorityAddress: "a", DataSet: &oraclev1.SubmitDataSet{RequestId: 1}})
	require.NoError(t, err)
	require.Equal(t, []byte{0x0a, 0x01, 'a', 0x12, 0x02, 0x08, 0x01}, got, "1 authority_address, 2 data_set")

	got, err = Marshal(&oraclev1.OracleRequestDoc{RequestId: 1, Status: oraclev1.RequestStatus_REQUEST_STATUS_ENABLED, Nonce: 2})
	require.NoError(t, err)
	require.Equal(t, []byte{0x08, 0x01, 0x50, 0x01, 0x60, 0x02}, got, "10 status, 12 nonce (no field 11)")
}

func TestDecodeGolden(t *testing.T) {
	raw := readGolden(t, "submit_tx.hex")
	tx, err := Decode(raw)
	require.NoError(t, err)
	self := goldenKey.PubKey().Address()
	require.Equal(t, self, tx.Signer())
	seq, ok := tx.Sequence()
	require.True(t, ok)
	require.Equal(t, uint64(34), seq)
	require.Equal(t, uint64(70000), tx.GasLimit())
	require.Equal(t, []Coin{{Denom: "agxn", Amount: "44100000000000000"}}, tx.FeeCoins())
	require.Len(t, tx.Msgs, 1)
	sub := tx.Submissions()[0]
	require.Equal(t, self, sub.GetAuthorityAddress())
	require.Equal(t, uint64(7), sub.GetDataSet().GetRequestId())
	require.Equal(t, uint64(15), sub.GetDataSet().GetNonce())
	require.Equal(t, "101.5", sub.GetDataSet().GetRawData())
	require.Equal(t, self, sub.GetDataSet().GetProvider())
	require.Equal(t, oracle.SubmissionSignature(7, 15, "101.5"), sub.GetDataSet().GetSignature())
	require.Empty(t, tx.Body.GetMemo())
	require.Zero(t, tx.Body.GetTimeoutHeight())
	pub, err := tx.PubKey()
	require.NoError(t, err)
	require.True(t, pub.Equal(goldenKey.PubKey()))
	require.NoError(t, ValidateBasic(tx))
	require.NoError(t, VerifySignature(tx, oracle.DefaultChainID, 12))
	require.Equal(t, Hash(raw), tx.Hash())
	require.False(t, tx.BodyHasUnknownNonCriticals)
}
