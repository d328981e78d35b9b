package invariant

import "github.com/wsconverge/converge/contracts/oracle/history"

// The classes of records the checkers tell apart (judge.Classes): a
// checker that acts only on some of them declares which (judge.Reader)
// and is not shown the others. Each class is one of the facts a record
// gives (State.before): a broadcast call, an answer, a GET, a GET's end,
// a frame.
const (
	// classOther: a record with no payload or more than one. Every
	// checker reads it, so that a malformed record is judged as before.
	classOther = iota
	classProc
	classBroadcast // an rpc recv of broadcast_tx_sync (Cur.Bcast)
	classCall      // any other rpc recv
	classAnswer    // an rpc done (Cur.Done, Cur.Answer)
	classFrame     // a ws frame (Cur.Frame)
	classWS        // any other ws record
	classCheckTx
	classBlock
	classDeliver
	classEvict
	classOp
	classPeer
	classGet     // a src recv (Cur.Get)
	classGetDone // a src done (Cur.GetDone)
	classFault
	classWhite
)

// Class is e's class.
func (world) Class(e *history.Event) int {
	if payloads(e) != 1 {
		return classOther
	}
	switch {
	case e.Proc != nil:
		return classProc
	case e.RPC != nil && e.RPC.Phase == history.PhaseRecv && e.RPC.Method == methodBroadcast:
		return classBroadcast
	case e.RPC != nil && e.RPC.Phase == history.PhaseRecv:
		return classCall
	case e.RPC != nil:
		return classAnswer
	case e.WS != nil && e.WS.Action == history.WSFrame:
		return classFrame
	case e.WS != nil:
		return classWS
	case e.CheckTx != nil:
		return classCheckTx
	case e.Block != nil:
		return classBlock
	case e.Deliver != nil:
		return classDeliver
	case e.Evict != nil:
		return classEvict
	case e.Op != nil:
		return classOp
	case e.Peer != nil:
		return classPeer
	case e.Src != nil && e.Src.Phase == history.PhaseRecv:
		return classGet
	case e.Src != nil:
		return classGetDone
	case e.Fault != nil:
		return classFault
	}
	return classWhite
}

// payloads counts e's payloads.
func payloads(e *history.Event) int {
	n := 0
	for _, set := range [...]bool{e.Proc != nil, e.RPC != nil, e.WS != nil, e.CheckTx != nil, e.Block != nil,
		e.Deliver != nil, e.Evict != nil, e.Op != nil, e.Peer != nil, e.Src != nil, e.Fault != nil, e.White != nil} {
		if set {
			n++
		}
	}
	return n
}

// reads is the set of classes given, and classOther.
func reads(classes ...int) uint64 {
	set := uint64(1) << classOther
	for _, c := range classes {
		set |= 1 << c
	}
	return set
}

// What each checker reads. The checkers not named here (O9 resync, O10
// completeHandled, O13 restart, O14 shutdown, O16b recovery, O18
// healthProbe) judge deadlines as time passes, at whatever record comes
// next, and read every class.
func (*singleCommit) Reads() uint64     { return reads(classDeliver, classBroadcast, classProc) }
func (*nonceBounds) Reads() uint64      { return reads(classFrame, classBroadcast) }
func (*executionTiming) Reads() uint64  { return reads(classGet) }
func (*restartPeriod) Reads() uint64    { return reads(classAnswer, classFrame, classGet) }
func (*fetchRetries) Reads() uint64     { return reads(classGet, classGetDone) }
func (*submitRetries) Reads() uint64    { return reads(classAnswer, classBroadcast) }
func (*updateKeepsNonce) Reads() uint64 { return reads(classFrame, classGet, classBroadcast) }
func (*concurrency) Reads() uint64      { return reads(classGet, classBroadcast) }
func (*sequence) Reads() uint64         { return reads(classEvict, classBroadcast) }
func (*notRunning) Reads() uint64       { return reads(classAnswer, classGet, classBroadcast) }
func (*fidelity) Reads() uint64         { return reads(classGet, classBroadcast) }
func (*clientCloses) Reads() uint64     { return reads(classFault, classProc, classWS) }
func (*shutdownOrder) Reads() uint64    { return reads(classWhite) }
func (*liveness) Reads() uint64         { return reads(classProc, classBroadcast, classBlock) }
func (*wire) Reads() uint64             { return reads(classBroadcast, classCall, classWS, classProc) }
