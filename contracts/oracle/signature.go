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
	h := sha256.New()
	h.Write([]byte(strconv.FormatUint(requestID, 10)))
	h.Write([]byte{':'})
	h.Write([]byte(strconv.FormatUint(nonce, 10)))
	h.Write([]byte{':'})
	h.Write([]byte(rawData))
	return hex.EncodeToString(h.Sum(nil))
}
