package history

import (
	"slices"

	"github.com/wsconverge/converge/contracts/record"
)

// Recorder collects an oracle run's events: a record.Recorder with this
// package's canonical encoding.
type Recorder = record.Recorder[Event]

// NewRecorder returns an empty recorder that keeps every event.
func NewRecorder() *Recorder {
	return record.NewRecorder(AppendEvent, setSeq, nil)
}

// NewLeanRecorder returns an empty recorder that folds Routine events into
// the hash without keeping them: a long run's peers send most of its
// transactions, and no checker reads their routine success.
func NewLeanRecorder() *Recorder {
	return record.NewRecorder(AppendEvent, setSeq, func(e *Event) bool { return !Routine(e) })
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
	b = record.AppendInt(b, e.Seq)
	b = record.AppendTime(b, e.At)
	b = record.AppendString(b, string(e.Kind))
	b = record.AppendInt(b, int64(e.Life))
	b = record.AppendBool(b, e.Proc != nil)
	if e.Proc != nil {
		b = appendProc(b, e.Proc)
	}
	b = record.AppendBool(b, e.RPC != nil)
	if e.RPC != nil {
		b = appendRPC(b, e.RPC)
	}
	b = record.AppendBool(b, e.WS != nil)
	if e.WS != nil {
		b = appendWS(b, e.WS)
	}
	b = record.AppendBool(b, e.CheckTx != nil)
	if e.CheckTx != nil {
		b = appendCheckTx(b, e.CheckTx)
	}
	b = record.AppendBool(b, e.Block != nil)
	if e.Block != nil {
		b = appendBlock(b, e.Block)
	}
	b = record.AppendBool(b, e.Deliver != nil)
	if e.Deliver != nil {
		b = appendDeliver(b, e.Deliver)
	}
	b = record.AppendBool(b, e.Evict != nil)
	if e.Evict != nil {
		b = appendEvict(b, e.Evict)
	}
	b = record.AppendBool(b, e.Op != nil)
	if e.Op != nil {
		b = appendOp(b, e.Op)
	}
	b = record.AppendBool(b, e.Peer != nil)
	if e.Peer != nil {
		b = appendPeer(b, e.Peer)
	}
	b = record.AppendBool(b, e.Src != nil)
	if e.Src != nil {
		b = appendSrc(b, e.Src)
	}
	b = record.AppendBool(b, e.Fault != nil)
	if e.Fault != nil {
		b = appendFault(b, e.Fault)
	}
	b = record.AppendBool(b, e.White != nil)
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
	b = record.AppendUint(b, uint64(len(v)))
	for _, s := range v {
		b = record.AppendString(b, s)
	}
	return b
}

func appendProc(b []byte, p *Proc) []byte {
	b = record.AppendString(b, string(p.Action))
	b = record.AppendString(b, p.Signal)
	b = record.AppendInt(b, int64(p.Status))
	b = record.AppendInt(b, int64(p.CrashCall))
	b = record.AppendString(b, p.Output)
	b = record.AppendString(b, p.Detail)
	return b
}

func appendRPC(b []byte, r *RPC) []byte {
	b = record.AppendInt(b, r.Call)
	b = record.AppendInt(b, r.Conn)
	b = record.AppendString(b, string(r.Phase))
	b = record.AppendString(b, r.Method)
	b = record.AppendString(b, r.ID)
	b = record.AppendBool(b, r.Query != nil)
	if r.Query != nil {
		q := r.Query
		b = record.AppendString(b, q.Path)
		b = record.AppendInt(b, q.Height)
		b = record.AppendBool(b, q.Prove)
		b = record.AppendString(b, q.Address)
		b = record.AppendInt(b, int64(q.Status))
		b = record.AppendUint(b, q.RequestID)
		b = record.AppendUint(b, q.Nonce)
		b = record.AppendString(b, q.Provider)
		b = record.AppendString(b, q.DecodeErr)
	}
	b = record.AppendBool(b, r.Tx != nil)
	if r.Tx != nil {
		b = appendTx(b, r.Tx)
	}
	b = record.AppendBool(b, r.Result != nil)
	if r.Result != nil {
		b = appendRPCResult(b, r.Result)
	}
	b = record.AppendTime(b, r.TRecv)
	b = record.AppendTime(b, r.TDelivered)
	b = record.AppendBool(b, r.Lost)
	return b
}

func appendRPCResult(b []byte, r *RPCResult) []byte {
	b = record.AppendInt(b, int64(r.ErrCode))
	b = record.AppendString(b, r.ErrMessage)
	b = record.AppendString(b, r.ErrData)
	b = record.AppendInt(b, r.Height)
	b = record.AppendTime(b, r.BlockTime)
	b = record.AppendString(b, r.Network)
	b = record.AppendUint(b, uint64(r.Code))
	b = record.AppendString(b, r.Log)
	b = record.AppendString(b, r.Codespace)
	b = record.AppendString(b, r.Hash)
	b = record.AppendBool(b, r.Value != nil)
	if r.Value != nil {
		v := r.Value
		b = record.AppendBool(b, v.Account != nil)
		if v.Account != nil {
			a := v.Account
			b = record.AppendString(b, a.Address)
			b = record.AppendUint(b, a.AccountNumber)
			b = record.AppendUint(b, a.Sequence)
			b = record.AppendString(b, a.PubKey)
		}
		b = record.AppendBool(b, v.Docs != nil)
		b = record.AppendUint(b, uint64(len(v.Docs)))
		for i := range v.Docs {
			b = appendDoc(b, &v.Docs[i])
		}
		b = record.AppendBool(b, v.Doc != nil)
		if v.Doc != nil {
			b = appendDoc(b, v.Doc)
		}
		b = record.AppendBool(b, v.Submissions != nil)
		b = record.AppendUint(b, uint64(len(v.Submissions)))
		for _, s := range v.Submissions {
			b = record.AppendUint(b, s.RequestID)
			b = record.AppendUint(b, s.Nonce)
			b = record.AppendString(b, s.RawData)
			b = record.AppendString(b, s.Provider)
			b = record.AppendString(b, s.Signature)
		}
		b = record.AppendBool(b, v.DataSet != nil)
		if v.DataSet != nil {
			d := v.DataSet
			b = record.AppendUint(b, d.RequestID)
			b = record.AppendUint(b, d.Nonce)
			b = record.AppendUint(b, d.BlockHeight)
			b = record.AppendUint(b, d.BlockTime)
			b = record.AppendString(b, d.RawData)
		}
		b = record.AppendString(b, v.DecodeErr)
	}
	return b
}

func appendWS(b []byte, s *WS) []byte {
	b = record.AppendInt(b, s.Conn)
	b = record.AppendString(b, string(s.Action))
	b = record.AppendString(b, s.By)
	b = record.AppendString(b, s.Query)
	b = record.AppendString(b, s.ID)
	b = record.AppendString(b, s.Err)
	b = record.AppendBool(b, s.Frame != nil)
	if s.Frame != nil {
		f := s.Frame
		b = record.AppendString(b, f.Type)
		b = record.AppendInt(b, f.Height)
		b = record.AppendInt(b, int64(f.Index))
		b = record.AppendString(b, f.TxHash)
		b = appendEvents(b, f.Events)
		b = record.AppendTime(b, f.Published)
	}
	return b
}

// appendEvents writes a frame's events map in sorted key order.
func appendEvents(b []byte, m map[string][]string) []byte {
	b = record.AppendBool(b, m != nil)
	b = record.AppendUint(b, uint64(len(m)))
	var few [8]string // a frame's keys, sorted on the stack when few
	keys := few[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = record.AppendString(b, k)
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
	b = record.AppendString(b, t.Hash)
	b = record.AppendInt(b, int64(t.Size))
	b = record.AppendString(b, t.DecodeErr)
	b = record.AppendString(b, t.Signer)
	b = record.AppendInt(b, int64(t.Signers))
	b = record.AppendInt(b, int64(t.Signatures))
	b = record.AppendUint(b, t.Sequence)
	b = record.AppendString(b, t.PubKey)
	b = record.AppendInt(b, int64(t.SignMode))
	b = record.AppendUint(b, t.GasLimit)
	b = appendCoins(b, t.Fee)
	b = record.AppendString(b, t.Memo)
	b = record.AppendUint(b, t.TimeoutHeight)
	b = appendMsgs(b, t.Msgs)
	b = record.AppendString(b, string(t.Sig))
	return b
}

func appendCoins(b []byte, cs []Coin) []byte {
	b = record.AppendUint(b, uint64(len(cs)))
	for _, c := range cs {
		b = record.AppendString(b, c.Denom)
		b = record.AppendString(b, c.Amount)
	}
	return b
}

func appendMsgs(b []byte, ms []Msg) []byte {
	b = record.AppendUint(b, uint64(len(ms)))
	for i := range ms {
		m := &ms[i]
		b = record.AppendString(b, m.Type)
		b = record.AppendString(b, m.Signer)
		b = record.AppendUint(b, m.RequestID)
		b = record.AppendUint(b, m.Nonce)
		b = record.AppendString(b, m.RawData)
		b = record.AppendString(b, m.Provider)
		b = record.AppendString(b, m.Signature)
		b = record.AppendBool(b, m.Doc != nil)
		if m.Doc != nil {
			b = appendDoc(b, m.Doc)
		}
		b = record.AppendString(b, m.Reason)
	}
	return b
}

func appendDoc(b []byte, d *Doc) []byte {
	b = record.AppendUint(b, d.RequestID)
	b = record.AppendInt(b, int64(d.OracleType))
	b = record.AppendString(b, d.Name)
	b = record.AppendString(b, d.Description)
	b = record.AppendUint(b, uint64(d.Period))
	b = appendStrs(b, d.AccountList)
	b = record.AppendUint(b, uint64(d.Quorum))
	b = record.AppendUint(b, uint64(len(d.Endpoints)))
	for _, e := range d.Endpoints {
		b = record.AppendString(b, e.URL)
		b = record.AppendString(b, e.ParseRule)
	}
	b = record.AppendInt(b, int64(d.AggregationRule))
	b = record.AppendInt(b, int64(d.Status))
	b = record.AppendUint(b, d.Nonce)
	return b
}

func appendCheckTx(b []byte, c *CheckTx) []byte {
	b = record.AppendString(b, string(c.Origin))
	b = appendTx(b, &c.Tx)
	b = record.AppendString(b, c.RPCError)
	b = record.AppendUint(b, uint64(c.Code))
	b = record.AppendString(b, c.Log)
	b = record.AppendBool(b, c.Injected)
	b = record.AppendInt(b, int64(c.Mempool))
	return b
}

func appendBlock(b []byte, k *Block) []byte {
	b = record.AppendInt(b, k.Height)
	b = record.AppendTime(b, k.Time)
	b = record.AppendUint(b, uint64(len(k.Completes)))
	for i := range k.Completes {
		c := &k.Completes[i]
		b = record.AppendUint(b, c.RequestID)
		b = record.AppendUint(b, c.Nonce)
		b = record.AppendString(b, c.RawData)
		b = record.AppendInt(b, c.BlockHeight)
		b = record.AppendInt(b, c.BlockTime)
		b = record.AppendInt(b, int64(c.Rule))
		b = appendStrs(b, c.Providers)
		b = appendStrs(b, c.Values)
		b = record.AppendInt(b, int64(c.Unparsable))
	}
	b = record.AppendInt(b, int64(k.Txs))
	return b
}

func appendDeliver(b []byte, d *Deliver) []byte {
	b = record.AppendInt(b, d.Height)
	b = record.AppendInt(b, int64(d.Index))
	b = record.AppendString(b, d.Hash)
	b = record.AppendString(b, string(d.Origin))
	b = record.AppendString(b, d.Signer)
	b = record.AppendUint(b, d.Sequence)
	b = record.AppendUint(b, d.GasLimit)
	b = appendCoins(b, d.Fee)
	b = record.AppendUint(b, uint64(d.Code))
	b = record.AppendString(b, d.Log)
	b = appendMsgs(b, d.Msgs)
	b = record.AppendUint(b, uint64(len(d.Docs)))
	for j := range d.Docs {
		b = appendDoc(b, &d.Docs[j])
	}
	return b
}

func appendEvict(b []byte, e *Evict) []byte {
	b = record.AppendString(b, string(e.Cause))
	b = record.AppendString(b, e.Hash)
	b = record.AppendString(b, string(e.Origin))
	b = record.AppendString(b, e.Signer)
	b = record.AppendUint(b, e.Sequence)
	b = record.AppendUint(b, uint64(e.Code))
	b = record.AppendString(b, e.Log)
	return b
}

func appendOp(b []byte, o *Op) []byte {
	b = record.AppendString(b, string(o.Action))
	b = record.AppendUint(b, o.RequestID)
	b = appendDoc(b, &o.Doc)
	b = record.AppendString(b, o.Reason)
	b = record.AppendString(b, o.Hash)
	b = record.AppendUint(b, o.Sequence)
	return b
}

func appendPeer(b []byte, p *Peer) []byte {
	b = record.AppendString(b, p.Provider)
	b = record.AppendString(b, string(p.Behaviour))
	b = record.AppendUint(b, p.RequestID)
	b = record.AppendUint(b, p.Nonce)
	b = record.AppendString(b, p.Value)
	b = appendStrs(b, p.Hashes)
	return b
}

func appendSrc(b []byte, s *Src) []byte {
	b = record.AppendInt(b, s.Exchange)
	b = record.AppendString(b, string(s.Phase))
	b = record.AppendUint(b, s.RequestID)
	b = record.AppendInt(b, int64(s.Endpoint))
	b = record.AppendString(b, s.Path)
	b = record.AppendUint(b, uint64(len(s.Headers)))
	for _, h := range s.Headers {
		b = record.AppendString(b, h.Name)
		b = record.AppendString(b, h.Value)
	}
	b = record.AppendString(b, s.Class)
	b = record.AppendInt(b, int64(s.Status))
	b = record.AppendString(b, s.Body)
	b = record.AppendTime(b, s.TRecv)
	b = record.AppendBool(b, s.Aborted)
	return b
}

func appendFault(b []byte, f *Fault) []byte {
	b = record.AppendString(b, f.ID)
	b = record.AppendString(b, string(f.Phase))
	b = record.AppendString(b, f.Target)
	b = record.AppendUint(b, uint64(len(f.Params)))
	for _, p := range f.Params {
		b = record.AppendString(b, p.Key)
		b = record.AppendString(b, p.Value)
	}
	b = record.AppendTime(b, f.Until)
	return b
}

func appendWhite(b []byte, x *White) []byte {
	b = record.AppendString(b, string(x.Point))
	b = record.AppendString(b, x.Name)
	b = record.AppendUint(b, x.RequestID)
	b = record.AppendString(b, x.Trigger)
	b = appendStrs(b, x.Rows)
	b = appendJobState(b, x.Before)
	b = appendJobState(b, x.After)
	b = record.AppendInt(b, x.Value)
	b = record.AppendString(b, x.Detail)
	return b
}

func appendJobState(b []byte, j *JobState) []byte {
	b = record.AppendBool(b, j != nil)
	if j == nil {
		return b
	}
	b = record.AppendInt(b, int64(j.ExecStatus))
	b = record.AppendInt(b, int64(j.ReqStatus))
	b = record.AppendUint(b, j.Nonce)
	b = record.AppendUint(b, j.ExecNonce)
	b = record.AppendTime(b, j.NextRunTime)
	b = record.AppendBool(b, j.Superseded)
	b = record.AppendString(b, j.URL)
	return b
}
