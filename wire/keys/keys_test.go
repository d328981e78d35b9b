package keys

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
	"github.com/stretchr/testify/require"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

func TestKeccak256(t *testing.T) {
	// The well-known Keccak-256 of the empty string (not SHA3-256's a7ffc6…).
	require.Equal(t, "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470", hex.EncodeToString(Keccak256()))
	require.Equal(t, Keccak256([]byte("ab")), Keccak256([]byte("a"), []byte("b")))
}

// Ethereum addresses of well-known keys; the bech32 forms were computed with
// the BIP-173 reference algorithm, independently of the library.
func TestAddressFromPubKey(t *testing.T) {
	cases := []struct {
		priv, eth, bech string
	}{
		{"0000000000000000000000000000000000000000000000000000000000000001",
			"7e5f4552091a69125d5dfcb7b8c2659029395bdf", "guru10e0525sfrf53yh2aljmm3sn9jq5njk7lu6va30"},
		{"4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
			"2c7536e3605d9c16a7a3d7b1898e529396a65c23", "guru1936ndcmqtkwpdfar67ccnrjjjwt2vhprauyugd"},
	}
	for _, tc := range cases {
		k, err := PrivKeyFromBytes(mustHex(t, tc.priv))
		require.NoError(t, err)
		require.Equal(t, tc.eth, hex.EncodeToString(k.PubKey().AddressBytes()))
		require.Equal(t, tc.bech, k.PubKey().Address())
		require.Equal(t, mustHex(t, tc.priv), k.Bytes())
		require.Len(t, k.PubKey().Bytes(), PubKeySize)
	}
}

func TestAddressCodec(t *testing.T) {
	zero, err := EncodeAddress(make([]byte, 20))
	require.NoError(t, err)
	require.Equal(t, "guru1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqteqykr", zero)

	good := "guru10e0525sfrf53yh2aljmm3sn9jq5njk7lu6va30"
	b, err := DecodeAddress(good)
	require.NoError(t, err)
	require.Equal(t, "7e5f4552091a69125d5dfcb7b8c2659029395bdf", hex.EncodeToString(b))
	_, err = DecodeAddress(strings.ToUpper(good))
	require.NoError(t, err, "an all upper-case address is valid bech32")

	mod32, err := EncodeAddress(make([]byte, 32))
	require.NoError(t, err)
	require.NoError(t, ValidateAddress(mod32))

	cosmos, err := bechWithPrefix("cosmos", make([]byte, 20))
	require.NoError(t, err)
	for name, bad := range map[string]string{
		"empty":           "",
		"bad checksum":    good[:len(good)-1] + "q",
		"mixed case":      "Guru10e0525sfrf53yh2aljmm3sn9jq5njk7lu6va30",
		"other prefix":    cosmos,
		"no separator":    "guru",
		"hex":             "0x7e5f4552091a69125d5dfcb7b8c2659029395bdf",
		"invalid char":    "guru1bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbteqykr",
		"19 bytes":        mustEncodeRaw(t, make([]byte, 19)),
		"short self name": "guru1self",
	} {
		require.Error(t, ValidateAddress(bad), name)
	}
	_, err = EncodeAddress(make([]byte, 19))
	require.Error(t, err)
}

// RFC 6979 test vector for secp256k1 (private key 1, SHA-256 of "Satoshi
// Nakamoto"), as published with python-ecdsa and used by bitcoin libraries:
// checks the nonce derivation and the [R‖S‖V] layout.
func TestSignRFC6979Vector(t *testing.T) {
	k, err := PrivKeyFromBytes(mustHex(t, "0000000000000000000000000000000000000000000000000000000000000001"))
	require.NoError(t, err)
	digest := sha256.Sum256([]byte("Satoshi Nakamoto"))
	sig := k.signDigest(digest[:])
	require.Equal(t,
		"934b1ea10a4b3c1757e2b0c017d0b6143ce3c9a7e6a4a49860d7a6ab210ee3d8"+
			"2442ce9d2b916064108014783e923ec36b49743e2ffa1c4496f01a512aafd9e5",
		hex.EncodeToString(sig[:64]))
	require.Contains(t, []byte{0, 1}, sig[64])
}

func TestSignAndVerify(t *testing.T) {
	k := PrivKeyFromSeed("provider-0")
	msg := []byte("sign doc bytes")
	sig := k.Sign(msg)
	require.Len(t, sig, SignatureSize)
	require.Equal(t, sig, k.Sign(msg), "RFC 6979: deterministic")
	require.NoError(t, k.PubKey().Verify(msg, sig))

	// V is the recovery id: recovering from [27+4+V ‖ R ‖ S] gives the key.
	compact := append([]byte{27 + 4 + sig[64]}, sig[:64]...)
	rec, compressed, err := ecdsa.RecoverCompact(compact, Keccak256(msg))
	require.NoError(t, err)
	require.True(t, compressed)
	require.True(t, k.PubKey().Equal(PubKey{k: rec}))

	other := PrivKeyFromSeed("provider-1")
	require.ErrorIs(t, other.PubKey().Verify(msg, sig), ErrBadSignature, "another key")
	require.ErrorIs(t, k.PubKey().Verify([]byte("sign doc bytez"), sig), ErrBadSignature, "another message")
	flipped := append([]byte(nil), sig...)
	flipped[10] ^= 1
	require.ErrorIs(t, k.PubKey().Verify(msg, flipped), ErrBadSignature, "a flipped bit")
	require.ErrorIs(t, k.PubKey().Verify(msg, sig[:64]), ErrBadSignature, "64 bytes")
	require.ErrorIs(t, k.PubKey().Verify(msg, make([]byte, 65)), ErrBadSignature, "zero R and S")

	// The malleated twin (N − S) is a valid ECDSA signature but has a high S.
	var s secp256k1.ModNScalar
	s.SetByteSlice(sig[32:64])
	s.Negate()
	high := append([]byte(nil), sig...)
	s.PutBytesUnchecked(high[32:64])
	require.ErrorIs(t, k.PubKey().Verify(msg, high), ErrBadSignature, "high S")

	// V is ignored, as the chain ignores it.
	otherV := append([]byte(nil), sig...)
	otherV[64] ^= 1
	require.NoError(t, k.PubKey().Verify(msg, otherV))
}

func TestPrivKeyFromBytes(t *testing.T) {
	_, err := PrivKeyFromBytes(make([]byte, 31))
	require.Error(t, err)
	_, err = PrivKeyFromBytes(make([]byte, 32))
	require.Error(t, err, "zero")
	_, err = PrivKeyFromBytes(mustHex(t, "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"))
	require.Error(t, err, "N")
	_, err = PrivKeyFromBytes(mustHex(t, "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140"))
	require.NoError(t, err, "N − 1")
	require.Equal(t, PrivKeyFromSeed("a").Bytes(), PrivKeyFromSeed("a").Bytes())
	require.NotEqual(t, PrivKeyFromSeed("a").Bytes(), PrivKeyFromSeed("b").Bytes())
}

func TestParsePubKey(t *testing.T) {
	k := PrivKeyFromSeed("x")
	p, err := ParsePubKey(k.PubKey().Bytes())
	require.NoError(t, err)
	require.True(t, p.Equal(k.PubKey()))
	_, err = ParsePubKey(k.PubKey().Bytes()[:32])
	require.Error(t, err)
	bad := append([]byte{0x05}, k.PubKey().Bytes()[1:]...)
	_, err = ParsePubKey(bad)
	require.Error(t, err)
	uncompressed := k.PubKey().k.SerializeUncompressed()
	_, err = ParsePubKey(uncompressed)
	require.Error(t, err, "only the compressed form is a PubKey message")
}

func TestSigners(t *testing.T) {
	k := PrivKeyFromSeed("provider-0")
	doc := []byte("sign doc")
	real, standIn := KeySigner{Key: k}, StandInSigner{Key: k}
	require.Equal(t, k.PubKey().Address(), real.PubKey().Address())
	require.Equal(t, k.PubKey().Address(), standIn.PubKey().Address())

	rs, err := real.Sign(doc)
	require.NoError(t, err)
	require.NoError(t, real.PubKey().Verify(doc, rs))

	ss, err := standIn.Sign(doc)
	require.NoError(t, err)
	require.Len(t, ss, SignatureSize)
	again, _ := standIn.Sign(doc)
	require.Equal(t, ss, again, "deterministic")
	other, _ := standIn.Sign([]byte("sign doc 2"))
	require.NotEqual(t, ss, other)
	require.ErrorIs(t, standIn.PubKey().Verify(doc, ss), ErrBadSignature, "D26: the verifying mode rejects the stand-in")
}

// TestStandInMemo: a memo gives the stand-in signature of exactly the key
// and SignDoc asked for, whatever it remembers.
func TestStandInMemo(t *testing.T) {
	k, other := PrivKeyFromSeed("provider-0"), PrivKeyFromSeed("provider-1")
	var memo StandInMemo
	signer := StandInSigner{Key: k, Memo: &memo}
	doc := []byte("sign doc")
	sig, err := signer.Sign(doc)
	require.NoError(t, err)
	require.Equal(t, StandInSignature(k.PubKey(), doc), sig)
	for _, c := range []struct {
		pub PubKey
		doc string
	}{
		{k.PubKey(), "sign doc"},     // remembered
		{k.PubKey(), "sign doc 2"},   // another doc
		{k.PubKey(), "sign do"},      // a prefix
		{other.PubKey(), "sign doc"}, // another key
		{k.PubKey(), "sign doc"},     // remembered again after the others
	} {
		require.Equal(t, StandInSignature(c.pub, []byte(c.doc)), memo.AppendSignature(nil, c.pub, []byte(c.doc)), "%s", c.doc)
	}
	doc[0] = 'S' // the signer's bytes change after signing: the memo kept its own copy
	require.Equal(t, StandInSignature(k.PubKey(), doc), memo.AppendSignature(nil, k.PubKey(), doc))
	var none *StandInMemo
	require.Equal(t, sig, none.AppendSignature(nil, k.PubKey(), []byte("sign doc")), "a nil memo computes")
}

func BenchmarkSign(b *testing.B) {
	k, doc := PrivKeyFromSeed("bench"), make([]byte, 300)
	b.Run("secp256k1", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			k.Sign(doc)
		}
	})
	b.Run("stand-in", func(b *testing.B) {
		pub := k.PubKey()
		for i := 0; i < b.N; i++ {
			StandInSignature(pub, doc)
		}
	})
}

func TestZeroKeysAreSafe(t *testing.T) {
	var k PrivKey
	require.True(t, k.IsZero())
	require.Nil(t, k.Bytes())
	require.Nil(t, k.Sign([]byte("x")))
	p := k.PubKey()
	require.True(t, p.IsZero())
	require.Nil(t, p.Bytes())
	require.Nil(t, p.AddressBytes())
	require.Empty(t, p.Address())
	require.ErrorIs(t, p.Verify([]byte("x"), make([]byte, 65)), ErrBadSignature)
	require.False(t, p.Equal(PrivKeyFromSeed("a").PubKey()))
	_, err := KeySigner{}.Sign([]byte("x"))
	require.ErrorIs(t, err, ErrNoKey)
	_, err = StandInSigner{}.Sign([]byte("x"))
	require.ErrorIs(t, err, ErrNoKey)
}

// A signer asks for its public key on every transaction: the key must be
// derived once, not by a curve multiplication per call (which made tx.Build
// cost ~140 µs with the stand-in signer).
func TestPubKeyIsDerivedOnce(t *testing.T) {
	k := PrivKeyFromSeed("cached")
	want, err := secp256k1.ParsePubKey(k.PubKey().Bytes())
	require.NoError(t, err)
	require.True(t, want.IsEqual(secp256k1.PrivKeyFromBytes(k.Bytes()).PubKey()), "the cached key is the key's own")
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = k.PubKey() }), "PubKey must not derive the point again")
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = StandInSigner{Key: k}.PubKey() }))
}

// The memo of valid addresses answers like a decode, for valid and
// invalid addresses alike, and stops growing at its bound.
func TestValidateAddressMemo(t *testing.T) {
	good := PrivKeyFromSeed("memo").PubKey().Address()
	for i := 0; i < 3; i++ {
		require.NoError(t, ValidateAddress(good))
		require.Error(t, ValidateAddress(good[:len(good)-1]+"x"), "an invalid address is never remembered as valid")
		require.Error(t, ValidateAddress("cosmos1"+good[5:]))
	}
	_, remembered := validAddresses.Load(good)
	require.True(t, remembered)
	require.Zero(t, testing.AllocsPerRun(50, func() { _ = ValidateAddress(good) }), "a remembered address is not decoded again")
	for i := 0; i < maxValidAddresses+10; i++ {
		sum := sha256.Sum256([]byte(strconv.Itoa(i)))
		addr, err := EncodeAddress(sum[:AddressSize])
		require.NoError(t, err)
		require.NoError(t, ValidateAddress(addr))
	}
	require.LessOrEqual(t, validCount.Load(), int64(maxValidAddresses))
}

// AppendBytes writes Bytes, for keys of both Y parities, and nothing for the
// zero key.
func TestPubKeyAppendBytesIsBytes(t *testing.T) {
	parity := map[byte]bool{}
	for i := range 64 {
		p := PrivKeyFromSeed(fmt.Sprint("append ", i)).PubKey()
		require.Equal(t, p.Bytes(), p.AppendBytes(nil))
		require.Equal(t, append([]byte("x"), p.Bytes()...), p.AppendBytes([]byte("x")))
		parity[p.Bytes()[0]] = true
	}
	require.Len(t, parity, 2, "both prefixes seen")
	require.Equal(t, []byte("x"), PubKey{}.AppendBytes([]byte("x")))
}
