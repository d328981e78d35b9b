package keys

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
	"golang.org/x/crypto/sha3"
)

// Sizes of the key material and signatures.
const (
	PrivKeySize   = 32
	PubKeySize    = 33 // compressed point
	AddressSize   = 20
	SignatureSize = 65 // [R‖S‖V]
)

// ErrBadSignature is returned by Verify for a signature that does not verify.
var ErrBadSignature = errors.New("signature verification failed")

// Keccak256 is the legacy (pre-SHA-3) Keccak-256 hash of the concatenated
// inputs, as Ethereum uses it.
func Keccak256(data ...[]byte) []byte {
	h := sha3.NewLegacyKeccak256()
	for _, d := range data {
		h.Write(d)
	}
	return h.Sum(nil)
}

// PrivKey is an eth_secp256k1 private key. The zero PrivKey is no key: its
// Bytes are nil, its PubKey is the zero PubKey and signers refuse it.
//
// The public key is derived once, when the key is made: a derivation is a
// curve multiplication (tens of microseconds), and signers ask for the
// public key on every transaction.
type PrivKey struct {
	k   *secp256k1.PrivateKey
	pub *secp256k1.PublicKey
}

// IsZero reports whether k is the zero PrivKey.
func (k PrivKey) IsZero() bool { return k.k == nil }

// PrivKeyFromBytes parses a 32-byte big-endian scalar in [1, N−1].
func PrivKeyFromBytes(b []byte) (PrivKey, error) {
	if len(b) != PrivKeySize {
		return PrivKey{}, fmt.Errorf("private key: want %d bytes, got %d", PrivKeySize, len(b))
	}
	var s secp256k1.ModNScalar
	if overflow := s.SetByteSlice(b); overflow || s.IsZero() {
		return PrivKey{}, errors.New("private key: scalar out of range")
	}
	k := secp256k1.NewPrivateKey(&s)
	return PrivKey{k: k, pub: k.PubKey()}, nil
}

// PrivKeyFromSeed derives a private key deterministically from a seed
// string: the first SHA-256(seed ‖ counter) that is a valid scalar. The
// simulator and tests use it so that one seed fixes every account.
func PrivKeyFromSeed(seed string) PrivKey {
	var ctr [4]byte
	for i := uint32(0); ; i++ {
		binary.BigEndian.PutUint32(ctr[:], i)
		sum := sha256.Sum256(append([]byte(seed), ctr[:]...))
		if k, err := PrivKeyFromBytes(sum[:]); err == nil {
			return k
		}
	}
}

// Bytes is the 32-byte scalar.
func (k PrivKey) Bytes() []byte {
	if k.IsZero() {
		return nil
	}
	return k.k.Serialize()
}

// PubKey is the key's public key.
func (k PrivKey) PubKey() PubKey {
	if k.IsZero() {
		return PubKey{}
	}
	return PubKey{k: k.pub}
}

// Sign is the eth_secp256k1 signature of msg: 65 bytes [R‖S‖V] over
// Keccak-256(msg), with RFC 6979 nonces (the same msg always gives the same
// signature), S in the lower half of the order, and V the recovery id (0 or
// 1). The zero PrivKey gives nil.
func (k PrivKey) Sign(msg []byte) []byte {
	if k.IsZero() {
		return nil
	}
	return k.signDigest(Keccak256(msg))
}

func (k PrivKey) signDigest(digest []byte) []byte {
	// SignCompact gives [27 + 4 + recid ‖ R ‖ S] for a compressed key.
	c := ecdsa.SignCompact(k.k, digest, true)
	sig := make([]byte, SignatureSize)
	copy(sig, c[1:])
	sig[64] = c[0] - 27 - 4
	return sig
}

// PubKey is an eth_secp256k1 public key. The zero PubKey is no key: its
// Bytes and AddressBytes are nil, its Address is "" and it verifies nothing.
type PubKey struct{ k *secp256k1.PublicKey }

// IsZero reports whether p is the zero PubKey.
func (p PubKey) IsZero() bool { return p.k == nil }

// ParsePubKey parses a 33-byte compressed point, the form the
// ethsecp256k1.PubKey message carries.
func ParsePubKey(b []byte) (PubKey, error) {
	if len(b) != PubKeySize {
		return PubKey{}, fmt.Errorf("public key: want %d bytes (compressed), got %d", PubKeySize, len(b))
	}
	k, err := secp256k1.ParsePubKey(b)
	if err != nil {
		return PubKey{}, fmt.Errorf("public key: %w", err)
	}
	return PubKey{k: k}, nil
}

// Bytes is the 33-byte compressed point.
func (p PubKey) Bytes() []byte {
	if p.IsZero() {
		return nil
	}
	return p.k.SerializeCompressed()
}

// AppendBytes appends Bytes to dst (nothing for the zero PubKey) without
// allocating a slice of its own: every transaction built or signed writes
// the signer's key.
func (p PubKey) AppendBytes(dst []byte) []byte {
	if p.IsZero() {
		return dst
	}
	var j secp256k1.JacobianPoint
	p.k.AsJacobian(&j)   // affine: Z is one, X and Y normalized
	format := byte(0x02) // the compressed form's prefix, odd Y adds one
	if j.Y.IsOdd() {
		format |= 1
	}
	var b [PubKeySize]byte
	b[0] = format
	j.X.PutBytesUnchecked(b[1:])
	return append(dst, b[:]...)
}

// Equal reports whether two public keys are the same point.
func (p PubKey) Equal(q PubKey) bool { return p.k != nil && q.k != nil && p.k.IsEqual(q.k) }

// AddressBytes is the 20-byte account address: the last 20 bytes of
// Keccak-256(X‖Y).
func (p PubKey) AddressBytes() []byte {
	if p.IsZero() {
		return nil
	}
	return Keccak256(p.k.SerializeUncompressed()[1:])[32-AddressSize:]
}

// Address is the bech32 "guru" account address ("" for the zero PubKey).
func (p PubKey) Address() string {
	a, err := EncodeAddress(p.AddressBytes())
	if err != nil {
		return "" // only the zero PubKey: 20 bytes always encode
	}
	return a
}

// Verify checks a 65-byte [R‖S‖V] signature of msg (over Keccak-256(msg)):
// R and S must be in range, S in the lower half of the order, and the
// signature valid for p. V is not checked: the chain ignores it too.
func (p PubKey) Verify(msg, sig []byte) error {
	if p.IsZero() {
		return fmt.Errorf("%w: no public key", ErrBadSignature)
	}
	if len(sig) != SignatureSize {
		return fmt.Errorf("%w: want %d bytes, got %d", ErrBadSignature, SignatureSize, len(sig))
	}
	var r, s secp256k1.ModNScalar
	if r.SetByteSlice(sig[:32]) || s.SetByteSlice(sig[32:64]) || r.IsZero() || s.IsZero() {
		return fmt.Errorf("%w: R or S out of range", ErrBadSignature)
	}
	if s.IsOverHalfOrder() {
		return fmt.Errorf("%w: S is not in the lower half of the order", ErrBadSignature)
	}
	if !ecdsa.NewSignature(&r, &s).Verify(Keccak256(msg), p.k) {
		return ErrBadSignature
	}
	return nil
}
