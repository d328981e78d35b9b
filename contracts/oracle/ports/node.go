package ports

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
)

// The node's answers a Reply carries, as data: what CometBFT's status,
// abci_query and broadcast_tx_sync return, and a JSON-RPC error object,
// in the shapes (and JSON forms) CometBFT's client decodes. A daemon, the
// simulated world and the RPC façade exchange these very values;
// wire/cometrpc encodes and decodes them (its types of the same names are
// these).

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data,omitempty"`
}

func (e *RPCError) Error() string {
	if e.Data == "" {
		return fmt.Sprintf("RPC error %d - %s", e.Code, e.Message)
	}
	return fmt.Sprintf("RPC error %d - %s: %s", e.Code, e.Message, e.Data)
}

// ResultStatus is status's result, in the shape CometBFT's client decodes.
type ResultStatus struct {
	NodeInfo      NodeInfo      `json:"node_info"`
	SyncInfo      SyncInfo      `json:"sync_info"`
	ValidatorInfo ValidatorInfo `json:"validator_info"`
}

// NodeInfo is a node's p2p identity; Network is the chain id.
type NodeInfo struct {
	ProtocolVersion ProtocolVersion `json:"protocol_version"`
	ID              string          `json:"id"`
	ListenAddr      string          `json:"listen_addr"`
	Network         string          `json:"network"`
	Version         string          `json:"version"`
	Channels        HexBytes        `json:"channels"`
	Moniker         string          `json:"moniker"`
	Other           NodeInfoOther   `json:"other"`
}

// ProtocolVersion is the node's protocol versions.
type ProtocolVersion struct {
	P2P   Uint64 `json:"p2p"`
	Block Uint64 `json:"block"`
	App   Uint64 `json:"app"`
}

// NodeInfoOther is the rest of the node info.
type NodeInfoOther struct {
	TxIndex    string `json:"tx_index"`
	RPCAddress string `json:"rpc_address"`
}

// SyncInfo is the node's view of the chain.
type SyncInfo struct {
	LatestBlockHash     HexBytes  `json:"latest_block_hash"`
	LatestAppHash       HexBytes  `json:"latest_app_hash"`
	LatestBlockHeight   Int64     `json:"latest_block_height"`
	LatestBlockTime     time.Time `json:"latest_block_time"`
	EarliestBlockHash   HexBytes  `json:"earliest_block_hash"`
	EarliestAppHash     HexBytes  `json:"earliest_app_hash"`
	EarliestBlockHeight Int64     `json:"earliest_block_height"`
	EarliestBlockTime   time.Time `json:"earliest_block_time"`
	CatchingUp          bool      `json:"catching_up"`
}

// ValidatorInfo is the node's validator identity; PubKey is null for a
// node that is not a validator.
type ValidatorInfo struct {
	Address     HexBytes        `json:"address"`
	PubKey      json.RawMessage `json:"pub_key"`
	VotingPower Int64           `json:"voting_power"`
}

// ResultABCIQuery is abci_query's result.
type ResultABCIQuery struct {
	Response ResponseQuery `json:"response"`
}

// ResponseQuery is the ABCI answer of a query. Key and Value are base64,
// null when nil; ProofOps is always null here.
type ResponseQuery struct {
	Code      uint32          `json:"code"`
	Log       string          `json:"log"`
	Info      string          `json:"info"`
	Index     Int64           `json:"index"`
	Key       []byte          `json:"key"`
	Value     []byte          `json:"value"`
	ProofOps  json.RawMessage `json:"proof_ops"`
	Height    Int64           `json:"height"`
	Codespace string          `json:"codespace"`
}

// Err is the answer's failure as an *oracle.CodeError (Reason = the full
// log), or nil for code 0.
func (r ResultABCIQuery) Err() *oracle.CodeError {
	if r.Response.Code == 0 {
		return nil
	}
	return &oracle.CodeError{Code: r.Response.Code, Reason: r.Response.Log}
}

// ResultBroadcastTx is broadcast_tx_sync's result: CheckTx's answer.
type ResultBroadcastTx struct {
	Code      uint32   `json:"code"`
	Data      HexBytes `json:"data"`
	Log       string   `json:"log"`
	Codespace string   `json:"codespace"`
	Hash      HexBytes `json:"hash"`
}

// Reply is the answer as the Submitter classifies it.
func (r ResultBroadcastTx) Reply() oracle.BroadcastReply { return oracle.ReplyCode(r.Code) }

// ---- the scalars of CometBFT's JSON

// Int64 is a 64-bit integer written as a JSON string ("42"), as CometBFT
// writes int64 fields. It decodes from a string or a bare number.
type Int64 int64

func (n Int64) MarshalJSON() ([]byte, error) {
	return []byte(`"` + strconv.FormatInt(int64(n), 10) + `"`), nil
}

func (n *Int64) UnmarshalJSON(b []byte) error {
	s, err := intText(b)
	if err != nil || s == "" {
		return err
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("int64: %w", err)
	}
	*n = Int64(v)
	return nil
}

// Uint64 is a 64-bit unsigned integer written as a JSON string.
type Uint64 uint64

func (n Uint64) MarshalJSON() ([]byte, error) {
	return []byte(`"` + strconv.FormatUint(uint64(n), 10) + `"`), nil
}

func (n *Uint64) UnmarshalJSON(b []byte) error {
	s, err := intText(b)
	if err != nil || s == "" {
		return err
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return fmt.Errorf("uint64: %w", err)
	}
	*n = Uint64(v)
	return nil
}

// intText is the digits of a JSON string or number; "" for null.
func intText(b []byte) (string, error) {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		return "", nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return "", err
		}
		if s == "" {
			return "", fmt.Errorf("empty integer string")
		}
		return s, nil
	}
	return string(b), nil
}

// HexBytes is a byte string written as upper-case hex, as CometBFT writes
// hashes. It decodes from hex in either case; "" and null decode to nil.
type HexBytes []byte

func (h HexBytes) MarshalJSON() ([]byte, error) {
	return []byte(`"` + strings.ToUpper(hex.EncodeToString(h)) + `"`), nil
}

func (h *HexBytes) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		*h = nil
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("hex bytes: %w", err)
	}
	if s == "" {
		*h = nil
		return nil
	}
	v, err := hex.DecodeString(s)
	if err != nil {
		return fmt.Errorf("hex bytes: %w", err)
	}
	*h = v
	return nil
}

func (h HexBytes) String() string {
	// Upper-case hex written directly: every broadcast's answer carries a
	// hash, and encoding then upper-casing cost a second pass and string.
	// A hash's digits are written on the stack and copied once.
	const digits = "0123456789ABCDEF"
	var buf [64]byte
	b := buf[:0]
	if 2*len(h) > len(buf) {
		b = make([]byte, 0, 2*len(h))
	}
	for _, c := range h {
		b = append(b, digits[c>>4], digits[c&15])
	}
	return string(b)
}
