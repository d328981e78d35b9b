package tx

import (
	"bytes"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	basev1beta1 "github.com/wsconverge/converge/contracts/oracle/proto/cosmos/base/v1beta1"
	signingv1beta1 "github.com/wsconverge/converge/contracts/oracle/proto/cosmos/tx/signing/v1beta1"
	txv1beta1 "github.com/wsconverge/converge/contracts/oracle/proto/cosmos/tx/v1beta1"
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
	raw, ok := parseTxRaw(txBytes)
	if !ok || !bytes.Equal(encodeTxRaw(raw), txBytes) {
		return nil, false
	}
	body, ok := parseTxBody(raw.BodyBytes)
	if !ok || !bytes.Equal(encodeTxBody(body), raw.BodyBytes) {
		return nil, false
	}
	auth, ok := parseAuthInfo(raw.AuthInfoBytes)
	if !ok || !bytes.Equal(encodeAuthInfo(auth), raw.AuthInfoBytes) {
		return nil, false
	}
	// The messages and keys inside the Anys are read as the strict path
	// reads them (it does not want them canonical).
	t := &Tx{Bytes: txBytes, Raw: raw, Body: body, AuthInfo: auth, Msgs: make([]proto.Message, 0, len(body.Messages))}
	for _, a := range body.Messages {
		m, err := unpack(a, msgTypes, true)
		if err != nil {
			return nil, false
		}
		t.Msgs = append(t.Msgs, m)
	}
	for _, si := range auth.SignerInfos {
		if si.PublicKey == nil {
			continue
		}
		if _, err := unpack(si.PublicKey, pubKeyTypes, false); err != nil {
			return nil, false
		}
	}
	return t, true
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

// str is a string field's value, if it is valid UTF-8 (as proto3 wants).
func str(val []byte, ok *bool) string {
	if !utf8.Valid(val) {
		*ok = false
	}
	return string(val)
}

func parseTxRaw(b []byte) (*txv1beta1.TxRaw, bool) {
	raw := &txv1beta1.TxRaw{}
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
			raw.Signatures = append(raw.Signatures, val)
		default:
			return nil, false
		}
	}
}

func parseAny(b []byte) (*anypb.Any, bool) {
	a := &anypb.Any{}
	r := fieldReader{b: b, ok: true}
	for {
		num, typ, val, _, done := r.next()
		if done {
			return a, r.ok
		}
		switch {
		case num == fieldAnyTypeURL && typ == protowire.BytesType:
			a.TypeUrl = str(val, &r.ok)
		case num == fieldAnyValue && typ == protowire.BytesType:
			a.Value = val
		default:
			return nil, false
		}
	}
}

func parseTxBody(b []byte) (*txv1beta1.TxBody, bool) {
	body := &txv1beta1.TxBody{}
	r := fieldReader{b: b, ok: true}
	for {
		num, typ, val, v, done := r.next()
		if done {
			return body, r.ok
		}
		switch {
		case num == fieldTxBodyMessages && typ == protowire.BytesType:
			a, ok := parseAny(val)
			if !ok {
				return nil, false
			}
			body.Messages = append(body.Messages, a)
		case num == fieldTxBodyMemo && typ == protowire.BytesType:
			body.Memo = str(val, &r.ok)
		case num == fieldTxBodyTimeoutHeight && typ == protowire.VarintType:
			body.TimeoutHeight = v
		default: // unordered, timeout_timestamp, extension options, unknown fields: the strict path
			return nil, false
		}
	}
}

func parseAuthInfo(b []byte) (*txv1beta1.AuthInfo, bool) {
	auth := &txv1beta1.AuthInfo{}
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
			si, ok := parseSignerInfo(val)
			if !ok {
				return nil, false
			}
			auth.SignerInfos = append(auth.SignerInfos, si)
		case fieldAuthInfoFee:
			fee, ok := parseFee(val)
			if !ok {
				return nil, false
			}
			auth.Fee = fee
		default: // tip, unknown fields: the strict path
			return nil, false
		}
	}
}

func parseSignerInfo(b []byte) (*txv1beta1.SignerInfo, bool) {
	si := &txv1beta1.SignerInfo{}
	r := fieldReader{b: b, ok: true}
	for {
		num, typ, val, v, done := r.next()
		if done {
			return si, r.ok
		}
		switch {
		case num == fieldSignerInfoPublicKey && typ == protowire.BytesType:
			a, ok := parseAny(val)
			if !ok {
				return nil, false
			}
			si.PublicKey = a
		case num == fieldSignerInfoModeInfo && typ == protowire.BytesType:
			mi, ok := parseModeInfo(val)
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
func parseModeInfo(b []byte) (*txv1beta1.ModeInfo, bool) {
	mi := &txv1beta1.ModeInfo{}
	r := fieldReader{b: b, ok: true}
	for {
		num, typ, val, _, done := r.next()
		if done {
			return mi, r.ok
		}
		if num != fieldModeInfoSingle || typ != protowire.BytesType {
			return nil, false
		}
		single := &txv1beta1.ModeInfo_Single{}
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
		mi.Sum = &txv1beta1.ModeInfo_Single_{Single: single}
	}
}

func parseFee(b []byte) (*txv1beta1.Fee, bool) {
	fee := &txv1beta1.Fee{}
	r := fieldReader{b: b, ok: true}
	for {
		num, typ, val, v, done := r.next()
		if done {
			return fee, r.ok
		}
		switch {
		case num == fieldFeeAmount && typ == protowire.BytesType:
			coin := &basev1beta1.Coin{}
			cr := fieldReader{b: val, ok: true}
			for {
				num, typ, val, _, done := cr.next()
				if done {
					break
				}
				switch {
				case num == fieldCoinDenom && typ == protowire.BytesType:
					coin.Denom = str(val, &cr.ok)
				case num == fieldCoinAmount && typ == protowire.BytesType:
					coin.Amount = str(val, &cr.ok)
				default:
					return nil, false
				}
			}
			if !cr.ok {
				return nil, false
			}
			fee.Amount = append(fee.Amount, coin)
		case num == fieldFeeGasLimit && typ == protowire.VarintType:
			fee.GasLimit = v
		case num == fieldFeePayer && typ == protowire.BytesType:
			fee.Payer = str(val, &r.ok)
		case num == fieldFeeGranter && typ == protowire.BytesType:
			fee.Granter = str(val, &r.ok)
		default:
			return nil, false
		}
	}
}
