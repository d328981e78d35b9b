package keys

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"sync"
)

// ErrNoKey is returned by a signer without a key.
var ErrNoKey = errors.New("signer has no key")

// Signer signs a transaction's SignDoc bytes for one account. The reference
// daemon reaches it through a port, so a simulated crash can make it fail.
type Signer interface {
	// PubKey is the account's public key; its Address is the signer.
	PubKey() PubKey
	// Sign returns the 65-byte signature of the SignDoc bytes. The same bytes
	// always give the same signature.
	Sign(signDoc []byte) ([]byte, error)
}

// KeySigner signs with the real eth_secp256k1 signature (ORACLE-SPEC 6.6):
// what a real chain, and the simulated chain's verifying mode, accept.
type KeySigner struct{ Key PrivKey }

// PubKey implements Signer.
func (s KeySigner) PubKey() PubKey { return s.Key.PubKey() }

// Sign implements Signer.
func (s KeySigner) Sign(signDoc []byte) ([]byte, error) {
	if s.Key.IsZero() {
		return nil, ErrNoKey
	}
	return s.Key.Sign(signDoc), nil
}

// StandInSigner is the reference daemon's default signer (D26): the account's
// real public key and address, but a stand-in signature — 65 bytes derived
// with SHA-256 from the public key and the SignDoc bytes, so it is
// deterministic and distinct per tx, but costs about a microsecond instead of
// a curve multiplication. The simulated chain does not verify signatures by
// default; its verifying mode (and a real chain) reject these.
type StandInSigner struct {
	Key PrivKey
	// Memo (optional) keeps the last signature made, for a checker in the
	// same process (StandInMemo).
	Memo *StandInMemo
}

// PubKey implements Signer.
func (s StandInSigner) PubKey() PubKey { return s.Key.PubKey() }

// Sign implements Signer.
func (s StandInSigner) Sign(signDoc []byte) ([]byte, error) {
	return s.AppendSign(make([]byte, 0, SignatureSize), signDoc)
}

// AppendSign is Sign appending the signature to b: a tx build writes it
// into the tx's own array.
func (s StandInSigner) AppendSign(b, signDoc []byte) ([]byte, error) {
	if s.Key.IsZero() {
		return nil, ErrNoKey
	}
	return s.Memo.AppendSignature(b, s.Key.PubKey(), signDoc), nil
}

// StandInMemo remembers the last stand-in signature computed through it:
// the public key, the SignDoc bytes and the signature. A simulator gives
// one to the SUT's signer and to the chain that checks the SUT's txs: the
// check of a tx just signed then finds its expected signature here rather
// than hashing the same SignDoc again. It is a cache of a pure function:
// only a key and SignDoc equal byte for byte to the remembered ones give
// the remembered signature, anything else is computed, so a tx signed
// over other bytes than the ones it carries fails the check as before. A
// nil memo computes every time. It is safe for concurrent use.
type StandInMemo struct {
	mu  sync.Mutex
	ok  bool
	pub [PubKeySize]byte
	doc []byte
	sig [SignatureSize]byte
}

// AppendSignature appends StandInSignature(pub, signDoc) to b, from the
// memo when it holds that key and SignDoc, and remembers it otherwise.
func (m *StandInMemo) AppendSignature(b []byte, pub PubKey, signDoc []byte) []byte {
	if m == nil || pub.IsZero() {
		return AppendStandInSignature(b, pub, signDoc)
	}
	var key [PubKeySize]byte
	pub.AppendBytes(key[:0])
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ok && key == m.pub && bytes.Equal(signDoc, m.doc) {
		return append(b, m.sig[:]...)
	}
	AppendStandInSignature(m.sig[:0], pub, signDoc)
	m.ok, m.pub, m.doc = true, key, append(m.doc[:0], signDoc...)
	return append(b, m.sig[:]...)
}

// StandInSignature is the stand-in signature of signDoc for pub:
// h ‖ SHA-256(1 ‖ h) ‖ 0 with h = SHA-256(tag ‖ 0 ‖ pub ‖ signDoc).
func StandInSignature(pub PubKey, signDoc []byte) []byte {
	return AppendStandInSignature(make([]byte, 0, SignatureSize), pub, signDoc)
}

// AppendStandInSignature appends StandInSignature(pub, signDoc) to b. A
// chain that checks a signature against it can compute it into an array
// of its own, not a new slice per tx.
func AppendStandInSignature(b []byte, pub PubKey, signDoc []byte) []byte {
	// One pass over the sign doc (its preimage on the stack for a daemon's
	// SignDoc), then one block for the second half: every tx is signed
	// with it, and the sign doc is most of a tx.
	var buf [512]byte
	pre := append(buf[:0], standInTag...)
	pre = append(pre, 0)
	pre = pub.AppendBytes(pre)
	pre = append(pre, signDoc...)
	h := sha256.Sum256(pre)
	var second [1 + sha256.Size]byte
	second[0] = 1
	copy(second[1:], h[:])
	h2 := sha256.Sum256(second[:])
	b = append(b, h[:]...)
	b = append(b, h2[:]...)
	return append(b, 0)
}

const standInTag = "converge stand-in signature"
