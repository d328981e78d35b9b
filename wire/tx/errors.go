package tx

import (
	"errors"
	"fmt"

	"github.com/wsconverge/converge/contracts/oracle"
)

// The kinds of decoding failure; each *CodeError of code 2 wraps one.
var (
	// ErrNonCanonical: the TxRaw bytes break ADR-027 (fields out of order,
	// a wire type other than bytes, a varint longer than needed).
	ErrNonCanonical = errors.New("non-canonical TxRaw")
	// ErrUnknownField: a field the schema does not declare (critical, or
	// anywhere outside TxBody), or a declared field with the wrong wire type.
	ErrUnknownField = errors.New("unknown field")
	// ErrUnknownTypeURL: an Any whose type URL is not a known message, or a
	// message where another kind of message belongs.
	ErrUnknownTypeURL = errors.New("unknown type URL")
	// ErrMalformed: bytes that are not valid protobuf for the message.
	ErrMalformed = errors.New("malformed protobuf")
)

// CodeError is the error type of this package: oracle.CodeError, with the
// SDK code the chain answers with (2 for decoding, 7 or 18 for the stateless
// checks, 4 or 8 for the verifying mode).
type CodeError = oracle.CodeError

func decodeErr(kind error, format string, args ...any) *CodeError {
	return &CodeError{Code: oracle.CodeTxDecode, Reason: fmt.Sprintf(format, args...), Err: kind}
}
