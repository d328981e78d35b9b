package cometrpc

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"
)

// The registered type names of event data; CometBFT's Go client drops a
// frame whose data has another type or does not decode.
const (
	EventTypeNewBlock = "tendermint/event/NewBlock"
	EventTypeTx       = "tendermint/event/Tx"
)

// ResultEvent is the result of an event frame: the subscription's query
// echoed exactly, the typed data, and the flattened events map.
type ResultEvent struct {
	Query  string              `json:"query"`
	Data   EventData           `json:"data"`
	Events map[string][]string `json:"events"`
}

// EventData is amino-JSON's {"type": …, "value": …} envelope.
type EventData struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// EventDataNewBlock is a NewBlock event's value.
type EventDataNewBlock struct {
	Block               Block               `json:"block"`
	BlockID             BlockID             `json:"block_id"`
	ResultFinalizeBlock ResultFinalizeBlock `json:"result_finalize_block"`
}

// Block carries only the header: the façade's blocks have no other content
// a client reads.
type Block struct {
	Header Header `json:"header"`
}

// Header is the part of a block header the façade fills.
type Header struct {
	ChainID string    `json:"chain_id"`
	Height  Int64     `json:"height"`
	Time    time.Time `json:"time"`
}

// BlockID identifies a block.
type BlockID struct {
	Hash  HexBytes      `json:"hash"`
	Parts PartSetHeader `json:"parts"`
}

// PartSetHeader is a block's part set header.
type PartSetHeader struct {
	Total uint32   `json:"total"`
	Hash  HexBytes `json:"hash"`
}

// ResultFinalizeBlock is the ABCI result of a block.
type ResultFinalizeBlock struct {
	Events           []ABCIEvent       `json:"events"`
	TxResults        []ExecTxResult    `json:"tx_results"`
	ValidatorUpdates []json.RawMessage `json:"validator_updates"`
	AppHash          []byte            `json:"app_hash"`
}

// EventDataTx is a Tx event's value.
type EventDataTx struct {
	TxResult TxResult `json:"TxResult"`
}

// TxResult is a committed tx and its result.
type TxResult struct {
	Height Int64        `json:"height"`
	Index  uint32       `json:"index"`
	Tx     []byte       `json:"tx"`
	Result ExecTxResult `json:"result"`
}

// ExecTxResult is a tx's block-execution result.
type ExecTxResult struct {
	Code      uint32      `json:"code"`
	Data      []byte      `json:"data,omitempty"`
	Log       string      `json:"log,omitempty"`
	Info      string      `json:"info,omitempty"`
	GasWanted Int64       `json:"gas_wanted,omitempty"`
	GasUsed   Int64       `json:"gas_used,omitempty"`
	Events    []ABCIEvent `json:"events"`
	Codespace string      `json:"codespace,omitempty"`
}

// ABCIEvent is one event emitted by the application.
type ABCIEvent struct {
	Type       string           `json:"type"`
	Attributes []EventAttribute `json:"attributes"`
}

// EventAttribute is one key/value of an event.
type EventAttribute struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Index bool   `json:"index"`
}

// NewBlockData is the data of a NewBlock frame for block height at time t
// (UTC), carrying the block's ABCI events (the Complete events among them).
func NewBlockData(chainID string, height int64, t time.Time, events []ABCIEvent) (EventData, error) {
	if events == nil {
		events = []ABCIEvent{}
	}
	return newEventData(EventTypeNewBlock, EventDataNewBlock{
		Block: Block{Header: Header{ChainID: chainID, Height: Int64(height), Time: t.UTC()}},
		ResultFinalizeBlock: ResultFinalizeBlock{
			Events: events, TxResults: []ExecTxResult{}, ValidatorUpdates: []json.RawMessage{}, AppHash: []byte{},
		},
	})
}

// TxData is the data of a Tx frame for the tx at index of block height.
func TxData(height int64, index uint32, tx []byte, result ExecTxResult) (EventData, error) {
	if result.Events == nil {
		result.Events = []ABCIEvent{}
	}
	return newEventData(EventTypeTx, EventDataTx{TxResult: TxResult{Height: Int64(height), Index: index, Tx: tx, Result: result}})
}

func newEventData(typ string, v any) (EventData, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return EventData{}, fmt.Errorf("%s: %w", typ, err)
	}
	return EventData{Type: typ, Value: b}, nil
}

// NewBlock decodes a NewBlock value; an error for another type or a value
// that does not decode.
func (d EventData) NewBlock() (EventDataNewBlock, error) {
	var v EventDataNewBlock
	return v, d.decode(EventTypeNewBlock, &v)
}

// Tx decodes a Tx value; an error for another type or a value that does not
// decode.
func (d EventData) Tx() (EventDataTx, error) {
	var v EventDataTx
	return v, d.decode(EventTypeTx, &v)
}

func (d EventData) decode(typ string, v any) error {
	if d.Type != typ {
		return fmt.Errorf("event data type %q, want %q", d.Type, typ)
	}
	if err := json.Unmarshal(d.Value, v); err != nil {
		return fmt.Errorf("%s value: %w", typ, err)
	}
	return nil
}

// NewEventFrame is the frame sent to a subscriber: a response with the id of
// its subscribe request and the query echoed exactly.
func NewEventFrame(subscribeID ID, query string, data EventData, events map[string][]string) (Response, error) {
	return NewResult(subscribeID, ResultEvent{Query: query, Data: data, Events: events})
}

// DecodeEvent reads a frame's result the way CometBFT's Go client does: the
// data must carry a registered type name and decode as that type.
func DecodeEvent(result json.RawMessage) (ResultEvent, error) {
	var ev ResultEvent
	if err := json.Unmarshal(result, &ev); err != nil {
		return ResultEvent{}, fmt.Errorf("event: %w", err)
	}
	var err error
	switch ev.Data.Type {
	case EventTypeNewBlock:
		_, err = ev.Data.NewBlock()
	case EventTypeTx:
		_, err = ev.Data.Tx()
	default:
		err = fmt.Errorf("unregistered event data type %q", ev.Data.Type)
	}
	if err != nil {
		return ResultEvent{}, fmt.Errorf("event: %w", err)
	}
	return ev, nil
}

// The tm.event values of the two frames.
const (
	TMEventNewBlock = "NewBlock"
	TMEventTx       = "Tx"
)

// EventsMap flattens ABCI events the way CometBFT builds a frame's events
// map: "<type>.<key>" → the values in emission order, plus tm.event. extra
// adds keys of CometBFT's own (tx.hash, tx.height); see TxEventsMap.
func EventsMap(tmEvent string, events []ABCIEvent, extra map[string]string) map[string][]string {
	m := map[string][]string{"tm.event": {tmEvent}}
	for _, e := range events {
		for _, a := range e.Attributes {
			k := e.Type + "." + a.Key
			m[k] = append(m[k], a.Value)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		m[k] = append(m[k], extra[k])
	}
	return m
}

// TxEventsMap is the events map of a Tx frame: the tx's events, tm.event Tx,
// tx.hash (upper-case hex) and tx.height.
func TxEventsMap(hash string, height int64, events []ABCIEvent) map[string][]string {
	return EventsMap(TMEventTx, events, map[string]string{"tx.hash": hash, "tx.height": strconv.FormatInt(height, 10)})
}
