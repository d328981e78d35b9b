package judge

import (
	"fmt"
	"slices"
	"strings"
)

// Obligation is what a checker must see before its verdict is evidence:
// the situation it judges, stated as a sentence. A report's Exercised
// count for the checker counts that situation.
type Obligation struct {
	Checker  string `json:"checker"`
	Contract string `json:"contract"`
	// Situation is the sentence: what has to happen in a run for the
	// checker to have judged anything ("a reconciler claims an operation
	// by compare-and-set").
	Situation string `json:"situation"`
}

// DefaultMin is how often, by default, each obligation's situation must
// arise over a run of many seeds for the run's pass to count.
const DefaultMin = 3

// Rule says when a run's obligations are met.
type Rule struct {
	// Min is how often each required obligation's situation must arise
	// over the run (0: DefaultMin).
	Min int
	// Allow names the checkers the user allows to stay short of Min (the
	// explicit allow-list); every report prints them.
	Allow []string
}

// MinOrDefault is r.Min, or DefaultMin when it is unset.
func (r Rule) MinOrDefault() int {
	if r.Min <= 0 {
		return DefaultMin
	}
	return r.Min
}

// Check reports the first name of the allow-list that is not one of the
// checkers named.
func (r Rule) Check(names []string) error {
	for _, a := range r.Allow {
		if !slices.Contains(names, a) {
			return fmt.Errorf("unknown checker %q in the allow-list (known: %s)", a, strings.Join(names, ", "))
		}
	}
	return nil
}

// Required lists the obligations the rule requires: every one but the
// allowed, in order.
func (r Rule) Required(obs []Obligation) []string {
	out := make([]string, 0, len(obs))
	for _, o := range obs {
		if !slices.Contains(r.Allow, o.Checker) {
			out = append(out, o.Checker)
		}
	}
	return out
}

// Unmet is a verdict over a run: the checker's situation arose, but fewer
// times than the rule's Min. Like NotExercised it never counts as a pass.
const Unmet Verdict = "unmet"

// Standing is one checker's verdict over a run, with its evidence.
type Standing struct {
	Obligation
	// Verdict is violated, warned, not exercised, unmet (exercised fewer
	// than Min times) or pass.
	Verdict Verdict `json:"verdict"`
	// Exercised counts the situation over every seed; Seeds is the
	// number of seeds in which it arose; First the seed that first
	// exercised it (0: none, or seeds not known).
	Exercised int    `json:"exercised"`
	Seeds     int    `json:"seeds"`
	First     uint64 `json:"first_seed,omitempty"`
	// Violations counts its Must violations over every seed.
	Violations int `json:"violations,omitempty"`
	// Met: the situation arose at least Min times.
	Met bool `json:"met"`
	// Allowed: the checker is on the run's allow-list.
	Allowed bool `json:"allowed,omitempty"`
}

// Claim is a run's verdict against its obligations: the run passes only
// when nothing is violated and every obligation not allowed is met.
type Claim struct {
	Min       int        `json:"min_exercised"`
	Allowed   []string   `json:"allowed_unexercised"`
	Standings []Standing `json:"checkers"`
}

// Claim judges the tally's runs against obligations (in report order)
// under rule.
func (t *Tally) Claim(obs []Obligation, rule Rule) *Claim {
	c := &Claim{Min: rule.MinOrDefault(), Allowed: append([]string{}, rule.Allow...)}
	for _, o := range obs {
		n := o.Checker
		st := Standing{Obligation: o, Exercised: t.Exercised[n], Seeds: t.SeedsExercised[n], First: t.First[n],
			Violations: t.Violations[n], Allowed: slices.Contains(rule.Allow, n)}
		st.Met = st.Exercised >= c.Min
		st.Verdict = t.Verdict(n)
		if st.Verdict == Pass && !st.Met {
			st.Verdict = Unmet
		}
		c.Standings = append(c.Standings, st)
	}
	return c
}

// Violated lists the checkers with Must violations, in order.
func (c *Claim) Violated() []string {
	var out []string
	for _, s := range c.Standings {
		if s.Verdict == Violated {
			out = append(out, s.Checker)
		}
	}
	return out
}

// Unmet lists the obligations not met and not allowed, in order: each
// one fails the run.
func (c *Claim) Unmet() []string {
	var out []string
	for _, s := range c.Standings {
		if !s.Met && !s.Allowed {
			out = append(out, s.Checker)
		}
	}
	return out
}

// Holds reports whether the run passes: no violation, every obligation
// not allowed met.
func (c *Claim) Holds() bool { return len(c.Violated()) == 0 && len(c.Unmet()) == 0 }

// Standing returns the standing of checker name (false if it has none).
func (c *Claim) Standing(name string) (Standing, bool) {
	for _, s := range c.Standings {
		if s.Checker == name {
			return s, true
		}
	}
	return Standing{}, false
}

// Describe renders a standing in a few words: "pass", "VIOLATED",
// "not exercised (allowed)", "unmet: 2 of 3".
func (c *Claim) Describe(s Standing) string {
	var w string
	switch s.Verdict {
	case Violated:
		w = "VIOLATED"
	case NotExercised:
		w = "NOT EXERCISED"
	case Unmet:
		w = fmt.Sprintf("UNMET: %d of %d", s.Exercised, c.Min)
	case Warned:
		w = "warned"
	default:
		w = string(s.Verdict)
	}
	if s.Verdict == Warned && !s.Met {
		w = fmt.Sprintf("warned, UNMET: %d of %d", s.Exercised, c.Min)
	}
	if s.Allowed && !s.Met {
		w = strings.ToLower(w) + " (allowed)"
	}
	return w
}

// WriteAllowedAndUnmet writes, for a report, the claim's allow-list (each
// name with why(name), or "named by the user" when why has nothing) and
// then its unmet obligations, each with the situation it needs; nothing
// when there are neither. Both worlds' conformance reports print it.
func (c *Claim) WriteAllowedAndUnmet(w *strings.Builder, why func(string) string) {
	if len(c.Allowed) > 0 {
		fmt.Fprintf(w, "allowed to stay unexercised (--allow-unexercised):\n")
		width := 0
		for _, n := range c.Allowed {
			width = max(width, len(n))
		}
		for _, n := range c.Allowed {
			reason := ""
			if why != nil {
				reason = why(n)
			}
			if reason == "" {
				reason = "named by the user"
			}
			fmt.Fprintf(w, "  %-*s  %s\n", width, n, reason)
		}
	}
	if u := c.Unmet(); len(u) > 0 {
		arose := "never arose"
		if c.Min > 1 {
			arose = fmt.Sprintf("arose fewer than %d times", c.Min)
		}
		fmt.Fprintf(w, "UNMET: the situation of %s %s in this run: not a pass (exit 5). Allow by name with --allow-unexercised %s\n",
			strings.Join(u, ", "), arose, strings.Join(u, ","))
		for _, n := range u {
			st, _ := c.Standing(n)
			fmt.Fprintf(w, "  %s needs: %s\n", n, st.Situation)
		}
	}
}
