package chain

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/wire/cometrpc"
	"github.com/wsconverge/converge/wire/keys"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
	"github.com/wsconverge/converge/wire/records"
)

// minBlockStep is how far a block time must be after the previous one
// (CometBFT's BFT time moves by at least a millisecond).
const minBlockStep = time.Millisecond

// Block is what producing a block gives the caller: the records it made
// and the frames to publish, NewBlock first, then one Tx frame per
// included tx in block order.
type Block struct {
	Height int64
	// Time is the block time: the production time plus any skew (F16),
	// kept after the previous block's.
	Time      time.Time
	Completes []history.Complete
	// Delivered are the deliver records of the included txs, in block
	// order; with Config.OmitRoutine the peers' routine deliveries are
	// left out (Frames still has every tx).
	Delivered []history.Deliver
	Evicted   []history.Evict
	Frames    []*Frame
	// frames is Frames' array (Recycle).
	frames []Frame
}

// ProduceBlock produces the next block at clock time at (ORACLE-SPEC 4.2):
// BeginBlock aggregation, execution of up to max_block_txs mempool txs in
// FIFO order, commit, recheck of the rest, and the frames to publish. It
// records a block event, one deliver event per included tx and one evict
// event per tx the recheck drops, all at time at.
func (c *Chain) ProduceBlock(at time.Time) *Block {
	c.mu.Lock()
	defer c.mu.Unlock()
	bt := at.Add(c.skew).UTC()
	if c.height > 0 && bt.Before(c.blockTime.Add(minBlockStep)) {
		bt = c.blockTime.Add(minBlockStep)
	}
	c.height++
	c.blockTime = bt
	b := &Block{Height: c.height, Time: bt}

	// 1. BeginBlock: it sees only submissions committed in earlier blocks.
	var abci []cometrpc.ABCIEvent
	b.Completes, abci = c.beginBlock(b.Height, bt)
	n := min(len(c.mempool), c.p.MaxBlockTxs)
	c.record(at, history.Event{Kind: history.KindBlock, Block: &history.Block{Height: b.Height, Time: bt,
		Completes: b.Completes, Txs: n}})
	// The block's frames are laid out together, one allocation per block
	// rather than one per tx (none when a recycled block's fit).
	frames, ptrs := c.framesFor(1 + n)
	b.frames, b.Frames = frames, ptrs
	frames[0] = Frame{Type: cometrpc.TMEventNewBlock, Height: b.Height, Published: at,
		chainID: c.p.ChainID, blockTime: bt, abci: abci}
	b.Frames = append(b.Frames, &frames[0])

	// 2. Execution, in FIFO order: each tx's result goes in its frame
	// (and the docs it wrote in the chain's scratch), and then the deliver
	// records are made, in order, all in b.Delivered's array: it has room
	// for exactly them, so a record that is kept keeps none but its
	// block's other deliver records alive (one allocation per block, not
	// one per tx).
	included := c.mempool[:n]
	docsOf := c.docsOf[:0]
	records := 0
	for i, m := range included {
		code, log, docs, events := c.deliver(m)
		frames[1+i] = Frame{Type: cometrpc.TMEventTx, Height: b.Height, Index: i, Published: at,
			msgEvents: events, m: m, code: code, log: log, gasUsed: c.p.GasRequired}
		b.Frames = append(b.Frames, &frames[1+i])
		docsOf = append(docsOf, docs)
		if !c.routine(m.origin, code == 0) {
			records++
		}
	}
	b.Delivered = make([]history.Deliver, 0, records)
	for i, m := range included {
		f := &frames[1+i]
		if !c.routine(m.origin, f.code == 0) {
			_, hash, _ := m.built()
			rec := c.txRecord(m)
			b.Delivered = append(b.Delivered, history.Deliver{Height: b.Height, Index: i, Hash: hash, Origin: m.origin,
				Signer: rec.Signer, Sequence: m.seq, GasLimit: m.gas, Fee: rec.Fee, Code: f.code, Log: f.log,
				Msgs: rec.Msgs, Docs: docsOf[i]})
			c.record(at, history.Event{Kind: history.KindDeliver, Deliver: &b.Delivered[len(b.Delivered)-1]})
		}
		// CometBFT keeps a committed tx in the cache and forgets a failed one.
		if f.code != 0 {
			c.uncache(m)
		}
	}
	clear(docsOf)
	c.docsOf = docsOf[:0]
	clear(c.mempool[:n])
	c.mempool = c.mempool[n:]

	// 3. Commit: the check state restarts from the committed state.
	for _, a := range c.accounts {
		a.checkSeq = a.seq
	}

	// 4. Recheck every tx left, in order.
	kept := c.mempool[:0]
	for _, m := range c.mempool {
		if err := c.stateful(m, false); err != nil {
			ce := asCodeError(err)
			ev := history.Evict{Cause: history.EvictRecheck, Hash: m.txHash(), Origin: m.origin, Signer: m.signer.address,
				Sequence: m.seq, Code: ce.Code, Log: ce.Log()}
			b.Evicted = append(b.Evicted, ev)
			c.record(at, history.Event{Kind: history.KindEvict, Evict: &ev})
			c.uncache(m)
			continue
		}
		m.signer.checkSeq++
		kept = append(kept, m)
	}
	clear(c.mempool[len(kept):])
	c.mempool = kept
	return b
}

// framesFor is room for a block's n frames and their pointers: a
// recycled block's (cleared) when they fit, new otherwise.
func (c *Chain) framesFor(n int) ([]Frame, []*Frame) {
	if cap(c.spareFrames) >= n {
		frames, ptrs := c.spareFrames[:n], c.sparePtrs[:0]
		c.spareFrames, c.sparePtrs = nil, nil
		return frames, ptrs
	}
	return make([]Frame, n), make([]*Frame, 0, n)
}

// Recycle takes back the memory of block b's frames and of the peers' and
// the SUT's txs it included, for later blocks and submissions: one
// allocation per submission (about a million and a half a day in the
// oracle world) and a block's frames. The caller must hold nothing of b's
// any more (nor the admissions PeerSubmit returned for the txs it
// included); what it took from a frame (Record, EventsMap, TxHash, Data,
// Response) is its own and stays. A caller that never recycles (the chain
// cannot tell when a frame is published for the last time) only
// allocates more. Recycling a block twice does nothing.
func (c *Chain) Recycle(b *Block) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b == nil || b.frames == nil {
		return
	}
	for i := range b.frames {
		// A peer's tx is referred to by its frame alone once included:
		// the mempool let go of it, the cache keeps its stamp or key, not
		// it, and its records copied what they show. So is the SUT's,
		// when its answer's hash lies in the caller's room (sutRoom).
		m := b.frames[i].m
		switch {
		case m == nil || len(c.spareOwn)+len(c.spareSUT) >= 2*c.p.MaxBlockTxs:
		case m.origin == history.OriginPeer && m.own != nil && m.own.mem != nil:
			c.spareOwn = append(c.spareOwn, m.own.mem)
		case m.sut != nil && m.sut.hashIn != nil && m.sut.mem != nil:
			c.spareSUT = append(c.spareSUT, m.sut.mem)
		}
	}
	clear(b.frames)
	clear(b.Frames[:cap(b.Frames)])
	if cap(b.frames) > cap(c.spareFrames) {
		c.spareFrames, c.sparePtrs = b.frames[:0], b.Frames[:0]
	}
	b.frames, b.Frames = nil, nil
}

// beginBlock aggregates every ENABLED request whose next round has a
// quorum of distinct providers (ORACLE-SPEC 4.5), in ascending request id,
// and gives the block's Completes and their complete_oracle_data_set
// events.
//
// What a block's rounds keep is laid out for the block as a whole, not
// round by round (a few rounds complete in most blocks): their lists,
// stored DataSets and event attributes in one array (completeMem), and
// every aggregate and number of their events written into one buffer,
// made one string and sliced.
func (c *Chain) beginBlock(height int64, bt time.Time) ([]history.Complete, []cometrpc.ABCIEvent) {
	if !c.p.EnableOracle {
		return nil, nil
	}
	// Only a request written since the last block can be due: one that
	// was not due then stays so until a submission or an update writes it
	// (touch), and one that completed has no submission for its next
	// round yet. Scanning every request on every block was 1 % of the
	// oracle world's day.
	due := c.due[:0]
	slices.SortFunc(c.touched, func(a, b *docState) int {
		return cmp.Compare(a.doc.GetRequestId(), b.doc.GetRequestId())
	})
	for i, d := range c.touched {
		c.touched[i], d.touched = nil, false
		doc := d.doc
		if doc.GetStatus() != oraclev1.RequestStatus_REQUEST_STATUS_ENABLED {
			continue
		}
		subs := d.rounds.get(doc.GetNonce() + 1)
		if len(subs) == 0 || uint64(len(subs)) < uint64(doc.GetQuorum()) {
			continue
		}
		due = append(due, d)
	}
	c.touched = c.touched[:0]
	if len(due) == 0 {
		c.due = due
		return nil, nil
	}
	out := make([]history.Complete, len(due))
	mem := make([]completeMem, len(due))
	text := c.text[:0]
	for i, d := range due {
		doc := d.doc
		n := doc.GetNonce() + 1
		subs := d.rounds.get(n)
		cp := &out[i]
		*cp = history.Complete{RequestID: doc.GetRequestId(), Nonce: n, BlockHeight: height, BlockTime: bt.Unix(),
			Rule: int32(doc.GetAggregationRule())}
		both := mem[i].lists[:]
		if len(subs) > completeMemLists {
			both = make([]string, 2*len(subs))
		}
		cp.Providers, cp.Values = both[:len(subs):len(subs)], both[len(subs):2*len(subs):2*len(subs)]
		for j, s := range subs {
			cp.Providers[j], cp.Values[j] = s.provider, s.raw
		}
		cuts := &mem[i].cuts
		cuts[0] = len(text)
		text, cp.Unparsable = appendAggregate(text, doc.GetAggregationRule(), cp.Values)
		cuts[1] = len(text)
		text = strconv.AppendUint(text, cp.RequestID, 10)
		cuts[2] = len(text)
		text = strconv.AppendUint(text, cp.Nonce, 10)
		cuts[3] = len(text)
		text = strconv.AppendInt(text, cp.BlockHeight, 10)
		cuts[4] = len(text)
		text = strconv.AppendInt(text, cp.BlockTime, 10)
		cuts[5] = len(text)
		// The stored doc is never handed out (queries encode it, Doc and
		// Docs copy it), so it changes in place.
		doc.Nonce = n
		if keep := c.p.KeepRounds; keep > 0 && n > keep {
			d.rounds.forgetTo(n-keep, &c.spare)
		}
	}
	all := string(text)
	c.text = text[:0]
	abci := make([]cometrpc.ABCIEvent, len(due))
	for i, d := range due {
		cp, m := &out[i], &mem[i]
		cut := func(k int) string { return all[m.cuts[k]:m.cuts[k+1]] }
		cp.RawData = cut(0)
		data := &m.data
		data.RequestId, data.Nonce, data.BlockHeight, data.BlockTime, data.RawData =
			cp.RequestID, cp.Nonce, uint64(height), uint64(cp.BlockTime), cp.RawData
		d.data = data
		m.attrs = [...]cometrpc.EventAttribute{
			attr("request_id", cut(1)),
			attr("nonce", cut(2)),
			attr("raw_data", cp.RawData),
			attr("block_height", cut(3)),
			attr("block_time", cut(4)),
			attr("mode", "BeginBlock"),
		}
		abci[i] = cometrpc.ABCIEvent{Type: oracle.EventComplete, Attributes: m.attrs[:]}
	}
	clear(due)
	c.due = due[:0]
	return out, abci
}

// touch notes that request st was written (a submission or an update), so
// that the next block's BeginBlock looks at it. Without the oracle module
// nothing is aggregated, and nothing noted.
func (c *Chain) touch(st *docState) {
	if !st.touched && c.p.EnableOracle {
		st.touched = true
		c.touched = append(c.touched, st)
	}
}

// completeMemLists is the most providers a round's lists share the
// round's completeMem for.
const completeMemLists = 4

// completeMem is what a completed round keeps: its provider and value
// lists, its stored DataSet and its event's attributes, and where its
// aggregate and event numbers lie in the block's text (beginBlock).
type completeMem struct {
	data  oraclev1.DataSet
	lists [2 * completeMemLists]string
	attrs [6]cometrpc.EventAttribute
	cuts  [6]int
}

// deliver executes one included tx (ORACLE-SPEC 4.4): the ante handler
// (sequence, fee, key), then the messages, all or nothing. It returns the
// code and log, the docs the tx wrote and, per message, the events it
// emitted (nil for a submission, whose events are derived on demand).
func (c *Chain) deliver(m *memTx) (code uint32, log string, docs []history.Doc, events [][]cometrpc.ABCIEvent) {
	a := m.signer
	fail := func(err *oracle.CodeError) (uint32, string, []history.Doc, [][]cometrpc.ABCIEvent) {
		return err.Code, err.Log(), nil, nil
	}
	if m.seq != a.seq {
		return fail(sequenceMismatch(a.seq, m.seq))
	}
	if a.balance.Cmp(m.fee) < 0 {
		return fail(oracle.Errorf(oracle.CodeInsufficientFunds, "spendable balance %s%s is smaller than %s%s",
			a.balance, c.p.Denom, m.fee, c.p.Denom))
	}
	// The fee is paid and the sequence used even if a message fails.
	a.balance.Sub(a.balance, m.fee)
	a.seq++
	if a.pubKey == nil {
		var raw []byte
		if m.own != nil {
			raw = m.own.signer.PubKey().Bytes()
		} else {
			raw = m.sut.pubKey
		}
		if pk, err := keys.ParsePubKey(raw); err == nil {
			a.setPubKey(pk.Bytes())
		}
	}
	// A one-message tx that fails has changed nothing (a message checks
	// before it writes), so only longer txs keep an undo log.
	x := &c.exec // one per chain: deliveries do not nest, and it escapes
	*x = execution{c: c, logUndo: len(m.msgs) > 1, decoded: m.own == nil}
	for i, msg := range m.msgs {
		evs, err := x.exec(msg)
		if err != nil {
			x.rollback()
			return fail(&oracle.CodeError{Code: err.Code,
				Reason: fmt.Sprintf("failed to execute message; message index: %d: %s", i, err.Reason)})
		}
		if evs != nil {
			if events == nil {
				events = make([][]cometrpc.ABCIEvent, len(m.msgs))
			}
			events[i] = evs
		}
	}
	for _, r := range x.docsWritten {
		docs = append(docs, records.DocFromProto(c.docState(r).doc))
	}
	return 0, "", docs, events
}

// execution runs a tx's messages with an undo log: a failing message
// rolls the whole tx's messages back (the SDK's cached context).
type execution struct {
	c       *Chain
	logUndo bool
	// decoded: the tx's messages lie in the memory of its decoding (not
	// one of the chain's own txs), so what the chain keeps of them is
	// copied out (keep).
	decoded     bool
	undo        []func()
	docsWritten []uint64
}

// onUndo keeps f to run if a later message of the tx fails.
func (x *execution) onUndo(f func()) {
	if x.logUndo {
		x.undo = append(x.undo, f)
	}
}

func (x *execution) rollback() {
	for i := len(x.undo) - 1; i >= 0; i-- {
		x.undo[i]()
	}
	x.undo, x.docsWritten = nil, nil
}

func (x *execution) exec(msg proto.Message) ([]cometrpc.ABCIEvent, *oracle.CodeError) {
	switch msg := msg.(type) {
	case *oraclev1.MsgSubmitOracleData:
		return x.submit(msg)
	case *oraclev1.MsgRegisterOracleRequestDoc:
		return x.register(msg)
	case *oraclev1.MsgUpdateOracleRequestDoc:
		return x.update(msg)
	}
	return nil, oracle.Errorf(oracle.CodeUnknownRequest, "unrecognized message type %T", msg)
}

// submit stores a provider's value for the next round, replacing its
// earlier one.
func (x *execution) submit(msg *oraclev1.MsgSubmitOracleData) ([]cometrpc.ABCIEvent, *oracle.CodeError) {
	ds := msg.GetDataSet()
	st := x.c.docState(ds.GetRequestId())
	switch {
	case st == nil:
		return nil, oracle.Errorf(oracle.CodeInvalidRequest, "request document not found")
	case !slices.Contains(st.doc.GetAccountList(), msg.GetAuthorityAddress()):
		return nil, oracle.Errorf(oracle.CodeInvalidRequest, "account is not authorized")
	case ds.GetNonce() != st.doc.GetNonce()+1:
		return nil, oracle.Errorf(oracle.CodeInvalidRequest, "nonce is not correct")
	}
	n := ds.GetNonce()
	x.c.touch(st)
	k := x.c.keep(ds, x.decoded)
	// A round's list changes in place: queries encode it at once and
	// aggregation copies what it reads, so no one holds it.
	subs, provider := st.rounds.get(n), k.provider
	if i, found := findProvider(subs, provider); found {
		old := subs[i]
		subs[i] = k
		if !x.logUndo {
			return nil, nil // no closure made for the one-message tx
		}
		x.onUndo(func() {
			cur := st.rounds.get(n)
			j, _ := findProvider(cur, provider)
			cur[j] = old
		})
	} else {
		if subs == nil {
			// Room for every provider at once, not grown one by one.
			subs = x.c.spare.get(len(st.doc.GetAccountList()))
		}
		st.rounds.set(n, slices.Insert(subs, i, k))
		if !x.logUndo {
			return nil, nil
		}
		x.onUndo(func() {
			j, _ := findProvider(st.rounds.get(n), provider)
			if rest := slices.Delete(st.rounds.get(n), j, j+1); len(rest) > 0 {
				st.rounds.set(n, rest)
			} else {
				st.rounds.drop(n)
			}
		})
	}
	return nil, nil // its events are derived when a frame needs them (submitEvents)
}

// submitAttrs are the attributes of a successful MsgSubmitOracleData's
// events in emission order: its message event (messageEvent's three) and
// its submit_oracle_data event. submitAttr gives their values.
var submitAttrs = [...]struct{ typ, key string }{
	{oracle.EventMessage, "action"}, {oracle.EventMessage, "sender"}, {oracle.EventMessage, "module"},
	{oracle.EventSubmit, "request_id"}, {oracle.EventSubmit, "nonce"}, {oracle.EventSubmit, "raw_data"},
	{oracle.EventSubmit, "from_address"},
}

// submitAttr is the value of a submission's attribute key in its event
// of type typ; false when that event has no such attribute.
func submitAttr(msg *oraclev1.MsgSubmitOracleData, typ, key string) (string, bool) {
	ds := msg.GetDataSet()
	switch {
	case typ == oracle.EventMessage && key == "action":
		return oracle.TypeURLSubmit, true
	case typ == oracle.EventMessage && key == "sender", typ == oracle.EventSubmit && key == "from_address":
		return msg.GetAuthorityAddress(), true
	case typ == oracle.EventMessage && key == "module":
		return "oracle", true
	case typ == oracle.EventSubmit && key == "request_id":
		return strconv.FormatUint(ds.GetRequestId(), 10), true
	case typ == oracle.EventSubmit && key == "nonce":
		return strconv.FormatUint(ds.GetNonce(), 10), true
	case typ == oracle.EventSubmit && key == "raw_data":
		return ds.GetRawData(), true
	}
	return "", false
}

// submitEvents are the events of a successful MsgSubmitOracleData.
// The events and their attributes are one allocation (not three): a
// frame derives them for a submission a subscriber is sent.
func submitEvents(msg *oraclev1.MsgSubmitOracleData) []cometrpc.ABCIEvent {
	mem := &struct {
		evs   [2]cometrpc.ABCIEvent
		attrs [len(submitAttrs)]cometrpc.EventAttribute
	}{}
	for i, a := range submitAttrs {
		v, _ := submitAttr(msg, a.typ, a.key)
		mem.attrs[i] = attr(a.key, v)
	}
	mem.evs = [2]cometrpc.ABCIEvent{
		{Type: oracle.EventMessage, Attributes: mem.attrs[0:3:3]},
		{Type: oracle.EventSubmit, Attributes: mem.attrs[3:len(submitAttrs):len(submitAttrs)]},
	}
	return mem.evs[:]
}

// register adds a doc with the next request id and nonce 0.
func (x *execution) register(msg *oraclev1.MsgRegisterOracleRequestDoc) ([]cometrpc.ABCIEvent, *oracle.CodeError) {
	if err := x.c.checkModerator(msg.GetModeratorAddress()); err != nil {
		return nil, err
	}
	doc := proto.Clone(msg.GetRequestDoc()).(*oraclev1.OracleRequestDoc)
	doc.RequestId = uint64(len(x.c.docs)) + 1
	doc.Nonce = 0
	if err := validateDoc(doc); err != nil {
		return nil, err
	}
	x.c.docs = append(x.c.docs, &docState{doc: doc})
	x.onUndo(func() { x.c.docs = x.c.docs[:len(x.c.docs)-1] })
	x.docsWritten = append(x.docsWritten, doc.RequestId)
	return []cometrpc.ABCIEvent{
		messageEvent(oracle.TypeURLRegister, msg.GetModeratorAddress()),
		{Type: oracle.EventRegister, Attributes: docAttributes(doc, false)},
	}, nil
}

// update merges a doc's non-zero fields into the stored one; name,
// description, oracle type and nonce never change, and a disabled doc
// never changes again.
func (x *execution) update(msg *oraclev1.MsgUpdateOracleRequestDoc) ([]cometrpc.ABCIEvent, *oracle.CodeError) {
	if err := x.c.checkModerator(msg.GetModeratorAddress()); err != nil {
		return nil, err
	}
	in := msg.GetRequestDoc()
	st := x.c.docState(in.GetRequestId())
	if st == nil {
		return nil, oracle.Errorf(oracle.CodeInvalidRequest, "request document not found")
	}
	if st.doc.GetStatus() == oraclev1.RequestStatus_REQUEST_STATUS_DISABLED {
		return nil, oracle.Errorf(oracle.CodeInvalidRequest, "request document %d is disabled and cannot change", in.GetRequestId())
	}
	doc := proto.Clone(st.doc).(*oraclev1.OracleRequestDoc)
	if in.GetPeriod() != 0 {
		doc.Period = in.GetPeriod()
	}
	if in.GetStatus() != oraclev1.RequestStatus_REQUEST_STATUS_UNSPECIFIED {
		doc.Status = in.GetStatus()
	}
	if len(in.GetAccountList()) > 0 {
		doc.AccountList = slices.Clone(in.GetAccountList())
	}
	if in.GetQuorum() != 0 {
		doc.Quorum = in.GetQuorum()
	}
	if len(in.GetEndpoints()) > 0 {
		doc.Endpoints = nil
		for _, e := range in.GetEndpoints() {
			doc.Endpoints = append(doc.Endpoints, proto.Clone(e).(*oraclev1.OracleEndpoint))
		}
	}
	if in.GetAggregationRule() != oraclev1.AggregationRule_AGGREGATION_RULE_UNSPECIFIED {
		doc.AggregationRule = in.GetAggregationRule()
	}
	if err := validateDoc(doc); err != nil {
		return nil, err
	}
	before := st.doc
	st.doc = doc
	x.c.touch(st)
	x.onUndo(func() { st.doc = before })
	x.docsWritten = append(x.docsWritten, doc.RequestId)
	// The event echoes the message's nonce, which is not authoritative.
	echo := proto.Clone(doc).(*oraclev1.OracleRequestDoc)
	echo.Nonce = in.GetNonce()
	return []cometrpc.ABCIEvent{
		messageEvent(oracle.TypeURLUpdate, msg.GetModeratorAddress()),
		{Type: oracle.EventUpdate, Attributes: docAttributes(echo, true)},
	}, nil
}

func (c *Chain) checkModerator(sender string) *oracle.CodeError {
	if c.moderator == nil || sender != c.moderator.address {
		return oracle.Errorf(oracle.CodeUnauthorized, "%s is not the moderator", sender)
	}
	return nil
}

// validateDoc is the register rule of ORACLE-SPEC 4.4, also applied to a
// merged update.
func validateDoc(d *oraclev1.OracleRequestDoc) *oracle.CodeError {
	bad := func(format string, args ...any) *oracle.CodeError {
		return oracle.Errorf(oracle.CodeInvalidRequest, "invalid request document: "+format, args...)
	}
	switch {
	case d.GetOracleType() == oraclev1.OracleType_ORACLE_TYPE_UNSPECIFIED:
		return bad("oracle type unspecified")
	case d.GetName() == "":
		return bad("empty name")
	case len(d.GetEndpoints()) == 0:
		return bad("no endpoints")
	case d.GetAggregationRule() == oraclev1.AggregationRule_AGGREGATION_RULE_UNSPECIFIED:
		return bad("aggregation rule unspecified")
	case len(d.GetAccountList()) == 0:
		return bad("empty account list")
	case d.GetQuorum() < 1 || int(d.GetQuorum()) > len(d.GetAccountList()):
		return bad("quorum %d not in [1, %d]", d.GetQuorum(), len(d.GetAccountList()))
	case d.GetStatus() == oraclev1.RequestStatus_REQUEST_STATUS_UNSPECIFIED:
		return bad("status unspecified")
	}
	for _, a := range d.GetAccountList() {
		if err := keys.ValidateAddress(a); err != nil {
			return bad("account %q: %v", a, err)
		}
	}
	return nil
}

// docAttributes are a register or update event's attributes. Their
// encodings are opaque to a daemon (ORACLE-SPEC 4.6): enums by name, lists
// as JSON.
func docAttributes(d *oraclev1.OracleRequestDoc, withNonce bool) []cometrpc.EventAttribute {
	type endpoint struct {
		URL       string `json:"url"`
		ParseRule string `json:"parse_rule"`
	}
	eps := make([]endpoint, len(d.GetEndpoints()))
	for i, e := range d.GetEndpoints() {
		eps[i] = endpoint{e.GetUrl(), e.GetParseRule()}
	}
	accounts, _ := json.Marshal(d.GetAccountList()) // strings always marshal
	endpoints, _ := json.Marshal(eps)
	out := []cometrpc.EventAttribute{
		attr("request_id", strconv.FormatUint(d.GetRequestId(), 10)),
		attr("oracle_type", d.GetOracleType().String()),
		attr("name", d.GetName()),
		attr("description", d.GetDescription()),
		attr("period", strconv.FormatUint(uint64(d.GetPeriod()), 10)),
		attr("account_list", string(accounts)),
		attr("endpoints", string(endpoints)),
		attr("aggregation_rule", d.GetAggregationRule().String()),
		attr("status", d.GetStatus().String()),
	}
	if withNonce {
		out = append(out, attr("nonce", strconv.FormatUint(d.GetNonce(), 10)))
	}
	return out
}

// findProvider finds provider in a round's submissions (sorted by
// provider): its index, or where it would go.
func findProvider(subs []kept, provider string) (int, bool) {
	return slices.BinarySearchFunc(subs, provider, func(s kept, p string) int {
		return strings.Compare(s.provider, p)
	})
}

// asCodeError is err as a *CodeError (code 2 for anything else).
func asCodeError(err error) *oracle.CodeError {
	var ce *oracle.CodeError
	if errors.As(err, &ce) {
		return ce
	}
	return &oracle.CodeError{Code: oracle.CodeTxDecode, Reason: err.Error()}
}
