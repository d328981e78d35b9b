// Package keyring stores the oracle daemon's account keys in a directory,
// one JSON file per key:
//
//	<keyring_dir>/keyring-test/<name>.json   (directory 0700, file 0600)
//	{"name": "mykey", "type": "eth_secp256k1",
//	 "address": "guru1…", "pub_key": "<hex, 33-byte compressed>",
//	 "private_key": "<hex, 32 bytes>"}
//
// It is the "test" backend of the Cosmos SDK keyring in spirit (keys
// unencrypted on disk, for tests and for processes whose host is trusted)
// but not its format: the SDK's lives in the SDK, which converge does not
// import. The "file" and "os" backends (a passphrase, the OS key store) are
// not provided; Open says so. The address and public key are written for
// people and checked on load against the private key.
package keyring

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/wsconverge/converge/wire/keys"
)

// Backend is the only backend this keyring provides.
const Backend = "test"

// KeyType is the key algorithm written in each file.
const KeyType = "eth_secp256k1"

// ErrNotFound is returned for a key that is not in the keyring.
var ErrNotFound = errors.New("key not found")

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// file is a key file.
type file struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Address    string `json:"address"`
	PubKey     string `json:"pub_key"`
	PrivateKey string `json:"private_key"`
}

// Path is where key name lives under dir.
func Path(dir, name string) string {
	return filepath.Join(dir, "keyring-"+Backend, name+".json")
}

// CheckBackend accepts the test backend and explains the others.
func CheckBackend(backend string) error {
	switch backend {
	case Backend:
		return nil
	case "file", "os":
		return fmt.Errorf("keyring backend %q is not supported by this daemon; use %q (see docs/oracle.md)", backend, Backend)
	}
	return fmt.Errorf("unknown keyring backend %q", backend)
}

// ParsePrivateKey reads a 32-byte private key written in hex (an optional
// 0x prefix is allowed).
func ParsePrivateKey(s string) (keys.PrivKey, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "0x")
	b, err := hex.DecodeString(s)
	if err != nil {
		return keys.PrivKey{}, fmt.Errorf("private key: not hex: %w", err)
	}
	k, err := keys.PrivKeyFromBytes(b)
	if err != nil {
		return keys.PrivKey{}, err
	}
	return k, nil
}

// Add writes key name into the keyring at dir and returns its address. An
// existing key of that name is replaced only when overwrite is set.
func Add(dir, name string, k keys.PrivKey, overwrite bool) (string, error) {
	if !validName.MatchString(name) {
		return "", fmt.Errorf("key name %q: use 1-64 letters, digits, '.', '_' or '-'", name)
	}
	if k.IsZero() {
		return "", keys.ErrNoKey
	}
	p := Path(dir, name)
	if !overwrite {
		if _, err := os.Stat(p); err == nil {
			return "", fmt.Errorf("key %q already exists in %s", name, p)
		}
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", fmt.Errorf("keyring: %w", err)
	}
	pub := k.PubKey()
	b, err := json.MarshalIndent(file{
		Name: name, Type: KeyType, Address: pub.Address(),
		PubKey: hex.EncodeToString(pub.Bytes()), PrivateKey: hex.EncodeToString(k.Bytes()),
	}, "", "  ")
	if err != nil {
		return "", fmt.Errorf("keyring: %w", err)
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return "", fmt.Errorf("keyring: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return "", fmt.Errorf("keyring: %w", err)
	}
	return pub.Address(), nil
}

// Load reads key name from the keyring at dir.
func Load(dir, name string) (keys.PrivKey, error) {
	p := Path(dir, name)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return keys.PrivKey{}, fmt.Errorf("key %q: %w in %s (add it with `converge oracled keys add`)", name, ErrNotFound, filepath.Dir(p))
	}
	if err != nil {
		return keys.PrivKey{}, fmt.Errorf("key %q: %w", name, err)
	}
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return keys.PrivKey{}, fmt.Errorf("key file %s: %w", p, err)
	}
	if f.Type != KeyType {
		return keys.PrivKey{}, fmt.Errorf("key file %s: type %q, want %q", p, f.Type, KeyType)
	}
	k, err := ParsePrivateKey(f.PrivateKey)
	if err != nil {
		return keys.PrivKey{}, fmt.Errorf("key file %s: %w", p, err)
	}
	if f.Address != "" && f.Address != k.PubKey().Address() {
		return keys.PrivKey{}, fmt.Errorf("key file %s: address %s does not match the private key (%s)", p, f.Address, k.PubKey().Address())
	}
	return k, nil
}
