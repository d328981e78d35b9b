package oracle

import (
	"errors"
	"regexp"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
	oraclesim "github.com/wsconverge/converge/sim/oracle"
	"github.com/wsconverge/converge/wire/abciquery"
	"github.com/wsconverge/converge/wire/cometrpc"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
)

// The checkers' names, as judge/oracle reports them.
const (
	o1  = "o1-single-commit"
	o2  = "o2-nonce-bounds"
	o5  = "o5-submit-retries"
	o7  = "o7-concurrency"
	o8  = "o8-sequence"
	o9  = "o9-resync"
	o10 = "o10-complete-handled"
	o11 = "o11-not-running"
	o12 = "o12-fidelity"
	o13 = "o13-restart"
	o14 = "o14-shutdown"
	o15 = "o15-shutdown-order"
)

var errNoAnswer = errors.New("mutant: the answer was not read")

// All returns the catalogue, in a fixed order.
func All() []*Mutant {
	return []*Mutant{
		{name: "nonce-not-plus-one", Kills: []string{o2},
			// submit nonce = Nonce instead of Nonce + 1
			out: func(b *bent, outs []ports.Output) []ports.Output {
				return eachBroadcast(b, outs, func(c ports.BroadcastCall) ports.BroadcastCall {
					return b.rebuild(c, func(m *oraclev1.MsgSubmitOracleData, _ *uint64) {
						if ds := m.GetDataSet(); ds != nil && ds.Nonce > 0 {
							ds.Nonce--
						}
					})
				})
			}},
		{name: "complete-first-entry-only", Kills: []string{o10},
			// Complete handles only the first entry of a frame
			in: func(_ *bent, in ports.Input) (ports.Input, bool) {
				f, ok := in.(ports.Frame)
				if !ok || f.Events == nil {
					return in, true
				}
				ev := copyEvents(f.Events)
				for k, v := range ev {
					if strings.HasPrefix(k, oracle.EventComplete+".") && len(v) > 1 {
						ev[k] = v[:1]
					}
				}
				f.Events = ev
				return f, true
			}},
		{name: "complete-ignores-block-time", Kills: []string{o10}, Options: oraclesim.Options{Faults: 30},
			// Complete ignores bt: the round is taken to open at the frame's
			// delivery (F6 delays frames by up to 4 s)
			in: func(b *bent, in ports.Input) (ports.Input, bool) {
				f, ok := in.(ports.Frame)
				if !ok || f.Events == nil {
					return in, true
				}
				ev := copyEvents(f.Events)
				key := oracle.EventComplete + ".block_time"
				for i := range ev[key] {
					ev[key][i] = strconv.FormatInt(b.now.Unix(), 10)
				}
				f.Events = ev
				return f, true
			}},
		{name: "endpoint-ignores-index", Kills: []string{o12},
			// endpoint index ignores AssignedIndex: always endpoints[0]
			out: func(_ *bent, outs []ports.Output) []ports.Output {
				out := make([]ports.Output, len(outs))
				for i, o := range outs {
					if f, ok := o.(ports.Fetch); ok {
						f.URL = endpointIndex.ReplaceAllString(f.URL, "/e/0")
						o = f
					}
					out[i] = o
				}
				return out
			}},
		{name: "six-significant-digits", Kills: []string{o12},
			// numbers rendered with 6 significant digits
			out: func(b *bent, outs []ports.Output) []ports.Output {
				return eachBroadcast(b, outs, func(c ports.BroadcastCall) ports.BroadcastCall {
					return b.rebuild(c, func(m *oraclev1.MsgSubmitOracleData, _ *uint64) {
						if ds := m.GetDataSet(); ds != nil {
							if v, err := strconv.ParseFloat(ds.RawData, 64); err == nil {
								ds.RawData = strconv.FormatFloat(v, 'g', 6, 64)
							}
						}
					})
				})
			}},
		{name: "code-13-retried", Kills: []string{o5},
			// code 13 (insufficient fee) retried as if no answer had come
			in: func(_ *bent, in ports.Input) (ports.Input, bool) {
				if r, ok := in.(ports.Reply); ok && r.Broadcast != nil && r.Broadcast.Code == oracle.CodeInsufficientFee {
					return ports.Reply{ID: r.ID, Err: errNoAnswer}, true
				}
				return in, true
			}},
		{name: "no-resync-on-32", Kills: []string{o9},
			// code 32 taken for a lost answer: retried with no resync
			in: func(_ *bent, in ports.Input) (ports.Input, bool) {
				if r, ok := in.(ports.Reply); ok && r.Broadcast != nil && r.Broadcast.Code == oracle.CodeWrongSequence {
					return ports.Reply{ID: r.ID, Err: errNoAnswer}, true
				}
				return in, true
			}},
		{name: "sequence-not-incremented-on-success", Kills: []string{o8},
			// the sequence stays put after a success: the next tx reuses it
			out: func(b *bent, outs []ports.Output) []ports.Output {
				return eachBroadcast(b, outs, func(c ports.BroadcastCall) ports.BroadcastCall {
					return b.rebuild(c, func(_ *oraclev1.MsgSubmitOracleData, seq *uint64) {
						if b.acked && *seq == b.lastAcked+1 {
							*seq = b.lastAcked
						}
					})
				})
			}},
		{name: "sequence-incremented-on-failure", Kills: []string{o8},
			// the sequence moves on after a refused tx: the next one skips
			out: func(b *bent, outs []ports.Output) []ports.Output {
				return eachBroadcast(b, outs, func(c ports.BroadcastCall) ports.BroadcastCall {
					return b.rebuild(c, func(_ *oraclev1.MsgSubmitOracleData, seq *uint64) {
						if b.failed && *seq == b.failedSeq {
							*seq++
						}
					})
				})
			}},
		{name: "pool-limit-ignored", Kills: []string{o7}, Options: oraclesim.Options{Requests: 12, Faults: 20},
			// the pool limit ignored: the daemon runs 64 GETs at once
			config: func(c *oracle.Config) { c.Worker.PoolSize = 64 }},
		{name: "status-not-checked", Kills: []string{o11}, Options: oraclesim.Options{Ops: 20},
			// status ENABLED not checked: a PAUSED or DISABLED doc runs
			in: func(b *bent, in ports.Input) (ports.Input, bool) {
				r, ok := in.(ports.Reply)
				if !ok || r.Query == nil || r.Query.Response.Code != 0 || b.replyPath != abciquery.PathDoc {
					return in, true
				}
				var resp oraclev1.QueryOracleRequestDocResponse
				if err := proto.Unmarshal(r.Query.Response.Value, &resp); err != nil || resp.GetRequestDoc() == nil {
					return in, true
				}
				resp.RequestDoc.Status = oraclev1.RequestStatus_REQUEST_STATUS_ENABLED
				v, err := abciquery.DocResponse(resp.GetRequestDoc())
				if err != nil {
					return in, true
				}
				q := *r.Query
				q.Response.Value = v
				r.Query = &q
				return r, true
			}},
		{name: "no-on-chain-check", Kills: []string{o1, o13}, Options: oraclesim.Options{Faults: 30},
			// no on-chain check: the answer is read as "not submitted"
			in: func(b *bent, in ports.Input) (ports.Input, bool) {
				r, ok := in.(ports.Reply)
				if !ok || r.Query == nil || r.Query.Response.Code != 0 || b.replyPath != abciquery.PathSubmitData {
					return in, true
				}
				v, err := abciquery.SubmitDataResponse(nil)
				if err != nil {
					return in, true
				}
				q := cometrpc.ResultABCIQuery{Response: r.Query.Response}
				q.Response.Value = v
				r.Query = &q
				return r, true
			}},
		{name: "result-channel-closed-before-drain", Kills: []string{o15, o14},
			// ResultCh closed before the task group has drained
			out: func(_ *bent, outs []ports.Output) []ports.Output {
				var out []ports.Output
				for _, o := range outs {
					t, ok := o.(*ports.Trace)
					switch {
					case ok && t.Kind == ports.TraceClose && t.Name == ports.ChanResult:
						continue // already closed, too early
					case ok && t.Kind == ports.TraceStop && t.Name == ports.CompWatcher:
						out = append(out, o, &ports.Trace{Kind: ports.TraceClose, Name: ports.ChanResult})
						continue
					}
					out = append(out, o)
				}
				return out
			}},
	}
}

// endpointIndex finds the endpoint index in a data source URL.
var endpointIndex = regexp.MustCompile(`/e/[0-9]+$`)

// ByName finds a mutant of the catalogue.
func ByName(name string) (*Mutant, bool) {
	for _, m := range All() {
		if m.name == name {
			return m, true
		}
	}
	return nil, false
}
