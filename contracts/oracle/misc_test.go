package oracle

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSubmissionSignature(t *testing.T) {
	// sha256("7:6:101.5"), computed independently with sha256sum.
	require.Equal(t, "c87b7278a39f759f5e2b45f8bb162d197104dfcb42d9c3f3d5e8cd2b83648df6", SubmissionSignature(7, 6, "101.5"))
	require.NotEqual(t, SubmissionSignature(7, 6, "101.5"), SubmissionSignature(7, 7, "101.5"))
	require.NotEqual(t, SubmissionSignature(1, 23, "x"), SubmissionSignature(12, 3, "x"))
	require.Len(t, SubmissionSignature(0, 0, ""), 64)
}

func TestCodeLog(t *testing.T) {
	require.Equal(t, "account sequence mismatch, expected 5, got 4: incorrect account sequence", SequenceMismatchLog(5, 4))
	require.Equal(t, "not exist RequestDoc(req_id: 7): invalid request", CodeLog(CodeInvalidRequest, "not exist RequestDoc(req_id: 7)"))
	require.Equal(t, "tx parse error", CodeLog(CodeTxDecode, ""))
	require.Equal(t, "x: error code 77", CodeLog(77, "x"))
	for code, text := range map[uint32]string{2: "tx parse error", 4: "unauthorized", 5: "insufficient funds", 6: "unknown request",
		7: "invalid address", 8: "invalid pubkey", 11: "out of gas", 13: "insufficient fee", 18: "invalid request",
		19: "tx already in mempool", 20: "mempool is full", 22: "key not found", 32: "incorrect account sequence"} {
		require.Equal(t, text, CodeText(code))
	}
	require.Empty(t, CodeText(0))
}

func TestStrings(t *testing.T) {
	require.Equal(t, "ENABLED", StatusEnabled.String())
	require.Equal(t, "RequestStatus(9)", RequestStatus(9).String())
	require.Equal(t, "Executing", ExecExecuting.String())
	require.Equal(t, "ExecStatus(9)", ExecStatus(9).String())
	require.Equal(t, "complete", SubComplete.String())
	require.Equal(t, "give up", ActionGiveUp.String())
	require.Equal(t, "already admitted", ClassAlreadyAdmitted.String())
	require.Equal(t, sec(30), doc().PeriodDuration())
}

func TestCodeError(t *testing.T) {
	e := Errorf(CodeInvalidRequest, "not exist RequestDoc(req_id: %d)", 7)
	require.Equal(t, "not exist RequestDoc(req_id: 7): invalid request", e.Log())
	require.Equal(t, "code 18: not exist RequestDoc(req_id: 7): invalid request", e.Error())
	kind := errors.New("kind")
	require.ErrorIs(t, &CodeError{Code: 2, Reason: "r", Err: kind}, kind)
}
