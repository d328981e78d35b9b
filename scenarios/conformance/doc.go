// Package conformance is converge's judge as a library for a third
// party's own go test, the way riverdrivertest.Exercise or csi-sanity's
// sanity.Test work: implement ports.System for your coordinator and API,
// then
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, conformance.Config{NewSystem: acme.NewSystem})
//	}
//
// runs, against your system, SPEC 6's scenarios, N seeds of the default
// fault mix (each twice, for determinism) with one subtest per checker,
// and the rapid state machine. A checker passes only on evidence: its
// situation (its obligation) must arise at least Config.MinExercised
// times over the seeds, or its subtest fails, saying what it needs;
// while one has not, the suite runs more seeds (up to Config.SeedBudget),
// steered toward it. Config.AllowUnexercised names the checkers your
// system cannot exercise: their subtests skip, saying so. A failing seed
// prints its violations with the timeline around their evidence and the
// path of the replay file written for it, which a converge binary
// registering your system (cli.WithSystem) replays.
package conformance
