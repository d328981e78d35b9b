// Package history is the recorded trace of a run: every DB write with its
// writer (component, instance, epoch), every port call with its arguments
// and result, every API call, fault, crash and leadership change. Checkers
// read only a History (and world snapshots), so they judge any
// implementation alike. A Recorder also folds every event into a running
// hash (XXH3-128), the run's determinism fingerprint.
package history
