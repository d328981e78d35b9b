package cosmoskeyring_test

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wsconverge/converge/wire/keys"
	"github.com/wsconverge/converge/wire/keys/cosmoskeyring"
)

// The key converge provisions for seed 1 of a conformance run.
func testKey() keys.PrivKey { return keys.PrivKeyFromSeed("conform-sut-1") }

func TestWriteThenReadRecoversTheKeyAndAddress(t *testing.T) {
	dir := t.TempDir()
	k := testKey()
	files, err := cosmoskeyring.Write(dir, "mykey", k)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "keyring-test", "mykey.info"), files.Info)
	require.Equal(t, filepath.Join(dir, "keyring-test", hex.EncodeToString(k.PubKey().AddressBytes())+".address"), files.Address)

	got, err := cosmoskeyring.Read(dir, "mykey")
	require.NoError(t, err)
	require.Equal(t, k.Bytes(), got.Bytes())
	require.Equal(t, k.PubKey().Address(), got.PubKey().Address())

	for _, f := range []string{files.Info, files.Address} {
		st, err := os.Stat(f)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), f)
	}
	st, err := os.Stat(filepath.Join(dir, "keyring-test"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	entries, err := os.ReadDir(filepath.Join(dir, "keyring-test"))
	require.NoError(t, err)
	require.Len(t, entries, 2, "no temporary file is left")

	// Written again (a second run in the same home): replaced, still read.
	_, err = cosmoskeyring.Write(dir, "mykey", k)
	require.NoError(t, err)
	_, err = cosmoskeyring.Read(dir, "mykey")
	require.NoError(t, err)
}

// The files decrypt and decode from the format's facts alone (a reader
// that shares no code with the writer: the standard library's PBKDF2, AES
// and GCM, and a protobuf walk by field number), and say what the SDK
// reads: the item keys, the record's name and key types, and the address
// item pointing at the record.
func TestWrittenFilesFollowTheFormat(t *testing.T) {
	dir := t.TempDir()
	k := testKey()
	files, err := cosmoskeyring.Write(dir, "oracle", k)
	require.NoError(t, err)

	hdr, info := openItem(t, files.Info, "test")
	require.Equal(t, "PBES2-HS256+A128KW", hdr["alg"])
	require.Equal(t, "A256GCM", hdr["enc"])
	require.EqualValues(t, 8192, hdr["p2c"])
	require.NotEmpty(t, hdr["created"])
	require.Equal(t, "oracle.info", info.Key)
	rec := decodeRecord(t, info.Data)
	require.Equal(t, "oracle", rec.name)
	require.Equal(t, "/cosmos.evm.crypto.v1.ethsecp256k1.PubKey", rec.pubType)
	require.Equal(t, "/cosmos.evm.crypto.v1.ethsecp256k1.PrivKey", rec.privType)
	require.Equal(t, k.PubKey().Bytes(), rec.pub)
	require.Equal(t, k.Bytes(), rec.priv)

	_, addr := openItem(t, files.Address, "test")
	require.Equal(t, filepath.Base(files.Address), addr.Key)
	require.Equal(t, "oracle.info", string(addr.Data))

	// The wrong passphrase does not open it.
	tok, err := os.ReadFile(files.Info)
	require.NoError(t, err)
	_, _, err = openJWE(string(tok), "not-test")
	require.Error(t, err)
}

// A real test keyring from public test data: node0's key of an Ethermint
// chain's devnet (quarixd, written by its SDK's keyring in 2023). The same
// independent reader opens it, its layout is the one Write makes (item
// fields, record fields, address item), and Read recovers a key whose
// address is the one in the address file's name.
func TestReadsARealSDKTestKeyring(t *testing.T) {
	dir := filepath.Join("testdata", "quarixd-node0")
	const addrHex = "bf657d0ef7b48167657a703ed8fd063f075246d7"

	hdr, info := openItem(t, filepath.Join(dir, "keyring-test", "node0.info"), "test")
	require.Equal(t, "PBES2-HS256+A128KW", hdr["alg"])
	require.Equal(t, "A256GCM", hdr["enc"])
	require.EqualValues(t, 8192, hdr["p2c"])
	require.Equal(t, "node0.info", info.Key)
	rec := decodeRecord(t, info.Data)
	require.Equal(t, "node0", rec.name)
	require.Equal(t, "/ethermint.crypto.v1.ethsecp256k1.PubKey", rec.pubType)
	require.Equal(t, "/ethermint.crypto.v1.ethsecp256k1.PrivKey", rec.privType)
	require.Len(t, rec.pub, keys.PubKeySize)
	require.Len(t, rec.priv, keys.PrivKeySize)
	_, addr := openItem(t, filepath.Join(dir, "keyring-test", addrHex+".address"), "test")
	require.Equal(t, addrHex+".address", addr.Key)
	require.Equal(t, "node0.info", string(addr.Data))

	k, err := cosmoskeyring.Read(dir, "node0")
	require.NoError(t, err)
	require.Equal(t, addrHex, hex.EncodeToString(k.PubKey().AddressBytes()))
	require.Equal(t, rec.priv, k.Bytes())

	// What Write makes for the same key has the same shape, but for the
	// key type's name (cosmos/evm's, which the façade's chain uses).
	out := t.TempDir()
	files, err := cosmoskeyring.Write(out, "node0", k)
	require.NoError(t, err)
	require.Equal(t, addrHex+".address", filepath.Base(files.Address))
	_, mine := openItem(t, files.Info, "test")
	mineRec := decodeRecord(t, mine.Data)
	require.Equal(t, rec.name, mineRec.name)
	require.Equal(t, rec.pub, mineRec.pub)
	require.Equal(t, rec.priv, mineRec.priv)
	require.Equal(t, rec.fields, mineRec.fields, "the same record fields, in the same order")
}

func TestReadRefusesWhatIsNotTheKey(t *testing.T) {
	dir := t.TempDir()
	_, err := cosmoskeyring.Read(dir, "mykey")
	require.ErrorIs(t, err, cosmoskeyring.ErrNotFound)

	_, err = cosmoskeyring.Write(dir, "a/b", testKey())
	require.ErrorContains(t, err, "key name")
	_, err = cosmoskeyring.Write(dir, "mykey", keys.PrivKey{})
	require.ErrorIs(t, err, keys.ErrNoKey)

	// A record under another name's file.
	files, err := cosmoskeyring.Write(dir, "one", testKey())
	require.NoError(t, err)
	require.NoError(t, os.Rename(files.Info, filepath.Join(dir, "keyring-test", "two.info")))
	_, err = cosmoskeyring.Read(dir, "two")
	require.ErrorContains(t, err, `the item's key is "one.info"`)
}

// ---- an independent reader, from the format's facts ----

type keyringItem struct {
	Key                         string
	Data                        []byte
	Label                       string
	Description                 string
	KeychainNotTrustApplication bool
	KeychainNotSynchronizable   bool
}

// openItem decrypts file path with passphrase and checks that its JSON
// has exactly the keyring item's fields.
func openItem(t *testing.T, path, passphrase string) (map[string]any, keyringItem) {
	t.Helper()
	tok, err := os.ReadFile(path)
	require.NoError(t, err)
	hdr, plain, err := openJWE(string(tok), passphrase)
	require.NoError(t, err, path)
	var fields map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(plain, &fields))
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	require.ElementsMatch(t, []string{"Key", "Data", "Label", "Description", "KeychainNotTrustApplication", "KeychainNotSynchronizable"}, names)
	var it keyringItem
	dec := json.NewDecoder(strings.NewReader(string(plain)))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&it))
	return hdr, it
}

// openJWE decrypts a compact JWE made with PBES2-HS256+A128KW (RFC 7518
// 4.8: PBKDF2-HMAC-SHA256 over "alg" ‖ 0 ‖ p2s, 16 bytes, then AES key
// unwrap of the content key, RFC 3394) and A256GCM (the protected
// header's base64url text as the additional data).
func openJWE(token, passphrase string) (map[string]any, []byte, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 5 {
		return nil, nil, errors.New("not a compact JWE: want 5 parts")
	}
	raw := make([][]byte, 5)
	for i, p := range parts {
		b, err := base64.RawURLEncoding.DecodeString(p)
		if err != nil {
			return nil, nil, err
		}
		raw[i] = b
	}
	var hdr map[string]any
	if err := json.Unmarshal(raw[0], &hdr); err != nil {
		return nil, nil, err
	}
	if hdr["alg"] != "PBES2-HS256+A128KW" || hdr["enc"] != "A256GCM" {
		return nil, nil, errors.New("unexpected alg or enc")
	}
	p2s, ok := hdr["p2s"].(string)
	if !ok {
		return nil, nil, errors.New("no p2s")
	}
	salt, err := base64.RawURLEncoding.DecodeString(p2s)
	if err != nil {
		return nil, nil, err
	}
	p2c, ok := hdr["p2c"].(float64)
	if !ok {
		return nil, nil, errors.New("no p2c")
	}
	kek, err := pbkdf2.Key(sha256.New, passphrase, append([]byte("PBES2-HS256+A128KW\x00"), salt...), int(p2c), 16)
	if err != nil {
		return nil, nil, err
	}
	cek, err := aesUnwrap(kek, raw[1])
	if err != nil {
		return nil, nil, err
	}
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, nil, err
	}
	gcm, err := cipher.NewGCMWithNonceSize(block, len(raw[2]))
	if err != nil {
		return nil, nil, err
	}
	plain, err := gcm.Open(nil, raw[2], append(raw[3], raw[4]...), []byte(parts[0]))
	if err != nil {
		return nil, nil, err
	}
	return hdr, plain, nil
}

// aesUnwrap is RFC 3394's key unwrap with the default IV.
func aesUnwrap(kek, wrapped []byte) ([]byte, error) {
	if len(wrapped)%8 != 0 || len(wrapped) < 24 {
		return nil, errors.New("wrapped key: bad length")
	}
	block, err := aes.NewCipher(kek)
	if err != nil {
		return nil, err
	}
	n := len(wrapped)/8 - 1
	a := append([]byte(nil), wrapped[:8]...)
	r := make([][]byte, n)
	for i := range r {
		r[i] = append([]byte(nil), wrapped[8*(i+1):8*(i+2)]...)
	}
	buf := make([]byte, 16)
	for j := 5; j >= 0; j-- {
		for i := n; i >= 1; i-- {
			tv := uint64(n*j + i)
			binary.BigEndian.PutUint64(buf[:8], binary.BigEndian.Uint64(a)^tv)
			copy(buf[8:], r[i-1])
			block.Decrypt(buf, buf)
			copy(a, buf[:8])
			copy(r[i-1], buf[8:])
		}
	}
	if subtle.ConstantTimeCompare(a, []byte{0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6}) != 1 {
		return nil, errors.New("wrapped key: integrity check failed (wrong passphrase?)")
	}
	out := make([]byte, 0, 8*n)
	for _, b := range r {
		out = append(out, b...)
	}
	return out, nil
}

// record is a keyring Record read by field number: 1 name, 2 pub_key
// Any {1 type_url, 2 value: {1 key}}, 3 local {1 priv_key Any}.
type record struct {
	name              string
	pubType, privType string
	pub, priv         []byte
	fields            []protowire.Number
}

func decodeRecord(t *testing.T, b []byte) record {
	t.Helper()
	var r record
	for _, f := range walk(t, b) {
		r.fields = append(r.fields, f.num)
		switch f.num {
		case 1:
			r.name = string(f.val)
		case 2:
			r.pubType, r.pub = anyKey(t, f.val)
		case 3:
			for _, g := range walk(t, f.val) {
				if g.num == 1 {
					r.privType, r.priv = anyKey(t, g.val)
				}
			}
		}
	}
	return r
}

// anyKey reads an Any whose value is a key message {1 key bytes}.
func anyKey(t *testing.T, b []byte) (typeURL string, key []byte) {
	t.Helper()
	for _, f := range walk(t, b) {
		switch f.num {
		case 1:
			typeURL = string(f.val)
		case 2:
			for _, g := range walk(t, f.val) {
				if g.num == 1 {
					key = g.val
				}
			}
		}
	}
	return typeURL, key
}

type field struct {
	num protowire.Number
	val []byte
}

// walk lists b's length-delimited fields (the only wire type a Record
// and its keys use).
func walk(t *testing.T, b []byte) []field {
	t.Helper()
	var out []field
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		require.GreaterOrEqual(t, n, 0)
		require.Equal(t, protowire.BytesType, typ, "field %d", num)
		b = b[n:]
		v, m := protowire.ConsumeBytes(b)
		require.GreaterOrEqual(t, m, 0)
		out = append(out, field{num: num, val: v})
		b = b[m:]
	}
	return out
}
