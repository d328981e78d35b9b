package core

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
)

func TestSequenceUpdate(t *testing.T) {
	cases := []struct {
		class  oracle.BroadcastClass
		next   uint64
		resync bool
	}{
		{oracle.ClassSuccess, 11, false},         // code 0: L + 1
		{oracle.ClassAlreadyAdmitted, 11, false}, // code 19: L + 1
		{oracle.ClassSequenceMismatch, 10, true}, // code 32: resync before the next broadcast
		{oracle.ClassOutOfGas, 10, false},        // anything else: unchanged
		{oracle.ClassInsufficientFee, 10, false},
		{oracle.ClassTransient, 10, false},
		{oracle.ClassRejected, 10, false},
		{oracle.ClassAmbiguous, 10, false},
	}
	for _, tc := range cases {
		next, resync := SequenceUpdate(10, tc.class)
		require.Equal(t, tc.next, next, tc.class.String())
		require.Equal(t, tc.resync, resync, tc.class.String())
	}
}
