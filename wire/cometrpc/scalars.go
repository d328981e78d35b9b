package cometrpc

import (
	"encoding/hex"
	"fmt"

	"github.com/wsconverge/converge/contracts/oracle/ports"
)

// HexBytesFromString parses hex in either case (a tx hash, for example).
func HexBytesFromString(s string) (HexBytes, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("hex bytes: %w", err)
	}
	return b, nil
}

// The node's answers are shared vocabulary (contracts/oracle/ports): a
// daemon reads them from a Reply. These names are those types.
type (
	RPCError          = ports.RPCError
	ResultStatus      = ports.ResultStatus
	NodeInfo          = ports.NodeInfo
	ProtocolVersion   = ports.ProtocolVersion
	NodeInfoOther     = ports.NodeInfoOther
	SyncInfo          = ports.SyncInfo
	ValidatorInfo     = ports.ValidatorInfo
	ResultABCIQuery   = ports.ResultABCIQuery
	ResponseQuery     = ports.ResponseQuery
	ResultBroadcastTx = ports.ResultBroadcastTx
	Int64             = ports.Int64
	Uint64            = ports.Uint64
	HexBytes          = ports.HexBytes
)
