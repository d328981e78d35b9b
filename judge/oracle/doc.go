// Package invariant holds the checkers of the oracle daemon's contracts
// O1–O18 (ORACLE-SPEC 5), and O19 (the re-subscription rule of 3.2 and the
// fatal condition of 3.7), O20 (a give-up re-arms the job, 3.3.3, D4, D7)
// and O21 (a resync sets the sequence, 3.5), which the spec states but 5.2
// did not list. They read only a recorded history (package
// contracts/oracle/history), so they judge the reference daemon, a mutant
// and an external binary alike, in the simulator or black-box.
//
// Check (or a Stream fed one record at a time) replays the history once on
// the shared judge (judge). The replay keeps, per SUT lifetime,
// a model of each job — an oracle.Job moved only by the judge's own
// reading of ORACLE-SPEC 3.3.3's transition table (spec_job.go), with the
// triggers read from what was delivered to the SUT: Complete
// frames, query answers, data-source outcomes and broadcast answers — from
// which E(r), the earliest allowed next execution start of §5.1, follows.
// It also keeps the executions (GETs grouped into runs of 1–4 attempts),
// the results and their broadcasts, the chain's side (completed nonces,
// block times, docs, self's commits), the sequences acknowledged and the
// fault windows. Before each record it works out what the record means
// (State.Cur); each checker then judges it, flags violations with the
// records that prove them, and counts the situations of §5.3 that make it
// non-vacuous.
//
// O3b, O16b, O18 and O22 are warnings for an external SUT, and the "client
// closes the WebSocket first" part of O14 is a warning for every SUT
// (Params.Warnings). Timing is judged with tolerance 0 in sim mode and
// 50 ms black-box.
package oracle
