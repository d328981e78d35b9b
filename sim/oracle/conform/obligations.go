package conform

import (
	"maps"
	"slices"

	"github.com/wsconverge/converge/judge"
	oraclejudge "github.com/wsconverge/converge/judge/oracle"
)

// A black-box run is one scenario in real time: no seeds to add, nothing
// to steer. Its claim holds when nothing is violated and every checker's
// situation arose at least once, except the checkers on its allow-list:
// by default the ones its script declares it cannot reach (Script.
// Unreached), each with the reason printed in every report; Options.Allow
// replaces that list (an empty one demands every checker).

// whiteBox is why O15 is out of reach of every black-box run.
const whiteBox = "white-box only: an external daemon has no trace of its stop order"

// defaultUnreached are the checkers DefaultScript cannot exercise, and
// the parts of situations it cannot reach (judge.PartName: the rest of
// the checker's situation stays required, DR619).
func defaultUnreached() map[string]string {
	return map[string]string{
		judge.PartName("o3-execution-timing", "next execution after a parse failure"): "the script's F8 makes request 2's " +
			"source fail, never answer a body that does not parse (the simulator's F8 does)",
		judge.PartName("o3-execution-timing", "next execution after a give-up"): "as O20: the script's code 13 lets the peers " +
			"complete the round, so E never comes from the give-up (the simulator's F11 does)",
		judge.PartName("o16b-recovery", "recovery after F14"): "as O26: the script never fails a doc query (the simulator's F14 does)",
		judge.PartName("o19-resubscribe", "a non-zero exit"): "the script's F1 refuses redials for 2 s, fewer than " +
			"retry.max_attempts in a row, so the daemon never exits fatally (the simulator's F1 does)",
		"o15-shutdown-order": whiteBox,
		"o20-gave-up-rearmed": "needs a give-up whose round no peer completes and a minute more for the re-run; the script's code 13 " +
			"lets the peers complete the round (the simulator's F11 exercises it)",
		"o26-failed-lookup-followed": "needs a failed doc query, which the script never makes (the simulator's F14 does)",
		"o27-submitted-round-not-rerun": "needs a restart between the commit of the daemon's submission and its round's completion; " +
			"the script's peers complete each round in the block that commits it (the simulator's crashes do)",
	}
}

// shortUnreached are the checkers ShortScript cannot exercise: the short
// scenario is a smoke test of code 13, an intruder, a crash and SIGTERM.
func shortUnreached() map[string]string {
	const short = "the short scenario does not produce it: run the full one (without --short)"
	m := map[string]string{}
	for _, n := range []string{"o1-single-commit", "o2-nonce-bounds", "o3-execution-timing", "o3b-restart-period",
		"o4-fetch-retries", "o6-update-keeps-nonce", "o10-complete-handled", "o11-not-running", "o13-restart",
		"o16-liveness", "o16b-recovery", "o18-health-probe", "o19-resubscribe", "o22-resubscribe-reconciles",
		"o23-retried-not-given-up", "o24-doc-events-queried", "o28-missing-job-queried"} {
		m[n] = short
	}
	maps.Copy(m, defaultUnreached())
	return m
}

// MinExercised is how often each obligation must arise in a black-box
// run: once (there is one run, and no budget to spend on more).
const MinExercised = 1

// allowList is the run's allow-list: opts.Allow when set, else the
// script's Unreached, sorted.
func allowList(opts Options, sc Script) []string {
	if opts.Allow != nil {
		return slices.Clone(opts.Allow)
	}
	return slices.Sorted(maps.Keys(sc.Unreached))
}

// claim judges the run's report against every checker's obligation.
func claim(rep *judge.Report, allow []string) *judge.Claim {
	t := judge.NewTally(oraclejudge.Names())
	t.AddSeed(1, rep)
	return t.Claim(oraclejudge.ObligationsIn(oraclejudge.ModeBlackBox), judge.Rule{Min: MinExercised, Allow: allow})
}
