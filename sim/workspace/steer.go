package workspace

import (
	"fmt"
	"slices"

	"github.com/wsconverge/converge/judge"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
	"github.com/wsconverge/converge/sim/engine"
)

// Coverage steering in the workspace world (engine.Steerer): a steered
// seed forces on some fault kinds of its mix (on whatever the swarm's
// coin says, and steerBoost times as frequent) and some workload shapes.
// A steering names its features: fault kinds by name, and these.
const (
	// FeatureDeletes: users delete their workspaces far more often
	// (steerDeletesPerDay): soft deletes of every state, archives left
	// behind for the GC.
	FeatureDeletes = "deletes"
	// FeatureCrowd: each user owns about steerCrowd workspaces, so the
	// running limits refuse requests (429s).
	FeatureCrowd = "crowd"
)

const (
	// steerBoost multiplies the frequency of a steered fault kind.
	steerBoost = 2
	// steerDeletesPerDay is the delete rate of FeatureDeletes.
	steerDeletesPerDay = 0.5
	// steerCrowd is how many workspaces a user owns under FeatureCrowd.
	steerCrowd = 6
)

// WorkloadFeatures lists the workload features a steering may force on.
func WorkloadFeatures() []string { return []string{FeatureDeletes, FeatureCrowd} }

// SteerFeatures lists the features a seed of mix m can be steered to: the
// mix's fault kinds, then the workload features.
func SteerFeatures(m FaultMix) []string {
	var out []string
	for _, k := range append(FaultKinds(), OptInFaultKinds()...) {
		if slices.Contains(m.Kinds, k) {
			out = append(out, string(k))
		}
	}
	return append(out, WorkloadFeatures()...)
}

// SteerPrior declares, per checker, the features that tend to produce its
// situation (measured on small fleets: each raises the share of seeds in
// which the situation arises; steering also learns its own from the seeds
// it has run). A checker missing here is steered by what is learned.
var SteerPrior = map[string][]string{
	"c6-container-volume":   {string(FaultLoseVolume), string(FaultRemoveVolume)},
	"restore-marker":        {string(FaultLoseVolume), FeatureDeletes},
	"c7-archive-idempotent": {FeatureDeletes, string(FaultStorageJobCrash)},
	"c8-ordering":           {FeatureDeletes},
	"c9-gc-protection":      {FeatureDeletes},
	"gc-meta-with-archive":  {FeatureDeletes, string(FaultStorageJobCrash), string(FaultRemoveObject)},
	"gc-deletes-orphans":    {FeatureDeletes, string(FaultStorageJobCrash), string(FaultCorruptObject)},
	"gc-deletes-when-due":   {FeatureDeletes, string(FaultStorageJobCrash), string(FaultCorruptObject)},
	"c10-single-leader":     {string(FaultCrash), string(FaultKillSession), string(FaultDepose)},
	"c10-fencing":           {string(FaultDepose), string(FaultKillSession)},
	"c10-holder-acts":       {string(FaultKillSession), string(FaultDepose), string(FaultCrash)},
	"gives-up-at-once":      {string(FaultDepose), string(FaultKillSession)},
	"gives-up-releases":     {string(FaultDBError)},
	"c11-error-skip":        {string(FaultOutage), string(FaultDelayStart), string(FaultLoseVolume)},
	"retry-policy":          {string(FaultOutage), string(FaultStorageJobCrash), string(FaultLostResponse)},
	"timeouts":              {string(FaultDelayStart), string(FaultKillSession)},
	"timeout-entry":         {string(FaultDelayStart), string(FaultKillSession)},
	"error-entry":           {string(FaultOutage), string(FaultDelayStart)},
	"error-reason":          {string(FaultOutage), string(FaultLostResponse)},
	"error-reason-no-code":  {string(FaultNoAnswer)},
	"error-reason-in-use":   {string(FaultHoldVolume), FeatureDeletes},
	"error-context-code":    {string(FaultOutage), string(FaultLostResponse)},
	"invoke-once":           {string(FaultCrash), string(FaultDepose)},
	"api-rules":             {string(FaultOutage), FeatureDeletes},
	"limits":                {FeatureCrowd},
	"api-answers":           {string(FaultOutage), FeatureCrowd},
	"events":                {string(FaultBreakFeed), string(FaultDropFeed)},
}

// Obligations are the workspace checkers' obligations, in report order.
func Obligations() []judge.Obligation { return wsjudge.Obligations() }

// NewSteerer is the steering of runs of mix m that must meet every
// obligation rule requires, each at least rule's Min times.
func NewSteerer(m FaultMix, rule judge.Rule) *engine.Steerer {
	return &engine.Steerer{Required: rule.Required(Obligations()), Min: rule.MinOrDefault(), Features: SteerFeatures(m),
		Prior: SteerPrior}
}

// Sample is what steering learns from a finished seed run with st: the
// fault kinds its plan enabled, the workload features st forced on, and
// each checker's count.
func Sample(st *engine.Steering, r Result) engine.Sample {
	s := engine.Sample{Seed: r.Seed}
	if r.Plan != nil {
		for _, k := range r.Plan.Faults {
			s.Features = append(s.Features, string(k))
		}
	}
	if st != nil {
		for _, f := range st.On {
			if slices.Contains(WorkloadFeatures(), f) {
				s.Features = append(s.Features, f)
			}
		}
	}
	if r.Report != nil {
		s.Exercised = r.Report.Exercised
	}
	return s
}

// applySteering changes c (defaults filled in) as c.Steering says. It is
// idempotent: a replay file's configuration, already steered, gives the
// same run again.
func (c *Config) applySteering() error {
	st := c.Steering
	if st == nil {
		return nil
	}
	known := SteerFeatures(c.Faults)
	var kinds []Kind
	for _, f := range st.On {
		switch {
		case !slices.Contains(known, f):
			return badConfig("steering feature %q: with faults %s the known ones are %v", f, c.Faults, known)
		case f == FeatureDeletes:
			c.Workload.DeletesPerDay = max(c.Workload.DeletesPerDay, steerDeletesPerDay)
		case f == FeatureCrowd:
			c.Workload.Users = min(c.Workload.Users, max(1, (c.Workspaces+steerCrowd-1)/steerCrowd))
		default:
			kinds = append(kinds, Kind(f))
		}
	}
	c.Faults.steered = kinds
	return nil
}

// ParseSteering reads the form a steering prints (engine.Steering.String):
// features of mix m, comma-separated. Errors wrap engine.ErrBadInput.
func ParseSteering(s string, m FaultMix) (*engine.Steering, error) {
	st, err := engine.ParseSteering(s, SteerFeatures(m))
	if err != nil {
		return nil, fmt.Errorf("with faults %s: %w", m, err)
	}
	return st, nil
}
