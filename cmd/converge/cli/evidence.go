package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wsconverge/converge/judge"
	"github.com/wsconverge/converge/sim/engine"
)

// ExitUnmet: nothing was violated, but the run's evidence is short: a
// required checker's situation (its obligation) arose fewer than
// --min-exercised times within the seed budget. Such a run is not a pass.
const ExitUnmet = 5

// evidence is the flags both worlds' sim commands share about what a pass
// needs: how often each obligation must arise, within how many seeds, and
// the checkers the user allows to stay short.
type evidence struct {
	minExercised int
	budget       int
	batch        int
	allow        []string
}

// maxBudget bounds --seed-budget.
const maxBudget = 10 * maxSeeds

func (e *evidence) register(f *pflag.FlagSet) {
	f.IntVar(&e.minExercised, "min-exercised", judge.DefaultMin,
		"each checker's situation (its obligation) must arise at least this often over the run, or the run fails (exit 5)")
	f.IntVar(&e.budget, "seed-budget", 0,
		"most seeds the run may take to meet every obligation, steering later seeds toward the unmet ones; --seeds is the minimum (0: 4 × --seeds)")
	f.IntVar(&e.batch, "batch", engine.DefaultBatch,
		"seeds per steering batch: a batch's steering depends only on the batches before it, never on --jobs")
	f.StringSliceVar(&e.allow, "allow-unexercised", nil,
		"checkers whose obligation may stay unmet without failing the run (comma-separated; printed in every report; \"checker: part\" allows one part of a situation of several)")
}

// validate checks the flags against the run's seeds and the world's
// checkers; it fills in the budget.
func (e *evidence) validate(seeds int, first uint64, names []string) error {
	switch {
	case e.minExercised < 1 || e.minExercised > 1_000_000:
		return usagef("--min-exercised %d: want 1 to 1000000", e.minExercised)
	case e.batch < 1 || e.batch > 10_000:
		return usagef("--batch %d: want 1 to 10000", e.batch)
	case e.budget != 0 && (e.budget < seeds || e.budget > maxBudget):
		return usagef("--seed-budget %d: want 0 (4 × --seeds) or --seeds (%d) to %d", e.budget, seeds, maxBudget)
	}
	if e.budget == 0 {
		e.budget = min(4*seeds, maxBudget)
	}
	if first+uint64(e.budget-1) < first {
		return usagef("--seed %d with --seed-budget %d overflows", first, e.budget)
	}
	if err := e.rule().Check(names); err != nil {
		return usagef("--allow-unexercised: %v", err)
	}
	return nil
}

func (e *evidence) rule() judge.Rule { return judge.Rule{Min: e.minExercised, Allow: e.allow} }

// ruleReport is what both sim commands' JSON reports say of the run's
// seeds and rule of evidence: the shard, --min-exercised, --seed-budget
// and --allow-unexercised.
type ruleReport struct {
	Shard            string   `json:"shard,omitempty"`
	MinExercised     int      `json:"min_exercised"`
	SeedBudget       int      `json:"seed_budget"`
	AllowUnexercised []string `json:"allow_unexercised"`
}

func newRuleReport(s *simFlags) ruleReport {
	return ruleReport{Shard: s.shard.String(), MinExercised: s.minExercised, SeedBudget: s.budget, AllowUnexercised: append([]string{}, s.allow...)}
}

// claimReport is the coverage of a run in the JSON reports.
type claimReport struct {
	*judge.Claim
	// Unmet lists the obligations that fail the run.
	Unmet []string `json:"unmet"`
	// Steered counts the seeds run with a steering; Budget is the seed
	// budget; Met says whether every required obligation was met.
	Steered int  `json:"steered_seeds"`
	Budget  int  `json:"seed_budget"`
	Met     bool `json:"met"`
}

func newClaimReport(c *judge.Claim, steered, budget int) *claimReport {
	u := c.Unmet()
	if u == nil {
		u = []string{}
	}
	return &claimReport{Claim: c, Unmet: u, Steered: steered, Budget: budget, Met: len(u) == 0}
}

// writeCoverage prints the coverage table: each checker's verdict over
// the run, how often its situation arose, in how many seeds and first in
// which; the obligation of each one not met; the allow-list; and what the
// steering did.
func writeCoverage(w io.Writer, cr *claimReport, seeds int, figures func(name string) []string) {
	c := cr.Claim
	wrap(w, "  ", fmt.Sprintf("coverage (each checker's obligation over %d seed(s); met when its situation arose ≥ %d times, each of its parts at least once):", seeds, c.Min))
	fmt.Fprintf(w, "  %-28s %-6s %-22s %8s %6s %6s\n", "checker", "rule", "verdict", "count", "seeds", "first")
	for _, s := range c.Standings {
		first := "-"
		if s.First > 0 {
			first = fmt.Sprint(s.First)
		}
		verdict := c.Describe(s)
		if s.Verdict == judge.Violated {
			verdict = fmt.Sprintf("VIOLATED ×%d", s.Violations)
		}
		fmt.Fprintf(w, "  %-28s %-6s %-22s %8d %6d %6s\n", s.Checker, s.Contract, verdict, s.Exercised, s.Seeds, first)
		if !s.Met {
			wrap(w, strings.Repeat(" ", 31), "needs: "+s.Situation)
		}
		if len(s.PartCounts) > 0 {
			parts := "parts: " + s.PartsLine()
			if len(s.Missing) > 0 && len(s.Missing) < len(s.Parts) {
				// (When none arose, the ×0 of each says it.)
				parts += "; never arose: " + strings.Join(s.Missing, "; ")
			}
			wrap(w, strings.Repeat(" ", 31), parts)
		}
		if figures != nil {
			for _, f := range figures(s.Checker) {
				fmt.Fprintf(w, "  %-28s %s\n", "", f)
			}
		}
	}
	if len(c.Allowed) > 0 {
		wrap(w, "  ", "allowed to stay unmet (--allow-unexercised): "+strings.Join(c.Allowed, ", "))
	}
	switch {
	case cr.Steered > 0 && cr.Met:
		fmt.Fprintf(w, "steering: %d of %d seed(s) steered toward obligations the earlier ones had not met; every obligation met\n", cr.Steered, seeds)
	case cr.Steered > 0:
		fmt.Fprintf(w, "steering: %d of %d seed(s) steered\n", cr.Steered, seeds)
	}
	if len(cr.Unmet) > 0 {
		names := strings.Join(cr.Unmet, ",")
		if len(names) > textWidth-30 {
			names = "NAME[,NAME…]"
		}
		wrap(w, "  ", fmt.Sprintf("UNMET after %d seed(s) (budget %d): %s. The run is not a pass (exit %d): raise --seed-budget, "+
			"or allow them by name: --allow-unexercised %s", seeds, cr.Budget, strings.Join(cr.Unmet, ", "), ExitUnmet, names))
	}
}

// textWidth is the width the text reports keep to.
const textWidth = 100

// wrap writes text in lines of at most textWidth columns (a word longer
// than a line gets one of its own), the first starting at column 0 with
// the indent's width trimmed, the others indented.
func wrap(w io.Writer, indent, text string) {
	line := strings.TrimLeft(indent, " ")
	if len(indent) > 2 {
		line = indent
	}
	width := len([]rune(line))
	empty := true
	for _, word := range strings.Fields(text) {
		n := len([]rune(word))
		if !empty && width+1+n > textWidth {
			fmt.Fprintln(w, line)
			line, width, empty = indent+"  ", len(indent)+2, true
		}
		if !empty {
			line += " "
			width++
		}
		line += word
		width += n
		empty = false
	}
	fmt.Fprintln(w, line)
}

// claimSuite is the JUnit suite of a run's claim: a case per checker over
// the whole run, failed when it was violated or its obligation is unmet
// (not a skip: a situation that never arose proves nothing), skipped when
// the allow-list lets it stay unmet.
func claimSuite(name, class string, c *judge.Claim) engine.JUnitSuite {
	s := engine.JUnitSuite{Name: name}
	for _, st := range c.Standings {
		jc := engine.JUnitCase{Name: st.Checker, Classname: class}
		switch {
		case st.Verdict == judge.Violated:
			jc.Failure = &engine.JUnitFailure{Message: fmt.Sprintf("%s violated in %d violation(s): see the seeds' suites", st.Checker, st.Violations),
				Type: st.Contract}
		case !st.Met && st.Allowed:
			jc.Skipped = &engine.JUnitSkipped{Message: fmt.Sprintf("obligation unmet (%s), allowed by --allow-unexercised: %s",
				c.Shortfall(st), st.Situation)}
		case !st.Met:
			text := "needs: " + st.Situation
			if len(st.PartCounts) > 0 {
				text += "\nparts: " + st.PartsLine()
			}
			jc.Failure = &engine.JUnitFailure{Message: fmt.Sprintf("%s: obligation unmet, %s", st.Checker, c.Shortfall(st)),
				Type: "unmet", Text: text + "\nallow it by name with --allow-unexercised " + st.Checker}
		default:
			jc.Out = fmt.Sprintf("%s: its situation arose %d times in %d seed(s), first in seed %d", st.Verdict, st.Exercised, st.Seeds, st.First)
		}
		s.Add(jc)
	}
	if len(c.Allowed) > 0 {
		s.Out = "allowed to stay unmet (--allow-unexercised): " + strings.Join(c.Allowed, ", ")
	}
	return s
}
