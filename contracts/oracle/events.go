package oracle

import (
	"fmt"
	"math"
	"strconv"
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

// Route is the watcher's routing rule (ORACLE-SPEC 3.2): a frame belongs to
// the subscription whose query equals the frame's result.query. A frame with
// another query, or without an events map, is dropped and counted in
// TotalErrors; Route then returns an error saying why.
func Route(query string, events map[string][]string) (Subscription, error) {
	for _, s := range Subscriptions {
		if s.Query() == query {
			if events == nil {
				return 0, fmt.Errorf("frame for the %s subscription has no events", s)
			}
			return s, nil
		}
	}
	return 0, fmt.Errorf("frame for unknown query %q", query)
}

// RegisterIDs are the request ids of a Register frame: every value of
// register_oracle_request_doc.request_id, in order (one tx may register
// several docs). A value that is not a decimal uint64 is skipped and reported
// in errs.
func RegisterIDs(events map[string][]string) (ids []uint64, errs []error) {
	return requestIDs(events, KeyRegisterID)
}

// UpdateIDs are the request ids of an Update frame: every value of
// update_oracle_request_doc.request_id, in order. No other attribute of the
// frame is read (D10: its nonce is never used).
func UpdateIDs(events map[string][]string) (ids []uint64, errs []error) {
	return requestIDs(events, KeyUpdateID)
}

func requestIDs(events map[string][]string, key string) (ids []uint64, errs []error) {
	for i, v := range events[key] {
		id, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s[%d] = %q: not a decimal uint64", key, i, v))
			continue
		}
		ids = append(ids, id)
	}
	return ids, errs
}

// CompleteEntry is one completed round of a Complete frame.
type CompleteEntry struct {
	RequestID uint64
	Nonce     uint64
	BlockTime time.Time // whole unix seconds, UTC
}

// CompleteEntries decodes a Complete frame (ORACLE-SPEC 3.2): the i-th entry is
// (request_id[i], nonce[i], block_time[i]) for every i below the shortest of
// the three lists. Lists of different lengths give one error (the entries past
// the shortest list are skipped); an entry with a value that does not parse
// gives one error and is skipped alone. Each error counts once in TotalErrors.
func CompleteEntries(events map[string][]string) (entries []CompleteEntry, errs []error) {
	ids, nonces, times := events[KeyCompleteID], events[KeyCompleteNonce], events[KeyCompleteBlockTime]
	n := min(len(ids), len(nonces), len(times))
	if len(ids) != n || len(nonces) != n || len(times) != n {
		errs = append(errs, fmt.Errorf("complete frame: %d request_id, %d nonce and %d block_time values; %d entries used",
			len(ids), len(nonces), len(times), n))
	}
	for i := 0; i < n; i++ {
		id, err1 := strconv.ParseUint(ids[i], 10, 64)
		nonce, err2 := strconv.ParseUint(nonces[i], 10, 64)
		bt, err3 := strconv.ParseUint(times[i], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || bt > math.MaxInt64 {
			errs = append(errs, fmt.Errorf("complete frame entry %d (request_id %q, nonce %q, block_time %q): not decimal uint64s",
				i, ids[i], nonces[i], times[i]))
			continue
		}
		entries = append(entries, CompleteEntry{RequestID: id, Nonce: nonce, BlockTime: time.Unix(int64(bt), 0).UTC()})
	}
	return entries, errs
}
