package oracle

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
	oraclejudge "github.com/wsconverge/converge/judge/oracle"
	oraclesim "github.com/wsconverge/converge/sim/oracle"
)

// reexecuteSeeds is how many seeds TestReexecutingDaemonJudgedPerResult
// runs each variant for: enough for fetch failures (F8) to interleave
// executions and for F11 to refuse a result with code 13.
const reexecuteSeeds = 24

// reexecuteAllowed are the checkers that may flag the re-executing
// daemon, each for what it does: it runs a job again before its E (O3;
// two executions at once), so one round gets several results — committed
// twice (O1), broadcast again after an acknowledgement (O5), run again
// once the chain shows the round submitted (O27) or after an Update with
// no Complete (O6) — and its extra results fill the submitter's
// pool_size places, so another request's result may wait past B_sub
// (O10, and O13 after a restart).
var reexecuteAllowed = []string{o1, o3, o5, o6, o10, o13, o27}

// TestReexecutingDaemonJudgedPerResult is issue 22's regression (item 6):
// a daemon that runs a request every tick while its earlier executions
// wait to retry and its earlier results still retry is flagged for
// running again (O3) and for the extra submissions of a round, and, when
// it also retries a result after code 13, for that (O5); its fetch
// retries (O4), values (O12) and submission retries (O23) are each per
// result as the spec asks, and are not flagged.
func TestReexecutingDaemonJudgedPerResult(t *testing.T) {
	b := builder(t)
	var ms []*SourceMutant
	for _, name := range []string{"reexecute-every-tick", "reexecute-every-tick-retries-code-13"} {
		m, ok := SourceByName(name)
		require.True(t, ok)
		ms = append(ms, m)
	}
	built, err := b.BuildAll(context.Background(), ms)
	require.NoError(t, err)
	for i, m := range ms {
		name, x := m.Name(), built[i]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			retriesTerminal := strings.HasSuffix(name, "code-13")
			var interleaved, terminalRetries, terminalFlagged int
			for seed := uint64(1); seed <= reexecuteSeeds; seed++ {
				o := m.Options
				o.Seed = seed
				_, evs, err := x.history(context.Background(), o)
				require.NoError(t, err)
				st, err := oraclejudge.NewStream(oraclesim.Params(o))
				require.NoError(t, err)
				for i := range evs {
					st.Step(&evs[i])
				}
				rep := st.Finish()
				cov := st.Coverage()
				interleaved += cov[o3]["an execution started during another's retry wait"]

				require.Equal(t, judge.Violated, rep.Verdict(o3), "seed %d: the daemon runs again before E", seed)
				for _, c := range []string{o4, o12, o23} {
					require.NotEqual(t, judge.Violated, rep.Verdict(c), "seed %d: %s names a contract the daemon keeps: %v", seed, c,
						messages(rep, c))
				}
				allowed := reexecuteAllowed
				for _, v := range rep.Violations {
					require.Contains(t, allowed, v.Checker, "seed %d: %s", seed, v)
				}
				o5msgs := messages(rep, o5)
				for _, msg := range o5msgs {
					ok := strings.Contains(msg, "broadcast again after it was acknowledged") ||
						retriesTerminal && strings.Contains(msg, "broadcast again after a terminal answer (insufficient fee)")
					require.True(t, ok, "seed %d: O5 may flag only the extra submissions (and the retries after code 13): %s", seed, msg)
				}
				first := firstTerminalRetry(evs)
				if first.IsZero() {
					continue
				}
				require.True(t, retriesTerminal, "seed %d: the daemon retried after code 13", seed)
				terminalRetries++
				if slices.ContainsFunc(o5msgs, func(s string) bool { return strings.Contains(s, "terminal answer") }) {
					terminalFlagged++
					continue
				}
				// O5's report is full (judge.MaxViolationsPerChecker) of extra
				// submissions that came before the first retry after code 13.
				late := rep.Violations[:0:0]
				for _, v := range rep.Violations {
					if v.Checker == o5 {
						late = append(late, v)
					}
				}
				require.Len(t, late, judge.MaxViolationsPerChecker, "seed %d: a retry after code 13 at %s not flagged", seed, first)
				require.False(t, late[len(late)-1].At.After(first), "seed %d: a retry after code 13 at %s not flagged", seed, first)
			}
			require.Positive(t, interleaved, "no execution started while another waited to retry: the runs do not show the situation")
			if retriesTerminal {
				require.Positive(t, terminalFlagged, "no retry after code 13 flagged in %d seeds (%d with one)", reexecuteSeeds, terminalRetries)
			}
			t.Logf("%s: %d seeds, %d executions beside a waiting one, %d seeds with a retry after code 13 (%d flagged)",
				name, reexecuteSeeds, interleaved, terminalRetries, terminalFlagged)
		})
	}
}

// messages lists one checker's violation messages.
func messages(r *judge.Report, checker string) []string {
	var out []string
	for _, v := range r.Violations {
		if v.Checker == checker {
			out = append(out, v.Message)
		}
	}
	return out
}

// firstTerminalRetry is the time of the daemon's first broadcast of a
// payload (request, round, raw_data) that the same lifetime's earlier
// broadcast of it had been answered with code 13 (zero when none), no
// body served to the daemon since holding the value (two executions in
// one second fetch the same value: a new result may carry it). It reads
// the records alone, apart from the checkers.
func firstTerminalRetry(evs []history.Event) time.Time {
	type key struct {
		life int
		r, n uint64
		raw  string
	}
	life := 0
	sent := map[int64]key{}
	refused := map[key]bool{}
	for _, e := range evs {
		switch {
		case e.Proc != nil && e.Proc.Action == history.ProcStart:
			life++
		case e.Src != nil && e.Src.Phase == history.PhaseDone && e.Src.Status == 200:
			for k := range refused {
				if k.r == e.Src.RequestID && strings.Contains(e.Src.Body, k.raw) {
					delete(refused, k)
				}
			}
		case e.RPC == nil:
		case e.RPC.Phase == history.PhaseRecv:
			if tx := e.RPC.Tx; tx != nil && len(tx.Msgs) > 0 && tx.Msgs[0].Type == oracle.TypeURLSubmit {
				k := key{life, tx.Msgs[0].RequestID, tx.Msgs[0].Nonce, tx.Msgs[0].RawData}
				if refused[k] {
					return e.At
				}
				sent[e.RPC.Call] = k
			}
		default:
			if k, ok := sent[e.RPC.Call]; ok && e.RPC.Result != nil && e.RPC.Result.ErrCode == 0 &&
				e.RPC.Result.Code == oracle.CodeInsufficientFee {
				refused[k] = true
			}
		}
	}
	return time.Time{}
}
