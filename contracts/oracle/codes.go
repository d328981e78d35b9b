package oracle

import "fmt"

// Codespace is the codespace of every SDK error code the chain answers with.
const Codespace = "sdk"

// The Cosmos SDK error codes the oracle system meets (codespace sdk).
const (
	CodeOK                = 0
	CodeTxDecode          = 2
	CodeUnauthorized      = 4
	CodeInsufficientFunds = 5
	CodeUnknownRequest    = 6
	CodeInvalidAddress    = 7
	CodeInvalidPubKey     = 8
	CodeOutOfGas          = 11
	CodeInsufficientFee   = 13
	CodeInvalidRequest    = 18
	CodeTxInMempoolCache  = 19
	CodeMempoolIsFull     = 20
	CodeKeyNotFound       = 22
	CodeWrongSequence     = 32
)

var codeTexts = map[uint32]string{
	CodeTxDecode:          "tx parse error",
	CodeUnauthorized:      "unauthorized",
	CodeInsufficientFunds: "insufficient funds",
	CodeUnknownRequest:    "unknown request",
	CodeInvalidAddress:    "invalid address",
	CodeInvalidPubKey:     "invalid pubkey",
	CodeOutOfGas:          "out of gas",
	CodeInsufficientFee:   "insufficient fee",
	CodeInvalidRequest:    "invalid request",
	CodeTxInMempoolCache:  "tx already in mempool",
	CodeMempoolIsFull:     "mempool is full",
	CodeKeyNotFound:       "key not found",
	CodeWrongSequence:     "incorrect account sequence",
}

// CodeText is the SDK's registered message for an error code ("" for 0 and
// for codes this system never uses).
func CodeText(code uint32) string {
	return codeTexts[code]
}

// CodeLog is the log line the SDK writes for an error wrapped with a reason:
// "<reason>: <code text>", e.g. "account sequence mismatch, expected 5, got 4:
// incorrect account sequence". An empty reason gives the code text alone.
func CodeLog(code uint32, reason string) string {
	text := CodeText(code)
	if text == "" {
		text = fmt.Sprintf("error code %d", code)
	}
	if reason == "" {
		return text
	}
	return reason + ": " + text
}

// SequenceMismatchLog is the log of a code 32 answer (ORACLE-SPEC 4.3 row 8).
func SequenceMismatchLog(expected, got uint64) string {
	return CodeLog(CodeWrongSequence, fmt.Sprintf("account sequence mismatch, expected %d, got %d", expected, got))
}

// CodeError is a rejection with the SDK code (codespace sdk) the chain
// answers with, for a CheckTx, a block execution or an abci_query.
type CodeError struct {
	Code   uint32
	Reason string
	Err    error // the kind of failure, for errors.Is; may be nil
}

func (e *CodeError) Error() string { return fmt.Sprintf("code %d: %s", e.Code, e.Log()) }

// Log is the answer's log line, as the SDK writes it: "<reason>: <code
// text>".
func (e *CodeError) Log() string { return CodeLog(e.Code, e.Reason) }

func (e *CodeError) Unwrap() error { return e.Err }

// Errorf is a *CodeError with a formatted reason.
func Errorf(code uint32, format string, args ...any) *CodeError {
	return &CodeError{Code: code, Reason: fmt.Sprintf(format, args...)}
}
