package chain

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/wire/cometrpc"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
)

// Frame is an event the chain publishes after a block (ORACLE-SPEC 4.6):
// one NewBlock frame, then one Tx frame per included tx. A frame answers a
// subscription's query without its events map being built (it is a
// cometrpc.Lookup); the map and the typed data are built only when a
// subscriber needs them (EventsMap, Data, Response), so the frames nobody
// subscribed to cost little. A frame is safe for concurrent use.
type Frame struct {
	// Type is the frame's tm.event: cometrpc.TMEventNewBlock or TMEventTx.
	Type   string
	Height int64
	// Index is a Tx frame's index in its block.
	Index int
	// Published is the clock time of the block that published the frame.
	Published time.Time

	chainID   string
	blockTime time.Time
	// abci are the block's events (NewBlock); a Tx frame derives them
	// (abciOnce) from its tx's messages and msgEvents, the events its
	// register and update messages emitted (nil for a submission).
	abci      []cometrpc.ABCIEvent
	abciOnce  sync.Once
	m         *memTx
	msgEvents [][]cometrpc.ABCIEvent
	code      uint32 // the tx's result
	log       string
	gasUsed   uint64

	once   sync.Once
	events map[string][]string
}

// abciEvents are the frame's ABCI events: the block's, or those of a
// successful tx's messages in order (a failed tx emits none).
func (f *Frame) abciEvents() []cometrpc.ABCIEvent {
	if f.m == nil {
		return f.abci
	}
	f.abciOnce.Do(func() {
		if f.code != 0 {
			return
		}
		for i, msg := range f.m.msgs {
			if s, ok := msg.(*oraclev1.MsgSubmitOracleData); ok {
				if f.abci == nil {
					f.abci = submitEvents(s) // a tx's first events are used as they are
				} else {
					f.abci = append(f.abci, submitEvents(s)...)
				}
			} else if i < len(f.msgEvents) {
				f.abci = append(f.abci, f.msgEvents[i]...)
			}
		}
	})
	return f.abci
}

// EventsMap is the frame's events map, as CometBFT builds it: tm.event,
// "<type>.<attribute>" for every ABCI event attribute in emission order,
// and for a Tx frame tx.hash and tx.height. Callers must not modify it.
func (f *Frame) EventsMap() map[string][]string {
	f.once.Do(func() {
		if f.Type == cometrpc.TMEventTx {
			f.events = cometrpc.TxEventsMap(f.TxHash(), f.Height, f.abciEvents())
		} else {
			f.events = cometrpc.EventsMap(f.Type, f.abci, nil)
		}
	})
	return f.events
}

// HasValue reports whether the frame's events map has value under key,
// without building the map (cometrpc.Lookup).
func (f *Frame) HasValue(key, value string) bool {
	found := false
	f.each(key, func(v string) bool {
		found = v == value
		return !found
	})
	return found
}

// Exists reports whether the frame's events map has key (cometrpc.Lookup).
func (f *Frame) Exists(key string) bool {
	found := false
	f.each(key, func(string) bool {
		found = true
		return false
	})
	return found
}

// each calls yield with the values of key in the events map, until it
// returns false.
func (f *Frame) each(key string, yield func(string) bool) {
	if f.eachSubmit(key, yield) {
		return
	}
	switch {
	case key == oracle.KeyTMEvent:
		yield(f.Type)
		return
	case f.Type == cometrpc.TMEventTx && key == oracle.KeyTxHash:
		yield(f.TxHash())
		return
	case f.Type == cometrpc.TMEventTx && key == oracle.KeyTxHeight:
		yield(strconv.FormatInt(f.Height, 10))
		return
	}
	for _, e := range f.abciEvents() {
		if len(key) <= len(e.Type) || key[len(e.Type)] != '.' || key[:len(e.Type)] != e.Type {
			continue
		}
		attr := key[len(e.Type)+1:]
		for _, a := range e.Attributes {
			if a.Key == attr && !yield(a.Value) {
				return
			}
		}
	}
}

// eachSubmit is each of an ABCI event attribute's key for a Tx frame
// whose messages are all submissions, without deriving their events: a
// submission's attributes are known one by one (submitAttr). Every
// subscription looks up every Tx frame of a block, and most are peers'
// and the daemon's submissions, which no subscription matches. It
// reports false, having yielded nothing, for any other frame or key.
func (f *Frame) eachSubmit(key string, yield func(string) bool) bool {
	if f.m == nil || key == oracle.KeyTMEvent || key == oracle.KeyTxHash || key == oracle.KeyTxHeight {
		return false
	}
	for _, msg := range f.m.msgs {
		if _, ok := msg.(*oraclev1.MsgSubmitOracleData); !ok {
			return false
		}
	}
	typ, attr, ok := strings.Cut(key, ".")
	if f.code != 0 || !ok {
		return true // a failed tx emits no events; a key without a type names none
	}
	for _, msg := range f.m.msgs {
		if v, ok := submitAttr(msg.(*oraclev1.MsgSubmitOracleData), typ, attr); ok && !yield(v) {
			return true
		}
	}
	return true
}

// Data is the frame's typed data: a NewBlock value with the block's events
// or a Tx value with the tx and its result, under CometBFT's registered
// type names.
func (f *Frame) Data() (cometrpc.EventData, error) {
	if f.Type == cometrpc.TMEventNewBlock {
		return cometrpc.NewBlockData(f.chainID, f.Height, f.blockTime, f.abci)
	}
	txBytes, _, _ := f.m.built()
	res := cometrpc.ExecTxResult{Code: f.code, Log: f.log, GasWanted: cometrpc.Int64(f.m.gas),
		GasUsed: cometrpc.Int64(f.gasUsed), Events: f.abciEvents()}
	if f.code != 0 {
		res.Codespace = oracle.Codespace
	}
	return cometrpc.TxData(f.Height, uint32(f.Index), txBytes, res)
}

// TxHash is a Tx frame's tx hash (upper-case hex); "" for NewBlock.
func (f *Frame) TxHash() string {
	if f.m == nil {
		return ""
	}
	return f.m.txHash()
}

// Response is the frame as sent to a subscriber: a response reusing the
// subscribe request's id and echoing its query.
func (f *Frame) Response(subscribeID cometrpc.ID, query string) (cometrpc.Response, error) {
	data, err := f.Data()
	if err != nil {
		return cometrpc.Response{}, err
	}
	return cometrpc.NewEventFrame(subscribeID, query, data, f.EventsMap())
}

// Record is the frame's record form for a ws frame event (the caller sets
// the event's time to the delivery).
func (f *Frame) Record() *history.Frame { return f.RecordIn(new(history.Frame)) }

// RecordIn is Record written in rec, memory the caller keeps with its own
// record of the delivery.
func (f *Frame) RecordIn(rec *history.Frame) *history.Frame {
	*rec = history.Frame{Type: f.Type, Height: f.Height, Index: f.Index, TxHash: f.TxHash(), Events: f.EventsMap(),
		Published: f.Published}
	return rec
}

// Matches reports whether the frame matches a subscription's query: the
// matcher the façade and the simulated world filter with. It agrees with
// q.Matches(f.EventsMap()) but builds no map.
func Matches(q *cometrpc.Query, f *Frame) bool { return q.MatchesLookup(f) }

func attr(key, value string) cometrpc.EventAttribute {
	return cometrpc.EventAttribute{Key: key, Value: value, Index: true}
}

// messageEvent is the `message` event every successful message emits.
func messageEvent(action, sender string) cometrpc.ABCIEvent {
	return cometrpc.ABCIEvent{Type: oracle.EventMessage, Attributes: []cometrpc.EventAttribute{
		attr("action", action), attr("sender", sender), attr("module", "oracle"),
	}}
}
