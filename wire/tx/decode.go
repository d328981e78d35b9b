package tx

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/wsconverge/converge/wire/keys"
	"github.com/wsconverge/converge/wire/proto/cosmos/evm/crypto/v1/ethsecp256k1"
	txv1beta1 "github.com/wsconverge/converge/wire/proto/cosmos/tx/v1beta1"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
)

// msgTypes are the messages a TxBody may carry, by type URL.
var msgTypes = map[string]func() proto.Message{
	TypeURL(&oraclev1.MsgSubmitOracleData{}):         func() proto.Message { return &oraclev1.MsgSubmitOracleData{} },
	TypeURL(&oraclev1.MsgRegisterOracleRequestDoc{}): func() proto.Message { return &oraclev1.MsgRegisterOracleRequestDoc{} },
	TypeURL(&oraclev1.MsgUpdateOracleRequestDoc{}):   func() proto.Message { return &oraclev1.MsgUpdateOracleRequestDoc{} },
}

// pubKeyTypes are the public keys a SignerInfo may carry.
var pubKeyTypes = map[string]func() proto.Message{
	TypeURLPubKey: func() proto.Message { return &ethsecp256k1.PubKey{} },
}

// nonCriticalBit marks an unknown field a TxBody may carry: the SDK treats a
// field number with bit 11 set (1024–2047, 3072–4095, …) as non-critical.
const nonCriticalBit = 1 << 10

// Tx is a decoded transaction.
type Tx struct {
	Bytes    []byte // the TxRaw bytes as received
	Raw      *txv1beta1.TxRaw
	Body     *txv1beta1.TxBody
	AuthInfo *txv1beta1.AuthInfo
	// Msgs are the unpacked messages of Body, in order: each is a
	// *MsgSubmitOracleData, *MsgRegisterOracleRequestDoc or
	// *MsgUpdateOracleRequestDoc.
	Msgs []proto.Message
	// BodyHasUnknownNonCriticals: the TxBody carried non-critical fields this
	// schema does not declare (they were accepted and ignored).
	BodyHasUnknownNonCriticals bool
}

// Decode is CheckTx's row 3 (ORACLE-SPEC 4.3): the TxRaw must be ADR-027
// canonical (fields 1, 2, 3… in ascending order, bytes wire type, minimal
// varints in tags and lengths) and have no unknown field; the TxBody may
// carry unknown fields only if they are non-critical; the AuthInfo none; each
// Any must have a known type URL (an oracle message in TxBody.messages, an
// eth_secp256k1 public key in a SignerInfo), with the same rules inside it.
// Every failure is a *CodeError with code 2. The canonical txs daemons send
// take a fast path (decodeCanonical) with the same answer.
func Decode(txBytes []byte) (*Tx, error) {
	if t, ok := decodeCanonical(txBytes); ok {
		return t, nil
	}
	if err := checkCanonicalTxRaw(txBytes); err != nil {
		return nil, err
	}
	t := &Tx{Bytes: txBytes, Raw: &txv1beta1.TxRaw{}, Body: &txv1beta1.TxBody{}, AuthInfo: &txv1beta1.AuthInfo{}}
	if err := unmarshalStrict(txBytes, t.Raw, false); err != nil {
		return nil, err
	}
	if err := unmarshalStrict(t.Raw.BodyBytes, t.Body, true); err != nil {
		return nil, err
	}
	t.BodyHasUnknownNonCriticals = hasUnknown(t.Body.ProtoReflect())
	if err := unmarshalStrict(t.Raw.AuthInfoBytes, t.AuthInfo, false); err != nil {
		return nil, err
	}
	for i, a := range t.Body.Messages {
		m, err := unpack(a, msgTypes, true)
		if err != nil {
			return nil, decodeErrWrap(err, "messages[%d]", i)
		}
		t.Msgs = append(t.Msgs, m)
	}
	// No extension option type is known to this chain, so none resolves.
	if opts := t.Body.ExtensionOptions; len(opts) > 0 {
		return nil, decodeErr(ErrUnknownTypeURL, "extension_options[0]: unresolvable type URL %q", opts[0].GetTypeUrl())
	}
	if opts := t.Body.NonCriticalExtensionOptions; len(opts) > 0 {
		return nil, decodeErr(ErrUnknownTypeURL, "non_critical_extension_options[0]: unresolvable type URL %q", opts[0].GetTypeUrl())
	}
	for i, si := range t.AuthInfo.SignerInfos {
		if si.PublicKey == nil {
			continue
		}
		if _, err := unpack(si.PublicKey, pubKeyTypes, false); err != nil {
			return nil, decodeErrWrap(err, "signer_infos[%d].public_key", i)
		}
	}
	return t, nil
}

// checkCanonicalTxRaw is the ADR-027 check of the TxRaw bytes.
func checkCanonicalTxRaw(b []byte) error {
	prev := protowire.Number(0)
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return decodeErr(ErrMalformed, "TxRaw: %v", protowire.ParseError(n))
		}
		if tag := protowire.EncodeTag(num, typ); n != protowire.SizeVarint(tag) {
			return decodeErr(ErrNonCanonical, "TxRaw: tag of field %d is not a minimal varint", num)
		}
		if typ != protowire.BytesType {
			return decodeErr(ErrNonCanonical, "TxRaw: field %d has wire type %d, want bytes", num, typ)
		}
		if num < prev {
			return decodeErr(ErrNonCanonical, "TxRaw: field %d after field %d (ADR-027 wants ascending order)", num, prev)
		}
		prev = num
		length, m := protowire.ConsumeVarint(b[n:])
		if m < 0 {
			return decodeErr(ErrMalformed, "TxRaw: field %d: %v", num, protowire.ParseError(m))
		}
		if m != protowire.SizeVarint(length) {
			return decodeErr(ErrNonCanonical, "TxRaw: length of field %d is not a minimal varint", num)
		}
		k := protowire.ConsumeFieldValue(num, typ, b[n:])
		if k < 0 {
			return decodeErr(ErrMalformed, "TxRaw: field %d: %v", num, protowire.ParseError(k))
		}
		b = b[n+k:]
	}
	return nil
}

// unmarshalStrict decodes b into m and rejects unknown fields anywhere in it
// (outside Any values, which unpack checks), except non-critical ones when
// allowNonCritical is set.
func unmarshalStrict(b []byte, m proto.Message, allowNonCritical bool) error {
	name := m.ProtoReflect().Descriptor().Name()
	if err := proto.Unmarshal(b, m); err != nil {
		return decodeErr(ErrMalformed, "%s: %v", name, err)
	}
	if err := checkUnknown(m.ProtoReflect(), allowNonCritical, string(name)); err != nil {
		return err
	}
	return nil
}

// checkUnknown walks a decoded message and its sub-messages. A field number
// the schema declares but that arrived with another wire type lands among
// the unknown fields too; it is always rejected.
func checkUnknown(m protoreflect.Message, allowNonCritical bool, path string) error {
	return checkUnknownAt(m, allowNonCritical, &fieldPath{name: path, index: -1})
}

// fieldPath is where a walk is, written out only for an error message.
type fieldPath struct {
	parent *fieldPath
	name   string
	index  int // -1: not a list element
}

func (p *fieldPath) String() string {
	s := p.name
	if p.index >= 0 {
		s = fmt.Sprintf("%s[%d]", s, p.index)
	}
	if p.parent == nil {
		return s
	}
	return p.parent.String() + "." + s
}

func checkUnknownAt(m protoreflect.Message, allowNonCritical bool, path *fieldPath) error {
	fields := m.Descriptor().Fields()
	for b := m.GetUnknown(); len(b) > 0; {
		num, typ, n := protowire.ConsumeField(b)
		if n < 0 {
			return decodeErr(ErrMalformed, "%s: %v", path, protowire.ParseError(n))
		}
		b = b[n:]
		switch {
		case fields.ByNumber(num) != nil:
			return decodeErr(ErrUnknownField, "%s: field %d has the wrong wire type %d", path, num, typ)
		case num&nonCriticalBit == 0:
			return decodeErr(ErrUnknownField, "%s: unknown critical field %d", path, num)
		case !allowNonCritical:
			return decodeErr(ErrUnknownField, "%s: unknown field %d", path, num)
		}
	}
	// An Any's own fields are checked here; the message in its value is
	// checked by unpack, which knows its type.
	for _, fd := range messageFields(m.Descriptor()) {
		if !m.Has(fd) {
			continue
		}
		v := m.Get(fd)
		if fd.IsList() {
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				sub := fieldPath{parent: path, name: string(fd.Name()), index: i}
				if err := checkUnknownAt(l.Get(i).Message(), allowNonCritical, &sub); err != nil {
					return err
				}
			}
			continue
		}
		sub := fieldPath{parent: path, name: string(fd.Name()), index: -1}
		if err := checkUnknownAt(v.Message(), allowNonCritical, &sub); err != nil {
			return err
		}
	}
	return nil
}

// hasUnknown reports whether m or a sub-message kept unknown fields.
func hasUnknown(m protoreflect.Message) bool {
	if len(m.GetUnknown()) > 0 {
		return true
	}
	for _, fd := range messageFields(m.Descriptor()) {
		if !m.Has(fd) {
			continue
		}
		v := m.Get(fd)
		if fd.IsList() {
			for i := 0; i < v.List().Len(); i++ {
				if hasUnknown(v.List().Get(i).Message()) {
					return true
				}
			}
		} else if hasUnknown(v.Message()) {
			return true
		}
	}
	return false
}

// messageFields are a message type's fields that hold messages (singular
// or repeated; this schema has no maps), the only ones an unknown field
// can hide under. The walk visits them on every tx, so they are listed
// once for every message type a tx can carry (messageFieldsOf, filled at
// start and read only after).
func messageFields(md protoreflect.MessageDescriptor) []protoreflect.FieldDescriptor {
	if fds, ok := messageFieldsOf[md]; ok {
		return fds
	}
	return listMessageFields(md)
}

func listMessageFields(md protoreflect.MessageDescriptor) []protoreflect.FieldDescriptor {
	var out []protoreflect.FieldDescriptor
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		if fd := fields.Get(i); fd.Message() != nil && !fd.IsMap() {
			out = append(out, fd)
		}
	}
	return out
}

var messageFieldsOf = func() map[protoreflect.MessageDescriptor][]protoreflect.FieldDescriptor {
	out := map[protoreflect.MessageDescriptor][]protoreflect.FieldDescriptor{}
	var visit func(md protoreflect.MessageDescriptor)
	visit = func(md protoreflect.MessageDescriptor) {
		if _, seen := out[md]; seen {
			return
		}
		out[md] = listMessageFields(md)
		for _, fd := range out[md] {
			visit(fd.Message())
		}
	}
	roots := []proto.Message{&txv1beta1.TxRaw{}, &txv1beta1.TxBody{}, &txv1beta1.AuthInfo{}}
	for _, known := range []map[string]func() proto.Message{msgTypes, pubKeyTypes} {
		for _, mk := range known {
			roots = append(roots, mk())
		}
	}
	for _, m := range roots {
		visit(m.ProtoReflect().Descriptor())
	}
	return out
}()

// unpack decodes an Any whose type URL is in known, with the unknown-field
// rules of its position.
func unpack(a *anypb.Any, known map[string]func() proto.Message, allowNonCritical bool) (proto.Message, error) {
	mk, ok := known[a.GetTypeUrl()]
	if !ok {
		return nil, decodeErr(ErrUnknownTypeURL, "type URL %q is not accepted here", a.GetTypeUrl())
	}
	m := mk()
	if err := unmarshalStrict(a.GetValue(), m, allowNonCritical); err != nil {
		return nil, err
	}
	return m, nil
}

func decodeErrWrap(err error, format string, args ...any) error {
	if ce, ok := err.(*CodeError); ok {
		return &CodeError{Code: ce.Code, Reason: fmt.Sprintf(format, args...) + ": " + ce.Reason, Err: ce.Err}
	}
	return err
}

// Signer is the tx's signer: the first message's authority_address (a
// submission) or moderator_address (a register or update); "" without
// messages.
func (t *Tx) Signer() string {
	if len(t.Msgs) == 0 {
		return ""
	}
	return MsgSigner(t.Msgs[0])
}

// MsgSigner is a message's signer field.
func MsgSigner(m proto.Message) string {
	switch m := m.(type) {
	case *oraclev1.MsgSubmitOracleData:
		return m.GetAuthorityAddress()
	case *oraclev1.MsgRegisterOracleRequestDoc:
		return m.GetModeratorAddress()
	case *oraclev1.MsgUpdateOracleRequestDoc:
		return m.GetModeratorAddress()
	}
	return ""
}

// Sequence is signer_infos[0].sequence; ok is false without a SignerInfo.
func (t *Tx) Sequence() (seq uint64, ok bool) {
	if len(t.AuthInfo.GetSignerInfos()) == 0 {
		return 0, false
	}
	return t.AuthInfo.SignerInfos[0].GetSequence(), true
}

// GasLimit is fee.gas_limit.
func (t *Tx) GasLimit() uint64 { return t.AuthInfo.GetFee().GetGasLimit() }

// FeeCoins are fee.amount as "amount+denom" pairs, in order.
func (t *Tx) FeeCoins() []Coin { return t.AppendFeeCoins(nil) }

// AppendFeeCoins appends FeeCoins to dst: a reader of many txs keeps their
// one coin in memory of its own.
func (t *Tx) AppendFeeCoins(dst []Coin) []Coin {
	for _, c := range t.AuthInfo.GetFee().GetAmount() {
		dst = append(dst, Coin{Denom: c.GetDenom(), Amount: c.GetAmount()})
	}
	return dst
}

// Coin is one fee coin.
type Coin struct{ Denom, Amount string }

func (c Coin) String() string { return c.Amount + c.Denom }

// PubKey is signer_infos[0]'s public key.
func (t *Tx) PubKey() (keys.PubKey, error) {
	sis := t.AuthInfo.GetSignerInfos()
	if len(sis) == 0 || sis[0].GetPublicKey() == nil {
		return keys.PubKey{}, fmt.Errorf("tx has no public key")
	}
	key, err := PubKeyKey(sis[0].PublicKey.GetValue())
	if err != nil {
		return keys.PubKey{}, fmt.Errorf("public key: %w", err)
	}
	return keys.ParsePubKey(key)
}

// PubKeyKey is the key field of an ethsecp256k1.PubKey's bytes (the value
// of a signer info's public_key). The shape Build writes — that one field
// and 33 bytes — is read in place, without a message (the recorders read
// the key of every tx); any other bytes go through proto.Unmarshal, which
// decides as it always did. The key may share value's memory.
func PubKeyKey(value []byte) ([]byte, error) {
	if len(value) == 2+keys.PubKeySize && value[0] == byte(fieldPubKeyKey<<3|2) && value[1] == keys.PubKeySize {
		return value[2:], nil
	}
	var pk ethsecp256k1.PubKey
	if err := proto.Unmarshal(value, &pk); err != nil {
		return nil, err
	}
	return pk.GetKey(), nil
}

// Hash is the tx's CometBFT hash.
func (t *Tx) Hash() string { return Hash(t.Bytes) }

// Submissions returns the tx's MsgSubmitOracleData messages.
func (t *Tx) Submissions() []*oraclev1.MsgSubmitOracleData {
	var out []*oraclev1.MsgSubmitOracleData
	for _, m := range t.Msgs {
		if s, ok := m.(*oraclev1.MsgSubmitOracleData); ok {
			out = append(out, s)
		}
	}
	return out
}

// String is a one-line summary for logs and histories.
func (t *Tx) String() string {
	var kinds []string
	for _, m := range t.Msgs {
		kinds = append(kinds, string(m.ProtoReflect().Descriptor().Name()))
	}
	seq, _ := t.Sequence()
	return fmt.Sprintf("tx %s signer=%s seq=%d gas=%d fee=%v msgs=[%s]", t.Hash()[:12], t.Signer(), seq, t.GasLimit(),
		t.FeeCoins(), strings.Join(kinds, ","))
}
