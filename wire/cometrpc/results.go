package cometrpc

import (
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
)

// The methods the façade serves.
const (
	MethodStatus          = "status"
	MethodABCIQuery       = "abci_query"
	MethodBroadcastTxSync = "broadcast_tx_sync"
	MethodSubscribe       = "subscribe"
	MethodUnsubscribe     = "unsubscribe"
	MethodUnsubscribeAll  = "unsubscribe_all"
)

// Subscription limits of a CometBFT node (ORACLE-SPEC 6.3).
const (
	MaxSubscriptionsPerClient = 5
	MaxQueryLength            = 512
)

// ABCIQueryParams are abci_query's params.
type ABCIQueryParams struct {
	Path   string   `json:"path"`
	Data   HexBytes `json:"data"`
	Height Int64    `json:"height"`
	Prove  bool     `json:"prove"`
}

// BroadcastTxParams are broadcast_tx_sync's params: the TxRaw bytes, base64.
type BroadcastTxParams struct {
	Tx []byte `json:"tx"`
}

// SubscribeParams are subscribe's and unsubscribe's params.
type SubscribeParams struct {
	Query string `json:"query"`
}

// NewStatus is the façade's status result: the chain id, the latest block's
// height and time (in UTC), not catching up, and a fixed node identity of a
// CometBFT v0.38 node.
func NewStatus(chainID string, latestHeight int64, latestTime time.Time, earliestTime time.Time) ResultStatus {
	return ResultStatus{
		NodeInfo: NodeInfo{
			ProtocolVersion: ProtocolVersion{P2P: 8, Block: 11, App: 0},
			ID:              "636f6e76657267652d6661636164652d6e6f6465", // hex of "converge-facade-node"
			ListenAddr:      "tcp://127.0.0.1:26656",
			Network:         chainID,
			Version:         "0.38.17",
			Channels:        HexBytes{0x40, 0x20, 0x21, 0x22, 0x23, 0x30, 0x38, 0x60, 0x61, 0x00},
			Moniker:         "converge-facade",
			Other:           NodeInfoOther{TxIndex: "on", RPCAddress: "tcp://127.0.0.1:26657"},
		},
		SyncInfo: SyncInfo{
			LatestBlockHeight:   Int64(latestHeight),
			LatestBlockTime:     latestTime.UTC(),
			EarliestBlockHeight: 1,
			EarliestBlockTime:   earliestTime.UTC(),
		},
		ValidatorInfo: ValidatorInfo{VotingPower: 0},
	}
}

// QueryOK is a successful answer with the protobuf value, read at height.
func QueryOK(value []byte, height int64) ResultABCIQuery {
	if value == nil {
		value = []byte{}
	}
	return ResultABCIQuery{Response: ResponseQuery{Value: value, Height: Int64(height)}}
}

// QueryFailed is a failed answer: the code, the SDK log, codespace sdk and
// a null value.
func QueryFailed(err *oracle.CodeError, height int64) ResultABCIQuery {
	return ResultABCIQuery{Response: ResponseQuery{
		Code: err.Code, Log: err.Log(), Height: Int64(height), Codespace: oracle.Codespace,
	}}
}

// BroadcastAdmitted is the answer for an admitted tx (code 0).
func BroadcastAdmitted(hash []byte) ResultBroadcastTx {
	return ResultBroadcastTx{Hash: hash}
}

// BroadcastRejected is CheckTx's rejection of a tx.
func BroadcastRejected(hash []byte, err *oracle.CodeError) ResultBroadcastTx {
	return ResultBroadcastTx{Code: err.Code, Log: err.Log(), Codespace: oracle.Codespace, Hash: hash}
}

// ReplyOf classifies what a broadcast_tx_sync call gave: a response that
// does not decode, or no response at all (err ≠ nil), is a transport
// failure; a JSON-RPC error is an RPC error; a result is its CheckTx code.
func ReplyOf(resp Response, err error) oracle.BroadcastReply {
	if err != nil {
		return oracle.ReplyTransport()
	}
	if resp.Error != nil {
		return oracle.ReplyRPCError(resp.Error.Message, resp.Error.Data)
	}
	var r ResultBroadcastTx
	if err := resp.DecodeResult(&r); err != nil {
		return oracle.ReplyTransport()
	}
	return r.Reply()
}
