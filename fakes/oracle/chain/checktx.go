package chain

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/wire/cometrpc"
	"github.com/wsconverge/converge/wire/keys"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
	"github.com/wsconverge/converge/wire/records"
	"github.com/wsconverge/converge/wire/tx"
)

// memTx is a tx in the mempool (or on its way in), as the checks and the
// execution read it. A tx the SUT sends arrives as bytes and is decoded;
// a tx of the chain's own (moderator, peers, intruder) arrives as its
// content, and its bytes are built only when something needs them (a
// record, a frame's JSON or hash, the verifying mode): the peers send most
// of a run's txs, and with their routine records omitted nobody reads
// their bytes.
type memTx struct {
	origin history.Origin
	// The tx as the chain reads it.
	msgs     []proto.Message
	signAddr string // the first message's signer
	seq      uint64
	gas      uint64
	feeCoins []tx.Coin
	// fee is the Denom amount it offers, once checked (stateless): read
	// only, as it may be the chain's parsed amount itself.
	fee    *big.Int
	signer *account // set by the stateful checks

	// cacheStamp: the chain's own txs are cached by identity (the stamp of
	// their last cache entry, 0 when removed; txCache.cachedOwn), the
	// SUT's by key (sutRoom): their bytes are never sent again.
	cacheStamp uint64

	// A decoded tx: its bytes, hash and decoded form.
	bytes []byte
	hash  string
	tx    *tx.Tx

	// The chain's own tx: how to build its bytes, once.
	own       *ownTx
	buildOnce sync.Once

	rec *history.Tx // the record form, made once
	// sut is what only the SUT's txs have (nil for the chain's own).
	sut *sutRoom
}

// sutRoom is what one of the SUT's txs has besides a memTx, allocated
// with it (sutMem): the chain's own txs, a peer's on every round, are
// smaller without it.
type sutRoom struct {
	// key is the cache key: the SHA-256 of the bytes.
	key     [32]byte
	feeCoin [1]tx.Coin // feeCoins when it has one
	pubKey  []byte     // signer_infos[0]'s compressed key, as sent
	// waived are the checks of the attempt in progress that
	// Params.AdmitUnverified let pass.
	waived []Waiver
	// given is the caller's record of the bytes (see
	// BroadcastTxSyncRecorded): rec is made from it.
	given *history.Tx

	// Room for what the tx makes, rather than an allocation each: its
	// record form (rec; records copy it, none holds its address) and the
	// hash bytes of its broadcast_tx_sync answer (the key's copy, which the
	// caller may keep; decoding the hex again cost an allocation per
	// broadcast).
	rec  history.Tx
	hash [32]byte
	// check is the caller's room for the checktx record (nil: none; see
	// BroadcastTxSyncRecordedIn), used once; hashIn the caller's room for
	// the answer's hash bytes (nil: hash). A tx whose answer lies in the
	// caller's room refers to nothing it hands out, so Recycle can take
	// back its memory (mem).
	check  *history.CheckTx
	hashIn *[32]byte
	mem    *sutMem
}

// sutMem is one of the SUT's txs and its room.
type sutMem struct {
	tx   memTx
	room sutRoom
}

// newSUTTx is one of the SUT's txs, of these bytes, their SHA-256 (the
// cache key) and hash, in memory with its room: a recycled tx's (Recycle),
// zeroed, if there is one.
func (c *Chain) newSUTTx(txBytes []byte, sum [32]byte, hash string) *memTx {
	var mem *sutMem
	if n := len(c.spareSUT); n > 0 {
		mem = c.spareSUT[n-1]
		c.spareSUT[n-1] = nil
		c.spareSUT = c.spareSUT[:n-1]
		*mem = sutMem{}
	} else {
		mem = &sutMem{}
	}
	mem.tx.origin, mem.tx.bytes, mem.tx.hash, mem.tx.sut = history.OriginSUT, txBytes, hash, &mem.room
	mem.room.key, mem.room.mem = sum, mem
	return &mem.tx
}

// ownTx is how the chain builds one of its own txs.
type ownTx struct {
	signer keys.Signer
	// env is the envelope every own tx shares (the chain's ownEnv); the
	// tx's own are its signer's account number and its sequence.
	env           *tx.Envelope
	accountNumber uint64
	// adm is room for a peer submission's one admission (PeerSubmit's
	// answer, without a slice of its own).
	adm [1]Admission
	// mem is the memory the tx lies in (Recycle gives a peer's back).
	mem *ownMem
}

// envelope is the tx's envelope.
func (o *ownTx) envelope(seq uint64) tx.Envelope {
	env := *o.env
	env.AccountNumber, env.Sequence = o.accountNumber, seq
	return env
}

// ownMem is what ownTx allocates for one of the chain's own txs. It is
// kept within 512 bytes (the size classes above cost the collector more):
// a peer makes one on every round, or reuses a recycled one (newOwnMem).
type ownMem struct {
	tx    memTx
	own   ownTx
	stand keys.StandInSigner
	msgs  [1]proto.Message
	// submit and set are a peer submission's message (PeerSubmit), made
	// here rather than in an allocation of their own.
	submit oraclev1.MsgSubmitOracleData
	set    oraclev1.SubmitDataSet
}

// built returns the tx's bytes, hash and decoded form, building them for
// the chain's own txs the first time. Safe for concurrent use (a frame's
// JSON may be asked for outside the chain's lock). The inputs were
// checked when the tx was made, so the build cannot fail; if it did, the
// tx would have no bytes and an empty hash.
func (m *memTx) built() (txBytes []byte, hash string, t *tx.Tx) {
	if m.own != nil {
		m.buildOnce.Do(func() {
			if b, err := tx.Build(m.own.signer, m.own.envelope(m.seq), m.msgs...); err == nil {
				m.bytes, m.hash, m.tx = b.TxBytes, b.Hash, b.Tx
			}
		})
	}
	return m.bytes, m.hash, m.tx
}

// txHash is the tx's hash (building the chain's own tx if needed).
func (m *memTx) txHash() string {
	_, h, _ := m.built()
	return h
}

// viewOf fills the chain's view of a decoded tx.
func (m *memTx) viewOf(t *tx.Tx) {
	m.tx = t
	m.msgs = t.Msgs
	m.signAddr = t.Signer()
	m.seq, _ = t.Sequence()
	m.gas = t.GasLimit()
	m.feeCoins = t.AppendFeeCoins(m.sut.feeCoin[:0])
	if sis := t.AuthInfo.GetSignerInfos(); len(sis) > 0 {
		if key, err := tx.PubKeyKey(sis[0].GetPublicKey().GetValue()); err == nil {
			m.sut.pubKey = key
		}
	}
}

// Admission is the outcome of one admission attempt: an RPC error (rows
// 1–2 of ORACLE-SPEC 4.3) or a CheckTx code.
type Admission struct {
	// Hash is the upper-case hex SHA-256 of the tx; empty for a peer's
	// routine tx under Config.OmitRoutine (its bytes are not built).
	Hash     string
	RPCError *cometrpc.RPCError
	Code     uint32
	Log      string
	Injected bool
}

// Admitted reports whether the tx joined the mempool.
func (a Admission) Admitted() bool { return a.RPCError == nil && a.Code == 0 }

// Result is the broadcast_tx_sync answer of the attempt: a result, or the
// JSON-RPC error.
func (a Admission) Result() (cometrpc.ResultBroadcastTx, *cometrpc.RPCError) {
	if a.RPCError != nil {
		return cometrpc.ResultBroadcastTx{}, a.RPCError
	}
	hash, _ := hex.DecodeString(a.Hash) // hex made by tx.HashOfSum
	if a.Code == 0 {
		return cometrpc.BroadcastAdmitted(hash), nil
	}
	return cometrpc.ResultBroadcastTx{Code: a.Code, Log: a.Log, Codespace: oracle.Codespace, Hash: hash}, nil
}

// BroadcastTxSync is the SUT's broadcast_tx_sync: the checks of
// ORACLE-SPEC 4.3 in order, then admission to the mempool. A full mempool
// and a cache hit are JSON-RPC errors −32603; everything else is a result
// with CheckTx's code. It records a checktx event (origin sut).
func (c *Chain) BroadcastTxSync(txBytes []byte) (cometrpc.ResultBroadcastTx, *cometrpc.RPCError) {
	sum := sha256.Sum256(txBytes)
	return c.broadcastSUT(txBytes, sum, tx.HashOfSum(sum), nil, nil, nil)
}

// BroadcastTxSyncRecorded is BroadcastTxSync for an in-process caller
// that has decoded, hashed and recorded the bytes already (a simulator
// records every broadcast it forwards), so that none of it is done twice:
// t must be what tx.Decode gave for them (nil: the chain decodes them
// itself; the checks are the same, as tx.Decode is a function of the
// bytes), sum their SHA-256, and rec what records.DecodeTxSummed gave
// with t and sum (its Hash is the hash). The checktx record (and the
// deliver record, if the tx is delivered) is a copy of rec with the
// signature check added, not a second record made from t. The chain never writes
// into rec or the lists it shares with the copies.
func (c *Chain) BroadcastTxSyncRecorded(txBytes []byte, t *tx.Tx, sum [32]byte, rec *history.Tx) (cometrpc.ResultBroadcastTx, *cometrpc.RPCError) {
	return c.BroadcastTxSyncRecordedIn(txBytes, t, sum, rec, nil)
}

// BroadcastTxSyncRecordedIn is BroadcastTxSyncRecorded with the checktx
// record and the answer's hash bytes written in room (nil: memory of the
// chain's own), memory the caller keeps with its own records of the call:
// the chain writes it once, before recording or answering, and never
// again.
func (c *Chain) BroadcastTxSyncRecordedIn(txBytes []byte, t *tx.Tx, sum [32]byte, rec *history.Tx, room *BroadcastRoom) (cometrpc.ResultBroadcastTx, *cometrpc.RPCError) {
	return c.broadcastSUT(txBytes, sum, rec.Hash, t, rec, room)
}

// BroadcastRoom is a caller's memory for what the chain makes of one of
// the SUT's broadcasts (BroadcastTxSyncRecordedIn).
type BroadcastRoom struct {
	Check history.CheckTx
	Hash  [32]byte
}

// broadcastSUT admits one of the SUT's txs: txBytes, their SHA-256 sum
// and hash, and (when the caller decoded and recorded them) their decoding
// t and record given. The answer is Result's, its hash the bytes of the
// key (the SHA-256 its Hash is the hex of) rather than the hex decoded
// again.
func (c *Chain) broadcastSUT(txBytes []byte, sum [32]byte, hash string, t *tx.Tx, given *history.Tx, room *BroadcastRoom) (cometrpc.ResultBroadcastTx, *cometrpc.RPCError) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.newSUTTx(txBytes, sum, hash)
	m.tx = t
	if t != nil {
		m.sut.given = given
	}
	if room != nil {
		m.sut.check, m.sut.hashIn = &room.Check, &room.Hash
	}
	a := c.admit(m)
	if a.RPCError != nil {
		return cometrpc.ResultBroadcastTx{}, a.RPCError
	}
	h := &m.sut.hash
	if m.sut.hashIn != nil {
		h = m.sut.hashIn
	}
	*h = m.sut.key
	if a.Code == 0 {
		return cometrpc.BroadcastAdmitted(h[:]), nil
	}
	return cometrpc.ResultBroadcastTx{Code: a.Code, Log: a.Log, Codespace: oracle.Codespace, Hash: h[:]}, nil
}

// sendOwn admits one of the chain's own txs: signed by key as account a at
// sequence seq, paying the minimum fee for OwnGasLimit. In the verifying
// mode it is signed for real, otherwise with the stand-in (D26).
func (c *Chain) sendOwn(origin history.Origin, key keys.PrivKey, a *account, seq uint64, msgs ...proto.Message) (*memTx, Admission, error) {
	m, err := c.ownTx(origin, key, a, seq, msgs...)
	if err != nil {
		return nil, Admission{}, err
	}
	return m, c.admit(m), nil
}

// ownTx makes one of the chain's own txs without building its bytes. The
// caller has checked what Build would refuse (strings that are not UTF-8),
// so that building later cannot fail.
func (c *Chain) ownTx(origin history.Origin, key keys.PrivKey, a *account, seq uint64, msgs ...proto.Message) (*memTx, error) {
	return c.ownTxIn(&ownMem{}, origin, key, a, seq, msgs...)
}

// ownTxIn is ownTx in mem (a caller that made the message in it).
func (c *Chain) ownTxIn(mem *ownMem, origin history.Origin, key keys.PrivKey, a *account, seq uint64, msgs ...proto.Message) (*memTx, error) {
	if len(msgs) == 0 {
		return nil, errors.New("a tx needs a message")
	}
	// The tx, its build recipe and its signer in one allocation, not three:
	// every peer submission the chain makes is one of these.
	var signer keys.Signer = &mem.stand
	mem.stand.Key = key
	if c.p.VerifySignatures {
		signer = &keys.KeySigner{Key: key}
	}
	if c.ownFee == "" {
		c.ownFee = c.minFee(OwnGasLimit).String()
		c.ownFeeCoins = []tx.Coin{{Denom: c.p.Denom, Amount: c.ownFee}}
		c.ownEnv = &tx.Envelope{ChainID: c.p.ChainID, GasLimit: OwnGasLimit, FeeAmount: c.ownFee, FeeDenom: c.p.Denom}
	}
	mem.own = ownTx{signer: signer, env: c.ownEnv, accountNumber: a.number, mem: mem}
	m := &mem.tx
	// The messages are copied (one fits here), so that the caller's
	// variadic list stays on its stack: a slice per peer submission.
	*m = memTx{origin: origin, msgs: append(mem.msgs[:0], msgs...), signAddr: tx.MsgSigner(msgs[0]), seq: seq, gas: OwnGasLimit,
		feeCoins: c.ownFeeCoins, own: &mem.own}
	if c.p.VerifySignatures {
		m.built() // a real signature is checked at admission
	}
	return m, nil
}

// newOwnMem is memory for one of the chain's own txs: a recycled peer
// submission's (Recycle), zeroed, if there is one.
func (c *Chain) newOwnMem() *ownMem {
	n := len(c.spareOwn)
	if n == 0 {
		return &ownMem{}
	}
	mem := c.spareOwn[n-1]
	c.spareOwn[n-1] = nil
	c.spareOwn = c.spareOwn[:n-1]
	*mem = ownMem{}
	return mem
}

// admit runs one admission attempt and records it.
func (c *Chain) admit(m *memTx) Admission {
	var out Admission
	switch {
	case c.full || len(c.mempool) >= c.p.MempoolSize:
		out.RPCError = cometrpc.ErrInternal(fmt.Sprintf("%s: number of txs %d (max: %d), total txs bytes %d (max: %d)",
			oracle.RPCErrMempoolFull, len(c.mempool), c.p.MempoolSize, c.mempoolBytes(), c.p.MaxTxsBytes))
	case !c.cacheNew(m):
		out.RPCError = cometrpc.ErrInternal(oracle.RPCErrTxInCache)
	default:
		c.checkNew(m, &out)
		if out.Code != 0 {
			c.uncache(m)
		} else {
			m.signer.checkSeq++
			c.mempool = append(c.mempool, m)
		}
	}
	c.recordCheck(m, out)
	if m.own == nil || !c.routine(m.origin, out.Admitted()) {
		out.Hash = m.txHash()
	}
	return out
}

// cacheNew puts m in the cache; false if it was there already (only the
// SUT's bytes can be).
func (c *Chain) cacheNew(m *memTx) bool {
	if m.own != nil {
		c.cache.pushOwn(m)
		return true
	}
	return c.cache.push(m.sut.key)
}

// uncache takes m out of the cache.
func (c *Chain) uncache(m *memTx) {
	if m.own != nil {
		c.cache.removeOwn(m)
		return
	}
	c.cache.remove(m.sut.key)
}

// mempoolBytes is the size of the mempool's txs (only the "mempool is
// full" text needs it, so it is computed then).
func (c *Chain) mempoolBytes() int {
	n := 0
	for _, m := range c.mempool {
		b, _, _ := m.built()
		n += len(b)
	}
	return n
}

// routine reports whether a peer's tx with this outcome is routine whose
// records are omitted (Config.OmitRoutine).
func (c *Chain) routine(origin history.Origin, ok bool) bool {
	return c.omitRoutine && origin == history.OriginPeer && ok
}

// checkNew is CheckTx for a new tx: decode (row 3), the stateless checks
// (row 4), the stateful ones (rows 5–8, and the signature in verifying
// mode), then an injected code (F11) replaces the answer for the SUT.
func (c *Chain) checkNew(m *memTx, out *Admission) {
	if m.sut != nil {
		m.sut.waived = m.sut.waived[:0]
	}
	err := c.decode(m)
	if err == nil {
		err = c.stateless(m)
	}
	if err == nil {
		err = c.stateful(m, true)
	}
	if m.origin == history.OriginSUT && c.injectLeft > 0 {
		c.injectLeft--
		err = c.injected(m)
		out.Injected = true
	}
	if err != nil {
		ce := asCodeError(err)
		out.Code, out.Log = ce.Code, ce.Log()
		return
	}
	if m.sut != nil {
		for _, w := range m.sut.waived {
			if c.waived == nil {
				c.waived = map[Waiver]int{}
			}
			c.waived[w]++
		}
	}
}

// Waiver is a check Params.AdmitUnverified let pass: the code and log the
// chain would have answered.
type Waiver struct {
	Code uint32
	Log  string
}

// WaiverCount is how many admitted txs a waiver let in.
type WaiverCount struct {
	Waiver
	Txs int
}

// Waived lists the checks Params.AdmitUnverified let pass in txs that were
// then admitted, the most frequent first.
func (c *Chain) Waived() []WaiverCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]WaiverCount, 0, len(c.waived))
	for w, n := range c.waived {
		out = append(out, WaiverCount{Waiver: w, Txs: n})
	}
	slices.SortFunc(out, func(a, b WaiverCount) int {
		if a.Txs != b.Txs {
			return b.Txs - a.Txs
		}
		if a.Code != b.Code {
			return int(a.Code) - int(b.Code)
		}
		return strings.Compare(a.Log, b.Log)
	})
	return out
}

// waive reports whether the failed check err of the SUT's tx m is let
// pass (Params.AdmitUnverified), and keeps it on m.
func (c *Chain) waive(m *memTx, err error) bool {
	if !c.p.AdmitUnverified || m.sut == nil || m.origin != history.OriginSUT {
		return false
	}
	ce := asCodeError(err)
	m.sut.waived = append(m.sut.waived, Waiver{Code: ce.Code, Log: ce.Log()})
	return true
}

// decode is row 3: the strict decode of the SUT's bytes, and fee coins
// the SDK can read.
func (c *Chain) decode(m *memTx) error {
	if m.own == nil {
		t := m.tx
		if t == nil {
			var err error
			if t, err = tx.Decode(m.bytes); err != nil {
				return err
			}
		}
		m.viewOf(t)
	}
	for _, coin := range m.feeCoins {
		if coin.Denom == "" {
			return oracle.Errorf(oracle.CodeTxDecode, "invalid fee coin %q: empty denom", coin.String())
		}
		if _, ok := c.parseAmount(coin.Amount); !ok {
			return oracle.Errorf(oracle.CodeTxDecode, "invalid fee coin amount %q", coin.Amount)
		}
	}
	return nil
}

// stateless is row 4: ValidateBasic, and one signer with one signature
// (every message signed by the first one's signer; the chain's own txs
// are made so).
func (c *Chain) stateless(m *memTx) error {
	t := m.tx
	if t == nil {
		t = &tx.Tx{Msgs: m.msgs}
	}
	if err := tx.ValidateBasic(t); err != nil && !c.waive(m, err) {
		return err
	}
	for _, msg := range m.msgs[1:] {
		if tx.MsgSigner(msg) != m.signAddr {
			if err := oracle.Errorf(oracle.CodeUnauthorized, "wrong number of signers; expected 1, got 2"); !c.waive(m, err) {
				return err
			}
			break
		}
	}
	if m.own == nil {
		if n := len(m.tx.AuthInfo.GetSignerInfos()); n != 1 {
			if err := oracle.Errorf(oracle.CodeUnauthorized, "wrong number of signers; expected 1, got %d", n); !c.waive(m, err) {
				return err
			}
		}
		if n := len(m.tx.Raw.GetSignatures()); n != 1 {
			if err := oracle.Errorf(oracle.CodeUnauthorized, "wrong number of signatures; expected 1, got %d", n); !c.waive(m, err) {
				return err
			}
		}
	}
	// No allocation of its own for a tx that pays in one coin of the
	// denom (every tx checked has a fee, and that is the common one): the
	// parsed amount itself, which no one writes to.
	m.fee = nil
	for _, coin := range m.feeCoins {
		if coin.Denom == c.p.Denom {
			amount, _ := c.parseAmount(coin.Amount) // checked by decode
			if m.fee == nil {
				m.fee = amount
			} else {
				m.fee = new(big.Int).Add(m.fee, amount)
			}
		}
	}
	if m.fee == nil {
		m.fee = new(big.Int)
	}
	return nil
}

// stateful is rows 5–8 against the check state: the fee covers the minimum
// gas price, the gas limit covers the gas required, the signer exists and
// can pay, and the sequence is the check sequence; with verify (not on a
// recheck) and the verifying mode on, the signature verifies.
func (c *Chain) stateful(m *memTx, verify bool) error {
	if need := c.minFee(m.gas); m.fee.Cmp(need) < 0 {
		return oracle.Errorf(oracle.CodeInsufficientFee, "insufficient fees; got: %s required: %s%s",
			feeText(m.feeCoins), need, c.p.Denom)
	}
	if m.gas < c.p.GasRequired {
		return oracle.Errorf(oracle.CodeOutOfGas, "out of gas in location: ReadFlat; gasWanted: %d, gasUsed: %d",
			m.gas, c.p.GasRequired)
	}
	a := c.byAddr[m.signAddr]
	if a == nil {
		return oracle.Errorf(oracle.CodeInsufficientFunds, "account %s does not exist", m.signAddr)
	}
	m.signer = a
	for _, coin := range m.feeCoins {
		if coin.Denom != c.p.Denom {
			return oracle.Errorf(oracle.CodeInsufficientFunds, "spendable balance 0%s is smaller than %s", coin.Denom, coin)
		}
	}
	if a.balance.Cmp(m.fee) < 0 {
		return oracle.Errorf(oracle.CodeInsufficientFunds, "spendable balance %s%s is smaller than %s%s",
			a.balance, c.p.Denom, m.fee, c.p.Denom)
	}
	if m.seq != a.checkSeq {
		return sequenceMismatch(a.checkSeq, m.seq)
	}
	if verify && c.p.VerifySignatures {
		_, _, t := m.built()
		if t == nil {
			return oracle.Errorf(oracle.CodeUnauthorized, "tx could not be signed")
		}
		if err := tx.VerifySignature(t, c.p.ChainID, a.number); err != nil && !c.waive(m, err) {
			return err
		}
	}
	return nil
}

// injected is the answer F11 injects: the code with the log a real chain
// gives for it.
func (c *Chain) injected(m *memTx) error {
	code := c.injectCode
	switch code {
	case oracle.CodeWrongSequence:
		return sequenceMismatch(m.seq+1, m.seq)
	case oracle.CodeOutOfGas:
		return oracle.Errorf(code, "out of gas in location: ReadFlat; gasWanted: %d, gasUsed: %d", m.gas, m.gas+1)
	case oracle.CodeInsufficientFee:
		if m.fee == nil {
			m.fee = new(big.Int)
		}
		return oracle.Errorf(code, "insufficient fees; got: %s required: %s%s", feeText(m.feeCoins),
			new(big.Int).Add(m.fee, big.NewInt(1)), c.p.Denom)
	case oracle.CodeInsufficientFunds:
		return oracle.Errorf(code, "spendable balance 0%s is smaller than %s%s", c.p.Denom, m.fee, c.p.Denom)
	case oracle.CodeInvalidRequest:
		return oracle.Errorf(code, "injected rejection")
	}
	return oracle.Errorf(code, "injected")
}

// sequenceMismatch is code 32 with the SDK's log
// (oracle.SequenceMismatchLog).
func sequenceMismatch(expected, got uint64) *oracle.CodeError {
	return oracle.Errorf(oracle.CodeWrongSequence, "account sequence mismatch, expected %d, got %d", expected, got)
}

// parseAmount reads a coin amount: a non-negative decimal integer.
// Amounts repeat (every tx of a daemon pays the same fee), so they are
// parsed once.
func (c *Chain) parseAmount(s string) (*big.Int, bool) {
	if v, ok := c.feeAmounts[s]; ok {
		return v, true
	}
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return nil, false
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return nil, false
	}
	if len(c.feeAmounts) >= 256 {
		clear(c.feeAmounts)
	}
	c.feeAmounts[s] = v
	return v, true
}

// minFee is ceil(min_gas_price × gas).
func (c *Chain) minFee(gas uint64) *big.Int {
	if v, ok := c.requiredFee[gas]; ok {
		return v
	}
	r := new(big.Rat).Mul(c.minGasPrice, new(big.Rat).SetUint64(gas))
	q, rem := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if rem.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	if len(c.requiredFee) >= 256 {
		clear(c.requiredFee)
	}
	c.requiredFee[gas] = q
	return q
}

func feeText(coins []tx.Coin) string {
	parts := make([]string, len(coins))
	for i, coin := range coins {
		parts[i] = coin.String()
	}
	return strings.Join(parts, ",")
}

// recordCheck records an admission attempt.
func (c *Chain) recordCheck(m *memTx, out Admission) {
	if c.sink == nil || c.routine(m.origin, out.Admitted()) {
		return
	}
	var rec *history.CheckTx
	if m.sut != nil && m.sut.check != nil {
		rec, m.sut.check = m.sut.check, nil
	} else {
		rec = new(history.CheckTx)
	}
	*rec = history.CheckTx{Origin: m.origin, Tx: c.txRecord(m), Code: out.Code, Log: out.Log, Injected: out.Injected,
		Mempool: len(c.mempool)}
	if out.RPCError != nil {
		rec.RPCError = out.RPCError.Data
	}
	c.record(c.now(), history.Event{Kind: history.KindCheckTx, CheckTx: rec})
}

// txRecord is the record form of m's tx, made once. The SUT's txs also get
// their signature checked against the signer's account number (O17).
func (c *Chain) txRecord(m *memTx) history.Tx {
	if m.rec != nil {
		return *m.rec
	}
	txBytes, hash, t := m.built()
	if t == nil && m.own == nil {
		if d, err := tx.Decode(txBytes); err == nil {
			m.tx, t = d, d
		}
	}
	if t == nil {
		rec := records.DecodeTx(txBytes)
		m.keepRecord(rec)
		return rec
	}
	var rec history.Tx
	if m.sut != nil && m.sut.given != nil {
		rec = *m.sut.given
	} else {
		rec = records.TxOfHashed(t, hash)
	}
	if m.origin == history.OriginSUT {
		if a := c.byAddr[rec.Signer]; a != nil {
			rec.Sig = history.SigInvalid
			if pub, ok := a.signingKey(rec.PubKey); ok {
				rec.Sig = records.CheckSigMemo(t, c.p.ChainID, a.number, pub, c.standIn)
			}
			if rec.PubKey == a.sigKeyHex {
				rec.PubKey = a.sigKeyHex // one copy for all the account's records
			}
		}
	}
	// A long run keeps many records of few accounts: they share the
	// accounts' address strings (the lists of a given record are the
	// caller's, not the chain's to write).
	rec.Signer = c.intern(rec.Signer)
	if m.sut == nil || m.sut.given == nil {
		for i := range rec.Msgs {
			rec.Msgs[i].Signer = c.intern(rec.Msgs[i].Signer)
			rec.Msgs[i].Provider = c.intern(rec.Msgs[i].Provider)
		}
	}
	m.keepRecord(rec)
	return rec
}

// keepRecord keeps rec as m's record form, in m's room if it has one.
func (m *memTx) keepRecord(rec history.Tx) {
	if m.sut != nil {
		m.sut.rec = rec
		m.rec = &m.sut.rec
		return
	}
	m.rec = new(history.Tx) // not &rec: rec would move to the heap on every call
	*m.rec = rec
}

// intern is s as the chain's own copy of that account address, if it is
// one.
func (c *Chain) intern(s string) string {
	if a := c.byAddr[s]; a != nil {
		return a.address
	}
	return s
}

// signingKey parses a public key (hex of the compressed point) for a
// signature check and reports whether it is this account's key (its
// address is the account's), keeping the last answer: parsing a point and
// deriving its address cost more than the check itself.
func (a *account) signingKey(pubHex string) (keys.PubKey, bool) {
	if pubHex != a.sigKeyHex || !a.sigKeyChecked {
		a.sigKeyHex, a.sigKey, a.sigKeyOK, a.sigKeyChecked = pubHex, keys.PubKey{}, false, true
		raw, err := hex.DecodeString(pubHex)
		if err != nil {
			return keys.PubKey{}, false
		}
		pub, err := keys.ParsePubKey(raw)
		if err != nil {
			return keys.PubKey{}, false
		}
		a.sigKey, a.sigKeyOK = pub, pub.Address() == a.address
	}
	return a.sigKey, a.sigKeyOK
}
