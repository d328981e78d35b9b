package tx

import (
	"bytes"
	"crypto/sha256"
	"sync/atomic"

	"github.com/wsconverge/converge/wire/keys"
)

// Memo remembers the last tx built through a MemoSigner: its decoding and
// the SHA-256 of its bytes. A simulator gives one to the SUT's signer and
// takes the tx back when the SUT broadcasts it (DecodeSummed): the tx
// the SUT just built is then not parsed and hashed a second time. Like
// keys.StandInMemo it is a cache of a pure function: only bytes equal,
// byte for byte, to the remembered ones give the remembered tx, anything
// else is decoded and hashed, and each remembered tx is handed out once,
// so a caller never gets a tx that another caller holds. A nil memo
// decodes every time. It is safe for concurrent use.
type Memo struct {
	// last is the remembered build (in the build's own memory): swapped
	// atomically, as two mutex operations a round were measurable.
	last atomic.Pointer[memoEntry]
}

// memoEntry is a build as a Memo remembers it: the tx, the SHA-256 of its
// bytes and their tx hash (HashOfSum).
type memoEntry struct {
	t    *Tx
	sum  [32]byte
	hash string
}

// MemoSigner is a signer whose builds Build remembers in Memo (nil: none).
type MemoSigner struct {
	keys.Signer
	Memo *Memo
}

// remember keeps e, a single submission Build made.
func (m *Memo) remember(e *memoEntry) {
	if m != nil {
		m.last.Store(e)
	}
}

// DecodeSummed is Decode(txBytes) with the bytes' SHA-256 and their tx
// hash (HashOfSum): the remembered tx when txBytes are its bytes (it is
// then forgotten), a decoding of txBytes otherwise.
func (m *Memo) DecodeSummed(txBytes []byte) (t *Tx, sum [32]byte, hash string, err error) {
	if m != nil {
		if e := m.last.Load(); e != nil && bytes.Equal(e.t.Bytes, txBytes) && m.last.CompareAndSwap(e, nil) {
			return e.t, e.sum, e.hash, nil
		}
	}
	sum = sha256.Sum256(txBytes)
	t, err = Decode(txBytes)
	return t, sum, HashOfSum(sum), err
}
