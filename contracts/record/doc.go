// Package record keeps a run's history: a Recorder numbers events in
// order, keeps those a world judges, and folds each one's canonical
// encoding (the Append helpers) into a running hash (XXH3-128), the run's
// determinism fingerprint. Offset renders a virtual time for timelines.
//
// Both worlds' history vocabularies (contracts/history and
// contracts/oracle/history) encode their events with it, and the
// simulator and the judge read what it keeps. It knows no world.
package record
