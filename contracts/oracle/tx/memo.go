package tx

import (
	"bytes"
	"crypto/sha256"
	"sync"

	"github.com/wsconverge/converge/contracts/oracle/keys"
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
	mu   sync.Mutex
	t    *Tx
	sum  [32]byte
	hash string
}

// MemoSigner is a signer whose builds Build remembers in Memo (nil: none).
type MemoSigner struct {
	keys.Signer
	Memo *Memo
}

// remember keeps t, built as Build builds a single submission, sum, its
// bytes' SHA-256, and hash, HashOfSum(sum).
func (m *Memo) remember(t *Tx, sum [32]byte, hash string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.t, m.sum, m.hash = t, sum, hash
	m.mu.Unlock()
}

// DecodeSummed is Decode(txBytes) with the bytes' SHA-256 and their tx
// hash (HashOfSum): the remembered tx when txBytes are its bytes (it is
// then forgotten), a decoding of txBytes otherwise.
func (m *Memo) DecodeSummed(txBytes []byte) (t *Tx, sum [32]byte, hash string, err error) {
	if m != nil {
		m.mu.Lock()
		if m.t != nil && bytes.Equal(m.t.Bytes, txBytes) {
			t, sum, hash = m.t, m.sum, m.hash
			m.t, m.hash = nil, ""
			m.mu.Unlock()
			return t, sum, hash, nil
		}
		m.mu.Unlock()
	}
	sum = sha256.Sum256(txBytes)
	t, err = Decode(txBytes)
	return t, sum, HashOfSum(sum), err
}
