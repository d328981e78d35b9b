// Package recorded wraps any implementation of the ports so that every
// call is recorded into a history.Recorder in the vocabulary the fakes use
// and the invariant checkers read: attributed DB writes (applied or not,
// fenced or not), provider and bus calls with their results, leadership
// acquisitions and losses, and the HealthMonitor's pass notes.
//
// Wrap the real adapters of one coordinator instance with Deps, run it, and
// judge the recorded history with judge/workspace exactly as a
// simulated run is judged.
package recorded
