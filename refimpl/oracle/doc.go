// Package oracled runs the reference oracle daemon as a real process: the
// production runtime around the pure core (refimpl/oracle/core), as
// `converge oracled --home DIR` runs it.
//
// Run loads <home>/config.toml (ORACLE-SPEC 2.7; unknown keys and missing
// required keys are errors naming the key), opens the key named key.name
// in the keyring (wire/keyring), opens the log
// <home>/logs/oracled.<start time>.log (copied to stdout when asked), and
// only then contacts the chain. Bad configuration or keys: ExitBadConfig
// (2). A failed first connection or status probe, or a fatal condition
// (the WebSocket re-subscription attempts exhausted): ExitFatal (1). A
// cancelled context (SIGINT, SIGTERM in the command): the graceful stop of
// §3.7 and ExitOK (0), within worker.timeout_sec + 10 s.
//
// One loop goroutine owns the core and feeds it inputs with the wall
// clock's time; every request it outputs is carried out by an I/O
// goroutine that posts its answer back, with the request's timeout as a
// context deadline, so the core's contract (every request answered within
// its timeout) holds. The GETs run in a creachadair/taskgroup limited to
// worker.pool_size (the core never asks for more); broadcasts hold a token
// of the submitSemaphore channel. The channels of §3.7 are real and close
// when the core's trace points say so: shutdownCh stops the watcher's
// forwarding goroutines; EventCh (capacity worker.channel_size, the
// buffer frames wait in until the core takes them) and ErrorCh close once
// those have ended; ResultCh, which carries the GETs' answers, closes when
// the task group has drained; submitSemaphore after the last broadcast;
// fatalCh last. After a stop the process has no goroutine left of the
// daemon's: every connection its HTTP clients opened is closed
// (internal/conntrack), the WebSocket with a close frame first.
//
// The RPC client (refimpl/oracle/cometclient) speaks CometBFT JSON-RPC
// over HTTP POST and over the WebSocket at /websocket, with integer ids
// from 0; the production daemon signs with the real eth_secp256k1 signer.
package oracle
