// Package core is the reference oracle daemon (ORACLE-SPEC 3) as a pure,
// single-threaded state machine: a pure core behind a thin runtime, the
// way etcd's raft is built. It reads no clock — time comes with each call —
// draws randomness only from the source it is given (the ±10 % jitter of
// two backoffs), performs no I/O and starts no goroutine. Every component
// of §3 lives in it: the EventWatcher, the event processor, the Scheduler
// with its JobStore, tick, reconciliation R and watchdog, the Executor's
// bounded task group (a counter of pool_size slots and a queue), the
// Submitter with its result queue, semaphore and attempt loop, the
// SequenceManager with its critical section, the health check, and the
// graceful shutdown of §3.7. Its decisions are pure functions of this
// package: the job-transition table (transition.go), readiness and order
// (ready.go), the per-document decision and R's needs (docaction.go), the
// stale check (stale.go), extraction (extract.go), the backoffs
// (backoff.go), assignment (assign.go) and the health rule (health.go).
// Nothing outside the reference decides through them: the checkers read
// ORACLE-SPEC on their own, over the vocabulary of contracts/oracle (jobs,
// docs, triggers, rows, effects, outcomes).
//
// Two drivers run the same core: the simulator (sim/oracle) on its
// virtual clock, and the production runtime (refimpl/oracle) on the wall
// clock with real sockets. Its inputs and outputs are the messages of
// contracts/oracle/ports (a Core is a ports.Daemon), so the simulator
// drives any daemon the same way and imports none.
//
// # Construction and time
//
//	c, err := core.New(cfg, signer, rnd)  // cfg: defaults applied and valid; rnd: e.g. a seeded *rand.Rand
//	outs := c.Start(now)                  // §3.1 begins: a Dial
//	outs = c.Handle(now, input)           // one input at a time, now never going back
//	at, ok := c.NextWake()                // when to call Handle(at, ports.Wake{}) next
//
// Handle first fires every timer due by now, then handles the input, so a
// driver may deliver inputs at any time and only needs to make sure Wake
// is delivered at NextWake when nothing else happens. The outputs of one
// call are in the order the driver must act on them.
//
// # Requests and their answers
//
// Every request output carries an ID (IDs increase from 1) and a Timeout,
// and the driver answers each exactly once, with the same ID, no later
// than Timeout after the request was emitted (answering a lost or late
// request with an error at its timeout):
//
//	Dial{ID}                      → Dialed{Conn: ID, Err}      open the WebSocket (/websocket)
//	Subscribe{ID, Conn, Query}    → Reply{ID, Err | RPCError}  subscribe on that connection
//	UnsubscribeAll{ID, Conn}      → Reply{ID, …}               (not waited for)
//	StatusCall{ID}                → Reply{ID, Status}          `status` over HTTP
//	QueryCall{ID, Path, Data}     → Reply{ID, Query}           `abci_query`, protobuf in Data
//	BroadcastCall{ID, Tx, Hash}   → Reply{ID, Broadcast}       `broadcast_tx_sync`; mempool-full and
//	                                                           cache hits are a Reply.RPCError
//	Fetch{ID, URL, Attempt}       → Fetched{ID, Status, Body}  one HTTP GET attempt (Accept:
//	                                                           application/json, User-Agent:
//	                                                           Oracle-Daemon/1.0), or Err
//
// A Reply carries exactly one of Err (no usable answer: connection error,
// timeout, undecodable response), RPCError (a JSON-RPC error object) or
// the result of its kind. The rest of the outputs want no answer:
//
//	CloseConn{Conn}   close that connection; the core ignores what it still delivers
//	AbortFetch{ID}    abort that GET at once; it is still answered (with an error)
//	*Trace{…}         a white-box trace point (below), emitted by address
//	Log{…}            a log line
//	Exit{Code}        the daemon is done: 0 after Stop, 1 after a fatal condition
//	                  or a failed start; nothing is handled after it
//
// Inputs that are not answers: Frame{Conn, Query, Events, Err} for each
// event frame of a connection (Err when its data did not decode),
// ConnClosed{Conn, Err} when a connection ends without the core asking,
// Stop{} for SIGINT, SIGTERM or a cancelled context, and Wake{}. Answers
// and frames for connections or requests the core has given up on are
// ignored, as is everything after Exit.
//
// The core never drops a frame: it queues those it cannot handle yet (during
// the load, or while an earlier frame's doc queries are in flight).
// AcceptsFrames reports whether it would handle one at once; the
// production runtime keeps frames in its bounded event channel until then,
// which is the backpressure of D20. A simulator may deliver at any time.
//
// # Crash and restart
//
// A crash is the driver dropping the core: its memory is gone, its
// requests in flight are no one's, and the connections it opened should be
// closed by the driver (the chain notices a dead client). A restart is a
// new core from New and Start: it runs §3.1 again, and reconciliation R
// rebuilds the jobs from the chain (§3.8). A driver that wants to crash the
// core "at its k-th port call" counts the request outputs.
//
// # Trace points
//
// Trace outputs are the reference's white-box records (ORACLE-SPEC 4.10):
//
//	TraceStep     a §3.1 step reached: connected, subscribed, loaded, running;
//	              and shutdown's stopping (step 1) and joined (step 6)
//	TraceJob      a job transition: RequestID, the table rows applied, the job
//	              after them (nil when removed; shared, do not modify)
//	TraceResult   a result changed hands: queued, abandoned, submitted,
//	              on-chain, gave-up, dropped (RequestID, Nonce)
//	TraceClose    a channel of §3.7 closed: shutdownCh, EventCh, ErrorCh,
//	              ResultCh, submitSemaphore, fatalCh
//	TraceStop     a component stopped: watcher, scheduler, submitter, rpc-client
//	TraceDrained  the executor's task group drained (before ResultCh closes)
//	TraceHealth   HealthStatus changed
//
// A shutdown emits, in this order: step stopping, close shutdownCh, close
// EventCh, close ErrorCh, stop watcher, drained, close ResultCh, stop
// scheduler, close submitSemaphore, stop submitter, stop rpc-client, step
// joined, close fatalCh, then Exit — waiting after "stop watcher" for the
// GETs in flight and after "stop scheduler" for a broadcast in flight.
//
// # What the core decides where the spec is silent
//
// See docs/decisions/oracle-3-daemon.md and docs/oracle.md.
package core
