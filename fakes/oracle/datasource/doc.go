// Package datasource is the oracle world's fake data sources (ORACLE-SPEC
// 4.8): each endpoint k of request r answers GET /r/{r}/e/{k} by a seeded
// behaviour script — a JSON body with a value that is a function of time
// at the request's path (numbers of at least ten significant digits, so a
// daemon that renders with fewer is caught), or a failure: another status,
// malformed JSON, the key missing, null, a top-level array, an empty
// string, a connection reset, or a hang past any timeout — after a
// scripted latency. Fault windows (F8) force a class on a request for a
// while.
//
// Sources is the core: it decides each GET's outcome from the seed, the
// request, the endpoint and how many GETs that endpoint has had, so a run
// is a pure function of its inputs, and it records every exchange as two
// contracts/oracle/history src events (recv, then done or aborted). It has
// two front ends:
//
//   - in process, for the simulator: Get gives the outcome of a GET
//     arriving at a virtual time and when it completes; the caller
//     delivers it then (Done) or gives up earlier (Abort), on its own
//     clock;
//   - a loopback HTTP server for black-box mode (Serve), on the wall clock,
//     which sleeps the latency, writes the answer, resets the connection or
//     holds it until the client gives up.
package datasource
