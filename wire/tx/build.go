package tx

import (
	"crypto/sha256"
	"fmt"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/wire/keys"
	basev1beta1 "github.com/wsconverge/converge/wire/proto/cosmos/base/v1beta1"
	signingv1beta1 "github.com/wsconverge/converge/wire/proto/cosmos/tx/signing/v1beta1"
	txv1beta1 "github.com/wsconverge/converge/wire/proto/cosmos/tx/v1beta1"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
)

// TypeURLPubKey is the type URL of an eth_secp256k1 public key.
const TypeURLPubKey = "/cosmos.evm.crypto.v1.ethsecp256k1.PubKey"

var marshalOpts = proto.MarshalOptions{Deterministic: true}

// Marshal is the canonical (deterministic) protobuf encoding of m, the one
// every byte on the wire uses.
func Marshal(m proto.Message) ([]byte, error) {
	b, err := marshalOpts.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("marshal %s: %w", m.ProtoReflect().Descriptor().FullName(), err)
	}
	return b, nil
}

// TypeURL is "/" + the message's full protobuf name.
func TypeURL(m proto.Message) string {
	return "/" + string(m.ProtoReflect().Descriptor().FullName())
}

// Pack wraps m in an Any with its type URL and canonical bytes.
func Pack(m proto.Message) (*anypb.Any, error) {
	if s, ok := m.(*oraclev1.MsgSubmitOracleData); ok {
		if v, ok := marshalSubmit(s); ok {
			return &anypb.Any{TypeUrl: oracle.TypeURLSubmit, Value: v}, nil
		}
	}
	b, err := Marshal(m)
	if err != nil {
		return nil, err
	}
	return &anypb.Any{TypeUrl: TypeURL(m), Value: b}, nil
}

// marshalSubmit is Marshal of a submission written field by field, as the
// envelope is: a build per daemon submission attempt spent a quarter of
// its time in the generic marshaller. It declines (false) what the generic
// path must judge: unknown fields or strings that are not UTF-8.
// TestMarshalSubmitIsTheLibrarys compares the two.
func marshalSubmit(m *oraclev1.MsgSubmitOracleData) ([]byte, bool) {
	ds := m.GetDataSet()
	b, ok := appendMarshalSubmit(make([]byte, 0, len(m.GetAuthorityAddress())+len(ds.GetRawData())+
		len(ds.GetProvider())+len(ds.GetSignature())+40), m)
	if !ok {
		return nil, false
	}
	return b, true
}

// appendMarshalSubmit is marshalSubmit appending to b (b unchanged when it
// declines).
func appendMarshalSubmit(b []byte, m *oraclev1.MsgSubmitOracleData) ([]byte, bool) {
	return appendSubmitChecked(b, m, true)
}

// appendSubmitChecked is appendMarshalSubmit; without unknown, m is known
// to carry no unknown fields (BuildSubmission made it), and the check,
// which stores the message's reflection info on first use, is skipped.
func appendSubmitChecked(b []byte, m *oraclev1.MsgSubmitOracleData, unknown bool) ([]byte, bool) {
	ds := m.GetDataSet()
	if (unknown && len(m.ProtoReflect().GetUnknown()) > 0) || !utf8.ValidString(m.GetAuthorityAddress()) {
		return b, false
	}
	var inner []byte
	var buf [scratchSize]byte // a daemon's data set fits
	if ds != nil {
		if (unknown && len(ds.ProtoReflect().GetUnknown()) > 0) || !utf8.ValidString(ds.GetRawData()) ||
			!utf8.ValidString(ds.GetProvider()) || !utf8.ValidString(ds.GetSignature()) {
			return b, false
		}
		inner = appendUint(buf[:0], 1, ds.GetRequestId())
		inner = appendUint(inner, 2, ds.GetNonce())
		inner = appendString(inner, 3, ds.GetRawData())
		inner = appendString(inner, 4, ds.GetProvider())
		inner = appendString(inner, 5, ds.GetSignature())
	}
	return appendSubmit(b, m, inner), true
}

// appendSubmit appends a submission's bytes given its data set's (inner).
func appendSubmit(b []byte, m *oraclev1.MsgSubmitOracleData, inner []byte) []byte {
	b = appendString(b, 1, m.GetAuthorityAddress())
	if m.GetDataSet() != nil {
		b = appendMessage(b, 2, inner)
	}
	return b
}

// SubmissionMsg is the daemon's submission for one result (ORACLE-SPEC 3.5):
// authority_address and provider are self, and signature is the D24
// stand-in.
func SubmissionMsg(self string, requestID, nonce uint64, rawData string) *oraclev1.MsgSubmitOracleData {
	// The message and its data set in one allocation: the daemon and every
	// simulated peer make one per round.
	mem := &submissionParts{}
	mem.fill(self, requestID, nonce, rawData)
	return &mem.msg
}

// submissionParts are a submission and its data set, allocated together.
type submissionParts struct {
	msg oraclev1.MsgSubmitOracleData
	ds  oraclev1.SubmitDataSet
}

func (m *submissionParts) fill(self string, requestID, nonce uint64, rawData string) {
	m.ds.RequestId, m.ds.Nonce, m.ds.RawData, m.ds.Provider = requestID, nonce, rawData, self
	m.ds.Signature = oracle.SubmissionSignature(requestID, nonce, rawData)
	m.msg.AuthorityAddress, m.msg.DataSet = self, &m.ds
}

// RegisterMsg is the moderator's registration of a doc.
func RegisterMsg(moderator string, doc *oraclev1.OracleRequestDoc) *oraclev1.MsgRegisterOracleRequestDoc {
	return &oraclev1.MsgRegisterOracleRequestDoc{ModeratorAddress: moderator, RequestDoc: doc}
}

// UpdateMsg is the moderator's update of a doc.
func UpdateMsg(moderator string, doc *oraclev1.OracleRequestDoc, reason string) *oraclev1.MsgUpdateOracleRequestDoc {
	return &oraclev1.MsgUpdateOracleRequestDoc{ModeratorAddress: moderator, RequestDoc: doc, Reason: reason}
}

// Envelope is everything a tx carries besides its messages.
type Envelope struct {
	ChainID       string
	AccountNumber uint64
	Sequence      uint64 // signer_infos[0].sequence
	GasLimit      uint64
	// FeeAmount is the fee in FeeDenom as a decimal integer (oracle.FeeAmount);
	// empty for no fee coin at all.
	FeeAmount string
	FeeDenom  string // empty → agxn
	Memo      string // the daemon leaves it empty
}

// Built is a signed transaction.
type Built struct {
	TxBytes       []byte // the TxRaw, as broadcast_tx_sync carries it
	Hash          string // Hash(TxBytes)
	BodyBytes     []byte
	AuthInfoBytes []byte
	SignBytes     []byte // the SignDoc that was signed
	// Tx is the transaction as Decode(TxBytes) returns it, without decoding
	// it again: a simulated chain admits its own peers' transactions
	// through it (a strict decode costs several times the build). Its Msgs
	// are the messages given to Build.
	Tx *Tx
}

// Build assembles and signs a tx (ORACLE-SPEC 3.5, 6.6): a TxBody with the
// messages (memo as given, timeout_height 0), an AuthInfo with one
// SignerInfo (the signer's eth_secp256k1 public key, SIGN_MODE_DIRECT, the
// sequence) and the fee, and one signature over the SignDoc. The same inputs
// give the same bytes.
func Build(signer keys.Signer, env Envelope, msgs ...proto.Message) (Built, error) {
	// Every message of the tx in one allocation: a daemon builds one per
	// submission attempt and a simulated chain one per peer submission.
	return build(&builtParts{}, signer, env, msgs, true)
}

// BuildSubmission is Build(signer, env, SubmissionMsg(self, requestID,
// nonce, rawData)), the same bytes, with the message made in the tx's own
// memory: the daemon's tx for one result.
func BuildSubmission(signer keys.Signer, env Envelope, self string, requestID, nonce uint64, rawData string) (Built, error) {
	p := &builtParts{}
	p.sub.fill(self, requestID, nonce, rawData)
	p.msgList[0] = &p.sub.msg
	return build(p, signer, env, p.msgList[:1], false)
}

// build is Build into p; unknown says whether the first message, when a
// submission, may carry unknown fields (false: BuildSubmission made it).
func build(p *builtParts, signer keys.Signer, env Envelope, msgs []proto.Message, unknown bool) (Built, error) {
	// Every encoding the tx carries (a submission's bytes, the key, the
	// body, the auth info, the sign doc and the raw tx) is written into
	// one array, each part a slice of it capped at its end: seven
	// allocations per build were one.
	a := arena{b: make([]byte, 0, arenaSize(env, msgs))}
	body := &p.body
	body.Memo = env.Memo
	if len(msgs) == 1 {
		body.Messages = p.msgs[:0]
	}
	// submission: the tx is one submission written field by field, the
	// SUT's tx that a MemoSigner's memo remembers (Decode of its bytes
	// gives what Tx holds).
	submission := false
	for i, m := range msgs {
		if s, ok := m.(*oraclev1.MsgSubmitOracleData); ok && i == 0 {
			start := len(a.b)
			if b, ok := appendSubmitChecked(a.b, s, unknown); ok {
				a.b = b
				p.any.TypeUrl, p.any.Value = oracle.TypeURLSubmit, a.from(start)
				body.Messages = append(body.Messages, &p.any)
				submission = len(msgs) == 1
				continue
			}
		}
		packed, err := Pack(m)
		if err != nil {
			return Built{}, fmt.Errorf("build tx: %w", err)
		}
		body.Messages = append(body.Messages, packed)
	}
	for _, f := range []string{env.ChainID, env.FeeAmount, env.FeeDenom, env.Memo} {
		if !utf8.ValidString(f) {
			return Built{}, fmt.Errorf("build tx: envelope string %q is not UTF-8", f)
		}
	}
	pubKey := signer.PubKey()
	if pubKey.IsZero() {
		return Built{}, fmt.Errorf("build tx: %w", keys.ErrNoKey)
	}
	pub := &p.pub
	start := len(a.b)
	a.b = pubKey.AppendBytes(append(a.b, byte(fieldPubKeyKey<<3|2), keys.PubKeySize))
	pub.TypeUrl, pub.Value = TypeURLPubKey, a.from(start)
	fee := &p.fee
	fee.GasLimit = env.GasLimit
	if env.FeeAmount != "" {
		denom := env.FeeDenom
		if denom == "" {
			denom = oracle.Denom
		}
		p.coin.Denom, p.coin.Amount = denom, env.FeeAmount
		p.coins[0] = &p.coin
		fee.Amount = p.coins[:]
	}
	p.single.Mode = signingv1beta1.SignMode_SIGN_MODE_DIRECT
	p.modeSingle.Single = &p.single
	p.mode.Sum = &p.modeSingle
	p.signer.PublicKey, p.signer.ModeInfo, p.signer.Sequence = pub, &p.mode, env.Sequence
	p.signers[0] = &p.signer
	auth := &p.auth
	auth.SignerInfos, auth.Fee = p.signers[:], fee
	var b Built
	start = len(a.b)
	a.b = appendTxBody(a.b, body)
	b.BodyBytes = a.from(start)
	start = len(a.b)
	a.b = appendAuthInfo(a.b, auth)
	b.AuthInfoBytes = a.from(start)
	start = len(a.b)
	a.b = appendSignDoc(a.b, b.BodyBytes, b.AuthInfoBytes, env.ChainID, env.AccountNumber)
	b.SignBytes = a.from(start)
	start = len(a.b)
	var err error
	if a.b, err = appendSign(signer, a.b, b.SignBytes); err != nil {
		return Built{}, fmt.Errorf("build tx: sign: %w", err)
	}
	raw := &p.raw
	p.sigs[0] = a.from(start)
	raw.BodyBytes, raw.AuthInfoBytes, raw.Signatures = b.BodyBytes, b.AuthInfoBytes, p.sigs[:]
	start = len(a.b)
	a.b = appendTxRaw(a.b, raw)
	b.TxBytes = a.from(start)
	sum := sha256.Sum256(b.TxBytes)
	b.Hash = HashOfSum(sum)
	// The messages are copied into the parts (for the usual single one), so
	// that the caller's variadic slice stays on its stack.
	p.tx = Tx{Bytes: b.TxBytes, Raw: raw, Body: body, AuthInfo: auth, Msgs: append(p.msgList[:0:len(p.msgList)], msgs...)}
	b.Tx = &p.tx
	if ms, ok := signer.(MemoSigner); ok && submission {
		p.memo = memoEntry{t: b.Tx, sum: sum, hash: b.Hash}
		ms.Memo.remember(&p.memo)
	}
	return b, nil
}

// appendSign appends signer's signature of signDoc to b: the stand-in
// signer (the simulator's, also under a MemoSigner) writes it there
// directly; any other signer's Sign is copied. The types are matched
// exactly, not by a method set, so a type that embeds StandInSigner and
// signs otherwise is signed with by its own Sign.
func appendSign(signer keys.Signer, b, signDoc []byte) ([]byte, error) {
	switch s := signer.(type) {
	case keys.StandInSigner:
		return s.AppendSign(b, signDoc)
	case MemoSigner:
		return appendSign(s.Signer, b, signDoc)
	}
	sig, err := signer.Sign(signDoc)
	if err != nil {
		return b, err
	}
	return append(b, sig...), nil
}

// arena is the array a build writes its encodings into.
type arena struct{ b []byte }

// from is what was written since start, capped so that appending to it
// never writes over what follows.
func (a *arena) from(start int) []byte { return a.b[start:len(a.b):len(a.b)] }

// arenaSize is room for a build's encodings: the body and the auth info
// are written three times (alone, in the sign doc, in the raw tx), the
// signature twice (alone, in the raw tx). Too little only costs a copy.
func arenaSize(env Envelope, msgs []proto.Message) int {
	n := 8
	for _, m := range msgs {
		if s, ok := m.(*oraclev1.MsgSubmitOracleData); ok {
			ds := s.GetDataSet()
			n += len(s.GetAuthorityAddress()) + len(ds.GetProvider()) + len(ds.GetRawData()) + len(ds.GetSignature()) +
				len(oracle.TypeURLSubmit) + 12
		} else {
			n += 512
		}
	}
	auth := len(TypeURLPubKey) + keys.PubKeySize + len(env.FeeAmount) + max(len(env.FeeDenom), len(oracle.Denom)) + 32
	return n + 3*(n+len(env.Memo)+auth) + len(env.ChainID) + 2*keys.SignatureSize + 48
}

// builtParts are the messages of a built tx, allocated together.
type builtParts struct {
	body       txv1beta1.TxBody
	msgs       [1]*anypb.Any
	msgList    [1]proto.Message // Tx.Msgs, for one message
	sub        submissionParts  // BuildSubmission's message
	any        anypb.Any        // the first message, when a submission
	pub        anypb.Any
	fee        txv1beta1.Fee
	coin       basev1beta1.Coin
	coins      [1]*basev1beta1.Coin
	single     txv1beta1.ModeInfo_Single
	modeSingle txv1beta1.ModeInfo_Single_
	mode       txv1beta1.ModeInfo
	signer     txv1beta1.SignerInfo
	signers    [1]*txv1beta1.SignerInfo
	auth       txv1beta1.AuthInfo
	raw        txv1beta1.TxRaw
	sigs       [1][]byte
	tx         Tx
	memo       memoEntry // the build as a Memo remembers it
}

// SignBytes is the canonical SignDoc that SIGN_MODE_DIRECT signs. It
// never fails; the error is kept for callers written against a marshaller.
func SignBytes(bodyBytes, authInfoBytes []byte, chainID string, accountNumber uint64) ([]byte, error) {
	return encodeSignDoc(bodyBytes, authInfoBytes, chainID, accountNumber), nil
}

// AppendSignBytes appends SignBytes' bytes to b (which it cannot fail to
// encode): a checker of many signatures encodes each into an array of its
// own.
func AppendSignBytes(b, bodyBytes, authInfoBytes []byte, chainID string, accountNumber uint64) []byte {
	return appendSignDoc(b, bodyBytes, authInfoBytes, chainID, accountNumber)
}

// Hash is the CometBFT tx hash: the upper-case hex SHA-256 of the TxRaw
// bytes.
func Hash(txBytes []byte) string { return HashOfSum(sha256.Sum256(txBytes)) }

// HashOfSum is the tx hash of bytes whose SHA-256 is sum: upper-case hex,
// built in one allocation (a hash is made for every tx a run sees).
func HashOfSum(sum [32]byte) string {
	// Upper-case digits written directly (hex.Encode then a pass to upper
	// case was 1 % of the oracle world's day).
	const digits = "0123456789ABCDEF"
	var buf [2 * sha256.Size]byte
	for i, c := range sum {
		buf[2*i], buf[2*i+1] = digits[c>>4], digits[c&0x0f]
	}
	return string(buf[:])
}
