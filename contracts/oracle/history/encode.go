package history

import (
	"slices"

	"github.com/wsconverge/converge/judge"
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
	b = judge.AppendInt(b, e.Seq)
	b = judge.AppendTime(b, e.At)
	b = judge.AppendString(b, string(e.Kind))
	b = judge.AppendInt(b, int64(e.Life))
	b = judge.AppendBool(b, e.Proc != nil)
	if e.Proc != nil {
		b = appendProc(b, e.Proc)
	}
	b = judge.AppendBool(b, e.RPC != nil)
	if e.RPC != nil {
		b = appendRPC(b, e.RPC)
	}
	b = judge.AppendBool(b, e.WS != nil)
	if e.WS != nil {
		b = appendWS(b, e.WS)
	}
	b = judge.AppendBool(b, e.CheckTx != nil)
	if e.CheckTx != nil {
		b = appendCheckTx(b, e.CheckTx)
	}
	b = judge.AppendBool(b, e.Block != nil)
	if e.Block != nil {
		b = appendBlock(b, e.Block)
	}
	b = judge.AppendBool(b, e.Deliver != nil)
	if e.Deliver != nil {
		b = appendDeliver(b, e.Deliver)
	}
	b = judge.AppendBool(b, e.Evict != nil)
	if e.Evict != nil {
		b = appendEvict(b, e.Evict)
	}
	b = judge.AppendBool(b, e.Op != nil)
	if e.Op != nil {
		b = appendOp(b, e.Op)
	}
	b = judge.AppendBool(b, e.Peer != nil)
	if e.Peer != nil {
		b = appendPeer(b, e.Peer)
	}
	b = judge.AppendBool(b, e.Src != nil)
	if e.Src != nil {
		b = appendSrc(b, e.Src)
	}
	b = judge.AppendBool(b, e.Fault != nil)
	if e.Fault != nil {
		b = appendFault(b, e.Fault)
	}
	b = judge.AppendBool(b, e.White != nil)
	if e.White != nil {
		b = appendWhite(b, e.White)
	}
	return b
}

// Each appendX appends the encoding of an X to b and returns b, the buffer
// passed along as a value: as the field of an encoder behind a pointer it
// was written back to memory at every append (a third of the encoding's
// time; BenchmarkAppendEvent).

func appendStrs(b []byte, v []string) []byte {
	b = judge.AppendUint(b, uint64(len(v)))
	for _, s := range v {
		b = judge.AppendString(b, s)
	}
	return b
}

func appendProc(b []byte, p *Proc) []byte {
	b = judge.AppendString(b, string(p.Action))
	b = judge.AppendString(b, p.Signal)
	b = judge.AppendInt(b, int64(p.Status))
	b = judge.AppendInt(b, int64(p.CrashCall))
	b = judge.AppendString(b, p.Output)
	b = judge.AppendString(b, p.Detail)
	return b
}

func appendRPC(b []byte, r *RPC) []byte {
	b = judge.AppendInt(b, r.Call)
	b = judge.AppendInt(b, r.Conn)
	b = judge.AppendString(b, string(r.Phase))
	b = judge.AppendString(b, r.Method)
	b = judge.AppendString(b, r.ID)
	b = judge.AppendBool(b, r.Query != nil)
	if r.Query != nil {
		q := r.Query
		b = judge.AppendString(b, q.Path)
		b = judge.AppendInt(b, q.Height)
		b = judge.AppendBool(b, q.Prove)
		b = judge.AppendString(b, q.Address)
		b = judge.AppendInt(b, int64(q.Status))
		b = judge.AppendUint(b, q.RequestID)
		b = judge.AppendUint(b, q.Nonce)
		b = judge.AppendString(b, q.Provider)
		b = judge.AppendString(b, q.DecodeErr)
	}
	b = judge.AppendBool(b, r.Tx != nil)
	if r.Tx != nil {
		b = appendTx(b, r.Tx)
	}
	b = judge.AppendBool(b, r.Result != nil)
	if r.Result != nil {
		b = appendRPCResult(b, r.Result)
	}
	b = judge.AppendTime(b, r.TRecv)
	b = judge.AppendTime(b, r.TDelivered)
	b = judge.AppendBool(b, r.Lost)
	return b
}

func appendRPCResult(b []byte, r *RPCResult) []byte {
	b = judge.AppendInt(b, int64(r.ErrCode))
	b = judge.AppendString(b, r.ErrMessage)
	b = judge.AppendString(b, r.ErrData)
	b = judge.AppendInt(b, r.Height)
	b = judge.AppendTime(b, r.BlockTime)
	b = judge.AppendString(b, r.Network)
	b = judge.AppendUint(b, uint64(r.Code))
	b = judge.AppendString(b, r.Log)
	b = judge.AppendString(b, r.Codespace)
	b = judge.AppendString(b, r.Hash)
	b = judge.AppendBool(b, r.Value != nil)
	if r.Value != nil {
		v := r.Value
		b = judge.AppendBool(b, v.Account != nil)
		if v.Account != nil {
			a := v.Account
			b = judge.AppendString(b, a.Address)
			b = judge.AppendUint(b, a.AccountNumber)
			b = judge.AppendUint(b, a.Sequence)
			b = judge.AppendString(b, a.PubKey)
		}
		b = judge.AppendBool(b, v.Docs != nil)
		b = judge.AppendUint(b, uint64(len(v.Docs)))
		for i := range v.Docs {
			b = appendDoc(b, &v.Docs[i])
		}
		b = judge.AppendBool(b, v.Doc != nil)
		if v.Doc != nil {
			b = appendDoc(b, v.Doc)
		}
		b = judge.AppendBool(b, v.Submissions != nil)
		b = judge.AppendUint(b, uint64(len(v.Submissions)))
		for _, s := range v.Submissions {
			b = judge.AppendUint(b, s.RequestID)
			b = judge.AppendUint(b, s.Nonce)
			b = judge.AppendString(b, s.RawData)
			b = judge.AppendString(b, s.Provider)
			b = judge.AppendString(b, s.Signature)
		}
		b = judge.AppendBool(b, v.DataSet != nil)
		if v.DataSet != nil {
			d := v.DataSet
			b = judge.AppendUint(b, d.RequestID)
			b = judge.AppendUint(b, d.Nonce)
			b = judge.AppendUint(b, d.BlockHeight)
			b = judge.AppendUint(b, d.BlockTime)
			b = judge.AppendString(b, d.RawData)
		}
		b = judge.AppendString(b, v.DecodeErr)
	}
	return b
}

func appendWS(b []byte, s *WS) []byte {
	b = judge.AppendInt(b, s.Conn)
	b = judge.AppendString(b, string(s.Action))
	b = judge.AppendString(b, s.By)
	b = judge.AppendString(b, s.Query)
	b = judge.AppendString(b, s.ID)
	b = judge.AppendString(b, s.Err)
	b = judge.AppendBool(b, s.Frame != nil)
	if s.Frame != nil {
		f := s.Frame
		b = judge.AppendString(b, f.Type)
		b = judge.AppendInt(b, f.Height)
		b = judge.AppendInt(b, int64(f.Index))
		b = judge.AppendString(b, f.TxHash)
		b = appendEvents(b, f.Events)
		b = judge.AppendTime(b, f.Published)
	}
	return b
}

// appendEvents writes a frame's events map in sorted key order.
func appendEvents(b []byte, m map[string][]string) []byte {
	b = judge.AppendBool(b, m != nil)
	b = judge.AppendUint(b, uint64(len(m)))
	var few [8]string // a frame's keys, sorted on the stack when few
	keys := few[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = judge.AppendString(b, k)
		b = appendStrs(b, m[k])
	}
	return b
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func appendTx(b []byte, t *Tx) []byte {
	b = judge.AppendString(b, t.Hash)
	b = judge.AppendInt(b, int64(t.Size))
	b = judge.AppendString(b, t.DecodeErr)
	b = judge.AppendString(b, t.Signer)
	b = judge.AppendInt(b, int64(t.Signers))
	b = judge.AppendInt(b, int64(t.Signatures))
	b = judge.AppendUint(b, t.Sequence)
	b = judge.AppendString(b, t.PubKey)
	b = judge.AppendInt(b, int64(t.SignMode))
	b = judge.AppendUint(b, t.GasLimit)
	b = appendCoins(b, t.Fee)
	b = judge.AppendString(b, t.Memo)
	b = judge.AppendUint(b, t.TimeoutHeight)
	b = appendMsgs(b, t.Msgs)
	b = judge.AppendString(b, string(t.Sig))
	return b
}

func appendCoins(b []byte, cs []Coin) []byte {
	b = judge.AppendUint(b, uint64(len(cs)))
	for _, c := range cs {
		b = judge.AppendString(b, c.Denom)
		b = judge.AppendString(b, c.Amount)
	}
	return b
}

func appendMsgs(b []byte, ms []Msg) []byte {
	b = judge.AppendUint(b, uint64(len(ms)))
	for i := range ms {
		m := &ms[i]
		b = judge.AppendString(b, m.Type)
		b = judge.AppendString(b, m.Signer)
		b = judge.AppendUint(b, m.RequestID)
		b = judge.AppendUint(b, m.Nonce)
		b = judge.AppendString(b, m.RawData)
		b = judge.AppendString(b, m.Provider)
		b = judge.AppendString(b, m.Signature)
		b = judge.AppendBool(b, m.Doc != nil)
		if m.Doc != nil {
			b = appendDoc(b, m.Doc)
		}
		b = judge.AppendString(b, m.Reason)
	}
	return b
}

func appendDoc(b []byte, d *Doc) []byte {
	b = judge.AppendUint(b, d.RequestID)
	b = judge.AppendInt(b, int64(d.OracleType))
	b = judge.AppendString(b, d.Name)
	b = judge.AppendString(b, d.Description)
	b = judge.AppendUint(b, uint64(d.Period))
	b = appendStrs(b, d.AccountList)
	b = judge.AppendUint(b, uint64(d.Quorum))
	b = judge.AppendUint(b, uint64(len(d.Endpoints)))
	for _, e := range d.Endpoints {
		b = judge.AppendString(b, e.URL)
		b = judge.AppendString(b, e.ParseRule)
	}
	b = judge.AppendInt(b, int64(d.AggregationRule))
	b = judge.AppendInt(b, int64(d.Status))
	b = judge.AppendUint(b, d.Nonce)
	return b
}

func appendCheckTx(b []byte, c *CheckTx) []byte {
	b = judge.AppendString(b, string(c.Origin))
	b = appendTx(b, &c.Tx)
	b = judge.AppendString(b, c.RPCError)
	b = judge.AppendUint(b, uint64(c.Code))
	b = judge.AppendString(b, c.Log)
	b = judge.AppendBool(b, c.Injected)
	b = judge.AppendInt(b, int64(c.Mempool))
	return b
}

func appendBlock(b []byte, k *Block) []byte {
	b = judge.AppendInt(b, k.Height)
	b = judge.AppendTime(b, k.Time)
	b = judge.AppendUint(b, uint64(len(k.Completes)))
	for i := range k.Completes {
		c := &k.Completes[i]
		b = judge.AppendUint(b, c.RequestID)
		b = judge.AppendUint(b, c.Nonce)
		b = judge.AppendString(b, c.RawData)
		b = judge.AppendInt(b, c.BlockHeight)
		b = judge.AppendInt(b, c.BlockTime)
		b = judge.AppendInt(b, int64(c.Rule))
		b = appendStrs(b, c.Providers)
		b = appendStrs(b, c.Values)
		b = judge.AppendInt(b, int64(c.Unparsable))
	}
	b = judge.AppendInt(b, int64(k.Txs))
	return b
}

func appendDeliver(b []byte, d *Deliver) []byte {
	b = judge.AppendInt(b, d.Height)
	b = judge.AppendInt(b, int64(d.Index))
	b = judge.AppendString(b, d.Hash)
	b = judge.AppendString(b, string(d.Origin))
	b = judge.AppendString(b, d.Signer)
	b = judge.AppendUint(b, d.Sequence)
	b = judge.AppendUint(b, d.GasLimit)
	b = appendCoins(b, d.Fee)
	b = judge.AppendUint(b, uint64(d.Code))
	b = judge.AppendString(b, d.Log)
	b = appendMsgs(b, d.Msgs)
	b = judge.AppendUint(b, uint64(len(d.Docs)))
	for j := range d.Docs {
		b = appendDoc(b, &d.Docs[j])
	}
	return b
}

func appendEvict(b []byte, e *Evict) []byte {
	b = judge.AppendString(b, string(e.Cause))
	b = judge.AppendString(b, e.Hash)
	b = judge.AppendString(b, string(e.Origin))
	b = judge.AppendString(b, e.Signer)
	b = judge.AppendUint(b, e.Sequence)
	b = judge.AppendUint(b, uint64(e.Code))
	b = judge.AppendString(b, e.Log)
	return b
}

func appendOp(b []byte, o *Op) []byte {
	b = judge.AppendString(b, string(o.Action))
	b = judge.AppendUint(b, o.RequestID)
	b = appendDoc(b, &o.Doc)
	b = judge.AppendString(b, o.Reason)
	b = judge.AppendString(b, o.Hash)
	b = judge.AppendUint(b, o.Sequence)
	return b
}

func appendPeer(b []byte, p *Peer) []byte {
	b = judge.AppendString(b, p.Provider)
	b = judge.AppendString(b, string(p.Behaviour))
	b = judge.AppendUint(b, p.RequestID)
	b = judge.AppendUint(b, p.Nonce)
	b = judge.AppendString(b, p.Value)
	b = appendStrs(b, p.Hashes)
	return b
}

func appendSrc(b []byte, s *Src) []byte {
	b = judge.AppendInt(b, s.Exchange)
	b = judge.AppendString(b, string(s.Phase))
	b = judge.AppendUint(b, s.RequestID)
	b = judge.AppendInt(b, int64(s.Endpoint))
	b = judge.AppendString(b, s.Path)
	b = judge.AppendUint(b, uint64(len(s.Headers)))
	for _, h := range s.Headers {
		b = judge.AppendString(b, h.Name)
		b = judge.AppendString(b, h.Value)
	}
	b = judge.AppendString(b, s.Class)
	b = judge.AppendInt(b, int64(s.Status))
	b = judge.AppendString(b, s.Body)
	b = judge.AppendTime(b, s.TRecv)
	b = judge.AppendBool(b, s.Aborted)
	return b
}

func appendFault(b []byte, f *Fault) []byte {
	b = judge.AppendString(b, f.ID)
	b = judge.AppendString(b, string(f.Phase))
	b = judge.AppendString(b, f.Target)
	b = judge.AppendUint(b, uint64(len(f.Params)))
	for _, p := range f.Params {
		b = judge.AppendString(b, p.Key)
		b = judge.AppendString(b, p.Value)
	}
	b = judge.AppendTime(b, f.Until)
	return b
}

func appendWhite(b []byte, x *White) []byte {
	b = judge.AppendString(b, string(x.Point))
	b = judge.AppendString(b, x.Name)
	b = judge.AppendUint(b, x.RequestID)
	b = judge.AppendString(b, x.Trigger)
	b = appendStrs(b, x.Rows)
	b = appendJobState(b, x.Before)
	b = appendJobState(b, x.After)
	b = judge.AppendInt(b, x.Value)
	b = judge.AppendString(b, x.Detail)
	return b
}

func appendJobState(b []byte, j *JobState) []byte {
	b = judge.AppendBool(b, j != nil)
	if j == nil {
		return b
	}
	b = judge.AppendInt(b, int64(j.ExecStatus))
	b = judge.AppendInt(b, int64(j.ReqStatus))
	b = judge.AppendUint(b, j.Nonce)
	b = judge.AppendUint(b, j.ExecNonce)
	b = judge.AppendTime(b, j.NextRunTime)
	b = judge.AppendBool(b, j.Superseded)
	b = judge.AppendString(b, j.URL)
	return b
}
