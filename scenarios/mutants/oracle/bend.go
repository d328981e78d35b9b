package oracle

import (
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
	oracled "github.com/wsconverge/converge/refimpl/oracle"
	oraclesim "github.com/wsconverge/converge/sim/oracle"
	"github.com/wsconverge/converge/wire/abciquery"
	"github.com/wsconverge/converge/wire/keys"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
	"github.com/wsconverge/converge/wire/tx"
)

// Mutant is a broken oracle daemon: the unmodified reference seen through
// bent ports. Kills lists the checkers ORACLE-SPEC 5.4 expects to catch
// it; Options shapes the runs that should (zero: the defaults).
type Mutant struct {
	name    string
	Kills   []string
	Options oraclesim.Options
	// config bends the configuration the daemon reads.
	config func(*oracle.Config)
	// in bends an input before the daemon sees it (false: it never does).
	in func(b *bent, in ports.Input) (ports.Input, bool)
	// out bends the daemon's outputs before the world acts on them.
	out func(b *bent, outs []ports.Output) []ports.Output
}

// Name implements oraclesim.System.
func (m *Mutant) Name() string { return m.name }

// New implements oraclesim.System: a reference lifetime behind bent ports.
func (m *Mutant) New(cfg oracle.Config, signer keys.Signer, rnd ports.Rand) (ports.Daemon, error) {
	if m.config != nil {
		m.config(&cfg)
	}
	d, err := oracled.NewSystem().New(cfg, signer, rnd)
	if err != nil {
		return nil, fmt.Errorf("mutant %s: %w", m.name, err)
	}
	return &bent{Daemon: d, m: m, cfg: cfg, signer: signer, accNum: 1, calls: map[ports.ID]ports.BroadcastCall{},
		paths: map[ports.ID]string{}}, nil
}

// bent is one lifetime of a mutant: the reference daemon and what the
// bends remember.
type bent struct {
	ports.Daemon
	m      *Mutant
	cfg    oracle.Config
	signer keys.Signer
	now    time.Time
	// accNum is the account number the last Account answer gave.
	accNum uint64
	// calls are the broadcasts in flight, by request id, as sent; paths
	// the queries in flight.
	calls map[ports.ID]ports.BroadcastCall
	paths map[ports.ID]string
	// replyPath is the path of the query the input being handled answers
	// ("" for any other input).
	replyPath string
	// state of particular bends
	lastAcked uint64 // the sequence of the last broadcast answered code 0
	acked     bool
	failedSeq uint64 // the sequence of the last broadcast refused by CheckTx
	failed    bool
}

func (b *bent) Start(now time.Time) []ports.Output {
	b.now = now
	return b.bendOut(b.Daemon.Start(now))
}

func (b *bent) Handle(now time.Time, in ports.Input) []ports.Output {
	b.now = now
	in = ports.ByValue(in) // the bends read replies by value
	b.observe(in)
	if b.m.in != nil {
		var ok bool
		if in, ok = b.m.in(b, in); !ok {
			return nil
		}
	}
	return b.bendOut(b.Daemon.Handle(now, in))
}

func (b *bent) bendOut(outs []ports.Output) []ports.Output {
	if b.m.out != nil {
		outs = b.m.out(b, outs)
	}
	for _, o := range outs {
		switch c := o.(type) {
		case ports.BroadcastCall:
			b.calls[c.ID] = c
		case ports.QueryCall:
			b.paths[c.ID] = c.Path
		}
	}
	return outs
}

// observe keeps what the bends need from the true inputs: the account
// number, and how the broadcasts were answered.
func (b *bent) observe(in ports.Input) {
	b.replyPath = ""
	r, ok := in.(ports.Reply)
	if !ok {
		return
	}
	if path, ok := b.paths[r.ID]; ok {
		delete(b.paths, r.ID)
		b.replyPath = path
		if path == abciquery.PathAccount && r.Query != nil && r.Query.Response.Code == 0 {
			if a, err := abciquery.DecodeAccountResponse(r.Query.Response.Value); err == nil && a.AccountNumber > 0 {
				b.accNum = a.AccountNumber
			}
		}
	}
	c, ok := b.calls[r.ID]
	if !ok {
		return
	}
	delete(b.calls, r.ID)
	t, err := tx.Decode(c.Tx)
	if err != nil || len(t.AuthInfo.GetSignerInfos()) == 0 {
		return
	}
	seq := t.AuthInfo.GetSignerInfos()[0].GetSequence()
	switch {
	case r.Broadcast != nil && r.Broadcast.Code == 0:
		b.lastAcked, b.acked = seq, true
	case r.Broadcast != nil && r.Broadcast.Code != oracle.CodeTxInMempoolCache:
		b.failedSeq, b.failed = seq, true
	}
}

// ---- rewriting a broadcast ----

// rebuild decodes a broadcast's tx, lets edit change its submission and
// sequence, and signs it again with the daemon's own key, chain id and
// account number.
func (b *bent) rebuild(c ports.BroadcastCall, edit func(m *oraclev1.MsgSubmitOracleData, seq *uint64)) ports.BroadcastCall {
	t, err := tx.Decode(c.Tx)
	if err != nil || len(t.Msgs) != 1 || len(t.AuthInfo.GetSignerInfos()) != 1 {
		return c
	}
	m, ok := t.Msgs[0].(*oraclev1.MsgSubmitOracleData)
	if !ok {
		return c
	}
	m = proto.Clone(m).(*oraclev1.MsgSubmitOracleData)
	seq := t.AuthInfo.GetSignerInfos()[0].GetSequence()
	edit(m, &seq)
	fee := t.AuthInfo.GetFee()
	env := tx.Envelope{ChainID: b.cfg.Chain.ID, AccountNumber: b.accNum, Sequence: seq, GasLimit: fee.GetGasLimit()}
	if len(fee.GetAmount()) > 0 {
		env.FeeAmount, env.FeeDenom = fee.GetAmount()[0].GetAmount(), fee.GetAmount()[0].GetDenom()
	}
	built, err := tx.Build(b.signer, env, m)
	if err != nil {
		return c
	}
	c.Tx, c.Hash = built.TxBytes, built.Hash
	return c
}

// eachBroadcast rewrites every broadcast of outs with f.
func eachBroadcast(b *bent, outs []ports.Output, f func(c ports.BroadcastCall) ports.BroadcastCall) []ports.Output {
	out := make([]ports.Output, len(outs))
	for i, o := range outs {
		if c, ok := o.(ports.BroadcastCall); ok {
			o = f(c)
		}
		out[i] = o
	}
	return out
}

// copyEvents copies a frame's events map, so a bend never changes the
// chain's own.
func copyEvents(ev map[string][]string) map[string][]string {
	out := make(map[string][]string, len(ev))
	for k, v := range ev {
		out[k] = append([]string(nil), v...)
	}
	return out
}
