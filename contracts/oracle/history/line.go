package history

import (
	"strconv"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/record"
)

// Line renders e on one line for a failure timeline: the virtual offset
// from start, the sequence number, the SUT lifetime (L1, L2…; none for the
// world's records), the kind and what happened. Addresses are shortened
// (ShortAddr), tx hashes cut to 12 characters, and maps listed in sorted
// key order:
//
//	+00:01:02.000 #812 L1 rpc.recv c57 broadcast_tx_sync id=31 tx=3F2A…9C1D seq=4 gas=70000 submit(r=7 n=15 "101.5")
//	+00:01:03.000 #820 block h=63 bt=+00:01:03.000 complete(r=7 n=15 "101.5" providers=4) txs=5
func Line(e Event, start time.Time) string {
	var b strings.Builder
	b.Grow(128)
	b.WriteString(record.Offset(e.At.Sub(start)))
	b.WriteString(" #")
	b.WriteString(strconv.FormatInt(e.Seq, 10))
	if e.Life != 0 {
		b.WriteString(" L")
		b.WriteString(strconv.Itoa(e.Life))
	}
	b.WriteByte(' ')
	l := line{&b, start}
	switch {
	case e.Proc != nil:
		l.proc(e.Proc)
	case e.RPC != nil:
		l.rpc(e.RPC)
	case e.WS != nil:
		l.ws(e.WS)
	case e.CheckTx != nil:
		l.checkTx(e.CheckTx)
	case e.Block != nil:
		l.block(e.Block)
	case e.Deliver != nil:
		l.deliver(e.Deliver)
	case e.Evict != nil:
		l.evict(e.Evict)
	case e.Op != nil:
		l.op(e.Op)
	case e.Peer != nil:
		l.peer(e.Peer)
	case e.Src != nil:
		l.src(e.Src)
	case e.Fault != nil:
		l.fault(e.Fault)
	case e.White != nil:
		l.white(e.White)
	default:
		b.WriteString(string(e.Kind))
	}
	return b.String()
}

// Timeline renders events with Line, one string per event.
func Timeline(events []Event, start time.Time) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = Line(e, start)
	}
	return out
}

// ShortAddr shortens a bech32 address for timelines: the prefix and first
// six data characters, "…", the last four ("guru1qyfk2x…u6va").
func ShortAddr(a string) string {
	if len(a) <= 16 {
		return a
	}
	return a[:11] + "…" + a[len(a)-4:]
}

// ShortHash cuts a tx hash to its first 12 characters.
func ShortHash(h string) string {
	if len(h) <= 12 {
		return h
	}
	return h[:12]
}

type line struct {
	b     *strings.Builder
	start time.Time
}

func (l line) w(parts ...string) {
	for _, p := range parts {
		l.b.WriteString(p)
	}
}

// kv writes " key=value".
func (l line) kv(k, v string) { l.w(" ", k, "=", v) }

func (l line) u(k string, v uint64) { l.kv(k, strconv.FormatUint(v, 10)) }

func (l line) i(k string, v int64) { l.kv(k, strconv.FormatInt(v, 10)) }

func (l line) q(k, v string) { l.kv(k, strconv.Quote(v)) }

func (l line) at(k string, t time.Time) {
	if t.IsZero() {
		l.kv(k, "-")
		return
	}
	l.kv(k, record.Offset(t.Sub(l.start)))
}

func (l line) proc(p *Proc) {
	l.w("proc ", string(p.Action))
	killed := p.Action == ProcExit && p.Signal != "" && p.Status < 0
	switch {
	case killed:
		l.w(" ", p.ExitText()) // not "status=-1"
	case p.Signal != "":
		l.w(" ", p.Signal)
	}
	if p.CrashCall != 0 {
		l.i("call", int64(p.CrashCall))
	}
	if p.Action == ProcExit && !killed {
		l.i("status", int64(p.Status))
	}
	if p.Output != "" {
		l.w(" ", strconv.Quote(p.Output))
	}
	if p.Detail != "" {
		l.w(" ", p.Detail)
	}
}

func (l line) rpc(r *RPC) {
	l.w("rpc.", string(r.Phase), " c", strconv.FormatInt(r.Call, 10))
	if r.Conn != 0 {
		l.i("conn", r.Conn)
	}
	l.w(" ", r.Method)
	if r.ID != "" {
		l.kv("id", r.ID)
	}
	if q := r.Query; q != nil {
		l.query(q)
	}
	if r.Tx != nil {
		l.tx(r.Tx)
	}
	if r.Phase != PhaseDone {
		return
	}
	switch {
	case r.Lost:
		l.w(" -> lost")
	case r.Result != nil:
		l.w(" ->")
		l.result(r.Result)
	}
	l.at("recv", r.TRecv)
}

func (l line) query(q *Query) {
	l.w(" ", strings.TrimPrefix(q.Path, "/"))
	switch {
	case q.DecodeErr != "":
		l.q("undecodable", q.DecodeErr)
	case q.Address != "":
		l.kv("addr", ShortAddr(q.Address))
	case q.Path == "/guru.oracle.v1.Query/OracleRequestDocs":
		l.kv("status", oracle.RequestStatus(q.Status).String())
	default:
		l.u("r", q.RequestID)
		if q.Nonce != 0 || q.Provider != "" {
			l.u("n", q.Nonce)
			l.q("provider", q.Provider)
		}
	}
}

func (l line) result(r *RPCResult) {
	if r.ErrCode != 0 {
		l.w(" error ", strconv.Itoa(r.ErrCode), " ", r.ErrMessage)
		if r.ErrData != "" {
			l.w(": ", r.ErrData)
		}
		return
	}
	if r.Network != "" {
		l.i("height", r.Height)
		l.at("block_time", r.BlockTime)
		return
	}
	l.w(" code ", strconv.FormatUint(uint64(r.Code), 10))
	if r.Log != "" {
		l.q("log", r.Log)
	}
	if r.Hash != "" {
		l.kv("hash", ShortHash(r.Hash))
	}
	if v := r.Value; v != nil {
		l.value(v)
	}
}

func (l line) value(v *QueryValue) {
	switch {
	case v.DecodeErr != "":
		l.q("undecodable", v.DecodeErr)
	case v.Account != nil:
		l.u("account", v.Account.AccountNumber)
		l.u("seq", v.Account.Sequence)
	case v.Doc != nil:
		l.doc(v.Doc)
	case v.DataSet != nil:
		l.w(" dataset(", dataSetText(v.DataSet), ")")
	case v.Submissions != nil:
		l.w(" providers=[")
		for i, s := range v.Submissions {
			if i > 0 {
				l.w(" ")
			}
			l.w(ShortAddr(s.Provider))
		}
		l.w("]")
	case v.Docs != nil:
		l.w(" docs=[")
		for i := range v.Docs {
			if i > 0 {
				l.w(" ")
			}
			d := &v.Docs[i]
			l.w(strconv.FormatUint(d.RequestID, 10), "/n", strconv.FormatUint(d.Nonce, 10))
		}
		l.w("]")
	}
}

func dataSetText(d *DataSet) string {
	return "r=" + strconv.FormatUint(d.RequestID, 10) + " n=" + strconv.FormatUint(d.Nonce, 10) +
		" h=" + strconv.FormatUint(d.BlockHeight, 10) + " bt=" + strconv.FormatUint(d.BlockTime, 10) +
		" " + strconv.Quote(d.RawData)
}

func (l line) doc(d *Doc) {
	l.w(" doc(r=", strconv.FormatUint(d.RequestID, 10), " n=", strconv.FormatUint(d.Nonce, 10),
		" ", oracle.RequestStatus(d.Status).String(), " period=", strconv.FormatUint(uint64(d.Period), 10),
		" quorum=", strconv.FormatUint(uint64(d.Quorum), 10), " accounts=[")
	for i, a := range d.AccountList {
		if i > 0 {
			l.w(" ")
		}
		l.w(ShortAddr(a))
	}
	l.w("] endpoints=", strconv.Itoa(len(d.Endpoints)), ")")
}

func (l line) tx(t *Tx) {
	l.kv("tx", ShortHash(t.Hash))
	if t.DecodeErr != "" {
		l.q("undecodable", t.DecodeErr)
		return
	}
	l.kv("signer", ShortAddr(t.Signer))
	l.u("seq", t.Sequence)
	l.u("gas", t.GasLimit)
	if t.Sig != SigUnchecked {
		l.kv("sig", string(t.Sig))
	}
	l.msgs(t.Msgs)
}

func (l line) msgs(ms []Msg) {
	for i := range ms {
		m := &ms[i]
		switch m.Type {
		case oracle.TypeURLSubmit:
			l.w(" submit(r=", strconv.FormatUint(m.RequestID, 10), " n=", strconv.FormatUint(m.Nonce, 10),
				" ", strconv.Quote(m.RawData))
			if m.Provider != m.Signer {
				l.kv("provider", ShortAddr(m.Provider))
			}
			l.w(")")
		case oracle.TypeURLRegister:
			l.w(" register")
		case oracle.TypeURLUpdate:
			l.w(" update")
		default:
			l.w(" ", m.Type)
		}
		if m.Doc != nil {
			l.doc(m.Doc)
		}
	}
}

func (l line) ws(s *WS) {
	l.w("ws ", string(s.Action))
	l.i("conn", s.Conn)
	if s.By != "" {
		l.kv("by", s.By)
	}
	if s.ID != "" {
		l.kv("id", s.ID)
	}
	if f := s.Frame; f != nil {
		l.w(" ", f.Type)
		l.i("h", f.Height)
		if f.TxHash != "" {
			l.kv("tx", ShortHash(f.TxHash))
		}
		for _, k := range sortedKeys(f.Events) {
			if strings.HasPrefix(k, oracle.EventComplete+".") || strings.HasSuffix(k, ".request_id") {
				l.kv(k, "["+strings.Join(f.Events[k], ",")+"]")
			}
		}
		l.at("published", f.Published)
	}
	if s.Query != "" {
		l.w(" ", strconv.Quote(s.Query))
	}
	if s.Err != "" {
		l.q("err", s.Err)
	}
}

func (l line) checkTx(c *CheckTx) {
	l.w("checktx ", string(c.Origin))
	l.tx(&c.Tx)
	switch {
	case c.RPCError != "":
		l.w(" -> rpc error ", strconv.Quote(c.RPCError))
	default:
		l.w(" -> code ", strconv.FormatUint(uint64(c.Code), 10))
		if c.Log != "" {
			l.w(" ", strconv.Quote(c.Log))
		}
	}
	if c.Injected {
		l.w(" [injected]")
	}
	l.i("mempool", int64(c.Mempool))
}

func (l line) block(b *Block) {
	l.w("block")
	l.i("h", b.Height)
	l.at("bt", b.Time)
	for i := range b.Completes {
		c := &b.Completes[i]
		l.w(" complete(r=", strconv.FormatUint(c.RequestID, 10), " n=", strconv.FormatUint(c.Nonce, 10), " ",
			strconv.Quote(c.RawData), " providers=", strconv.Itoa(len(c.Providers)))
		if c.Unparsable > 0 {
			l.i("unparsable", int64(c.Unparsable))
		}
		l.w(")")
	}
	l.i("txs", int64(b.Txs))
}

func (l line) deliver(d *Deliver) {
	l.w("deliver ", string(d.Origin))
	l.i("h", d.Height)
	l.i("i", int64(d.Index))
	l.kv("tx", ShortHash(d.Hash))
	l.kv("signer", ShortAddr(d.Signer))
	l.u("seq", d.Sequence)
	l.msgs(d.Msgs)
	l.w(" code ", strconv.FormatUint(uint64(d.Code), 10))
	if d.Log != "" {
		l.w(" ", strconv.Quote(d.Log))
	}
	for i := range d.Docs {
		l.doc(&d.Docs[i])
	}
}

func (l line) evict(e *Evict) {
	l.w("evict ", string(e.Cause), " ", string(e.Origin))
	l.kv("tx", ShortHash(e.Hash))
	l.kv("signer", ShortAddr(e.Signer))
	l.u("seq", e.Sequence)
	if e.Code != 0 {
		l.w(" code ", strconv.FormatUint(uint64(e.Code), 10), " ", strconv.Quote(e.Log))
	}
}

func (l line) op(o *Op) {
	l.w("op ", string(o.Action))
	if o.RequestID != 0 {
		l.u("r", o.RequestID)
	}
	l.kv("tx", ShortHash(o.Hash))
	l.u("seq", o.Sequence)
	l.doc(&o.Doc)
	if o.Reason != "" {
		l.q("reason", o.Reason)
	}
}

func (l line) peer(p *Peer) {
	l.w("peer ", ShortAddr(p.Provider), " ", string(p.Behaviour))
	l.u("r", p.RequestID)
	l.u("n", p.Nonce)
	if p.Value != "" {
		l.w(" ", strconv.Quote(p.Value))
	}
	for _, h := range p.Hashes {
		l.kv("tx", ShortHash(h))
	}
}

func (l line) src(s *Src) {
	l.w("src.", string(s.Phase), " x", strconv.FormatInt(s.Exchange, 10))
	l.u("r", s.RequestID)
	l.i("e", int64(s.Endpoint))
	if s.Phase == PhaseRecv {
		l.w(" ", s.Path)
		return
	}
	if s.Aborted {
		l.w(" aborted")
	} else {
		l.w(" ", s.Class)
		l.i("status", int64(s.Status))
		l.q("body", s.Body)
	}
	l.at("recv", s.TRecv)
}

func (l line) fault(f *Fault) {
	l.w("fault ", f.ID, " ", string(f.Phase))
	if f.Target != "" {
		l.w(" ", f.Target)
	}
	for _, p := range f.Params {
		l.kv(p.Key, p.Value)
	}
	if !f.Until.IsZero() {
		l.at("until", f.Until)
	}
}

func (l line) white(x *White) {
	l.w("white ", string(x.Point))
	if x.Name != "" {
		l.w(" ", x.Name)
	}
	if x.Trigger != "" {
		l.w(" ", x.Trigger)
	}
	if len(x.Rows) > 0 {
		l.w(" rows=[", strings.Join(x.Rows, "; "), "]")
	}
	if x.Before != nil || x.After != nil {
		l.w(" ", l.jobState(x.Before), " -> ", l.jobState(x.After))
	}
	if x.Point == WhiteGoroutines {
		l.i("count", x.Value)
	}
	if x.Detail != "" {
		l.w(" ", x.Detail)
	}
}

func (l line) jobState(j *JobState) string {
	if j == nil {
		return "none"
	}
	s := oracle.ExecStatus(j.ExecStatus).String() + "(n=" + strconv.FormatUint(j.Nonce, 10)
	if j.ExecStatus == int(oracle.ExecExecuting) {
		s += " exec=" + strconv.FormatUint(j.ExecNonce, 10)
	}
	if j.Superseded {
		s += " superseded"
	}
	return s + " next=" + record.Offset(j.NextRunTime.Sub(l.start)) + ")"
}
