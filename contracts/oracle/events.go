package oracle

import (
	"fmt"
	"time"
)

// The type URLs of the oracle module's messages; `message.action` carries them.
const (
	TypeURLSubmit   = "/guru.oracle.v1.MsgSubmitOracleData"
	TypeURLRegister = "/guru.oracle.v1.MsgRegisterOracleRequestDoc"
	TypeURLUpdate   = "/guru.oracle.v1.MsgUpdateOracleRequestDoc"
)

// The three subscription queries of the EventWatcher, byte for byte
// (ORACLE-SPEC 3.2).
const (
	QueryRegister = "tm.event='Tx' AND message.action='" + TypeURLRegister + "'"
	QueryUpdate   = "tm.event='Tx' AND message.action='" + TypeURLUpdate + "'"
	QueryComplete = "tm.event='NewBlock' AND complete_oracle_data_set.request_id EXISTS"
)

// The event types the chain emits (ORACLE-SPEC 4.4-4.6).
const (
	EventRegister = "register_oracle_request_doc"
	EventUpdate   = "update_oracle_request_doc"
	EventComplete = "complete_oracle_data_set"
	EventSubmit   = "submit_oracle_data"
	EventMessage  = "message"
)

// Keys of the events map of a frame: "<event type>.<attribute>", plus the
// keys CometBFT adds itself.
const (
	KeyTMEvent    = "tm.event"
	KeyTxHash     = "tx.hash"
	KeyTxHeight   = "tx.height"
	KeyAction     = EventMessage + ".action"
	KeySender     = EventMessage + ".sender"
	KeyModule     = EventMessage + ".module"
	KeyRegisterID = EventRegister + ".request_id"
	KeyUpdateID   = EventUpdate + ".request_id"

	KeyCompleteID          = EventComplete + ".request_id"
	KeyCompleteNonce       = EventComplete + ".nonce"
	KeyCompleteRawData     = EventComplete + ".raw_data"
	KeyCompleteBlockHeight = EventComplete + ".block_height"
	KeyCompleteBlockTime   = EventComplete + ".block_time"
	KeyCompleteMode        = EventComplete + ".mode"
)

// Subscription is one of the EventWatcher's three subscriptions.
type Subscription int

const (
	SubRegister Subscription = iota
	SubUpdate
	SubComplete
)

// Subscriptions lists the three in the order the watcher subscribes.
var Subscriptions = []Subscription{SubRegister, SubUpdate, SubComplete}

// Query is the subscription's query string.
func (s Subscription) Query() string {
	switch s {
	case SubRegister:
		return QueryRegister
	case SubUpdate:
		return QueryUpdate
	case SubComplete:
		return QueryComplete
	}
	return ""
}

func (s Subscription) String() string {
	switch s {
	case SubRegister:
		return "register"
	case SubUpdate:
		return "update"
	case SubComplete:
		return "complete"
	}
	return fmt.Sprintf("Subscription(%d)", int(s))
}

// CompleteEntry is one completed round of a Complete frame.
type CompleteEntry struct {
	RequestID uint64
	Nonce     uint64
	BlockTime time.Time // whole unix seconds, UTC
}
