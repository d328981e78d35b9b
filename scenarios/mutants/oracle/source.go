package oracle

import (
	"slices"

	oraclesim "github.com/wsconverge/converge/sim/oracle"
)

// Edit is one edit of the reference's source: in File (a slash path from
// the module root) the snippet Old, which must occur exactly once,
// becomes New.
type Edit struct {
	File, Old, New string
}

// SourceMutant is a broken oracle daemon made by editing the reference's
// source — a bug inside the core, which no bent port can reach. The
// edits are applied to copies of the files at build time (a Go overlay,
// see Builder); the tree is never modified. Kills lists the checkers
// ORACLE-SPEC 5.4 names for it; Options shapes the runs that should catch
// it.
type SourceMutant struct {
	name    string
	Kills   []string
	Options oraclesim.Options
	// Bug says what the edit does, in a line.
	Bug   string
	Edits []Edit
	// Gap, when set, says why the simulated world cannot yet produce the
	// situation that shows this bug: the mutant is built and hunted like
	// the others, and a survival is reported as this known gap of the
	// world, not as a weak checker.
	Gap string
}

// Name is the mutant's name.
func (m *SourceMutant) Name() string { return m.name }

// The checkers only source mutants need.
const (
	o3  = "o3-execution-timing"
	o4  = "o4-fetch-retries"
	o6  = "o6-update-keeps-nonce"
	o17 = "o17-wire"
	o18 = "o18-health-probe"
	o19 = "o19-resubscribe"
	o20 = "o20-gave-up-rearmed"
	o21 = "o21-sequence-resynced"
	o22 = "o22-resubscribe-reconciles"
	o23 = "o23-retried-not-given-up"
	o24 = "o24-doc-events-queried"
	o25 = "o25-creation-checks-chain"
	o26 = "o26-failed-lookup-followed"
	o27 = "o27-submitted-round-not-rerun"
	o28 = "o28-missing-job-queried"
)

// The files the source mutants edit.
const (
	fileTransition = "refimpl/oracle/core/transition.go"
	fileStale      = "refimpl/oracle/core/stale.go"
	fileAssign     = "refimpl/oracle/core/assign.go"
	fileReady      = "refimpl/oracle/core/ready.go"
	fileEvents     = "refimpl/oracle/core/events.go"
	fileExecutor   = "refimpl/oracle/core/executor.go"
	fileSubmitter  = "refimpl/oracle/core/submitter.go"
	fileWatcher    = "refimpl/oracle/core/watcher.go"
	fileSequence   = "refimpl/oracle/core/sequence.go"
	fileBroadcast  = "contracts/oracle/broadcast.go"
	fileBackoff    = "refimpl/oracle/core/backoff.go"
	fileHealth     = "refimpl/oracle/core/health.go"
	fileFrames     = "refimpl/oracle/core/frames.go"
	fileReconcile  = "refimpl/oracle/core/reconcile.go"
	fileQueries    = "refimpl/oracle/core/queries.go"
)

// busy is the shape of the runs that need faults: slow and failing
// sources, reordered and duplicated frames, refused broadcasts.
var busy = oraclesim.Options{Faults: 30, Ops: 12}

// Sources returns the source-mutant catalogue, in a fixed order.
func Sources() []*SourceMutant {
	return []*SourceMutant{
		{name: "update-takes-event-nonce", Kills: []string{o6, o2, o1}, Options: oraclesim.Options{Ops: 30},
			Bug: "an Update frame's nonce attribute is taken as the completed round",
			Edits: []Edit{
				{File: fileEvents, Old: "\t\"log/slog\"\n\t\"time\"\n", New: "\t\"log/slog\"\n\t\"strconv\"\n\t\"time\"\n"},
				{File: fileEvents, Old: `			ids, errs = UpdateIDs(f.Events)
`, New: `			ids, errs = UpdateIDs(f.Events)
			// the update carries the request's round: take it as completed
			for i, v := range f.Events[oracle.EventUpdate+".nonce"] {
				if n, err := strconv.ParseUint(v, 10, 64); err == nil && i < len(ids) {
					c.apply(ids[i], oracle.Complete{Nonce: n, BlockTime: c.now})
				}
			}
`}}},
		{name: "update-rearms-job", Kills: []string{o6, o2, o1}, Options: oraclesim.Options{Ops: 30},
			Bug: "an Update that keeps the job re-arms it: Pending, NextRunTime = now",
			Edits: []Edit{{File: fileTransition, Old: `	case oracle.Update:
		if cur != nil {
			o.update(t.Doc, t.Self, now)
		}
`, New: `	case oracle.Update:
		if cur != nil && o.update(t.Doc, t.Self, now) && o.Job.Exec.Status != oracle.ExecExecuting {
			o.Job.Exec.Status, o.Job.NextRunTime = oracle.ExecPending, now // run with the new settings
		}
`}}},
		{name: "success-leaves-job-pending", Kills: []string{o3, o1},
			Bug: "a successful execution leaves the job Pending, NextRunTime unchanged",
			Edits: []Edit{{File: fileTransition, Old: `	default:
		j.Exec.Status = oracle.ExecCompleted
		j.Exec.Error = ""
		j.RunCount++
		j.NextRunTime = now.Add(oracle.CompleteWait)
`, New: `	default:
		j.Exec.Status = oracle.ExecPending
		j.Exec.Error = ""
		j.RunCount++
`}}},
		{name: "fetch-failure-no-backoff", Kills: []string{o3, o4}, Options: busy,
			Bug: "a failed fetch retries the job on the next tick, not 60 s later",
			Edits: []Edit{{File: fileTransition,
				Old: "\t\tj.NextRunTime = now.Add(oracle.FetchFailureRetry)\n",
				New: "\t\tj.NextRunTime = now // retry on the next tick\n"}}},
		{name: "parse-failure-backoff-1-min", Kills: []string{o3, o4}, Options: busy,
			Bug: "a parse failure waits the fetch failure's 60 s, not 300 s",
			Edits: []Edit{{File: fileTransition,
				Old: "\t\tj.NextRunTime = now.Add(oracle.ParseFailureRetry)\n",
				New: "\t\tj.NextRunTime = now.Add(oracle.FetchFailureRetry)\n"}}},
		{name: "select-leaves-job-pending", Kills: []string{o3}, Options: oraclesim.Options{Requests: 20, PoolSize: 2, Faults: 60},
			Bug: "the tick leaves a selected job Pending; its task marks it Executing when it starts",
			Edits: []Edit{
				{File: fileTransition, Old: `		if cur != nil && Ready(cur, now) {
			cur.Exec.Status = oracle.ExecExecuting
`, New: `		if cur != nil && Ready(cur, now) {
`},
				{File: fileReady, Old: "\treturn j != nil && j.Exec.Status == oracle.ExecExecuting && !j.Exec.Superseded",
					New: "\treturn j != nil && (j.Exec.Status == oracle.ExecExecuting || j.Exec.Status.Selectable()) && !j.Exec.Superseded"},
				{File: fileExecutor, Old: `		c.x.slots++
		e.url, e.rule = j.URL, j.ParseRule
`, New: `		c.x.slots++
		started := j.Clone()
		started.Exec.Status = oracle.ExecExecuting // the task marks its job running as it starts
		c.s.put(&started)
		e.url, e.rule = j.URL, j.ParseRule
`}}},
		// Peers complete rounds without the daemon (quorums below the
		// provider count) while F5 holds a Complete past the next one: the
		// held Complete then arrives after its job moved past it.
		{name: "stale-complete-applied", Kills: []string{o2, o3},
			Options: oraclesim.Options{Faults: 30, Ops: 12, PartialQuorums: true, LongReorder: true},
			Bug:     "a Complete(n) with n ≤ Nonce (repeated, or reordered by F5) is applied like a new one",
			Edits: []Edit{{File: fileTransition, Old: `	if n <= j.Nonce {
		o.Rows = append(o.Rows, oracle.RowCompleteStale)
		return
	}
`, New: ""}}},
		// F4 repeats a Register 5–60 s later, after its job ran: the
		// mutant's fresh job runs again before the Complete (O3).
		{name: "register-resets-job", Kills: []string{o3, o1},
			Options: oraclesim.Options{Faults: 60, Ops: 60, LateDuplicates: true},
			Bug:     "a Register for a request with a job (a duplicate frame, F4) drops the job and creates it afresh",
			Edits: []Edit{{File: fileEvents, Old: `		c.applyDoc(r, doc, func(err error) {
`, New: `		if sub == oracle.SubRegister {
			c.s.remove(r) // a Register brings the doc afresh, and so its job
		}
		c.applyDoc(r, doc, func(err error) {
`}}},
		// Peers complete a round without the daemon while its result waits
		// in the submitter (F10, F11 retries): the mutant still sends it.
		{name: "stale-result-broadcast", Kills: []string{o2},
			Options: oraclesim.Options{Faults: 30, Ops: 12, PartialQuorums: true},
			Bug:     "the stale check forgets the round: a result is still broadcast after its round's Complete",
			Edits: []Edit{{File: fileStale, Old: `		AssignedIndex(j.AccountList, self) < 0 ||
		r.Nonce != j.Nonce+1
`, New: `		AssignedIndex(j.AccountList, self) < 0
`}}},
		{name: "submit-retry-without-backoff", Kills: []string{o5}, Options: busy,
			Bug: "a failed submission attempt is retried at once, with no backoff",
			Edits: []Edit{{File: fileSubmitter,
				Old: "\ts.wait = c.after(wait, func() {\n",
				New: "\ts.wait = c.after(0, func() { // the chain is there: try again now\n"}}},
		// F1 drops the WebSocket and refuses the redials for a while: the
		// mutant redials at once, each refusal straight after the last.
		{name: "resubscribe-without-backoff", Kills: []string{o19}, Options: oraclesim.Options{Faults: 60, Ops: 30},
			Bug: "after a drop or a refused attempt the watcher redials at once, with no backoff",
			Edits: []Edit{{File: fileWatcher,
				Old: "\tc.w.retry = c.after(wait, func() {\n",
				New: "\t_ = wait // the node is back soon: redial now\n\tc.w.retry = c.after(0, func() {\n"}}},
		// F11 refuses broadcasts with code 13 (and other terminal codes):
		// the mutant's job then waits for a Complete its own missing
		// submission holds up, until the 24 h watchdog.
		{name: "gave-up-leaves-job-completed", Kills: []string{o20}, Options: oraclesim.Options{Faults: 60, Ops: 30},
			Bug: "a submission that gives up leaves its job Completed: no Failed, no re-run 1 min later",
			Edits: []Edit{{File: fileTransition, Old: `			cur.Exec.Status = oracle.ExecFailed
			cur.Exec.Error = t.Reason
			cur.LastError = t.Reason
			cur.NextRunTime = now.Add(oracle.SubmissionGaveUpRetry)
`, New: `			cur.Exec.Error = t.Reason // the round stays ours: wait for its Complete
			cur.LastError = t.Reason
`}}},
		// F13 evicts an acknowledged tx of the daemon: the chain's sequence
		// falls back, the mutant's L does not.
		{name: "resync-never-lowers-sequence", Kills: []string{o21}, Options: oraclesim.Options{Faults: 60, Ops: 30},
			Bug: "a resync only ever raises the sequence: after an eviction every broadcast meets code 32",
			Edits: []Edit{{File: fileSequence,
				Old: "\t\tc.seq.accNum, c.seq.l = acc.AccountNumber, acc.Sequence\n",
				New: "\t\tc.seq.accNum, c.seq.l = acc.AccountNumber, max(acc.Sequence, c.seq.l) // never go back\n"}}},
		// F1 drops the WebSocket: the mutant re-subscribes and waits for
		// the frames to come, never asking what it missed.
		{name: "no-reconcile-after-resubscribe", Kills: []string{o22}, Options: oraclesim.Options{Faults: 60, Ops: 30},
			Bug: "after a re-subscription the daemon does not run reconciliation R (D25)",
			Edits: []Edit{{File: fileWatcher,
				Old: "\tc.requestReconcile() // D25\n",
				New: "\t// the frames resume from here\n"}}},
		// F10 fills the mempool: the mutant gives the result up at the first
		// refusal and re-runs the job a minute later (D7).
		{name: "mempool-full-gives-up", Kills: []string{o23}, Options: oraclesim.Options{Faults: 60, Ops: 30},
			Bug: "a full mempool (code 20, or the RPC error) is taken as terminal: the result is given up, not retried",
			Edits: []Edit{{File: fileBroadcast,
				Old: "\tcase ClassInsufficientFee, ClassRejected:\n",
				New: "\tcase ClassInsufficientFee, ClassRejected, ClassTransient: // the node is overloaded: try the next round\n"}}},
		// F11 answers code 11: the mutant raises the gas but prices the
		// fee for gas.limit, so the chain refuses it with code 13.
		{name: "fee-from-configured-gas", Kills: []string{o17}, Options: oraclesim.Options{Faults: 60, Ops: 30},
			Bug: "the fee is priced for gas.limit, not for the gas the tx carries after code 11",
			Edits: []Edit{{File: fileSubmitter,
				Old: "\tfee, err := c.feeFor(s.gas)\n",
				New: "\tfee, err := c.feeFor(c.cfg.Gas.Limit) // the configured fee\n"}}},
		// F10 fills the mempool for a while: the mutant's retries wait 2, 4,
		// 8, 16 s where 3.5 says 1, 2, 4, 8.
		{name: "submit-backoff-doubled", Kills: []string{o23}, Options: oraclesim.Options{Faults: 60, Ops: 30},
			Bug: "the submission backoff before retry k is 2^k s, not 2^(k−1) s",
			Edits: []Edit{{File: fileBackoff,
				Old: "\treturn min(pow2Seconds(k-1), oracle.SubmitRetryCap), true\n",
				New: "\treturn min(pow2Seconds(k), oracle.SubmitRetryCap), true // 2, 4, 8, … s\n"}}},
		// F2 makes the health check's status call hang for its 5 s
		// timeout: the mutant's next check comes 35 s after the last.
		{name: "health-rearmed-on-answer", Kills: []string{o18}, Options: oraclesim.Options{Faults: 60, Ops: 30},
			Bug: "the next health check is armed 30 s after the status answer, not 30 s after the last check",
			Edits: []Edit{
				{File: fileHealth, Old: "\t\tc.hc.next = c.hc.next.Add(oracle.HealthCheckInterval)\n\t\tc.scheduleHealth()\n", New: ""},
				{File: fileHealth, Old: "\t\tc.setHealth(status)\n",
					New: "\t\tc.setHealth(status)\n\t\tc.hc.next = c.now.Add(oracle.HealthCheckInterval) // 30 s after this check ended\n\t\tc.scheduleHealth()\n"}}},
		// F5 delays a moderator's frame past a later block's: the mutant
		// takes it for one it has seen and never looks the request up.
		{name: "tx-frames-deduplicated-by-height", Kills: []string{o24}, Options: oraclesim.Options{Faults: 60, Ops: 30},
			Bug: "a Register or Update frame of a block no later than the last one handled is dropped as a duplicate",
			Edits: []Edit{
				{File: fileEvents, Old: "\tbusy  bool // a frame's doc queries are in flight\n",
					New: "\tbusy  bool // a frame's doc queries are in flight\n\tlastH uint64\n"},
				{File: fileEvents, Old: "\t\"log/slog\"\n\t\"time\"\n", New: "\t\"log/slog\"\n\t\"strconv\"\n\t\"time\"\n"},
				{File: fileEvents, Old: "\tc.metrics.EventsProcessed++\n",
					New: "\tc.metrics.EventsProcessed++\n\tif hs := f.Events[oracle.KeyTxHeight]; sub != oracle.SubComplete && len(hs) > 0 {\n\t\th, _ := strconv.ParseUint(hs[0], 10, 64)\n\t\tif h <= c.ev.lastH {\n\t\t\treturn // that block was handled already\n\t\t}\n\t\tc.ev.lastH = h\n\t}\n"}}},
		// Slow and failing sources with more ready jobs than slots: the
		// mutant lends the slot of an execution waiting to retry.
		{name: "slot-freed-during-retry-wait", Kills: []string{o7}, Options: oraclesim.Options{Requests: 20, PoolSize: 2, Faults: 60},
			Bug: "an execution frees its task-group slot while it waits to retry a GET, and takes one again to retry",
			Edits: []Edit{{File: fileExecutor,
				Old: "\te.wait = c.after(wait, func() {\n\t\te.wait = nil\n",
				New: "\tc.x.slots-- // the slot is free while we sleep\n\tc.pumpExecutor()\n\te.wait = c.after(wait, func() {\n\t\te.wait = nil\n\t\tc.x.slots++\n"}}},
		// The moderator registers requests: the mutant creates their jobs
		// without asking the chain, sure that a new doc has nothing on it.
		{name: "creation-check-skipped-for-first-round", Kills: []string{o25}, Options: oraclesim.Options{Ops: 30},
			Bug: "a job for a doc with nonce 0 is created without the on-chain check",
			Edits: []Edit{{File: fileEvents,
				Old: "func (c *Core) creationFacts(doc oracle.RequestDoc, fn func(submitted bool, lastBT time.Time, err error)) {\n",
				New: "func (c *Core) creationFacts(doc oracle.RequestDoc, fn func(submitted bool, lastBT time.Time, err error)) {\n\tif doc.Nonce == 0 { // nothing can be on chain yet\n\t\tfn(false, time.Time{}, nil)\n\t\treturn\n\t}\n"}}},
		// F14 fails the doc queries of a moderator's frame: the mutant drops
		// the event and never reconciles.
		{name: "dropped-event-not-reconciled", Kills: []string{o26}, Options: oraclesim.Options{Faults: 60, Ops: 30},
			Bug: "an event whose doc queries all failed is dropped without running R 5 s later",
			Edits: []Edit{{File: fileEvents,
				Old: "\tc.requestReconcileIn(oracle.DroppedEventReconcile)\n", New: "\t// the next frame about it will bring the doc\n"}}},
		// RaggedCompletes gives every Complete frame a block_time too many:
		// the mutant drops such a frame whole instead of using the entries
		// below the shortest list.
		{name: "ragged-complete-frame-dropped", Kills: []string{o10}, Options: oraclesim.Options{RaggedCompletes: true},
			Bug: "a Complete frame whose lists differ in length is dropped whole",
			Edits: []Edit{{File: fileFrames,
				Old: "\t\t\tlen(ids), len(nonces), len(times), n))\n",
				New: "\t\t\tlen(ids), len(nonces), len(times), n))\n\t\treturn nil, errs // a garbled frame: trust none of it\n"}}},
		// The third oracle audit: a tx with a memo, and an on-chain check
		// asked for self's submissions only, passed every checker.
		{name: "tx-memo-set", Kills: []string{o17},
			Bug: "the daemon's txs carry a memo (3.5: memo is empty)",
			Edits: []Edit{{File: fileSubmitter,
				Old: "\t\tGasLimit: s.gas, FeeAmount: fee,\n",
				New: "\t\tGasLimit: s.gas, FeeAmount: fee, Memo: \"oracled\",\n"}}},
		{name: "on-chain-check-provider-self", Kills: []string{o17},
			Bug: "the on-chain check asks OracleSubmitData with provider = self, not \"\"",
			Edits: []Edit{{File: fileQueries,
				Old: "abciquery.SubmitDataRequest(r, n, \"\")",
				New: "abciquery.SubmitDataRequest(r, n, c.self) // only ours"}}},
		// F14 fails R's list query: the mutant tries it again after 30 s,
		// not 5 s (3.3.4 step 4).
		{name: "failed-list-retried-late", Kills: []string{o26}, Options: oraclesim.Options{Faults: 60, Ops: 30},
			Bug: "a failed OracleRequestDocs query of R is retried after 30 s, not 5 s",
			Edits: []Edit{{File: fileReconcile,
				Old: "errAttr(err))\n\t\t\tc.requestReconcileIn(oracle.DroppedEventReconcile)\n",
				New: "errAttr(err))\n\t\t\tc.requestReconcileIn(30 * time.Second) // give the node time\n"}}},
		// A crash or a stop with a tx of the daemon committed and its round
		// not complete: the restarted mutant creates the job Pending and
		// fetches the round again (its submitter's check, D3, then finds
		// the tx on chain).
		{name: "restart-ignores-own-submission", Kills: []string{o27},
			Bug: "R creates a job Pending even when the on-chain check found self's submission for doc.nonce + 1",
			Edits: []Edit{{File: fileReconcile,
				Old: "SelfSubmitted: submitted, LastBlockTime: bt})",
				New: "SelfSubmitted: false && submitted, LastBlockTime: bt}) // the submitter checks again (D3)"}}},
		// F2 and F14 fail queries while F9's intruder makes the daemon's
		// broadcasts meet code 32: the mutant's resync fails and it
		// broadcasts with the L it had.
		{name: "broadcast-after-failed-resync", Kills: []string{o9}, Options: oraclesim.Options{Faults: 40, Requests: 10, Ops: 20},
			Bug: "after a code 32 and a failed Account query the daemon broadcasts with its old L",
			Edits: []Edit{{File: fileSubmitter,
				Old: "\t\t\tif !ok {\n\t\t\t\tc.attemptFailed(s, \"sequence unknown: Account query failed\")",
				New: "\t\t\tif !ok && !c.seq.synced { // keep the L we had\n\t\t\t\tc.attemptFailed(s, \"sequence unknown: Account query failed\")"}}},
		// F11 answers code 11: the mutant raises the gas twice, ×2.25 where
		// 3.5 says ceil(gas × 1.5).
		{name: "gas-adjusted-twice", Kills: []string{o17}, Options: oraclesim.Options{Faults: 40, Requests: 10, Ops: 20},
			Bug: "after code 11 the gas is multiplied by gas.adjustment twice",
			Edits: []Edit{{File: fileSubmitter,
				Old: "\t\t\ts.gas = oracle.AdjustGas(s.gas, c.cfg.Gas.Adjustment)\n",
				New: "\t\t\ts.gas = oracle.AdjustGas(oracle.AdjustGas(s.gas, c.cfg.Gas.Adjustment), c.cfg.Gas.Adjustment) // room for the next one\n"}}},
		// Ops pause, disable and reassign requests while F1 keeps the
		// WebSocket down: R's list after the re-subscription leaves their
		// jobs out, and the mutant never looks them up.
		{name: "reconcile-skips-missing-jobs", Kills: []string{o28}, Options: oraclesim.Options{Faults: 60, Ops: 30, PartialQuorums: true},
			Bug: "R skips step 3: jobs missing from the list are not looked up",
			Edits: []Edit{{File: fileReconcile,
				Old: "\t\tc.reconcileMissing(MissingFromList(c.Jobs(), listed), failed)\n",
				New: "\t\tc.finishReconcile(failed) // the Update frames bring the rest\n"}}},
		// Issue 22, item 6: a daemon whose tick re-selects a job every
		// second whatever its execution is doing, and whose successful
		// execution leaves the job Pending (the round's Complete alone moves
		// NextRunTime on): a new execution every tick, fetch retries of the
		// earlier ones interleaved with it, and each execution's result in
		// the submitter beside the earlier results still retrying. It is
		// flagged for running again (O3) and for the extra submissions of
		// one round (O1, O5 "after an acknowledgement", O27); its fetch
		// retries, its submission retries and its values are each per
		// result as the spec asks, so O4, O12 and O23 must not flag it
		// (TestReexecutingDaemonJudgedPerResult).
		{name: "reexecute-every-tick", Kills: []string{o3}, Options: oraclesim.Options{Faults: 60, Ops: 30},
			Bug:   "the tick re-selects a job whatever its execution does, and a success leaves it Pending: a new execution every second while the earlier results still retry",
			Edits: reexecuteEveryTick},
		// The same daemon, whose submitter also takes code 13 for a
		// transient answer: a result refused for its fee is retried, while
		// new executions of its request go on beside it (O5).
		{name: "reexecute-every-tick-retries-code-13", Kills: []string{o5, o3}, Options: oraclesim.Options{Faults: 60, Ops: 30},
			Bug: "the re-executing daemon above, which also retries a result after code 13",
			Edits: append(slices.Clone(reexecuteEveryTick), Edit{File: fileBroadcast,
				Old: "\tcase ClassInsufficientFee, ClassRejected:\n\t\treturn ActionGiveUp\n",
				New: "\tcase ClassRejected: // a fee refused may pass in the next block: try again\n\t\treturn ActionGiveUp\n"})},
		{name: "assignment-not-checked", Kills: []string{o11}, Options: oraclesim.Options{Ops: 30},
			Bug: "a self missing from the account list counts as index 0: foreign and unassigned requests run",
			Edits: []Edit{{File: fileAssign, Old: `			return i
		}
	}
	return -1
`, New: `			return i
		}
	}
	return 0
`}}},
	}
}

// reexecuteEveryTick are the edits of the re-executing daemon: Ready
// drops its execution-state test (a job running or waiting to retry a GET
// is selected again once its NextRunTime has come), a success leaves the
// job Pending with its NextRunTime as it was, and an execution that ends
// while the daemon stops lets the shutdown go on (the reference never
// has an execution outside its job's slot to wait for).
var reexecuteEveryTick = []Edit{
	{File: fileReady, Old: "\treturn j.Status == oracle.StatusEnabled && j.Exec.Status.Selectable() && !j.NextRunTime.After(now)\n",
		New: "\treturn j.Status == oracle.StatusEnabled && !j.NextRunTime.After(now) // every tick, whatever runs\n"},
	{File: fileTransition, Old: `	default:
		j.Exec.Status = oracle.ExecCompleted
		j.Exec.Error = ""
		j.RunCount++
		j.NextRunTime = now.Add(oracle.CompleteWait)
`, New: `	default:
		j.Exec.Status = oracle.ExecPending // the next tick runs it again; the Complete moves it on
		j.Exec.Error = ""
		j.RunCount++
`},
	{File: fileExecutor, Old: "\t\tc.apply(e.req, oracle.ExecutionEnd{Outcome: outcome, Data: data, Error: reason, StartedAt: e.started})\n\t}\n\tc.pumpExecutor()\n",
		New: "\t\tc.apply(e.req, oracle.ExecutionEnd{Outcome: outcome, Data: data, Error: reason, StartedAt: e.started})\n\t}\n\tif c.stopping() {\n\t\tc.advanceShutdown() // an earlier execution of the job may be the last to drain\n\t\treturn\n\t}\n\tc.pumpExecutor()\n"},
}

// SourceByName finds a mutant of the source catalogue.
func SourceByName(name string) (*SourceMutant, bool) {
	for _, m := range Sources() {
		if m.name == name {
			return m, true
		}
	}
	return nil, false
}
