package oracle

import (
	"fmt"
	"slices"

	"github.com/wsconverge/converge/judge"
	oraclejudge "github.com/wsconverge/converge/judge/oracle"
	"github.com/wsconverge/converge/sim/engine"
)

// Coverage steering in the oracle world (engine.Steerer): a steered seed
// draws half its faults from the fault kinds it forces on (the rest from
// the whole Catalogue, as an unsteered seed does), and may turn on world
// shapes a default run never has. A steering names its features: the
// Catalogue's fault ids, and these.
const (
	// FeatureCrowd: at least twice pool_size requests at genesis, so
	// more jobs are ready than the pool holds.
	FeatureCrowd = "crowd"
	// FeaturePartialQuorums, FeatureLongReorder, FeatureLateDuplicates
	// and FeatureRaggedCompletes turn on the Options of those names.
	FeaturePartialQuorums  = "partial-quorums"
	FeatureLongReorder     = "long-reorder"
	FeatureLateDuplicates  = "late-duplicates"
	FeatureRaggedCompletes = "ragged-completes"
)

// WorldFeatures lists the world shapes a steering may turn on.
func WorldFeatures() []string {
	return []string{FeatureCrowd, FeaturePartialQuorums, FeatureLongReorder, FeatureLateDuplicates, FeatureRaggedCompletes}
}

// SteerFeatures lists every feature a seed can be steered to: the fault
// kinds of the Catalogue, then the world shapes.
func SteerFeatures() []string { return append(slices.Clone(Catalogue), WorldFeatures()...) }

// SteerPrior declares, per checker, the features that tend to produce its
// situation (ORACLE-SPEC 5.3's table names most; measured on the default
// run for the rest). Steering also learns from the seeds it has run.
var SteerPrior = map[string][]string{
	"o2-nonce-bounds":               {"F10", "F11"},
	"o3-execution-timing":           {"F8", "F11"},
	"o4-fetch-retries":              {"F8"},
	"o5-submit-retries":             {"F11", "F12", "F15"},
	"o6-update-keeps-nonce":         {"F5"},
	"o7-concurrency":                {FeatureCrowd, "F8"},
	"o8-sequence":                   {"F9", "F13"},
	"o9-resync":                     {"F9", "F11"},
	"o10-complete-handled":          {"F6"},
	"o13-restart":                   {"F17", "F12"},
	"o14-shutdown":                  {"F18", "F8"},
	"o16-liveness":                  {FeaturePartialQuorums},
	"o16b-recovery":                 {"F1", "F14", "F3", "F13"},
	"o19-resubscribe":               {"F1"},
	"o20-gave-up-rearmed":           {"F11"},
	"o21-sequence-resynced":         {"F9"},
	"o22-resubscribe-reconciles":    {"F1"},
	"o23-retried-not-given-up":      {"F10", "F11"},
	"o26-failed-lookup-followed":    {"F14", "F2"},
	"o27-submitted-round-not-rerun": {"F17", "F12"},
	"o28-missing-job-queried":       {"F1", "F14"},
}

// Obligations are the oracle checkers' obligations, in report order.
func Obligations() []judge.Obligation { return oraclejudge.Obligations() }

// NewSteerer is the steering of runs that must meet every obligation rule
// requires, each at least rule's Min times,
// and each part of them at least once (steering aims at a missing part
// as at an unmet obligation).
func NewSteerer(rule judge.Rule) *engine.Steerer {
	obs := Obligations()
	req := rule.Required(obs)
	parts := map[string][]string{}
	for _, o := range obs {
		if !slices.Contains(req, o.Checker) {
			continue
		}
		for _, p := range o.Parts {
			if !slices.Contains(rule.Allow, judge.PartName(o.Checker, p)) {
				parts[o.Checker] = append(parts[o.Checker], p)
			}
		}
	}
	return &engine.Steerer{Required: req, Min: rule.MinOrDefault(), Features: SteerFeatures(),
		Prior: SteerPrior, Parts: parts}
}

// Sample is what steering learns from a finished seed run with st: the
// fault kinds drawn for it, the world shapes st turned on, and each
// checker's count.
func Sample(st *engine.Steering, r *Result) engine.Sample {
	s := engine.Sample{Seed: r.Seed, Features: slices.Clone(r.Faults)}
	if st != nil {
		for _, f := range st.On {
			if slices.Contains(WorldFeatures(), f) {
				s.Features = append(s.Features, f)
			}
		}
	}
	if r.Report != nil {
		s.Exercised, s.Parts = r.Report.Exercised, r.Report.Parts
	}
	return s
}

// checkSteering reports a feature of st that is not one of SteerFeatures.
func checkSteering(st *engine.Steering) error {
	if st == nil {
		return nil
	}
	for _, f := range st.On {
		if !slices.Contains(SteerFeatures(), f) {
			return fmt.Errorf("%w: steering feature %q: known are %v", engine.ErrBadInput, f, SteerFeatures())
		}
	}
	return nil
}

// steered returns o (defaults filled in) as its Steering changes it, and
// the fault kinds it forces on. It is idempotent.
func (o Options) steered() (Options, []string) {
	if o.Steering == nil {
		return o, nil
	}
	var kinds []string
	for _, f := range o.Steering.On {
		switch f {
		case FeatureCrowd:
			pool := o.PoolSize
			if pool == 0 {
				pool = 4
			}
			o.Requests = max(o.Requests, min(2*pool, MaxRequests))
		case FeaturePartialQuorums:
			o.PartialQuorums = true
		case FeatureLongReorder:
			o.LongReorder = true
		case FeatureLateDuplicates:
			o.LateDuplicates = true
		case FeatureRaggedCompletes:
			o.RaggedCompletes = true
		default:
			kinds = append(kinds, f)
		}
	}
	return o, kinds
}
