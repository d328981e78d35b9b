package oracle

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/fakes/oracle/chain"
	"github.com/wsconverge/converge/fakes/oracle/datasource"
)

// Catalogue lists the faults of ORACLE-SPEC 4.9 the world injects. F7
// (several Completes in one block) is not injected: the requests' periods
// are drawn from a small set, so rounds often end together.
var Catalogue = []string{"F1", "F2", "F3", "F4", "F5", "F6", "F8", "F9", "F10", "F11", "F12", "F13", "F14", "F15", "F16", "F17", "F18"}

// faultState is what the faults in force change in the world.
type faultState struct {
	refuseUntil time.Time // F1: dials refused until then
	rpcOutage   bool      // F2: HTTP calls hang
	queryFail   bool      // F14: abci_query fails
	stall       bool      // F15: no blocks
	ambiguous   bool      // F12: the next admitted broadcast's answer is lost
	crashAdmit  bool      // F17: crash shortly after the next admitted broadcast
	drop        int       // F3: frames still to drop
	dup         int       // F4: frames still to duplicate
	delay       int       // F5/F6: frames still to delay
	delayBy     time.Duration
	delayID     string
	restartIn   time.Duration // F17/F18: downtime before the restart
	hold        time.Duration // F5 with Options.LongReorder: the next Complete frame's hold
	dupLag      time.Duration // F4 with Options.LateDuplicates: the copy's lag
}

func param(k, v string) history.Param { return history.Param{Key: k, Value: v} }

// point records a one-off fault.
func (w *world) point(id, target string, ps ...history.Param) {
	w.record(history.Event{Kind: history.KindFault, Fault: &history.Fault{ID: id, Phase: history.FaultPoint, Target: target, Params: ps}})
}

// window records a fault window [now, now+d) and runs on and off at its
// ends.
func (w *world) window(id, target string, d time.Duration, on, off func(), ps ...history.Param) {
	until := w.now().Add(d)
	if until.After(w.faultsEnd) {
		w.faultsEnd = until
	}
	w.record(history.Event{Kind: history.KindFault, Fault: &history.Fault{ID: id, Phase: history.FaultStart, Target: target,
		Params: ps, Until: until}})
	if on != nil {
		on()
	}
	w.at(until, func() {
		if off != nil {
			off()
		}
		w.record(history.Event{Kind: history.KindFault, Fault: &history.Fault{ID: id, Phase: history.FaultEnd, Target: target, Params: ps}})
	})
}

// planFaults schedules n faults, each drawn from the catalogue at a drawn
// time in [from, to); every window ends before to.
func (w *world) planFaults(rng *rand.Rand, n int, from, to time.Time) {
	span := to.Sub(from)
	if span <= time.Minute {
		return
	}
	for range n {
		var id string
		if len(w.steered) > 0 && rng.IntN(2) == 0 {
			id = w.steered[rng.IntN(len(w.steered))] // coverage steering (Options.Steering)
		} else {
			id = Catalogue[rng.IntN(len(Catalogue))]
		}
		w.drawn[id] = true
		at := from.Add(time.Duration(rng.Int64N(int64(span - time.Minute))))
		max := to.Sub(at)
		seed := rng.Uint64()
		w.at(at, func() { w.inject(id, max, rand.New(rand.NewPCG(seed, 0))) })
	}
}

// inject starts one fault; its window lasts at most max.
func (w *world) inject(id string, max time.Duration, rng *rand.Rand) {
	if w.now().After(w.faultsEnd) {
		w.faultsEnd = w.now() // a one-off fault counts too: the quiet phase comes after it
	}
	dur := func(lo, hi time.Duration) time.Duration {
		hi = min(hi, max-time.Second)
		if hi <= lo {
			return max / 2
		}
		return lo + time.Duration(rng.Int64N(int64(hi-lo)))
	}
	switch id {
	case "F1":
		refuse := dur(0, 20*time.Second)
		w.window("F1", "websocket", refuse+time.Second, func() {
			w.f.refuseUntil = w.now().Add(refuse)
			w.closeByServer()
		}, nil, param("refuse", refuse.String()))
	case "F2":
		w.window("F2", "rpc", dur(2*time.Second, 40*time.Second), func() { w.f.rpcOutage = true }, func() { w.f.rpcOutage = false },
			param("mode", "hang"))
	case "F3":
		w.f.drop = 1 + rng.IntN(2)
	case "F4":
		w.f.dup = 1 + rng.IntN(3)
		if w.o.LateDuplicates {
			w.f.dupLag = 5*time.Second + time.Duration(rng.Int64N(int64(55*time.Second)))
		}
	case "F5", "F6":
		if id == "F5" && w.o.LongReorder {
			w.f.hold = 35*time.Second + time.Duration(rng.Int64N(int64(30*time.Second)))
			return
		}
		w.f.delay, w.f.delayID = 1+rng.IntN(3), id
		if id == "F5" {
			w.f.delayBy = time.Second + time.Duration(rng.Int64N(int64(2*time.Second)))
		} else {
			w.f.delayBy = 100*time.Millisecond + time.Duration(rng.Int64N(int64(4*time.Second)))
		}
	case "F8":
		w.sourceFault(rng, dur(5*time.Second, 90*time.Second))
	case "F9":
		d := dur(5*time.Second, 60*time.Second)
		every := time.Duration(2+rng.IntN(8)) * time.Second
		w.window("F9", "sequence", d, func() { w.intrude(w.now().Add(d), every) }, nil, param("every", every.String()))
	case "F10":
		w.window("F10", "mempool", dur(2*time.Second, 30*time.Second), func() { w.chain.SetMempoolFull(true) },
			func() { w.chain.SetMempoolFull(false) })
	case "F11":
		codes := []uint32{oracle.CodeOutOfGas, oracle.CodeInsufficientFee, oracle.CodeInvalidRequest, oracle.CodeInsufficientFunds,
			oracle.CodeWrongSequence}
		code, n := codes[rng.IntN(len(codes))], 1+rng.IntN(3)
		if err := w.chain.InjectCheckTx(code, n); err != nil {
			w.fail(err)
			return
		}
		w.point("F11", "checktx", param("code", strconv.FormatUint(uint64(code), 10)), param("attempts", strconv.Itoa(n)))
	case "F12":
		w.f.ambiguous = true
	case "F13":
		w.evict()
	case "F14":
		w.window("F14", "abci_query", dur(2*time.Second, 30*time.Second), func() { w.f.queryFail = true }, func() { w.f.queryFail = false })
	case "F15":
		w.window("F15", "blocks", dur(3*time.Second, 40*time.Second), func() { w.f.stall = true }, func() { w.f.stall = false })
	case "F16":
		skew := time.Duration(rng.Int64N(int64(6*time.Second))) - 3*time.Second
		w.window("F16", "block-time", dur(5*time.Second, 60*time.Second), func() { w.chain.SetBlockTimeSkew(skew) },
			func() { w.chain.SetBlockTimeSkew(0) }, param("skew", skew.String()))
	case "F17":
		w.f.restartIn = time.Duration(1+rng.IntN(20)) * time.Second
		if rng.IntN(2) == 0 {
			w.f.crashAdmit = true
		} else if w.d != nil && !w.exited {
			w.crashAt = w.ports + 1 + rng.IntN(30)
		}
	case "F18":
		if w.d == nil || w.exited {
			return
		}
		w.f.restartIn = time.Duration(1+rng.IntN(20)) * time.Second
		w.signal([]string{"SIGTERM", "SIGINT"}[rng.IntN(2)])
	default:
		w.fail(fmt.Errorf("unknown fault %q", id))
	}
}

// sourceFault is F8: a window in which one request's source (one endpoint
// or all) answers with one failure class.
func (w *world) sourceFault(rng *rand.Rand, d time.Duration) {
	if len(w.reqs) == 0 {
		return
	}
	r := w.reqs[rng.IntN(len(w.reqs))]
	classes := []datasource.Class{datasource.ClassStatus, datasource.ClassMalformed, datasource.ClassMissing, datasource.ClassNull,
		datasource.ClassArray, datasource.ClassEmpty, datasource.ClassReset, datasource.ClassHang}
	class := classes[rng.IntN(len(classes))]
	ep := -1
	if rng.IntN(2) == 0 {
		ep = rng.IntN(r.ends)
	}
	from := w.now()
	if err := w.src.AddWindow(r.id, datasource.Window{From: from, To: from.Add(d), Endpoint: ep, Class: class}); err != nil {
		w.fail(err)
		return
	}
	w.window("F8", "source", d, nil, nil, param("request", strconv.FormatUint(r.id, 10)),
		param("endpoint", strconv.Itoa(ep)), param("class", string(class)))
}

// intrude is F9: the same-key intruder sends a tx every so often until end.
func (w *world) intrude(end time.Time, every time.Duration) {
	if !w.now().Before(end) {
		return
	}
	if _, err := w.chain.Intrude(w.sut); err != nil {
		w.fail(err)
		return
	}
	w.at(w.now().Add(every), func() { w.intrude(end, every) })
}

// evict is F13: the newest admitted tx of the daemon leaves the mempool.
func (w *world) evict() {
	pool := w.chain.Mempool()
	for i := len(pool) - 1; i >= 0; i-- {
		if pool[i].Origin == history.OriginSUT {
			w.chain.Evict(pool[i].Hash)
			return
		}
	}
}

// frameFault decides what happens to one frame delivery: how long it is
// held, how many copies arrive (0: dropped) and how long after the first
// each next copy comes.
func (w *world) frameFault(fr *chain.Frame) (hold time.Duration, copies int, lag time.Duration) {
	switch {
	case w.f.drop > 0:
		w.f.drop--
		w.point("F3", "frame", requestParams(fr)...)
		return 0, 0, 0
	case w.f.dup > 0 && w.o.LateDuplicates && moderatorFrame(fr):
		w.f.dup--
		lag := w.beforeQuiet(w.f.dupLag)
		w.point("F4", "frame", append(requestParams(fr), param("lag", lag.String()))...)
		return 0, 2, lag
	case w.f.dup > 0 && !w.o.LateDuplicates:
		w.f.dup--
		w.point("F4", "frame", requestParams(fr)...)
		return 0, 2, 0
	case w.f.hold > 0 && fr.EventsMap()[oracle.KeyCompleteID] != nil:
		hold := w.beforeQuiet(w.f.hold)
		w.f.hold = 0
		w.point("F5", "frame", append(requestParams(fr), param("delay", hold.String()))...)
		return hold, 1, 0
	case w.f.delay > 0:
		w.f.delay--
		w.point(w.f.delayID, "frame", append(requestParams(fr), param("delay", w.f.delayBy.String()))...)
		return w.f.delayBy, 1, 0
	}
	return 0, 1, 0
}

// beforeQuiet cuts a frame's hold (long F5, late F4) so that the frame
// arrives 5 s before the quiet phase at the latest; the fault phase lasts
// until it does.
func (w *world) beforeQuiet(d time.Duration) time.Duration {
	if last := Genesis.Add(w.o.FaultPhase - 5*time.Second); w.now().Add(d).After(last) {
		d = max(last.Sub(w.now()), 0)
	}
	if end := w.now().Add(d); end.After(w.faultsEnd) {
		w.faultsEnd = end
	}
	return d
}

// moderatorFrame reports whether fr is a moderator's Register or Update Tx
// frame.
func moderatorFrame(fr *chain.Frame) bool {
	ev := fr.EventsMap()
	return ev[oracle.EventRegister+".request_id"] != nil || ev[oracle.EventUpdate+".request_id"] != nil
}

// requestParams names the requests a frame carries, one "request"
// parameter each, in ascending order.
func requestParams(fr *chain.Frame) []history.Param {
	var ids []string
	ev := fr.EventsMap()
	keys := make([]string, 0, len(ev))
	for k := range ev {
		if strings.HasSuffix(k, ".request_id") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range ev[k] {
			if !slices.Contains(ids, v) {
				ids = append(ids, v)
			}
		}
	}
	slices.Sort(ids)
	out := make([]history.Param, 0, len(ids))
	for _, id := range ids {
		out = append(out, param("request", id))
	}
	return out
}
