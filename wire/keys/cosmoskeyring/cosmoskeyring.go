// Package cosmoskeyring writes an oracle account key the way a Cosmos SDK
// daemon (SDK 0.46 and later) reads it from a keyring with the "test"
// backend, and reads such a key back.
//
// The layout, as the SDK's keyring writes it through its file backend
// (the 99designs keyring, now the cosmos/keyring fork):
//
//	<dir>/keyring-test/<name>.info          (directory 0700, files 0600)
//	<dir>/keyring-test/<hex address>.address
//
// Each file is one keyring item, JSON {"Key", "Data" (base64),
// "Label", "Description", "KeychainNotTrustApplication",
// "KeychainNotSynchronizable"}, encrypted as a compact JWE: key
// management PBES2-HS256+A128KW under the test backend's fixed passphrase
// "test" (p2c 8192, a 12-byte p2s), content encryption A256GCM, and a
// "created" header. The .info item's Key is "<name>.info" and its Data
// the protobuf cosmos.crypto.keyring.v1.Record {1 name, 2 pub_key Any,
// 3 local {1 priv_key Any}}; the .address item's Key is
// "<hex address>.address" (lower-case hex of the 20 address bytes) and
// its Data the bytes "<name>.info". The keys are cosmos/evm's
// eth_secp256k1 (ORACLE-SPEC 6.6): PubKey {1 key: 33-byte compressed
// point} and PrivKey {1 key: 32-byte scalar}.
//
// The JWE is made by the library the SDK's keyring uses
// (github.com/dvsekhvalnov/jose2go); the Record with converge's generated
// protobuf types. A name or directory the SDK's own escaping would change
// (a '/' or '%' in the name) is refused rather than escaped.
package cosmoskeyring

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	jose "github.com/dvsekhvalnov/jose2go"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/wsconverge/converge/wire/keys"
	keyringv1 "github.com/wsconverge/converge/wire/proto/cosmos/crypto/keyring/v1"
	"github.com/wsconverge/converge/wire/proto/cosmos/evm/crypto/v1/ethsecp256k1"
)

// The test backend's fixed facts.
const (
	// Dir is the test backend's directory under the keyring's root (the
	// daemon's home, or its keyring-dir).
	Dir = "keyring-test"
	// Passphrase is the test backend's fixed passphrase.
	Passphrase = "test"
	// iterations is the PBES2 iteration count (p2c) the SDK's keyring
	// writes: the JOSE library's default.
	iterations = 8192
)

// The key type written: cosmos/evm's eth_secp256k1.
const (
	PubKeyTypeURL  = "/cosmos.evm.crypto.v1.ethsecp256k1.PubKey"
	PrivKeyTypeURL = "/cosmos.evm.crypto.v1.ethsecp256k1.PrivKey"
)

// ethermint's type URLs name the same messages; Read accepts them, as
// Ethermint-era daemons wrote them.
const (
	ethermintPubKeyTypeURL  = "/ethermint.crypto.v1.ethsecp256k1.PubKey"
	ethermintPrivKeyTypeURL = "/ethermint.crypto.v1.ethsecp256k1.PrivKey"
)

// ErrNotFound is returned by Read for a key that is not in the keyring.
var ErrNotFound = errors.New("key not found")

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// item is a keyring item as the file backend serialises it before
// encryption (the field names are the JSON keys).
type item struct {
	Key                         string
	Data                        []byte
	Label                       string
	Description                 string
	KeychainNotTrustApplication bool
	KeychainNotSynchronizable   bool
}

// Files are the two files Write made.
type Files struct {
	Info, Address string
}

// InfoPath is where key name's record lives under the keyring root dir.
func InfoPath(dir, name string) string { return filepath.Join(dir, Dir, name+".info") }

// AddressPath is where the item naming the key of address bytes addr lives.
func AddressPath(dir string, addr []byte) string {
	return filepath.Join(dir, Dir, hex.EncodeToString(addr)+".address")
}

// Write puts key k under name into the test keyring rooted at dir,
// replacing a key of that name, and returns the files written.
func Write(dir, name string, k keys.PrivKey) (Files, error) {
	if !validName.MatchString(name) {
		return Files{}, fmt.Errorf("cosmos keyring: key name %q: use 1-64 letters, digits, '.', '_' or '-'", name)
	}
	if k.IsZero() {
		return Files{}, fmt.Errorf("cosmos keyring: %w", keys.ErrNoKey)
	}
	rec, err := newRecord(name, k)
	if err != nil {
		return Files{}, err
	}
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(rec)
	if err != nil {
		return Files{}, fmt.Errorf("cosmos keyring: record: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, Dir), 0o700); err != nil {
		return Files{}, fmt.Errorf("cosmos keyring: %w", err)
	}
	infoKey := name + ".info"
	f := Files{Info: InfoPath(dir, name), Address: AddressPath(dir, k.PubKey().AddressBytes())}
	if err := writeItem(f.Info, item{Key: infoKey, Data: data}); err != nil {
		return Files{}, err
	}
	if err := writeItem(f.Address, item{Key: filepath.Base(f.Address), Data: []byte(infoKey)}); err != nil {
		return Files{}, err
	}
	return f, nil
}

// newRecord is the local record of k under name.
func newRecord(name string, k keys.PrivKey) (*keyringv1.Record, error) {
	pub, err := anypb.New(&ethsecp256k1.PubKey{Key: k.PubKey().Bytes()})
	if err != nil {
		return nil, fmt.Errorf("cosmos keyring: public key: %w", err)
	}
	priv, err := anypb.New(&ethsecp256k1.PrivKey{Key: k.Bytes()})
	if err != nil {
		return nil, fmt.Errorf("cosmos keyring: private key: %w", err)
	}
	// anypb names the type "type.googleapis.com/…"; the SDK's codec
	// writes and resolves "/…".
	pub.TypeUrl, priv.TypeUrl = PubKeyTypeURL, PrivKeyTypeURL
	return &keyringv1.Record{Name: name, PubKey: pub,
		Item: &keyringv1.Record_Local_{Local: &keyringv1.Record_Local{PrivKey: priv}}}, nil
}

// writeItem encrypts it as the file backend does and writes it to path.
func writeItem(path string, it item) error {
	plain, err := json.Marshal(it)
	if err != nil {
		return fmt.Errorf("cosmos keyring: %s: %w", it.Key, err)
	}
	token, err := jose.EncryptBytes(plain, jose.PBES2_HS256_A128KW, jose.A256GCM, Passphrase,
		jose.Headers(map[string]any{"created": time.Now().Round(0).String(), "p2c": iterations}))
	if err != nil {
		return fmt.Errorf("cosmos keyring: %s: encrypt: %w", it.Key, err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(token), 0o600); err != nil {
		return fmt.Errorf("cosmos keyring: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("cosmos keyring: %w", err)
	}
	return nil
}

// Read reads key name from the test keyring rooted at dir: it decrypts the
// record, checks the key types, that the public key is the private key's,
// and that the address item names the record.
func Read(dir, name string) (keys.PrivKey, error) {
	it, err := readItem(InfoPath(dir, name))
	if err != nil {
		return keys.PrivKey{}, fmt.Errorf("cosmos keyring: key %q: %w", name, err)
	}
	if it.Key != name+".info" {
		return keys.PrivKey{}, fmt.Errorf("cosmos keyring: key %q: the item's key is %q", name, it.Key)
	}
	var rec keyringv1.Record
	if err := proto.Unmarshal(it.Data, &rec); err != nil {
		return keys.PrivKey{}, fmt.Errorf("cosmos keyring: key %q: record: %w", name, err)
	}
	k, err := recordKey(&rec)
	if err != nil {
		return keys.PrivKey{}, fmt.Errorf("cosmos keyring: key %q: %w", name, err)
	}
	if rec.GetName() != name {
		return keys.PrivKey{}, fmt.Errorf("cosmos keyring: key %q: the record is named %q", name, rec.GetName())
	}
	addr, err := readItem(AddressPath(dir, k.PubKey().AddressBytes()))
	if err != nil {
		return keys.PrivKey{}, fmt.Errorf("cosmos keyring: key %q: its address item: %w", name, err)
	}
	if string(addr.Data) != name+".info" {
		return keys.PrivKey{}, fmt.Errorf("cosmos keyring: key %q: its address item names %q", name, addr.Data)
	}
	return k, nil
}

// recordKey is the private key of a local record, checked against its
// public key.
func recordKey(rec *keyringv1.Record) (keys.PrivKey, error) {
	local := rec.GetLocal()
	if local == nil || local.GetPrivKey() == nil {
		return keys.PrivKey{}, errors.New("not a local key (no private key in the record)")
	}
	pa, qa := local.GetPrivKey(), rec.GetPubKey()
	if u := pa.GetTypeUrl(); u != PrivKeyTypeURL && u != ethermintPrivKeyTypeURL {
		return keys.PrivKey{}, fmt.Errorf("private key type %q, want %q", u, PrivKeyTypeURL)
	}
	var priv ethsecp256k1.PrivKey
	if err := proto.Unmarshal(pa.GetValue(), &priv); err != nil {
		return keys.PrivKey{}, fmt.Errorf("private key: %w", err)
	}
	k, err := keys.PrivKeyFromBytes(priv.GetKey())
	if err != nil {
		return keys.PrivKey{}, err
	}
	if qa != nil {
		if u := qa.GetTypeUrl(); u != PubKeyTypeURL && u != ethermintPubKeyTypeURL {
			return keys.PrivKey{}, fmt.Errorf("public key type %q, want %q", u, PubKeyTypeURL)
		}
		var pub ethsecp256k1.PubKey
		if err := proto.Unmarshal(qa.GetValue(), &pub); err != nil {
			return keys.PrivKey{}, fmt.Errorf("public key: %w", err)
		}
		if hex.EncodeToString(pub.GetKey()) != hex.EncodeToString(k.PubKey().Bytes()) {
			return keys.PrivKey{}, errors.New("the record's public key is not the private key's")
		}
	}
	return k, nil
}

// readItem decrypts the item in file path.
func readItem(path string) (item, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return item{}, fmt.Errorf("%w: no %s", ErrNotFound, path)
	}
	if err != nil {
		return item{}, err
	}
	plain, _, err := jose.DecodeBytes(string(b), Passphrase)
	if err != nil {
		return item{}, fmt.Errorf("%s: decrypt: %w", path, err)
	}
	var it item
	if err := json.Unmarshal(plain, &it); err != nil {
		return item{}, fmt.Errorf("%s: %w", path, err)
	}
	return it, nil
}
