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
	// Parts, when set, names the parts of the situation that must each
	// arise (ORACLE-SPEC 5.3's "codes 32, 11, 13 and 19, each seen"): the
	// variant names the checker counts with Report.ExercisePart. The
	// obligation is met when each part arose at least once and the whole
	// situation at least Rule.Min times. None: any occurrence counts.
	Parts []string `json:"parts,omitempty"`
}

// PartCount is how often one part of an obligation's situation arose.
type PartCount struct {
	Part  string `json:"part"`
	Count int    `json:"count"`
	// Allowed: the allow-list names the part (Rule.Allow, PartName).
	Allowed bool `json:"allowed,omitempty"`
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
	// explicit allow-list); every report prints them. An entry
	// PartName(checker, part) allows only that part of the checker's
	// situation never to arise: the rest stays required.
	Allow []string
}

// partSep joins a checker and a part of its situation in an allow-list
// entry (the form sim/engine's steering targets use too).
const partSep = ": "

// PartName is the allow-list entry of one part of a checker's situation:
// "o16b-recovery: recovery after F14".
func PartName(checker, part string) string { return checker + partSep + part }

// MinOrDefault is r.Min, or DefaultMin when it is unset.
func (r Rule) MinOrDefault() int {
	if r.Min <= 0 {
		return DefaultMin
	}
	return r.Min
}

// Check reports the first name of the allow-list that is not one of the
// checkers named, nor a part (PartName) of one.
func (r Rule) Check(names []string) error {
	for _, a := range r.Allow {
		checker, _, _ := strings.Cut(a, partSep)
		if !slices.Contains(names, checker) {
			return fmt.Errorf("unknown checker %q in the allow-list (known: %s)", a, strings.Join(names, ", "))
		}
	}
	return nil
}

// CheckParts reports the first entry of the allow-list that names a part
// (PartName) which is not one of its checker's parts in obs.
func (r Rule) CheckParts(obs []Obligation) error {
	for _, a := range r.Allow {
		checker, part, ok := strings.Cut(a, partSep)
		if !ok {
			continue
		}
		i := slices.IndexFunc(obs, func(o Obligation) bool { return o.Checker == checker })
		if i < 0 || !slices.Contains(obs[i].Parts, part) {
			var known []string
			if i >= 0 {
				known = obs[i].Parts
			}
			return fmt.Errorf("%q in the allow-list: %q is no part of %s's obligation (its parts: %s)", a, part, checker,
				strings.Join(known, "; "))
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
	// Parts counts each of the obligation's parts over every seed, in
	// the obligation's order; Missing lists those that never arose.
	PartCounts []PartCount `json:"part_counts,omitempty"`
	Missing    []string    `json:"missing_parts,omitempty"`
	// Met: the situation arose at least Min times, and each of its parts
	// at least once.
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
		for _, p := range o.Parts {
			n := t.Parts[o.Checker][p]
			allowed := slices.Contains(rule.Allow, PartName(o.Checker, p))
			st.PartCounts = append(st.PartCounts, PartCount{Part: p, Count: n, Allowed: allowed})
			if n == 0 && !allowed {
				st.Missing = append(st.Missing, p)
			}
		}
		st.Met = st.Exercised >= c.Min && len(st.Missing) == 0
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
		w = "UNMET: " + c.shortfall(s)
	case Warned:
		w = "warned"
	default:
		w = string(s.Verdict)
	}
	if s.Verdict == Warned && !s.Met {
		w = "warned, UNMET: " + c.shortfall(s)
	}
	if s.Allowed && !s.Met {
		w = strings.ToLower(w) + " (allowed)"
	}
	return w
}

// shortfall says in a few words why s is not met: "2 of 3" (count short
// of Min) or "3 of 4 parts" (a part never arose; allowed parts are not
// counted).
func (c *Claim) shortfall(s Standing) string {
	if s.Exercised < c.Min || len(s.Missing) == 0 {
		return fmt.Sprintf("%d of %d", s.Exercised, c.Min)
	}
	required := 0
	for _, p := range s.PartCounts {
		if !p.Allowed {
			required++
		}
	}
	return fmt.Sprintf("%d of %d parts", required-len(s.Missing), required)
}

// Shortfall says why s is not met, in a sentence: how often its situation
// arose against Min, and which of its parts never arose ("" when met).
func (c *Claim) Shortfall(s Standing) string {
	if s.Met {
		return ""
	}
	var why []string
	if s.Exercised < c.Min {
		why = append(why, fmt.Sprintf("its situation arose %d time(s), fewer than %d", s.Exercised, c.Min))
	}
	if len(s.Missing) > 0 {
		why = append(why, fmt.Sprintf("%d of its %d parts never arose: %s", len(s.Missing), len(s.Parts), strings.Join(s.Missing, "; ")))
	}
	return strings.Join(why, ", and ")
}

// PartsLine renders s's parts with their counts ("code 32 ×4; code 13
// ×0", an allowed one marked "(allowed)"), or "" when its obligation has
// none.
func (s Standing) PartsLine() string {
	out := make([]string, 0, len(s.PartCounts))
	for _, p := range s.PartCounts {
		a := ""
		if p.Allowed {
			a = " (allowed)"
		}
		out = append(out, fmt.Sprintf("%s ×%d%s", p.Part, p.Count, a))
	}
	return strings.Join(out, "; ")
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
		for _, n := range u {
			if st, _ := c.Standing(n); len(st.Missing) > 0 {
				arose += ", or a part of it never arose,"
				break
			}
		}
		fmt.Fprintf(w, "UNMET: the situation of %s %s in this run: not a pass (exit 5). Allow by name with --allow-unexercised %s\n",
			strings.Join(u, ", "), arose, strings.Join(u, ","))
		for _, n := range u {
			st, _ := c.Standing(n)
			fmt.Fprintf(w, "  %s needs: %s\n", n, st.Situation)
			switch {
			case len(st.Missing) > 0:
				fmt.Fprintf(w, "    parts: %s; never arose: %s\n", st.PartsLine(), strings.Join(st.Missing, "; "))
			case len(st.PartCounts) > 0:
				fmt.Fprintf(w, "    parts: %s\n", st.PartsLine())
			}
		}
	}
}
