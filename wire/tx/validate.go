package tx

import (
	"bytes"
	"fmt"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/wire/keys"
	signingv1beta1 "github.com/wsconverge/converge/wire/proto/cosmos/tx/signing/v1beta1"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
)

// ValidateBasic is CheckTx's row 4, the stateless message checks
// (ORACLE-SPEC 4.3): at least one message (code 18); every signer and
// provider address a valid bech32 "guru" address (code 7); a submission with
// a data set whose request_id ≠ 0, raw_data ≠ "" and signature ≠ "" (code
// 18); a register or update with a request doc (code 18). It returns nil or
// a *CodeError.
func ValidateBasic(t *Tx) error {
	if len(t.Msgs) == 0 {
		return &CodeError{Code: oracle.CodeInvalidRequest, Reason: "must contain at least one message"}
	}
	for i, m := range t.Msgs {
		if err := validateMsg(m); err != nil {
			err.Reason = fmt.Sprintf("message %d: %s", i, err.Reason)
			return err
		}
	}
	return nil
}

func validateMsg(m any) *CodeError {
	invalidAddr := func(field, addr string, err error) *CodeError {
		return &CodeError{Code: oracle.CodeInvalidAddress, Reason: fmt.Sprintf("invalid %s %q: %v", field, addr, err)}
	}
	invalid := func(reason string) *CodeError {
		return &CodeError{Code: oracle.CodeInvalidRequest, Reason: reason}
	}
	switch m := m.(type) {
	case *oraclev1.MsgSubmitOracleData:
		if err := keys.ValidateAddress(m.GetAuthorityAddress()); err != nil {
			return invalidAddr("authority_address", m.GetAuthorityAddress(), err)
		}
		ds := m.GetDataSet()
		if ds == nil {
			return invalid("data_set is missing")
		}
		if err := keys.ValidateAddress(ds.GetProvider()); err != nil {
			return invalidAddr("provider", ds.GetProvider(), err)
		}
		switch {
		case ds.GetRequestId() == 0:
			return invalid("request_id must not be 0")
		case ds.GetRawData() == "":
			return invalid("raw_data must not be empty")
		case ds.GetSignature() == "":
			return invalid("signature must not be empty")
		}
	case *oraclev1.MsgRegisterOracleRequestDoc:
		if err := keys.ValidateAddress(m.GetModeratorAddress()); err != nil {
			return invalidAddr("moderator_address", m.GetModeratorAddress(), err)
		}
		if m.GetRequestDoc() == nil {
			return invalid("request_doc is missing")
		}
	case *oraclev1.MsgUpdateOracleRequestDoc:
		if err := keys.ValidateAddress(m.GetModeratorAddress()); err != nil {
			return invalidAddr("moderator_address", m.GetModeratorAddress(), err)
		}
		if m.GetRequestDoc() == nil {
			return invalid("request_doc is missing")
		}
	}
	return nil
}

// VerifySignature is the simulated chain's optional verifying mode (D26):
// exactly one signer and one signature, SIGN_MODE_DIRECT, a public key whose
// address is the tx's signer (code 8 otherwise), and an eth_secp256k1
// signature of the SignDoc built from the received body and auth info bytes,
// chainID and the signer's accountNumber (code 4 otherwise).
func VerifySignature(t *Tx, chainID string, accountNumber uint64) error {
	unauthorized := func(format string, args ...any) error {
		return &CodeError{Code: oracle.CodeUnauthorized, Reason: fmt.Sprintf(format, args...)}
	}
	sis := t.AuthInfo.GetSignerInfos()
	if len(sis) != 1 {
		return unauthorized("wrong number of signers; expected 1, got %d", len(sis))
	}
	if len(t.Raw.GetSignatures()) != 1 {
		return unauthorized("wrong number of signatures; expected 1, got %d", len(t.Raw.GetSignatures()))
	}
	if mode := sis[0].GetModeInfo().GetSingle().GetMode(); mode != signingv1beta1.SignMode_SIGN_MODE_DIRECT {
		return unauthorized("unsupported sign mode %v", mode)
	}
	pub, err := t.PubKey()
	if err != nil {
		return &CodeError{Code: oracle.CodeInvalidPubKey, Reason: err.Error()}
	}
	signer, err := keys.DecodeAddress(t.Signer())
	if err != nil || !bytes.Equal(signer, pub.AddressBytes()) {
		return &CodeError{Code: oracle.CodeInvalidPubKey,
			Reason: fmt.Sprintf("pubKey does not match signer address %s with signer index: 0", t.Signer())}
	}
	signDoc, err := SignBytes(t.Raw.GetBodyBytes(), t.Raw.GetAuthInfoBytes(), chainID, accountNumber)
	if err != nil {
		return err
	}
	if err := pub.Verify(signDoc, t.Raw.Signatures[0]); err != nil {
		seq, _ := t.Sequence()
		return unauthorized("signature verification failed; please verify account number (%d), sequence (%d) and chain-id (%s)",
			accountNumber, seq, chainID)
	}
	return nil
}
