package keys

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/decred/dcrd/bech32"
)

// Prefix is the bech32 human-readable part of account addresses.
const Prefix = "guru"

// EncodeAddress writes address bytes as a bech32 "guru" address.
func EncodeAddress(addr []byte) (string, error) {
	if err := checkAddressLen(len(addr)); err != nil {
		return "", err
	}
	s, err := bech32.EncodeFromBase256(Prefix, addr)
	if err != nil {
		return "", fmt.Errorf("address: %w", err)
	}
	return s, nil
}

// DecodeAddress reads a bech32 "guru" address (all lower or all upper case,
// bech32 checksum) and returns its bytes: 20 for an account, 32 for a module
// or derived account.
func DecodeAddress(s string) ([]byte, error) {
	hrp, data, err := bech32.DecodeToBase256(s)
	if err != nil {
		return nil, fmt.Errorf("address %q: %w", s, err)
	}
	if hrp != Prefix {
		return nil, fmt.Errorf("address %q: prefix %q, want %q", s, hrp, Prefix)
	}
	if err := checkAddressLen(len(data)); err != nil {
		return nil, fmt.Errorf("address %q: %w", s, err)
	}
	return data, nil
}

// ValidateAddress reports why s is not a valid "guru" address, or nil.
//
// Valid addresses are remembered (up to maxValidAddresses): a run checks
// the same few addresses on every transaction, and a bech32 decode costs
// more than the rest of a transaction's stateless checks. The memo only
// saves work; the answer is the same.
func ValidateAddress(s string) error {
	if _, ok := validAddresses.Load(s); ok {
		return nil
	}
	if _, err := DecodeAddress(s); err != nil {
		return err
	}
	if validCount.Load() < maxValidAddresses {
		if _, loaded := validAddresses.LoadOrStore(s, struct{}{}); !loaded {
			validCount.Add(1)
		}
	}
	return nil
}

// maxValidAddresses bounds the memo of ValidateAddress.
const maxValidAddresses = 4096

var (
	validAddresses sync.Map // string → struct{}
	validCount     atomic.Int64
)

func checkAddressLen(n int) error {
	if n != AddressSize && n != 32 {
		return fmt.Errorf("address must be %d or 32 bytes, got %d", AddressSize, n)
	}
	return nil
}
