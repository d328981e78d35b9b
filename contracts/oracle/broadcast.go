package oracle

import (
	"fmt"
	"strings"
)

// The texts CometBFT puts in the JSON-RPC error of a broadcast_tx_sync that
// CheckTx never saw (ORACLE-SPEC 4.3 rows 1 and 2).
const (
	RPCErrTxInCache   = "tx already exists in cache"
	RPCErrMempoolFull = "mempool is full"
)

// BroadcastReply is what a broadcast_tx_sync gave the Submitter: a CheckTx
// code, a JSON-RPC error, or no answer at all.
type BroadcastReply struct {
	// Transport: no usable answer (connection error, timeout, undecodable
	// response).
	Transport bool
	// RPCError: a JSON-RPC error; RPCErrorText is its message and data.
	RPCError     bool
	RPCErrorText string
	// Code is the CheckTx code of an answer.
	Code uint32
}

// ReplyCode is a CheckTx answer with the given code.
func ReplyCode(code uint32) BroadcastReply { return BroadcastReply{Code: code} }

// ReplyRPCError is a JSON-RPC error answer.
func ReplyRPCError(message, data string) BroadcastReply {
	return BroadcastReply{RPCError: true, RPCErrorText: strings.TrimSpace(message + " " + data)}
}

// ReplyTransport is a broadcast without an answer.
func ReplyTransport() BroadcastReply { return BroadcastReply{Transport: true} }

// BroadcastClass is a row of the response table of ORACLE-SPEC 3.5.
type BroadcastClass int

const (
	// ClassSuccess: code 0.
	ClassSuccess BroadcastClass = iota
	// ClassAlreadyAdmitted: code 19, or the RPC error "tx already exists in
	// cache": the identical tx was admitted before (D3).
	ClassAlreadyAdmitted
	// ClassSequenceMismatch: code 32.
	ClassSequenceMismatch
	// ClassOutOfGas: code 11 (D5).
	ClassOutOfGas
	// ClassInsufficientFee: code 13 (D4).
	ClassInsufficientFee
	// ClassTransient: code 20, or the RPC error "mempool is full".
	ClassTransient
	// ClassRejected: any other non-zero code (D6).
	ClassRejected
	// ClassAmbiguous: a transport error, a timeout or another RPC error; the
	// tx may or may not have been admitted.
	ClassAmbiguous
)

func (c BroadcastClass) String() string {
	switch c {
	case ClassSuccess:
		return "success"
	case ClassAlreadyAdmitted:
		return "already admitted"
	case ClassSequenceMismatch:
		return "sequence mismatch"
	case ClassOutOfGas:
		return "out of gas"
	case ClassInsufficientFee:
		return "insufficient fee"
	case ClassTransient:
		return "transient"
	case ClassRejected:
		return "rejected"
	case ClassAmbiguous:
		return "ambiguous"
	}
	return fmt.Sprintf("BroadcastClass(%d)", int(c))
}

// ClassifyBroadcast is the Submitter's response table (ORACLE-SPEC 3.5).
func ClassifyBroadcast(r BroadcastReply) BroadcastClass {
	switch {
	case r.Transport:
		return ClassAmbiguous
	case r.RPCError && strings.Contains(r.RPCErrorText, RPCErrTxInCache):
		return ClassAlreadyAdmitted
	case r.RPCError && strings.Contains(r.RPCErrorText, RPCErrMempoolFull):
		return ClassTransient
	case r.RPCError:
		return ClassAmbiguous
	}
	switch r.Code {
	case CodeOK:
		return ClassSuccess
	case CodeTxInMempoolCache:
		return ClassAlreadyAdmitted
	case CodeWrongSequence:
		return ClassSequenceMismatch
	case CodeOutOfGas:
		return ClassOutOfGas
	case CodeInsufficientFee:
		return ClassInsufficientFee
	case CodeMempoolIsFull:
		return ClassTransient
	}
	return ClassRejected
}

// BroadcastAction is what the attempt loop does after a classified answer.
type BroadcastAction int

const (
	// ActionDone: the result counts as submitted; TxSubmitted++.
	ActionDone BroadcastAction = iota
	// ActionRetry: wait SubmitRetryWait and try again, if attempts remain;
	// otherwise give up.
	ActionRetry
	// ActionGiveUp: stop; the job takes the "submission gave up" row.
	ActionGiveUp
)

func (a BroadcastAction) String() string {
	switch a {
	case ActionDone:
		return "done"
	case ActionRetry:
		return "retry"
	case ActionGiveUp:
		return "give up"
	}
	return fmt.Sprintf("BroadcastAction(%d)", int(a))
}

// Action is the "then" column of the response table.
func (c BroadcastClass) Action() BroadcastAction {
	switch c {
	case ClassSuccess, ClassAlreadyAdmitted:
		return ActionDone
	case ClassInsufficientFee, ClassRejected:
		return ActionGiveUp
	}
	return ActionRetry
}

// AdjustsGas reports whether the remaining attempts of this result use
// AdjustGas(gas, gas.adjustment) (D5: only after code 11).
func (c BroadcastClass) AdjustsGas() bool { return c == ClassOutOfGas }
