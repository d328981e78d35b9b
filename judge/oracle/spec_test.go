package oracle

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/refimpl/oracle/core"
)

// The judge keeps ORACLE-SPEC's numbers and arithmetic itself (spec.go);
// the reference daemon's package oracle must agree with it. A difference
// is a bug in one of them, never to be settled by one following the other
// unseen.
func TestSpecNumbersAreTheReferences(t *testing.T) {
	require.Equal(t, oracle.FetchAttempts, specFetchAttempts)
	require.Equal(t, oracle.SubmitAttempts, specSubmitAttempts)
	require.Equal(t, oracle.SubmitRetryCap, specSubmitRetryCap)
	require.Equal(t, oracle.CompleteWait, specCompleteWait)
	require.Equal(t, oracle.SubmissionGaveUpRetry, specSubmissionGaveUpRetry)
	require.Equal(t, oracle.ParseFailureRetry, specParseFailureRetry)
	require.Equal(t, oracle.SequenceResync, specSequenceResync)
	require.Equal(t, oracle.HealthCheckInterval, specHealthCheckInterval)
	require.Equal(t, oracle.DroppedEventReconcile, specDroppedEventReconcile)
	require.Equal(t, oracle.DocQueryTries, specDocQueryTries)
	require.Equal(t, oracle.RPCCallTimeout, specRPCCallTimeout)
	for _, wt := range []time.Duration{0, time.Second, 30 * time.Second} {
		require.Equal(t, oracle.ShutdownBound(wt), specShutdownBound(wt))
	}
	for n := -1; n <= specFetchAttempts+1; n++ {
		w, ok := core.FetchRetryWait(n)
		sw, sok := specFetchRetryWait(n)
		require.Equal(t, []any{w, ok}, []any{sw, sok}, "fetch attempt %d", n)
	}
	for k := -1; k <= specSubmitAttempts+1; k++ {
		b, ok := core.SubmitRetryBase(k)
		sb, sok := specSubmitRetryBase(k)
		require.Equal(t, []any{b, ok}, []any{sb, sok}, "submission retry %d", k)
	}
}

func TestSpecArithmeticIsTheReferences(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		base := time.Duration(rapid.Int64Range(0, int64(time.Hour)).Draw(t, "base"))
		lo, hi := core.JitterBounds(base)
		slo, shi := specJitterBounds(base)
		require.Equal(t, []time.Duration{lo, hi}, []time.Duration{slo, shi})

		whole := rapid.Uint64Range(0, 10_000_000_000_000).Draw(t, "whole")
		frac := rapid.StringMatching(`[0-9]{0,18}`).Draw(t, "frac")
		price := strconv.FormatUint(whole, 10)
		if frac != "" {
			price += "." + frac
		}
		gas := rapid.Uint64Range(0, 1<<40).Draw(t, "gas")
		fee, err := oracle.FeeAmount(price, gas)
		sfee, serr := specFeeAmount(price, gas)
		require.Equal(t, err == nil, serr == nil, "price %q", price)
		require.Equal(t, fee, sfee, "price %q × gas %d", price, gas)

		adj := rapid.Float64Range(-1, 5).Draw(t, "adjustment")
		require.Equal(t, oracle.AdjustGas(gas, adj), specAdjustGas(gas, adj), "gas %d × %v", gas, adj)
	})
	for _, price := range []string{"0.5", "1.", ".5", "630000000000", "00012.3400", "99999999999999999999", "18446744073709551615", "1e3", "-1", "+1", "abc", ""} {
		for _, gas := range []uint64{0, 1, 50000, math.MaxUint64} {
			fee, err := oracle.FeeAmount(price, gas)
			sfee, serr := specFeeAmount(price, gas)
			require.Equal(t, err == nil, serr == nil, "price %q", price)
			require.Equal(t, fee, sfee, "price %q × gas %d", price, gas)
		}
	}
	for _, adj := range []float64{math.NaN(), math.Inf(1), 0} {
		require.Equal(t, oracle.AdjustGas(7, adj), specAdjustGas(7, adj))
	}
}

// The judge's own job rules (spec_job.go) against package oracle's: the
// transition table over every trigger × every execution state (and one
// outside the table) × every request status × Superseded × NextRunTime
// before, at and after now × self assigned or not, each with the trigger
// variants its guards tell apart; then drawn jobs and triggers.
func TestSpecTransitionIsTheReferences(t *testing.T) {
	now := t0.Add(time.Hour)
	cases := 0
	for _, j := range specEnumJobs(now) {
		for _, tr := range specEnumTriggers(j, now) {
			requireSameTransition(t, j, tr, now)
			cases++
		}
	}
	for _, tr := range specEnumTriggers(nil, now) {
		requireSameTransition(t, nil, tr, now)
		cases++
	}
	t.Logf("%d enumerated (job, trigger) cases", cases)
	rapid.Check(t, func(rt *rapid.T) {
		now := t0.Add(time.Duration(rapid.Int64Range(0, int64(48*time.Hour)).Draw(rt, "now")))
		var j *oracle.Job
		if rapid.Bool().Draw(rt, "has job") {
			j = specDrawJob(rt, now)
		}
		requireSameTransition(t, j, specDrawTrigger(rt, j, now), now)
	})
}

// requireSameTransition holds specTransition equal to oracle.Transition,
// and to oracle.TransitionIn into a room, for one job and trigger, and
// holds that neither modified the job.
func requireSameTransition(t *testing.T, j *oracle.Job, tr oracle.Trigger, now time.Time) {
	t.Helper()
	var before *oracle.Job
	if j != nil {
		c := j.Clone()
		before = &c
	}
	want := core.Transition(j, tr, now)
	got := specTransition(nil, j, tr, now)
	if !reflect.DeepEqual(want, got) {
		require.Equal(t, want, got, "job %+v, trigger %T %+v", j, tr, tr)
	}
	var ref core.Room
	var room specRoom
	wantIn := core.TransitionIn(&ref, j, tr, now)
	gotIn := specTransition(&room, j, tr, now)
	if !reflect.DeepEqual(wantIn, gotIn) {
		require.Equal(t, wantIn, gotIn, "in a room: job %+v, trigger %T %+v", j, tr, tr)
	}
	if j != nil && !reflect.DeepEqual(before, j) {
		require.Equal(t, before, j, "the input job was modified by trigger %T", tr)
	}
}

// specEnumJobs is a job of request 7 in every combination the table's
// guards read.
func specEnumJobs(now time.Time) []*oracle.Job {
	var out []*oracle.Job
	accounts := [][]string{{"guru1a", self, "guru1b"}, {"guru1a", "guru1b"}}
	for es := oracle.ExecPending; es <= oracle.ExecRetrying+1; es++ {
		for st := oracle.StatusUnspecified; st <= oracle.StatusDisabled+1; st++ {
			for _, sup := range []bool{false, true} {
				for _, rel := range []time.Duration{-time.Second, 0, time.Second} {
					for _, acc := range accounts {
						out = append(out, &oracle.Job{
							ID: "req_7", RequestID: 7, URL: "http://src/7/1", ParseRule: "p.v",
							Nonce: 5, NextRunTime: now.Add(rel), Period: 30 * time.Second, Status: st,
							AccountList: acc, AssignedIndex: core.AssignedIndex(acc, self),
							Exec:      oracle.ExecutionState{Status: es, ExecNonce: 4, Superseded: sup, StartedAt: now.Add(-time.Minute)},
							CreatedAt: t0, UpdatedAt: t0, RunCount: 2, FailureCount: 1,
						})
					}
				}
			}
		}
	}
	return out
}

// specEnumDocs are docs of request 7 around nonce n: self first (and
// again later), second or absent, zero to two endpoints, ENABLED or not,
// nonces below, at and above n; then a few odd ones.
func specEnumDocs(n uint64) []oracle.RequestDoc {
	var out []oracle.RequestDoc
	eps := []oracle.Endpoint{{URL: "http://src/7/0", ParseRule: "a"}, {URL: "http://src/7/1", ParseRule: "b.c"}, {URL: "http://src/7/2", ParseRule: "d"}}
	accounts := [][]string{{self, "guru1b", self}, {"guru1a", self}, {"guru1a", "guru1b"}}
	nonces := []uint64{0, n, n + 1}
	if n > 0 {
		nonces = append(nonces, n-1)
	}
	for _, acc := range accounts {
		for k := 0; k <= 2; k++ {
			for _, st := range []oracle.RequestStatus{oracle.StatusEnabled, oracle.StatusPaused} {
				for _, nc := range nonces {
					out = append(out, oracle.RequestDoc{RequestID: 7, Period: 30, AccountList: acc, Quorum: 1,
						Endpoints: eps[:k], Status: st, Nonce: nc})
				}
			}
		}
	}
	// A doc without a period, a third endpoint, an empty account list.
	return append(out, oracle.RequestDoc{RequestID: 7, AccountList: []string{"guru1a", self}, Endpoints: eps, Status: oracle.StatusEnabled, Nonce: n + 3},
		oracle.RequestDoc{RequestID: 7, Period: 30, Endpoints: eps, Status: oracle.StatusEnabled, Nonce: n + 1})
}

// specEnumTriggers is every trigger kind for job j (nil: none) with the
// variants the rows tell apart.
func specEnumTriggers(j *oracle.Job, now time.Time) []oracle.Trigger {
	n := uint64(0)
	if j != nil {
		n = j.Nonce
	}
	// Unknown, long past (max(now, bt + Period) = now), recent (= bt +
	// Period).
	bts := []time.Time{{}, now.Add(-time.Hour), now.Add(-10 * time.Second)}
	out := []oracle.Trigger{oracle.Select{}}
	for _, d := range specEnumDocs(n) {
		for _, sub := range []bool{false, true} {
			for _, bt := range bts {
				out = append(out, oracle.Create{Doc: d, Self: self, SelfSubmitted: sub, LastBlockTime: bt},
					oracle.Reconcile{Doc: d, Self: self, SelfSubmitted: sub, LastBlockTime: bt},
					oracle.Watchdog{Doc: &d, Self: self, SelfSubmitted: sub, LastBlockTime: bt})
			}
		}
		out = append(out, oracle.Update{Doc: &d, Self: self})
	}
	out = append(out, oracle.Update{Self: self}, oracle.Watchdog{Self: self}, oracle.Watchdog{Self: self, SelfSubmitted: true})
	for _, oc := range []oracle.ExecOutcome{oracle.ExecSucceeded, oracle.ExecFetchFailed, oracle.ExecParseFailed, oracle.ExecDropped, oracle.ExecDropped + 1} {
		for _, data := range []string{"", "101.5"} {
			for _, start := range []time.Time{{}, now.Add(-3 * time.Second)} {
				out = append(out, oracle.ExecutionEnd{Outcome: oc, Data: data, Error: "e", StartedAt: start})
			}
		}
	}
	for _, rn := range []uint64{n, n + 1, n + 2} {
		out = append(out, oracle.SubmissionGaveUp{Result: oracle.JobResult{JobID: "req_7", RequestID: 7, Nonce: rn, Data: "1"}, Self: self, Reason: "code 13"},
			oracle.SubmissionGaveUp{Result: oracle.JobResult{JobID: "req_7", RequestID: 7, Nonce: rn, Data: "1"}, Self: "guru1a", Reason: "code 4"})
	}
	for _, cn := range []uint64{0, n, n + 1, n + 4} {
		for _, bt := range bts {
			out = append(out, oracle.Complete{Nonce: cn, BlockTime: bt})
		}
	}
	return out
}

// specDrawJob draws a job of request 7 with any state.
func specDrawJob(t *rapid.T, now time.Time) *oracle.Job {
	acc := rapid.SliceOfN(rapid.SampledFrom([]string{self, "guru1a", "guru1b"}), 0, 4).Draw(t, "accounts")
	off := func(label string) time.Time {
		return now.Add(time.Duration(rapid.Int64Range(-int64(25*time.Hour), int64(25*time.Hour)).Draw(t, label)))
	}
	return &oracle.Job{
		ID: "req_7", RequestID: 7, URL: "http://src/7/1", ParseRule: "p.v",
		Nonce:         rapid.Uint64Range(0, 9).Draw(t, "nonce"),
		NextRunTime:   off("next run"),
		Period:        time.Duration(rapid.IntRange(0, 120).Draw(t, "period")) * time.Second,
		Status:        oracle.RequestStatus(rapid.Int32Range(0, 4).Draw(t, "status")),
		AccountList:   acc,
		AssignedIndex: core.AssignedIndex(acc, self),
		Exec: oracle.ExecutionState{
			Status:     oracle.ExecStatus(rapid.IntRange(0, 7).Draw(t, "exec status")),
			ExecNonce:  rapid.Uint64Range(0, 9).Draw(t, "exec nonce"),
			Superseded: rapid.Bool().Draw(t, "superseded"),
			StartedAt:  off("started"),
		},
		CreatedAt: t0, UpdatedAt: t0,
	}
}

// specDrawDoc draws a doc of request 7.
func specDrawDoc(t *rapid.T) oracle.RequestDoc {
	eps := make([]oracle.Endpoint, rapid.IntRange(0, 4).Draw(t, "endpoints"))
	for i := range eps {
		eps[i] = oracle.Endpoint{URL: fmt.Sprintf("http://src/7/%d", i), ParseRule: fmt.Sprintf("v%d", i)}
	}
	return oracle.RequestDoc{
		RequestID:   7,
		Period:      rapid.Uint32Range(0, 120).Draw(t, "doc period"),
		AccountList: rapid.SliceOfN(rapid.SampledFrom([]string{self, "guru1a", "guru1b"}), 0, 4).Draw(t, "doc accounts"),
		Endpoints:   eps,
		Status:      oracle.RequestStatus(rapid.Int32Range(0, 4).Draw(t, "doc status")),
		Nonce:       rapid.Uint64Range(0, 9).Draw(t, "doc nonce"),
	}
}

// specDrawTrigger draws any trigger for a job of request 7.
func specDrawTrigger(t *rapid.T, j *oracle.Job, now time.Time) oracle.Trigger {
	bt := time.Time{}
	if rapid.Bool().Draw(t, "block time known") {
		bt = now.Add(time.Duration(rapid.Int64Range(-int64(2*time.Hour), int64(time.Minute)).Draw(t, "block time")))
	}
	sub := rapid.Bool().Draw(t, "self submitted")
	var doc *oracle.RequestDoc
	if rapid.IntRange(0, 5).Draw(t, "doc gone") > 0 {
		d := specDrawDoc(t)
		doc = &d
	}
	switch rapid.IntRange(0, 7).Draw(t, "trigger") {
	case 0:
		return oracle.Create{Doc: specDrawDoc(t), Self: self, SelfSubmitted: sub, LastBlockTime: bt}
	case 1:
		return oracle.Select{}
	case 2:
		return oracle.ExecutionEnd{
			Outcome:   oracle.ExecOutcome(rapid.IntRange(0, 4).Draw(t, "outcome")),
			Data:      rapid.SampledFrom([]string{"", "0", "101.5"}).Draw(t, "data"),
			Error:     "e",
			StartedAt: now.Add(-time.Duration(rapid.Int64Range(0, int64(time.Minute)).Draw(t, "ran"))),
		}
	case 3:
		return oracle.SubmissionGaveUp{
			Result: oracle.JobResult{JobID: "req_7", RequestID: 7, Nonce: rapid.Uint64Range(0, 10).Draw(t, "result nonce"), Data: "1"},
			Self:   rapid.SampledFrom([]string{self, "guru1a"}).Draw(t, "giver"),
			Reason: "gave up",
		}
	case 4:
		return oracle.Complete{Nonce: rapid.Uint64Range(0, 10).Draw(t, "complete nonce"), BlockTime: bt}
	case 5:
		return oracle.Update{Doc: doc, Self: self}
	case 6:
		return oracle.Reconcile{Doc: specDrawDoc(t), Self: self, SelfSubmitted: sub, LastBlockTime: bt}
	}
	return oracle.Watchdog{Doc: doc, Self: self, SelfSubmitted: sub, LastBlockTime: bt}
}

// The readiness test, the assignment, the endpoint choice, the stale
// check and the watchdog's due test, over the same jobs and docs.
func TestSpecJobRulesAreTheReferences(t *testing.T) {
	now := t0.Add(time.Hour)
	for _, j := range specEnumJobs(now) {
		require.Equal(t, core.Ready(j, now), specReady(j, now), "ready: %+v", j)
		require.Equal(t, core.WatchdogDue(*j, now), specWatchdogDue(j, now), "watchdog due: %+v", j)
		require.Equal(t, j.Exec.Status.Selectable(), specSelectable(j.Exec.Status), "selectable: %v", j.Exec.Status)
		for _, rn := range []uint64{j.Nonce, j.Nonce + 1, j.Nonce + 2} {
			for _, who := range []string{self, "guru1a", "guru1c"} {
				r := oracle.JobResult{Nonce: rn}
				require.Equal(t, core.ResultStale(j, r, who), specResultStale(j, r, who), "stale: %+v, nonce %d, %s", j, rn, who)
			}
		}
	}
	require.Equal(t, core.ResultStale(nil, oracle.JobResult{}, self), specResultStale(nil, oracle.JobResult{}, self))
	for _, d := range specEnumDocs(2) {
		for _, who := range []string{self, "guru1a", "guru1c", ""} {
			require.Equal(t, core.AssignedIndex(d.AccountList, who), specAssignedIndex(d.AccountList, who), "index: %+v %s", d, who)
			require.Equal(t, core.Assigned(d, who), specAssigned(d, who), "assigned: %+v %s", d, who)
			e, k, ok := core.SelectEndpoint(d, who)
			se, sk, sok := specSelectEndpoint(d, who)
			require.Equal(t, []any{e, k, ok}, []any{se, sk, sok}, "endpoint: %+v %s", d, who)
		}
	}
	for _, r := range []uint64{0, 1, 7, math.MaxUint64} {
		require.Equal(t, core.JobID(r), specJobID(r))
	}
	require.Equal(t, oracle.FetchFailureRetry, specFetchFailureRetry)
	rapid.Check(t, func(rt *rapid.T) {
		now := t0.Add(time.Duration(rapid.Int64Range(0, int64(48*time.Hour)).Draw(rt, "now")))
		j := specDrawJob(rt, now)
		require.Equal(t, core.Ready(j, now), specReady(j, now))
		d := specDrawDoc(rt)
		e, k, ok := core.SelectEndpoint(d, self)
		se, sk, sok := specSelectEndpoint(d, self)
		require.Equal(t, []any{e, k, ok}, []any{se, sk, sok})
	})
}

// The broadcast answers: every code up to 64 and some far ones, no
// answer, and JSON-RPC errors with and without the two texts §3.5 names,
// in the message or in the data.
func TestSpecBroadcastClassesAreTheReferences(t *testing.T) {
	replies := []oracle.BroadcastReply{oracle.ReplyTransport(), {Transport: true, Code: 19}, {Transport: true, RPCError: true, RPCErrorText: oracle.RPCErrTxInCache}}
	for code := uint32(0); code <= 64; code++ {
		replies = append(replies, oracle.ReplyCode(code))
	}
	for _, code := range []uint32{111, 1 << 16, math.MaxUint32} {
		replies = append(replies, oracle.ReplyCode(code))
	}
	texts := []string{"", "Internal error", "tx already exists in cache", "mempool is full: number of txs 5000 (max: 5000)", "timed out", "Tx already exists in cache", "mempool is ful"}
	for _, msg := range texts {
		for _, data := range texts {
			require.Equal(t, oracle.ReplyRPCError(msg, data), specRPCReply(msg, data))
			r := specRPCReply(msg, data)
			replies = append(replies, r, oracle.BroadcastReply{RPCError: true, RPCErrorText: r.RPCErrorText, Code: 19})
		}
	}
	for _, r := range replies {
		c := oracle.ClassifyBroadcast(r)
		require.Equal(t, c, specClassifyBroadcast(r), "reply %+v", r)
	}
	for c := oracle.ClassSuccess; c <= oracle.ClassAmbiguous+1; c++ {
		require.Equal(t, c.Action(), specBroadcastAction(c), "class %v", c)
		require.Equal(t, c.AdjustsGas(), specAdjustsGas(c), "class %v", c)
	}
}

// Extraction: drawn JSON texts (nested objects and arrays, repeated and
// escaped keys, escaped and non-ASCII strings, number literals of every
// shape including -0, exponents and ones beyond the double range, odd
// white space, truncated or trailing bytes) under drawn rules.
func TestSpecExtractIsTheReferences(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		body := specDrawJSON(rt, 0)
		switch rapid.IntRange(0, 9).Draw(rt, "damage") {
		case 0:
			body = body[:rapid.IntRange(0, len(body)).Draw(rt, "cut")]
		case 1:
			body += rapid.SampledFrom([]string{"x", " {}", "\n", "1"}).Draw(rt, "trailing")
		}
		segs := rapid.SliceOfN(rapid.SampledFrom([]string{"a", "b", "data", "price", "é", "A", ""}), 0, 4).Draw(rt, "rule")
		requireSameExtract(t, body, strings.Join(segs, "."))
	})
	for _, c := range [][2]string{
		{`{"a":-0}`, "a"}, {`{"a":-0.0e5}`, "a"}, {`{"a":1e400}`, "a"}, {`{"a":1E2}`, "a"}, {`{"a":0.1}`, "a"},
		{`{"a":123456789012345678901234567890}`, "a"}, {`{"a":1,"a":2}`, "a"}, {`{"a":{"b":1},"a":{"c":2}}`, "a.b"},
		{`{"\u0061":"x","a":"y"}`, "a"}, {`{"a":"y","\u0061":"x"}`, "a"}, {`{"a":""}`, "a"}, {`{"a":null}`, "a"},
		{`{"a":[1,{"b":2}]}`, "a"}, {`{"a":{"z":1.50,"b":"<&>"}}`, "a"}, {`{"a":"\u00e9\n"}`, "a"}, {"{\"a\":\"\xff\"}", "a"},
		{"{\"\xff\":1,\"\uFFFD\":2}", "\uFFFD"}, {"{\"\uFFFD\":2,\"\xff\":1}", "\uFFFD"}, {`[1]`, "a"}, {`"a"`, "a"}, {` {"a" : true } `, "a"},
		{`{"a":1}`, ""}, {`{"a":1}`, "a."}, {`{"a":1}`, ".a"}, {`{"a":{"b":1}}`, "a..b"}, {`{"a":[{"b":1}]}`, "a.0.b"}, {``, "a"},
	} {
		requireSameExtract(t, c[0], c[1])
	}
}

// requireSameExtract holds specExtract equal to oracle.Extract: the same
// value, and failing together; and specExtractText (the model's way, a
// substring of the body when it can) equal to specExtract.
func requireSameExtract(t *testing.T, body, rule string) {
	t.Helper()
	v, err := core.Extract([]byte(body), rule)
	sv, serr := specExtract([]byte(body), rule)
	require.Equal(t, err == nil, serr == nil, "body %q rule %q: %v / %v", body, rule, err, serr)
	require.Equal(t, v, sv, "body %q rule %q", body, rule)
	tv, terr := specExtractText(body, []byte(body), rule)
	require.Equal(t, fmt.Sprint(serr), fmt.Sprint(terr), "body %q rule %q", body, rule)
	require.Equal(t, sv, tv, "body %q rule %q", body, rule)
}

// specDrawJSON draws a JSON text, objects more likely near the top.
func specDrawJSON(t *rapid.T, depth int) string {
	ws := func() string { return rapid.SampledFrom([]string{"", "", " ", "\n\t "}).Draw(t, "ws") }
	kind := rapid.IntRange(0, 6).Draw(t, "kind")
	if depth == 0 && kind > 1 {
		kind = 0
	}
	if depth >= 3 && kind <= 1 {
		kind = 2
	}
	switch kind {
	case 0:
		n := rapid.IntRange(0, 4).Draw(t, "members")
		var b strings.Builder
		b.WriteString("{" + ws())
		for i := range n {
			if i > 0 {
				b.WriteString("," + ws())
			}
			key := rapid.SampledFrom([]string{`"a"`, `"b"`, `"data"`, `"price"`, `"é"`, `"\u0061"`, `"A"`, `"a\"b"`}).Draw(t, "key")
			b.WriteString(key + ws() + ":" + ws() + specDrawJSON(t, depth+1) + ws())
		}
		b.WriteString("}")
		return b.String()
	case 1:
		n := rapid.IntRange(0, 3).Draw(t, "elements")
		parts := make([]string, n)
		for i := range parts {
			parts[i] = ws() + specDrawJSON(t, depth+1) + ws()
		}
		return "[" + strings.Join(parts, ",") + "]"
	case 2:
		return rapid.SampledFrom([]string{`""`, `"x"`, `"101.5"`, `"é"`, `"<&>"`, `"a\"b"`, `"\u00e9"`, `"\\"`, `"tab\t"`, `"{]"`, "\"\xff\""}).Draw(t, "string")
	case 3:
		return rapid.SampledFrom([]string{"0", "-0", "1.50", "1e2", "1E-7", "-12.5e+3", "123456789012345678901234567890",
			"1e400", "-1e-400", "0.1", "3.14159", "9007199254740993", "5e-324"}).Draw(t, "number")
	case 4:
		return strconv.FormatFloat(rapid.Float64().Draw(t, "float"), 'g', -1, 64)
	case 5:
		return rapid.SampledFrom([]string{"true", "false"}).Draw(t, "bool")
	}
	return "null"
}

// The watcher's wire facts and rules (spec_events.go), §2.7's defaults and
// the gas price's form: the same as package oracle's.
func TestSpecWatcherIsTheReferences(t *testing.T) {
	require.Equal(t, []string{oracle.QueryRegister, oracle.QueryUpdate, oracle.QueryComplete},
		[]string{specQueryRegister, specQueryUpdate, specQueryComplete})
	require.Len(t, oracle.Subscriptions, specSubscriptions)
	require.Equal(t, []string{oracle.KeyRegisterID, oracle.KeyUpdateID, oracle.KeyCompleteID, oracle.KeyCompleteNonce, oracle.KeyCompleteBlockTime, oracle.KeyTxHash},
		[]string{specKeyRegisterID, specKeyUpdateID, specKeyCompleteID, specKeyCompleteNonce, specKeyCompleteBlockTime, specKeyTxHash})
	require.Equal(t, oracle.TypeURLSubmit, specTypeURLSubmit)
	require.Equal(t, oracle.Denom, specDenom)
	require.Equal(t, oracle.CodeInvalidRequest, specCodeNotFound)
	d := oracle.DefaultConfig("")
	require.Equal(t, []any{d.Worker.PoolSize, time.Duration(d.Worker.TimeoutSec) * time.Second, d.Gas.Limit, d.Gas.Adjustment, d.Gas.Prices,
		time.Duration(d.Retry.MaxDelaySec) * time.Second, d.Retry.MaxAttempts},
		[]any{specDefaultPoolSize, specDefaultWorkerTimeout, uint64(specDefaultGasLimit), specDefaultGasAdjustment, specDefaultGasPrices,
			specDefaultMaxDelay, specDefaultMaxAttempts})
	for f := -1; f <= 6; f++ {
		for _, maxAttempts := range []int{1, 4} {
			require.Equal(t, core.ResubscribeExhausted(f, maxAttempts), specResubscribeExhausted(f, maxAttempts))
		}
	}
	queries := []string{oracle.QueryRegister, oracle.QueryUpdate, oracle.QueryComplete, "", "tm.event='Tx'", oracle.QueryComplete + " "}
	values := []string{"0", "7", "007", "18446744073709551615", "18446744073709551616", "-1", "+1", " 1", "1.0", "0x1", "", "9223372036854775808"}
	rapid.Check(t, func(rt *rapid.T) {
		events := map[string][]string{}
		if rapid.IntRange(0, 9).Draw(rt, "no events") == 0 {
			events = nil
		}
		for _, k := range []string{oracle.KeyRegisterID, oracle.KeyUpdateID, oracle.KeyCompleteID, oracle.KeyCompleteNonce, oracle.KeyCompleteBlockTime} {
			if rapid.Bool().Draw(rt, "has "+k) && events != nil {
				events[k] = rapid.SliceOfN(rapid.SampledFrom(values), 0, 4).Draw(rt, k)
			}
		}
		q := rapid.SampledFrom(queries).Draw(rt, "query")
		sub, err := core.Route(q, events)
		ssub, ok := specRoute(q, events)
		require.Equal(t, err == nil, ok, "query %q", q)
		if ok {
			require.Equal(t, sub, ssub)
		}
		ids, _ := core.RegisterIDs(events)
		require.Equal(t, ids, specRequestIDs(events, specKeyRegisterID))
		ids, _ = core.UpdateIDs(events)
		require.Equal(t, ids, specRequestIDs(events, specKeyUpdateID))
		entries, _ := core.CompleteEntries(events)
		require.Equal(t, entries, specCompleteEntries(events))

		price := rapid.StringMatching(`[0-9.+\-e ]{0,6}`).Draw(rt, "price")
		_, perr := oracle.ParseGasPrice(price)
		require.Equal(t, perr == nil, validPrice(price), "gas price %q", price)
	})
}
