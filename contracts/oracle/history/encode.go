package history

import (
	"slices"
	"time"

	"github.com/wsconverge/converge/contracts/judge"
)

// Recorder collects an oracle run's events: a judge.Recorder with this
// package's canonical encoding.
type Recorder = judge.Recorder[Event]

// NewRecorder returns an empty recorder that keeps every event.
func NewRecorder() *Recorder {
	return judge.NewRecorder(AppendEvent, setSeq, nil)
}

// NewLeanRecorder returns an empty recorder that folds Routine events into
// the hash without keeping them: a long run's peers send most of its
// transactions, and no checker reads their routine success.
func NewLeanRecorder() *Recorder {
	return judge.NewRecorder(AppendEvent, setSeq, func(e *Event) bool { return !Routine(e) })
}

func setSeq(e *Event, seq int64) { e.Seq = seq }

// Routine reports whether e is a peer's routine: a prompt or late
// submission (the peer record), its tx admitted at CheckTx, or delivered
// with code 0. A peer's misbehaviours and rejections, and everything of
// the SUT, the moderator and the intruder, are not routine.
func Routine(e *Event) bool {
	switch {
	case e.Peer != nil:
		return e.Peer.Behaviour == PeerPrompt || e.Peer.Behaviour == PeerLate
	case e.CheckTx != nil:
		return e.CheckTx.Origin == OriginPeer && e.CheckTx.RPCError == "" && e.CheckTx.Code == 0
	case e.Deliver != nil:
		return e.Deliver.Origin == OriginPeer && e.Deliver.Code == 0
	}
	return false
}

// AppendEvent appends e's canonical encoding to b: every field of the
// event and of each payload, in declaration order, with lengths before
// strings and lists, a presence byte before each optional part, and maps
// in sorted key order. Any change to any field changes the encoding.
func AppendEvent(b []byte, e *Event) []byte {
	w := enc{b: b}
	w.int(e.Seq)
	w.time(e.At)
	w.str(string(e.Kind))
	w.int(int64(e.Life))
	if w.has(e.Proc != nil) {
		w.proc(e.Proc)
	}
	if w.has(e.RPC != nil) {
		w.rpc(e.RPC)
	}
	if w.has(e.WS != nil) {
		w.ws(e.WS)
	}
	if w.has(e.CheckTx != nil) {
		w.checkTx(e.CheckTx)
	}
	if w.has(e.Block != nil) {
		w.block(e.Block)
	}
	if w.has(e.Deliver != nil) {
		w.deliver(e.Deliver)
	}
	if w.has(e.Evict != nil) {
		w.evict(e.Evict)
	}
	if w.has(e.Op != nil) {
		w.op(e.Op)
	}
	if w.has(e.Peer != nil) {
		w.peer(e.Peer)
	}
	if w.has(e.Src != nil) {
		w.src(e.Src)
	}
	if w.has(e.Fault != nil) {
		w.fault(e.Fault)
	}
	if w.has(e.White != nil) {
		w.white(e.White)
	}
	return w.b
}

// enc appends the canonical encoding with judge's helpers.
type enc struct{ b []byte }

func (w *enc) str(s string)     { w.b = judge.AppendString(w.b, s) }
func (w *enc) int(v int64)      { w.b = judge.AppendInt(w.b, v) }
func (w *enc) uint(v uint64)    { w.b = judge.AppendUint(w.b, v) }
func (w *enc) bool(v bool)      { w.b = judge.AppendBool(w.b, v) }
func (w *enc) time(t time.Time) { w.b = judge.AppendTime(w.b, t) }

// has writes a presence byte and returns present.
func (w *enc) has(present bool) bool {
	w.bool(present)
	return present
}

func (w *enc) strs(v []string) {
	w.uint(uint64(len(v)))
	for _, s := range v {
		w.str(s)
	}
}

func (w *enc) proc(p *Proc) {
	w.str(string(p.Action))
	w.str(p.Signal)
	w.int(int64(p.Status))
	w.int(int64(p.CrashCall))
	w.str(p.Output)
	w.str(p.Detail)
}

func (w *enc) rpc(r *RPC) {
	w.int(r.Call)
	w.int(r.Conn)
	w.str(string(r.Phase))
	w.str(r.Method)
	w.str(r.ID)
	if w.has(r.Query != nil) {
		q := r.Query
		w.str(q.Path)
		w.int(q.Height)
		w.bool(q.Prove)
		w.str(q.Address)
		w.int(int64(q.Status))
		w.uint(q.RequestID)
		w.uint(q.Nonce)
		w.str(q.Provider)
		w.str(q.DecodeErr)
	}
	if w.has(r.Tx != nil) {
		w.tx(r.Tx)
	}
	if w.has(r.Result != nil) {
		w.rpcResult(r.Result)
	}
	w.time(r.TRecv)
	w.time(r.TDelivered)
	w.bool(r.Lost)
}

func (w *enc) rpcResult(r *RPCResult) {
	w.int(int64(r.ErrCode))
	w.str(r.ErrMessage)
	w.str(r.ErrData)
	w.int(r.Height)
	w.time(r.BlockTime)
	w.str(r.Network)
	w.uint(uint64(r.Code))
	w.str(r.Log)
	w.str(r.Codespace)
	w.str(r.Hash)
	if w.has(r.Value != nil) {
		v := r.Value
		if w.has(v.Account != nil) {
			a := v.Account
			w.str(a.Address)
			w.uint(a.AccountNumber)
			w.uint(a.Sequence)
			w.str(a.PubKey)
		}
		w.bool(v.Docs != nil)
		w.uint(uint64(len(v.Docs)))
		for i := range v.Docs {
			w.doc(&v.Docs[i])
		}
		if w.has(v.Doc != nil) {
			w.doc(v.Doc)
		}
		w.bool(v.Submissions != nil)
		w.uint(uint64(len(v.Submissions)))
		for _, s := range v.Submissions {
			w.uint(s.RequestID)
			w.uint(s.Nonce)
			w.str(s.RawData)
			w.str(s.Provider)
			w.str(s.Signature)
		}
		if w.has(v.DataSet != nil) {
			d := v.DataSet
			w.uint(d.RequestID)
			w.uint(d.Nonce)
			w.uint(d.BlockHeight)
			w.uint(d.BlockTime)
			w.str(d.RawData)
		}
		w.str(v.DecodeErr)
	}
}

func (w *enc) ws(s *WS) {
	w.int(s.Conn)
	w.str(string(s.Action))
	w.str(s.By)
	w.str(s.Query)
	w.str(s.ID)
	w.str(s.Err)
	if w.has(s.Frame != nil) {
		f := s.Frame
		w.str(f.Type)
		w.int(f.Height)
		w.int(int64(f.Index))
		w.str(f.TxHash)
		w.events(f.Events)
		w.time(f.Published)
	}
}

// events writes a frame's events map in sorted key order.
func (w *enc) events(m map[string][]string) {
	w.bool(m != nil)
	w.uint(uint64(len(m)))
	for _, k := range sortedKeys(m) {
		w.str(k)
		w.strs(m[k])
	}
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (w *enc) tx(t *Tx) {
	w.str(t.Hash)
	w.int(int64(t.Size))
	w.str(t.DecodeErr)
	w.str(t.Signer)
	w.int(int64(t.Signers))
	w.int(int64(t.Signatures))
	w.uint(t.Sequence)
	w.str(t.PubKey)
	w.int(int64(t.SignMode))
	w.uint(t.GasLimit)
	w.coins(t.Fee)
	w.str(t.Memo)
	w.uint(t.TimeoutHeight)
	w.msgs(t.Msgs)
	w.str(string(t.Sig))
}

func (w *enc) coins(cs []Coin) {
	w.uint(uint64(len(cs)))
	for _, c := range cs {
		w.str(c.Denom)
		w.str(c.Amount)
	}
}

func (w *enc) msgs(ms []Msg) {
	w.uint(uint64(len(ms)))
	for i := range ms {
		m := &ms[i]
		w.str(m.Type)
		w.str(m.Signer)
		w.uint(m.RequestID)
		w.uint(m.Nonce)
		w.str(m.RawData)
		w.str(m.Provider)
		w.str(m.Signature)
		if w.has(m.Doc != nil) {
			w.doc(m.Doc)
		}
		w.str(m.Reason)
	}
}

func (w *enc) doc(d *Doc) {
	w.uint(d.RequestID)
	w.int(int64(d.OracleType))
	w.str(d.Name)
	w.str(d.Description)
	w.uint(uint64(d.Period))
	w.strs(d.AccountList)
	w.uint(uint64(d.Quorum))
	w.uint(uint64(len(d.Endpoints)))
	for _, e := range d.Endpoints {
		w.str(e.URL)
		w.str(e.ParseRule)
	}
	w.int(int64(d.AggregationRule))
	w.int(int64(d.Status))
	w.uint(d.Nonce)
}

func (w *enc) checkTx(c *CheckTx) {
	w.str(string(c.Origin))
	w.tx(&c.Tx)
	w.str(c.RPCError)
	w.uint(uint64(c.Code))
	w.str(c.Log)
	w.bool(c.Injected)
	w.int(int64(c.Mempool))
}

func (w *enc) block(b *Block) {
	w.int(b.Height)
	w.time(b.Time)
	w.uint(uint64(len(b.Completes)))
	for i := range b.Completes {
		c := &b.Completes[i]
		w.uint(c.RequestID)
		w.uint(c.Nonce)
		w.str(c.RawData)
		w.int(c.BlockHeight)
		w.int(c.BlockTime)
		w.int(int64(c.Rule))
		w.strs(c.Providers)
		w.strs(c.Values)
		w.int(int64(c.Unparsable))
	}
	w.int(int64(b.Txs))
}

func (w *enc) deliver(d *Deliver) {
	w.int(d.Height)
	w.int(int64(d.Index))
	w.str(d.Hash)
	w.str(string(d.Origin))
	w.str(d.Signer)
	w.uint(d.Sequence)
	w.uint(d.GasLimit)
	w.coins(d.Fee)
	w.uint(uint64(d.Code))
	w.str(d.Log)
	w.msgs(d.Msgs)
	w.uint(uint64(len(d.Docs)))
	for j := range d.Docs {
		w.doc(&d.Docs[j])
	}
}

func (w *enc) evict(e *Evict) {
	w.str(string(e.Cause))
	w.str(e.Hash)
	w.str(string(e.Origin))
	w.str(e.Signer)
	w.uint(e.Sequence)
	w.uint(uint64(e.Code))
	w.str(e.Log)
}

func (w *enc) op(o *Op) {
	w.str(string(o.Action))
	w.uint(o.RequestID)
	w.doc(&o.Doc)
	w.str(o.Reason)
	w.str(o.Hash)
	w.uint(o.Sequence)
}

func (w *enc) peer(p *Peer) {
	w.str(p.Provider)
	w.str(string(p.Behaviour))
	w.uint(p.RequestID)
	w.uint(p.Nonce)
	w.str(p.Value)
	w.strs(p.Hashes)
}

func (w *enc) src(s *Src) {
	w.int(s.Exchange)
	w.str(string(s.Phase))
	w.uint(s.RequestID)
	w.int(int64(s.Endpoint))
	w.str(s.Path)
	w.uint(uint64(len(s.Headers)))
	for _, h := range s.Headers {
		w.str(h.Name)
		w.str(h.Value)
	}
	w.str(s.Class)
	w.int(int64(s.Status))
	w.str(s.Body)
	w.time(s.TRecv)
	w.bool(s.Aborted)
}

func (w *enc) fault(f *Fault) {
	w.str(f.ID)
	w.str(string(f.Phase))
	w.str(f.Target)
	w.uint(uint64(len(f.Params)))
	for _, p := range f.Params {
		w.str(p.Key)
		w.str(p.Value)
	}
	w.time(f.Until)
}

func (w *enc) white(x *White) {
	w.str(string(x.Point))
	w.str(x.Name)
	w.uint(x.RequestID)
	w.str(x.Trigger)
	w.strs(x.Rows)
	w.jobState(x.Before)
	w.jobState(x.After)
	w.int(x.Value)
	w.str(x.Detail)
}

func (w *enc) jobState(j *JobState) {
	if !w.has(j != nil) {
		return
	}
	w.int(int64(j.ExecStatus))
	w.int(int64(j.ReqStatus))
	w.uint(j.Nonce)
	w.uint(j.ExecNonce)
	w.time(j.NextRunTime)
	w.bool(j.Superseded)
	w.str(j.URL)
}
