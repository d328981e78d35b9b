package conform

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

// Lifetime is one launch of the daemon: where its output is kept whole,
// and how it ended.
type Lifetime struct {
	Life        int    `json:"life"`
	Stdout      string `json:"stdout"`
	Stderr      string `json:"stderr"`
	Ended       string `json:"ended,omitempty"` // "exit status 0", "killed by SIGKILL"
	AfterSignal string `json:"after_signal,omitempty"`
	OnItsOwn    bool   `json:"on_its_own,omitempty"` // it ended without a signal of the harness
}

// Summary is what happened in a run, counted from its records: what a
// report says first, before any checker's verdict.
type Summary struct {
	// Broadcasts are the daemon's txs that reached the chain's admission
	// (every broadcast_tx_sync, also one whose answer was lost); Admitted
	// of them joined the mempool; Rejected groups the others by answer.
	Broadcasts int      `json:"broadcasts"`
	Admitted   int      `json:"admitted"`
	Rejected   []Answer `json:"rejected,omitempty"`
	// Committed are the daemon's txs a block included with code 0;
	// FailedInBlock those it included that failed, by answer.
	Committed     int      `json:"committed"`
	FailedInBlock []Answer `json:"failed_in_block,omitempty"`
	// Rounds are the rounds the chain completed; WithSelf those that
	// counted the daemon's submission.
	Rounds   int `json:"rounds_completed"`
	WithSelf int `json:"rounds_with_daemon"`
	// Calls are the daemon's JSON-RPC calls by method; CallsLost the
	// answers that never reached it.
	Calls     map[string]int `json:"calls"`
	CallsLost int            `json:"calls_lost,omitempty"`
	// Lifetimes are the launches; Restarts the harness's relaunches;
	// OnItsOwn the lifetimes that ended without a signal of the harness
	// (a crash or an exit the script did not ask for); Traces the Go
	// panics and fatal errors in the output.
	Lifetimes int `json:"lifetimes"`
	Restarts  int `json:"restarts"`
	OnItsOwn  int `json:"ended_on_their_own"`
	Traces    int `json:"go_traces"`
	// Waived are what the diagnostic mode let in (Options.AdmitUnverified),
	// by answer the chain would have given.
	Waived []Answer `json:"waived,omitempty"`
	// Violations and the checkers they came from.
	Violations       int `json:"violations"`
	ViolatedCheckers int `json:"violated_checkers"`
	// Cause is the sentence that says what stopped the run's daemon
	// first, when the counts show one ("" when none stands out).
	Cause string `json:"cause,omitempty"`
}

// Answer is one kind of answer to the daemon's txs: a CheckTx or block
// code with its log, or a JSON-RPC error; Texts counts the distinct log
// texts folded into it (the first one's is Log).
type Answer struct {
	Code     uint32 `json:"code,omitempty"`
	RPCError bool   `json:"rpc_error,omitempty"`
	Log      string `json:"log"`
	// ByScript names the script's fault that brought the answer about
	// ("F11": injected; "F9": the same-key intruder took the sequence;
	// "F12": the lost answer's tx met the cache), "" when the daemon's own.
	ByScript string `json:"by_script,omitempty"`
	Count    int    `json:"count"`
	Texts    int    `json:"texts"`
}

// String is "code 18 'message 0: signature must not be empty: invalid
// request' ×28".
func (a Answer) String() string {
	var b strings.Builder
	if a.RPCError {
		fmt.Fprintf(&b, "RPC error %q", a.Log)
	} else {
		fmt.Fprintf(&b, "code %d %q", a.Code, a.Log)
	}
	if a.Texts > 1 {
		fmt.Fprintf(&b, " (and %d other texts)", a.Texts-1)
	}
	switch a.ByScript {
	case "":
	case "F11":
		b.WriteString(" injected by the script (F11)")
	default:
		fmt.Fprintf(&b, " during the script's %s", a.ByScript)
	}
	fmt.Fprintf(&b, " ×%d", a.Count)
	return b.String()
}

// answers folds answers by code (or RPC error kind) and injection, the
// most frequent first.
type answers struct {
	by    map[answerKey]*Answer
	texts map[answerKey]map[string]bool
}

type answerKey struct {
	code     uint32
	rpc      string // the RPC error's reason, up to its first ':'
	byScript string
}

func (as *answers) add(code uint32, rpcErr, log, byScript string) {
	if as.by == nil {
		as.by, as.texts = map[answerKey]*Answer{}, map[answerKey]map[string]bool{}
	}
	k := answerKey{code: code, byScript: byScript}
	if rpcErr != "" {
		k.rpc, _, _ = strings.Cut(rpcErr, ":")
		log = rpcErr
	}
	a := as.by[k]
	if a == nil {
		a = &Answer{Code: code, RPCError: rpcErr != "", Log: log, ByScript: byScript}
		as.by[k], as.texts[k] = a, map[string]bool{}
	}
	a.Count++
	if !as.texts[k][log] {
		as.texts[k][log] = true
		a.Texts++
	}
}

func (as *answers) list() []Answer {
	out := make([]Answer, 0, len(as.by))
	for _, a := range as.by {
		out = append(out, *a)
	}
	slices.SortFunc(out, func(a, b Answer) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Code, b.Code), strings.Compare(a.Log, b.Log))
	})
	return out
}

// summarize counts what the run's records say (r.Report must be set) and
// fills in how each lifetime ended.
func summarize(r *Result) Summary {
	s := Summary{Calls: map[string]int{}}
	var rejected, failed, waived answers
	life, signal := 0, ""
	ends := map[int]Lifetime{}
	active := map[string]bool{} // the script's fault windows open
	for i := range r.Events {
		e := &r.Events[i]
		switch {
		case e.Fault != nil:
			switch e.Fault.Phase {
			case history.FaultStart:
				active[e.Fault.ID] = true
			case history.FaultEnd:
				delete(active, e.Fault.ID)
			}
		case e.CheckTx != nil && e.CheckTx.Origin == history.OriginSUT:
			c := e.CheckTx
			s.Broadcasts++
			if c.RPCError == "" && c.Code == 0 {
				s.Admitted++
			} else {
				rejected.add(c.Code, c.RPCError, c.Log, byScript(c, active))
			}
		case e.Deliver != nil && e.Deliver.Origin == history.OriginSUT:
			if e.Deliver.Code == 0 {
				s.Committed++
			} else {
				failed.add(e.Deliver.Code, "", e.Deliver.Log, "")
			}
		case e.Block != nil:
			for _, c := range e.Block.Completes {
				s.Rounds++
				if slices.Contains(c.Providers, r.Self) {
					s.WithSelf++
				}
			}
		case e.RPC != nil && e.RPC.Phase == history.PhaseRecv:
			s.Calls[e.RPC.Method]++
		case e.RPC != nil && e.RPC.Phase == history.PhaseDone && e.RPC.Lost:
			s.CallsLost++
		case e.Proc != nil:
			switch e.Proc.Action {
			case history.ProcStart:
				s.Lifetimes++
				life, signal = s.Lifetimes, ""
			case history.ProcSignal:
				signal = e.Proc.Signal
			case history.ProcExit:
				ends[life] = Lifetime{Ended: e.Proc.ExitText(), AfterSignal: signal, OnItsOwn: signal == ""}
				if signal == "" {
					s.OnItsOwn++
				}
			case history.ProcTrace:
				s.Traces++
			}
		}
	}
	for i := range r.Lifetimes {
		if end, ok := ends[r.Lifetimes[i].Life]; ok {
			r.Lifetimes[i].Ended, r.Lifetimes[i].AfterSignal, r.Lifetimes[i].OnItsOwn = end.Ended, end.AfterSignal, end.OnItsOwn
		}
	}
	s.Restarts = max(0, s.Lifetimes-1)
	s.Rejected, s.FailedInBlock = rejected.list(), failed.list()
	for _, w := range r.Waived {
		for range w.Txs {
			waived.add(w.Code, "", w.Log, "")
		}
	}
	s.Waived = waived.list()
	if r.Report != nil {
		s.Violations = len(r.Report.Violations)
		s.ViolatedCheckers = len(violatedCheckers(r.Report))
	}
	if r.Diagnostic || r.Failed() {
		s.Cause = cause(s) // a run that passed needs none
	}
	return s
}

// byScript names the script's fault behind a rejection, if any: F11's
// injected codes, the code 32 of F9's intruder, and the cache hit of the
// tx whose answer F12 lost (held by F15).
func byScript(c *history.CheckTx, active map[string]bool) string {
	switch {
	case c.Injected:
		return "F11"
	case c.RPCError == "" && c.Code == oracle.CodeWrongSequence && active["F9"]:
		return "F9"
	case c.RPCError != "" && strings.HasPrefix(c.RPCError, oracle.RPCErrTxInCache) && active["F15"]:
		return "F12"
	}
	return ""
}

// violatedCheckers are the checkers with a violation, in the report's
// order of first violation.
func violatedCheckers(rep *judge.Report) []string {
	var out []string
	for _, v := range rep.Violations {
		if !slices.Contains(out, v.Checker) {
			out = append(out, v.Checker)
		}
	}
	return out
}

// waivable reports whether --admit-unverified lets a rejection pass: the
// message checks (codes 7, 18) and the signer and signature checks (4).
func waivable(a Answer) bool {
	return !a.RPCError && (a.Code == oracle.CodeInvalidRequest || a.Code == oracle.CodeInvalidAddress || a.Code == oracle.CodeUnauthorized)
}

// cause is the first wall the counts show, if one stands out.
func cause(s Summary) string {
	genuine := 0 // rejections the script did not bring about
	var first *Answer
	if len(s.Rejected) > 0 {
		first = &s.Rejected[0]
	}
	for i, a := range s.Rejected {
		if a.ByScript == "" {
			if genuine == 0 {
				first = &s.Rejected[i]
			}
			genuine += a.Count
		}
	}
	switch {
	case s.Lifetimes == 0:
		return "the daemon was never launched"
	case s.Broadcasts == 0 && s.OnItsOwn > 0:
		return "the daemon ended on its own before it broadcast a single tx: see its output"
	case s.Broadcasts == 0:
		return "the daemon never broadcast a tx"
	case s.Admitted == 0 && genuine > 0:
		msg := fmt.Sprintf("no broadcast of the daemon was admitted (most often %s): every contract after admission is judged on a daemon that never got a tx into a block", first)
		if waivable(*first) {
			msg += "; --admit-unverified shows what it would do next (a diagnostic run, no conformance claim)"
		}
		return msg
	case genuine*2 > s.Broadcasts:
		return fmt.Sprintf("most of the daemon's broadcasts were rejected (%s)", first)
	case s.Committed == 0:
		return "none of the daemon's txs was committed"
	}
	return ""
}
