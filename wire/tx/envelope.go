package tx

import (
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/wsconverge/converge/wire/keys"
	txv1beta1 "github.com/wsconverge/converge/wire/proto/cosmos/tx/v1beta1"
)

// The envelope of a tx — TxBody around the messages, AuthInfo, SignDoc,
// TxRaw — is written here with protowire, field by field, instead of
// protobuf's generic marshaller: it is a handful of fixed fields, and the
// generic path (a size pass, a write pass and an allocation per message,
// five times per tx) cost three quarters of a build, which a simulated day
// of a hundred requests pays millions of times. Every function writes
// exactly the deterministic encoding of the message it is named after
// (fields in number order, zero scalars omitted, a set sub-message written
// even when empty); TestEnvelopeEncodingIsTheLibrarys compares them with
// the library's marshalling of the same messages on random inputs.

// Field numbers of the envelope messages (wire/proto/cosmos).
const (
	fieldTxBodyMessages      = 1
	fieldTxBodyMemo          = 2
	fieldTxBodyTimeoutHeight = 3

	fieldAnyTypeURL = 1
	fieldAnyValue   = 2

	fieldAuthInfoSignerInfos = 1
	fieldAuthInfoFee         = 2

	fieldSignerInfoPublicKey = 1
	fieldSignerInfoModeInfo  = 2
	fieldSignerInfoSequence  = 3

	fieldModeInfoSingle = 1
	fieldSingleMode     = 1

	fieldFeeAmount   = 1
	fieldFeeGasLimit = 2
	fieldFeePayer    = 3
	fieldFeeGranter  = 4

	fieldCoinDenom  = 1
	fieldCoinAmount = 2

	fieldPubKeyKey = 1

	fieldSignDocBodyBytes     = 1
	fieldSignDocAuthInfoBytes = 2
	fieldSignDocChainID       = 3
	fieldSignDocAccountNumber = 4

	fieldTxRawBodyBytes     = 1
	fieldTxRawAuthInfoBytes = 2
	fieldTxRawSignatures    = 3
)

// appendString writes a proto3 string or bytes field (omitted when empty).
func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// appendUint writes a proto3 varint field (omitted when zero).
func appendUint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// appendMessage writes a set sub-message field (written even when empty).
func appendMessage(b []byte, num protowire.Number, inner []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, inner)
}

// scratchSize is the stack scratch of the encoders: larger parts spill to
// the heap as append grows them.
const scratchSize = 256

func encodeAny(b []byte, a *anypb.Any) []byte {
	b = appendString(b, fieldAnyTypeURL, a.GetTypeUrl())
	return appendBytes(b, fieldAnyValue, a.GetValue())
}

// encodeTxBody writes a TxBody with messages, memo and timeout_height (the
// only fields Build sets).
func encodeTxBody(body *txv1beta1.TxBody) []byte {
	return appendTxBody(make([]byte, 0, 256), body)
}

// appendTxBody appends encodeTxBody's bytes to b.
func appendTxBody(b []byte, body *txv1beta1.TxBody) []byte {
	var buf [scratchSize]byte // a message of the daemon's fits
	scratch := buf[:0]
	for _, m := range body.GetMessages() {
		scratch = encodeAny(scratch[:0], m)
		b = appendMessage(b, fieldTxBodyMessages, scratch)
	}
	b = appendString(b, fieldTxBodyMemo, body.GetMemo())
	return appendUint(b, fieldTxBodyTimeoutHeight, body.GetTimeoutHeight())
}

// encodeAuthInfo writes an AuthInfo with single-mode signer infos and a fee
// (the only shapes Build makes).
func encodeAuthInfo(auth *txv1beta1.AuthInfo) []byte {
	return appendAuthInfo(make([]byte, 0, 128), auth)
}

// appendAuthInfo appends encodeAuthInfo's bytes to b.
func appendAuthInfo(b []byte, auth *txv1beta1.AuthInfo) []byte {
	// Scratch on the stack: a signer info and a fee of a daemon's tx fit.
	var siBuf, innerBuf, modeBuf, feeBuf [scratchSize]byte
	si, inner := siBuf[:0], innerBuf[:0]
	for _, s := range auth.GetSignerInfos() {
		si = si[:0]
		if pk := s.GetPublicKey(); pk != nil {
			inner = encodeAny(inner[:0], pk)
			si = appendMessage(si, fieldSignerInfoPublicKey, inner)
		}
		if mi := s.GetModeInfo(); mi != nil {
			inner = inner[:0]
			if single := mi.GetSingle(); single != nil {
				inner = appendMessage(inner, fieldModeInfoSingle,
					appendUint(modeBuf[:0], fieldSingleMode, uint64(single.GetMode())))
			}
			si = appendMessage(si, fieldSignerInfoModeInfo, inner)
		}
		si = appendUint(si, fieldSignerInfoSequence, s.GetSequence())
		b = appendMessage(b, fieldAuthInfoSignerInfos, si)
	}
	if fee := auth.GetFee(); fee != nil {
		f := feeBuf[:0]
		for _, c := range fee.GetAmount() {
			inner = appendString(inner[:0], fieldCoinDenom, c.GetDenom())
			inner = appendString(inner, fieldCoinAmount, c.GetAmount())
			f = appendMessage(f, fieldFeeAmount, inner)
		}
		f = appendUint(f, fieldFeeGasLimit, fee.GetGasLimit())
		f = appendString(f, fieldFeePayer, fee.GetPayer())
		f = appendString(f, fieldFeeGranter, fee.GetGranter())
		b = appendMessage(b, fieldAuthInfoFee, f)
	}
	return b
}

// encodePubKeyValue writes an ethsecp256k1.PubKey.
func encodePubKeyValue(key []byte) []byte {
	return appendBytes(make([]byte, 0, 2+len(key)), fieldPubKeyKey, key)
}

// encodePubKey is encodePubKeyValue for a key, in one allocation.
func encodePubKey(key keys.PubKey) []byte {
	b := make([]byte, 2, 2+keys.PubKeySize)
	b[0], b[1] = byte(fieldPubKeyKey<<3|2), keys.PubKeySize
	return key.AppendBytes(b)
}

// encodeSignDoc writes a SignDoc.
func encodeSignDoc(bodyBytes, authInfoBytes []byte, chainID string, accountNumber uint64) []byte {
	b := make([]byte, 0, len(bodyBytes)+len(authInfoBytes)+len(chainID)+24)
	return appendSignDoc(b, bodyBytes, authInfoBytes, chainID, accountNumber)
}

// appendSignDoc appends encodeSignDoc's bytes to b.
func appendSignDoc(b, bodyBytes, authInfoBytes []byte, chainID string, accountNumber uint64) []byte {
	b = appendBytes(b, fieldSignDocBodyBytes, bodyBytes)
	b = appendBytes(b, fieldSignDocAuthInfoBytes, authInfoBytes)
	b = appendString(b, fieldSignDocChainID, chainID)
	return appendUint(b, fieldSignDocAccountNumber, accountNumber)
}

// encodeTxRaw writes a TxRaw; every signature is written, even an empty one
// (a repeated bytes field has no zero value to omit).
func encodeTxRaw(raw *txv1beta1.TxRaw) []byte {
	n := len(raw.GetBodyBytes()) + len(raw.GetAuthInfoBytes()) + 16
	for _, s := range raw.GetSignatures() {
		n += len(s) + 4
	}
	return appendTxRaw(make([]byte, 0, n), raw)
}

// appendTxRaw appends encodeTxRaw's bytes to b.
func appendTxRaw(b []byte, raw *txv1beta1.TxRaw) []byte {
	b = appendBytes(b, fieldTxRawBodyBytes, raw.GetBodyBytes())
	b = appendBytes(b, fieldTxRawAuthInfoBytes, raw.GetAuthInfoBytes())
	for _, s := range raw.GetSignatures() {
		b = protowire.AppendTag(b, fieldTxRawSignatures, protowire.BytesType)
		b = protowire.AppendBytes(b, s)
	}
	return b
}
