package oracle

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// SubmissionSignature is the reference daemon's `signature` field of a
// SubmitDataSet (D24): the lower-case hex SHA-256 of
// "request_id:nonce:raw_data". The chain only requires it to be non-empty;
// being deterministic, it makes a re-signed result with the same sequence and
// gas give the same tx bytes.
func SubmissionSignature(requestID, nonce uint64, rawData string) string {
	// One string for the hex and, for a long value, a buffer: the chain's
	// peers and the daemon sign every round with it.
	var buf [128]byte // a short value's preimage stays on the stack
	b := buf[:0]
	b = strconv.AppendUint(b, requestID, 10)
	b = append(b, ':')
	b = strconv.AppendUint(b, nonce, 10)
	b = append(b, ':')
	b = append(b, rawData...)
	sum := sha256.Sum256(b)
	var out [2 * sha256.Size]byte
	hex.Encode(out[:], sum[:])
	return string(out[:])
}
