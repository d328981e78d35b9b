package keyring_test

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/wire/keyring"
	"github.com/wsconverge/converge/wire/keys"
)

func TestAddLoad(t *testing.T) {
	dir := t.TempDir()
	k := keys.PrivKeyFromSeed("keyring-test")
	addr, err := keyring.Add(dir, "mykey", k, false)
	require.NoError(t, err)
	require.Equal(t, k.PubKey().Address(), addr)

	got, err := keyring.Load(dir, "mykey")
	require.NoError(t, err)
	require.Equal(t, k.Bytes(), got.Bytes())

	fi, err := os.Stat(keyring.Path(dir, "mykey"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	di, err := os.Stat(filepath.Dir(keyring.Path(dir, "mykey")))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), di.Mode().Perm())

	_, err = keyring.Add(dir, "mykey", keys.PrivKeyFromSeed("other"), false)
	require.ErrorContains(t, err, "already exists")
	_, err = keyring.Add(dir, "mykey", keys.PrivKeyFromSeed("other"), true)
	require.NoError(t, err)
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := keyring.Load(dir, "absent")
	require.ErrorIs(t, err, keyring.ErrNotFound)

	write := func(name, content string) {
		t.Helper()
		p := keyring.Path(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	}
	write("garbled", "{")
	_, err = keyring.Load(dir, "garbled")
	require.ErrorContains(t, err, "garbled.json")

	write("wrongtype", `{"type":"ed25519","private_key":"00"}`)
	_, err = keyring.Load(dir, "wrongtype")
	require.ErrorContains(t, err, "ed25519")

	k := keys.PrivKeyFromSeed("a")
	write("mismatch", `{"type":"eth_secp256k1","address":"`+keys.PrivKeyFromSeed("b").PubKey().Address()+`","private_key":"`+hex.EncodeToString(k.Bytes())+`"}`)
	_, err = keyring.Load(dir, "mismatch")
	require.ErrorContains(t, err, "does not match")

	write("zero", `{"type":"eth_secp256k1","private_key":"`+hex.EncodeToString(make([]byte, 32))+`"}`)
	_, err = keyring.Load(dir, "zero")
	require.ErrorContains(t, err, "out of range")
}

func TestParsePrivateKeyAndNames(t *testing.T) {
	k := keys.PrivKeyFromSeed("p")
	got, err := keyring.ParsePrivateKey("0x" + hex.EncodeToString(k.Bytes()))
	require.NoError(t, err)
	require.Equal(t, k.Bytes(), got.Bytes())
	_, err = keyring.ParsePrivateKey("zz")
	require.Error(t, err)
	_, err = keyring.ParsePrivateKey("abcd")
	require.Error(t, err)

	_, err = keyring.Add(t.TempDir(), "../escape", k, false)
	require.ErrorContains(t, err, "key name")
	require.NoError(t, keyring.CheckBackend("test"))
	require.ErrorContains(t, keyring.CheckBackend("os"), "not supported")
	require.ErrorContains(t, keyring.CheckBackend("vault"), "unknown")
}
