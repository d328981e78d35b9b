package chain

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/wire/keys"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
	"github.com/wsconverge/converge/wire/records"
	"github.com/wsconverge/converge/wire/tx"
)

// ErrNoModerator is returned by the moderator's actions on a chain built
// without a moderator key.
var ErrNoModerator = errors.New("chain has no moderator key")

// OwnGasLimit is the gas limit of the chain's own txs (moderator, peers,
// intruder): a daemon's default.
const OwnGasLimit = oracle.DefaultGasLimit

// Register sends the moderator's MsgRegisterOracleRequestDoc for doc (its
// request_id and nonce are ignored: the chain assigns the id, and the new
// doc starts at nonce 0). It records an op event and the admission; the
// doc that results is in the block's deliver record.
func (c *Chain) Register(doc *oraclev1.OracleRequestDoc) (Admission, error) {
	return c.moderate(history.OpRegister, 0, tx.RegisterMsg, doc, "")
}

// Update sends the moderator's MsgUpdateOracleRequestDoc: doc names the
// request, and its non-zero period, status, account_list, quorum,
// endpoints and aggregation_rule replace the stored ones (ORACLE-SPEC 4.4);
// doc.nonce travels in the message, and the chain never applies it.
func (c *Chain) Update(doc *oraclev1.OracleRequestDoc, reason string) (Admission, error) {
	return c.moderate(history.OpUpdate, doc.GetRequestId(), nil, doc, reason)
}

// Disable sets request r's status to DISABLED, for good.
func (c *Chain) Disable(r uint64, reason string) (Admission, error) {
	doc := &oraclev1.OracleRequestDoc{RequestId: r, Status: oraclev1.RequestStatus_REQUEST_STATUS_DISABLED}
	return c.moderate(history.OpDisable, r, nil, doc, reason)
}

// BogusNonceUpdate sends an update of request r that changes nothing but
// carries nonce in its message (D10: a daemon must never use it); the
// update event echoes it.
func (c *Chain) BogusNonceUpdate(r, nonce uint64) (Admission, error) {
	doc := &oraclev1.OracleRequestDoc{RequestId: r, Nonce: nonce}
	return c.moderate(history.OpBogusUpdate, r, nil, doc, "bogus nonce")
}

// moderate builds, records and admits one moderator tx: a register when
// register is set, an update otherwise.
func (c *Chain) moderate(action history.OpAction, r uint64,
	register func(string, *oraclev1.OracleRequestDoc) *oraclev1.MsgRegisterOracleRequestDoc,
	doc *oraclev1.OracleRequestDoc, reason string) (Admission, error) {
	if doc == nil {
		return Admission{}, fmt.Errorf("%s: no request doc", action)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.moderator == nil {
		return Admission{}, fmt.Errorf("%s: %w", action, ErrNoModerator)
	}
	var msg proto.Message
	if register != nil {
		msg = register(c.moderator.address, proto.Clone(doc).(*oraclev1.OracleRequestDoc))
	} else {
		msg = tx.UpdateMsg(c.moderator.address, proto.Clone(doc).(*oraclev1.OracleRequestDoc), reason)
	}
	if _, err := tx.Marshal(msg); err != nil { // a string that is not UTF-8
		return Admission{}, fmt.Errorf("%s: %w", action, err)
	}
	seq := c.moderator.checkSeq
	m, err := c.ownTx(history.OriginModerator, c.modKey, c.moderator, seq, msg)
	if err != nil {
		return Admission{}, fmt.Errorf("%s: %w", action, err)
	}
	c.record(c.now(), history.Event{Kind: history.KindOp, Op: &history.Op{Action: action, RequestID: r,
		Doc: records.DocFromProto(doc), Reason: reason, Hash: m.txHash(), Sequence: seq}})
	return c.admit(m), nil
}

// Peer is a peer provider: an account of its own that submits through the
// mempool with its own sequence.
type Peer struct {
	Address string
	key     keys.PrivKey
}

// AddPeer makes key's account a peer provider, creating and funding it
// (nil balance: DefaultBalance) if the chain does not know it yet.
func (c *Chain) AddPeer(key keys.PrivKey, balance *big.Int) (*Peer, error) {
	if key.IsZero() {
		return nil, fmt.Errorf("peer: %w", keys.ErrNoKey)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	addr := key.PubKey().Address()
	if c.byAddr[addr] == nil {
		if _, err := c.addAccount(addr, balance); err != nil {
			return nil, fmt.Errorf("peer: %w", err)
		}
	}
	return &Peer{Address: addr, key: key}, nil
}

// PeerSubmit is peer p's action for the next round of request r
// (ORACLE-SPEC 4.7), with value as raw_data: prompt and late both submit
// for (r, C+1) (the caller decides when); absent sends nothing;
// wrong-nonce submits for (r, C), a round already complete, which fails in
// the block; duplicate submits for (r, C+1) twice, in two txs with
// consecutive sequences. It records a peer event with the txs' hashes,
// then each admission, and returns the admissions in order.
func (c *Chain) PeerSubmit(p *Peer, r uint64, behaviour history.PeerBehaviour, value string) ([]Admission, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.byAddr[p.Address]
	if a == nil {
		return nil, fmt.Errorf("peer %s: unknown account", p.Address)
	}
	var completed uint64
	if st := c.docState(r); st != nil {
		completed = st.doc.GetNonce()
	}
	if !utf8.ValidString(value) {
		return nil, fmt.Errorf("peer %s: value %q is not UTF-8", p.Address, value)
	}
	nonce, count := completed+1, 1
	switch behaviour {
	case history.PeerPrompt, history.PeerLate:
	case history.PeerAbsent:
		count = 0
	case history.PeerWrongNonce:
		nonce = completed
	case history.PeerDuplicate:
		count = 2
	default:
		return nil, fmt.Errorf("peer %s: unknown behaviour %q", p.Address, behaviour)
	}
	var buf [2]*memTx // a duplicate is the most a behaviour sends
	txs := buf[:0]
	if count > len(buf) {
		txs = make([]*memTx, 0, count)
	}
	txs = txs[:count]
	probe := history.Peer{Behaviour: behaviour}
	omit := c.omitRoutine && history.Routine(&history.Event{Kind: history.KindPeer, Peer: &probe})
	var rec *history.Peer
	if !omit {
		rec = &history.Peer{Provider: p.Address, Behaviour: behaviour, RequestID: r, Nonce: nonce, Value: value}
	}
	var st *docState
	if st = c.docState(r); st == nil {
		st = &docState{} // no request: nothing to remember the signature by
	}
	sig := st.submissionSignature(r, nonce, value)
	for i := range txs {
		// tx.SubmissionMsg's message, in the tx's memory, with the round's
		// signature made once for all its peers.
		mem := c.newOwnMem()
		mem.set = oraclev1.SubmitDataSet{RequestId: r, Nonce: nonce, RawData: value, Provider: p.Address, Signature: sig}
		mem.submit = oraclev1.MsgSubmitOracleData{AuthorityAddress: p.Address, DataSet: &mem.set}
		m, err := c.ownTxIn(mem, history.OriginPeer, p.key, a, a.checkSeq+uint64(i), &mem.submit)
		if err != nil {
			return nil, fmt.Errorf("peer %s: %w", p.Address, err)
		}
		txs[i] = m
		if !omit {
			rec.Hashes = append(rec.Hashes, m.txHash())
		}
	}
	if !omit {
		c.record(c.now(), history.Event{Kind: history.KindPeer, Peer: rec})
	}
	var out []Admission
	if count == 1 {
		out = txs[0].own.adm[:] // the common answer lives with its tx
	} else {
		out = make([]Admission, count)
	}
	for i, m := range txs {
		out[i] = c.admit(m)
	}
	return out, nil
}

// IntruderRequestID is the request the F9 intruder submits for: none
// exists, so its tx fails in the block after paying its fee and using its
// sequence.
const IntruderRequestID = math.MaxUint64

// Intrude is the same-key intruder of F9: a tx signed with the SUT's key,
// at the SUT's next check sequence, sent by the harness rather than the
// SUT. It has no oracle effect (its submission names a request that does
// not exist) but consumes a sequence, so the SUT's next broadcast at that
// sequence gets code 32.
func (c *Chain) Intrude(key keys.PrivKey) (Admission, error) {
	if key.IsZero() {
		return Admission{}, fmt.Errorf("intruder: %w", keys.ErrNoKey)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	addr := key.PubKey().Address()
	a := c.byAddr[addr]
	if a == nil {
		return Admission{}, fmt.Errorf("intruder %s: unknown account", addr)
	}
	msg := &oraclev1.MsgSubmitOracleData{AuthorityAddress: addr, DataSet: &oraclev1.SubmitDataSet{
		RequestId: IntruderRequestID, Nonce: 1, RawData: "0", Provider: addr, Signature: "intruder"}}
	_, adm, err := c.sendOwn(history.OriginIntruder, key, a, a.checkSeq, msg)
	if err != nil {
		return Admission{}, fmt.Errorf("intruder: %w", err)
	}
	return adm, nil
}

// submissionSignature is oracle.SubmissionSignature(r, nonce, value) for
// d's request r, remembered for the last nonce and value asked: the peers
// of a round all submit the round's value, each signing it alike.
func (d *docState) submissionSignature(r, nonce uint64, value string) string {
	if d.sig == "" || d.sigNonce != nonce || d.sigValue != value {
		d.sigNonce, d.sigValue = nonce, value
		d.sig = oracle.SubmissionSignature(r, nonce, value)
	}
	return d.sig
}
