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
	var keys []string
	if len(extra) > 0 {
		keys = slices.Sorted(maps.Keys(extra))
	}
	return flatten(tmEvent, events, keys, func(k string) string { return extra[k] })
}

// flatten is EventsMap with the extra keys given in order, their values
// by extra. A frame is flattened for every delivery, so the map is built
// in few allocations: one string per distinct key (found from a scratch
// buffer without making a string), one slice holding every value, each
// key's values a full window of it (an append to one copies).
func flatten(tmEvent string, events []ABCIEvent, keys []string, extra func(string) string) map[string][]string {
	type group struct {
		key      string
		n, start int
	}
	var groupBuf [32]group
	groups := groupBuf[:0]
	var index map[string]int // once there are many keys
	var idBuf [64]int32
	ids := idBuf[:0] // each value's group, in emission order
	find := func(k []byte, ks string) {
		g := -1
		if index != nil {
			if i, ok := index[string(k)]; ok {
				g = i
			}
		} else {
			for i := range groups {
				if groups[i].key == string(k) {
					g = i
					break
				}
			}
		}
		if g < 0 {
			if ks == "" {
				ks = string(k)
			}
			g = len(groups)
			groups = append(groups, group{key: ks})
			if index != nil {
				index[ks] = g
			} else if len(groups) > 16 {
				index = make(map[string]int, 2*len(groups))
				for i, x := range groups {
					index[x.key] = i
				}
			}
		}
		groups[g].n++
		ids = append(ids, int32(g))
	}
	find([]byte("tm.event"), "tm.event")
	var buf [64]byte
	for _, e := range events {
		for _, a := range e.Attributes {
			find(append(append(append(buf[:0], e.Type...), '.'), a.Key...), "")
		}
	}
	for _, k := range keys {
		find([]byte(k), k)
	}
	off := 0
	for i := range groups {
		groups[i].start, off = off, off+groups[i].n
		groups[i].n = 0
	}
	all := make([]string, off)
	put := func(v string) {
		g := &groups[ids[0]]
		ids = ids[1:]
		all[g.start+g.n] = v
		g.n++
	}
	put(tmEvent)
	for _, e := range events {
		for _, a := range e.Attributes {
			put(a.Value)
		}
	}
	for _, k := range keys {
		put(extra(k))
	}
	m := make(map[string][]string, len(groups))
	for _, g := range groups {
		m[g.key] = all[g.start : g.start+g.n : g.start+g.n]
	}
	return m
}

// txKeys are the keys TxEventsMap adds, in EventsMap's sorted order.
var txKeys = []string{"tx.hash", "tx.height"}

// TxEventsMap is the events map of a Tx frame: the tx's events, tm.event Tx,
// tx.hash (upper-case hex) and tx.height.
func TxEventsMap(hash string, height int64, events []ABCIEvent) map[string][]string {
	return flatten(TMEventTx, events, txKeys, func(k string) string {
		if k == "tx.hash" {
			return hash
		}
		return strconv.FormatInt(height, 10)
	})
}
