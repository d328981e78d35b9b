// Package report turns judged runs into reports for CI and for people:
// JUnit XML (one suite per seed, one test case per checker — pass,
// failure with the violations and the timeline that proves them, or
// skipped when its situation never arose — plus a case for the run's own
// failures such as nondeterminism or a child breaking the driver
// protocol), and a self-contained HTML page per run showing, for every
// workspace, swimlanes of its observed status, operation and health over
// virtual time, with the faults that struck it and the first violation
// marked. The CLI's --junit and --html flags call JUnit and HTML.
package report
