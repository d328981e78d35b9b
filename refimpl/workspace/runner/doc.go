// Package runner drives a ports.Coordinator in production: it calls Step on
// a real clock, sleeps until the next time Step asks for (or until woken,
// e.g. by a change notification), and stops on context cancellation or when
// the coordinator reports itself dead. It also provides the real Clock and
// IDs the production ports.Deps need.
package runner
