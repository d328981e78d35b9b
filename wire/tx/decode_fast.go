package tx

import (
	"bytes"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/wire/keys"
	basev1beta1 "github.com/wsconverge/converge/wire/proto/cosmos/base/v1beta1"
	signingv1beta1 "github.com/wsconverge/converge/wire/proto/cosmos/tx/signing/v1beta1"
	txv1beta1 "github.com/wsconverge/converge/wire/proto/cosmos/tx/v1beta1"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
)

// decodeCanonical is Decode's fast path for the txs daemons send: it reads
// the envelope (TxRaw, TxBody, AuthInfo) with protowire, writes it back
// with the envelope encoders and goes on only when that gives the very
// same bytes — which proves the envelope canonical and free of unknown
// fields without the reflective walk; the messages and keys inside are
// then read exactly as the strict path reads them. Anything else (an
// unknown or non-critical envelope field, an extension option, a multisig
// mode, a non-canonical envelope, bytes that do not parse, a message the
// strict path refuses) returns false, and Decode takes its strict path,
// which accepts or rejects it with the precise reason.
// TestFastDecodeAgreesWithStrict holds the two paths to the same answers.
func decodeCanonical(txBytes []byte) (*Tx, bool) {
	if !fastDecode {
		return nil, false
	}
	p := &parts{src: txBytes}
	// The re-encodings compared with the bytes are written into one stack
	// buffer in turn (a daemon's tx fits), not three heap slices.
	var buf [1024]byte
	raw, ok := p.parseTxRaw(txBytes)
	if !ok || !bytes.Equal(appendTxRaw(buf[:0], raw), txBytes) {
		return nil, false
	}
	body, ok := p.parseTxBody(raw.BodyBytes)
	if !ok || !bytes.Equal(appendTxBody(buf[:0], body), raw.BodyBytes) {
		return nil, false
	}
	auth, ok := p.parseAuthInfo(raw.AuthInfoBytes)
	if !ok || !bytes.Equal(appendAuthInfo(buf[:0], auth), raw.AuthInfoBytes) {
		return nil, false
	}
	// The messages and keys inside the Anys are read as the strict path
	// reads them (it does not want them canonical).
	t := &p.tx
	*t = Tx{Bytes: txBytes, Raw: raw, Body: body, AuthInfo: auth, Msgs: make([]proto.Message, 0, len(body.Messages))}
	for _, a := range body.Messages {
		if a.GetTypeUrl() == oracle.TypeURLSubmit {
			if m, ok := p.parseSubmit(a.GetValue()); ok {
				t.Msgs = append(t.Msgs, m)
				continue
			}
		}
		m, err := unpack(a, msgTypes, true)
		if err != nil {
			return nil, false
		}
		t.Msgs = append(t.Msgs, m)
	}
	for _, si := range auth.SignerInfos {
		if si.PublicKey == nil || builtPubKey(si.PublicKey) {
			continue
		}
		if _, err := unpack(si.PublicKey, pubKeyTypes, false); err != nil {
			return nil, false
		}
	}
	return t, true
}

// builtPubKey reports whether a signer's key is in the shape Build writes
// (the eth_secp256k1 type URL, the key field and 33 bytes), which unpack
// accepts: the strict unmarshal through reflection was a seventh of a
// fast decode only to say so. TestBuiltPubKeyUnpacks holds it to unpack.
func builtPubKey(a *anypb.Any) bool {
	v := a.GetValue()
	return a.GetTypeUrl() == TypeURLPubKey && len(v) == 2+keys.PubKeySize &&
		v[0] == byte(fieldPubKeyKey<<3|2) && v[1] == keys.PubKeySize
}

// parts are the messages of a tx the fast path decodes, allocated
// together: the first of each kind is taken from here, any further one
// (a second message, signer or coin) from the heap. The TxRaw, TxBody,
// AuthInfo and Fee occur once per tx.
type parts struct {
	raw        txv1beta1.TxRaw
	sigs       [1][]byte
	body       txv1beta1.TxBody
	msgs       [1]*anypb.Any
	any        [2]anypb.Any // a message and the signer's key
	anys       int
	auth       txv1beta1.AuthInfo
	signer     txv1beta1.SignerInfo
	signers    [1]*txv1beta1.SignerInfo
	signerUsed bool
	mode       txv1beta1.ModeInfo
	modeUsed   bool
	single     txv1beta1.ModeInfo_Single
	singleSum  txv1beta1.ModeInfo_Single_
	singleUsed bool
	fee        txv1beta1.Fee
	coin       basev1beta1.Coin
	coins      [1]*basev1beta1.Coin
	coinUsed   bool
	tx         Tx
	submit     oraclev1.MsgSubmitOracleData
	dataSet    oraclev1.SubmitDataSet
	submitUsed bool
	// src is the tx's bytes, whole the same as a string (made at the first
	// string field): a string field is a substring of whole, one
	// allocation per tx where there were seven.
	src   []byte
	whole string
}

// parseSubmit reads a submission in its canonical bytes (which the strict
// path's proto.Unmarshal reads into the same fields, with no unknown ones
// to check): the world decodes every daemon broadcast, and the generic
// unmarshaller was half of a decode. Anything else is the strict path's.
func (p *parts) parseSubmit(b []byte) (*oraclev1.MsgSubmitOracleData, bool) {
	if p.submitUsed {
		return nil, false
	}
	m, ds := &p.submit, &p.dataSet
	*m, *ds = oraclev1.MsgSubmitOracleData{}, oraclev1.SubmitDataSet{} // a refused attempt's fields go
	ok := true
	r := fieldReader{b: b, ok: true}
	for {
		num, typ, val, _, done := r.next()
		if done {
			break
		}
		switch {
		case num == 1 && typ == protowire.BytesType:
			m.AuthorityAddress = p.str(val, &ok)
		case num == 2 && typ == protowire.BytesType:
			m.DataSet = ds
			dr := fieldReader{b: val, ok: true}
			for {
				num, typ, val, v, done := dr.next()
				if done {
					break
				}
				switch {
				case num == 1 && typ == protowire.VarintType:
					ds.RequestId = v
				case num == 2 && typ == protowire.VarintType:
					ds.Nonce = v
				case num == 3 && typ == protowire.BytesType:
					ds.RawData = p.str(val, &ok)
				case num == 4 && typ == protowire.BytesType:
					ds.Provider = p.str(val, &ok)
				case num == 5 && typ == protowire.BytesType:
					ds.Signature = p.str(val, &ok)
				default:
					return nil, false
				}
			}
			if !dr.ok {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	if !r.ok || !ok {
		return nil, false
	}
	// Canonical: written back, the fields give the same bytes.
	var inner, whole [2 * scratchSize]byte
	in := inner[:0]
	if ds := m.GetDataSet(); ds != nil {
		in = appendUint(in, 1, ds.GetRequestId())
		in = appendUint(in, 2, ds.GetNonce())
		in = appendString(in, 3, ds.GetRawData())
		in = appendString(in, 4, ds.GetProvider())
		in = appendString(in, 5, ds.GetSignature())
	}
	if !bytes.Equal(appendSubmit(whole[:0], m, in), b) {
		return nil, false
	}
	p.submitUsed = true
	return m, true
}

// fastDecode turns the fast path on (tests compare with it off).
var fastDecode = true

// fieldReader walks one message's fields.
type fieldReader struct {
	b  []byte
	ok bool
}

// next returns the next field; done at the end, or ok false on a malformed
// field.
func (r *fieldReader) next() (num protowire.Number, typ protowire.Type, val []byte, v uint64, done bool) {
	if len(r.b) == 0 {
		return 0, 0, nil, 0, true
	}
	num, typ, n := protowire.ConsumeTag(r.b)
	if n < 0 {
		r.ok = false
		return 0, 0, nil, 0, true
	}
	r.b = r.b[n:]
	switch typ {
	case protowire.BytesType:
		val, n = protowire.ConsumeBytes(r.b)
	case protowire.VarintType:
		v, n = protowire.ConsumeVarint(r.b)
	default:
		n = -1
	}
	if n < 0 {
		r.ok = false
		return 0, 0, nil, 0, true
	}
	r.b = r.b[n:]
	return num, typ, val, v, false
}

// str is a string field's value, if it is valid UTF-8 (as proto3 wants):
// the substring of the tx's bytes it was read from, or a copy of val when
// val is not found there.
func (p *parts) str(val []byte, ok *bool) string {
	if !utf8.Valid(val) {
		*ok = false
	}
	// val was sliced from src: its capacity says where it starts.
	if off := cap(p.src) - cap(val); off >= 0 && off+len(val) <= len(p.src) && len(val) > 0 {
		if p.whole == "" {
			p.whole = string(p.src)
		}
		if w := p.whole[off : off+len(val)]; w == string(val) {
			return w
		}
	}
	return string(val)
}

func (p *parts) parseTxRaw(b []byte) (*txv1beta1.TxRaw, bool) {
	raw := &p.raw
	r := fieldReader{b: b, ok: true}
	for {
		num, typ, val, _, done := r.next()
		if done {
			return raw, r.ok
		}
		if typ != protowire.BytesType {
			return nil, false
		}
		switch num {
		case fieldTxRawBodyBytes:
			raw.BodyBytes = val
		case fieldTxRawAuthInfoBytes:
			raw.AuthInfoBytes = val
		case fieldTxRawSignatures:
			if raw.Signatures == nil {
				raw.Signatures = p.sigs[:0]
			}
			raw.Signatures = append(raw.Signatures, val)
		default:
			return nil, false
		}
	}
}

func (p *parts) parseAny(b []byte) (*anypb.Any, bool) {
	// The literal only when the parts' room is used up: written first and
	// replaced, it was allocated every time.
	var a *anypb.Any
	if p.anys < len(p.any) {
		a = &p.any[p.anys]
		p.anys++
	} else {
		a = &anypb.Any{}
	}
	r := fieldReader{b: b, ok: true}
	for {
		num, typ, val, _, done := r.next()
		if done {
			return a, r.ok
		}
		switch {
		case num == fieldAnyTypeURL && typ == protowire.BytesType:
			a.TypeUrl = p.str(val, &r.ok)
		case num == fieldAnyValue && typ == protowire.BytesType:
			a.Value = val
		default:
			return nil, false
		}
	}
}

func (p *parts) parseTxBody(b []byte) (*txv1beta1.TxBody, bool) {
	body := &p.body
	r := fieldReader{b: b, ok: true}
	for {
		num, typ, val, v, done := r.next()
		if done {
			return body, r.ok
		}
		switch {
		case num == fieldTxBodyMessages && typ == protowire.BytesType:
			a, ok := p.parseAny(val)
			if !ok {
				return nil, false
			}
			if body.Messages == nil {
				body.Messages = p.msgs[:0]
			}
			body.Messages = append(body.Messages, a)
		case num == fieldTxBodyMemo && typ == protowire.BytesType:
			body.Memo = p.str(val, &r.ok)
		case num == fieldTxBodyTimeoutHeight && typ == protowire.VarintType:
			body.TimeoutHeight = v
		default: // unordered, timeout_timestamp, extension options, unknown fields: the strict path
			return nil, false
		}
	}
}

func (p *parts) parseAuthInfo(b []byte) (*txv1beta1.AuthInfo, bool) {
	auth := &p.auth
	r := fieldReader{b: b, ok: true}
	for {
		num, typ, val, _, done := r.next()
		if done {
			return auth, r.ok
		}
		if typ != protowire.BytesType {
			return nil, false
		}
		switch num {
		case fieldAuthInfoSignerInfos:
			si, ok := p.parseSignerInfo(val)
			if !ok {
				return nil, false
			}
			if auth.SignerInfos == nil {
				auth.SignerInfos = p.signers[:0]
			}
			auth.SignerInfos = append(auth.SignerInfos, si)
		case fieldAuthInfoFee:
			fee, ok := p.parseFee(val)
			if !ok {
				return nil, false
			}
			auth.Fee = fee
		default: // tip, unknown fields: the strict path
			return nil, false
		}
	}
}

func (p *parts) parseSignerInfo(b []byte) (*txv1beta1.SignerInfo, bool) {
	var si *txv1beta1.SignerInfo
	if !p.signerUsed {
		si, p.signerUsed = &p.signer, true
	} else {
		si = &txv1beta1.SignerInfo{}
	}
	r := fieldReader{b: b, ok: true}
	for {
		num, typ, val, v, done := r.next()
		if done {
			return si, r.ok
		}
		switch {
		case num == fieldSignerInfoPublicKey && typ == protowire.BytesType:
			a, ok := p.parseAny(val)
			if !ok {
				return nil, false
			}
			si.PublicKey = a
		case num == fieldSignerInfoModeInfo && typ == protowire.BytesType:
			mi, ok := p.parseModeInfo(val)
			if !ok {
				return nil, false
			}
			si.ModeInfo = mi
		case num == fieldSignerInfoSequence && typ == protowire.VarintType:
			si.Sequence = v
		default:
			return nil, false
		}
	}
}

// parseModeInfo reads a single-signer mode info (a multisig is the strict
// path's).
func (p *parts) parseModeInfo(b []byte) (*txv1beta1.ModeInfo, bool) {
	var mi *txv1beta1.ModeInfo
	if !p.modeUsed {
		mi, p.modeUsed = &p.mode, true
	} else {
		mi = &txv1beta1.ModeInfo{}
	}
	r := fieldReader{b: b, ok: true}
	for {
		num, typ, val, _, done := r.next()
		if done {
			return mi, r.ok
		}
		if num != fieldModeInfoSingle || typ != protowire.BytesType {
			return nil, false
		}
		var single *txv1beta1.ModeInfo_Single
		var sum *txv1beta1.ModeInfo_Single_
		if !p.singleUsed {
			single, sum, p.singleUsed = &p.single, &p.singleSum, true
		} else {
			single, sum = &txv1beta1.ModeInfo_Single{}, &txv1beta1.ModeInfo_Single_{}
		}
		sr := fieldReader{b: val, ok: true}
		for {
			num, typ, _, v, done := sr.next()
			if done {
				break
			}
			if num != fieldSingleMode || typ != protowire.VarintType || v > 1<<31-1 {
				return nil, false
			}
			single.Mode = signingv1beta1.SignMode(v)
		}
		if !sr.ok {
			return nil, false
		}
		sum.Single = single
		mi.Sum = sum
	}
}

func (p *parts) parseFee(b []byte) (*txv1beta1.Fee, bool) {
	fee := &p.fee
	r := fieldReader{b: b, ok: true}
	for {
		num, typ, val, v, done := r.next()
		if done {
			return fee, r.ok
		}
		switch {
		case num == fieldFeeAmount && typ == protowire.BytesType:
			var coin *basev1beta1.Coin
			if !p.coinUsed {
				coin, p.coinUsed = &p.coin, true
			} else {
				coin = &basev1beta1.Coin{}
			}
			cr := fieldReader{b: val, ok: true}
			for {
				num, typ, val, _, done := cr.next()
				if done {
					break
				}
				switch {
				case num == fieldCoinDenom && typ == protowire.BytesType:
					coin.Denom = p.str(val, &cr.ok)
				case num == fieldCoinAmount && typ == protowire.BytesType:
					coin.Amount = p.str(val, &cr.ok)
				default:
					return nil, false
				}
			}
			if !cr.ok {
				return nil, false
			}
			if fee.Amount == nil {
				fee.Amount = p.coins[:0]
			}
			fee.Amount = append(fee.Amount, coin)
		case num == fieldFeeGasLimit && typ == protowire.VarintType:
			fee.GasLimit = v
		case num == fieldFeePayer && typ == protowire.BytesType:
			fee.Payer = p.str(val, &r.ok)
		case num == fieldFeeGranter && typ == protowire.BytesType:
			fee.Granter = p.str(val, &r.ok)
		default:
			return nil, false
		}
	}
}
