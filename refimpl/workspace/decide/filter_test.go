package decide

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

func TestFilterReconcileCoversEveryActionableRow(t *testing.T) {
	// Any row on which the reconciler would act must be selected by
	// FilterReconcile, or the reconciler would never see it.
	for _, o := range contracts.AllObserved {
		for _, h := range []contracts.HealthStatus{contracts.HealthOK, contracts.HealthError} {
			for _, d := range contracts.AllDesired {
				for _, op := range contracts.AllOperations {
					for _, del := range []bool{false, true} {
						for _, term := range []bool{false, true} {
							w := row(withObserved(o), withHealth(h), withDesired(d), withOp(op))
							if del {
								withDeleted()(w)
							}
							if term {
								withTerminal()(w)
							}
							s := classify(w, t0, t0)
							if s.Kind != StepNothing {
								require.True(t, contracts.FilterReconcile.Match(w), "%s on %+v", s.Kind, w)
							}
						}
					}
				}
			}
		}
	}
}

func TestFilterTTLCoversEveryTTLCandidate(t *testing.T) {
	for _, o := range contracts.AllObserved {
		for _, h := range []contracts.HealthStatus{contracts.HealthOK, contracts.HealthError} {
			for _, op := range contracts.AllOperations {
				for _, del := range []bool{false, true} {
					w := row(withObserved(o), withHealth(h), withOp(op), withDesired(contracts.DesiredRunning))
					if del {
						withDeleted()(w)
					}
					now := t0.Add(sec(200000))
					if StandbyTTLExpired(w, contracts.Activity{}, now) || ArchiveTTLExpired(w, now) {
						require.True(t, contracts.FilterTTL.Match(w), "%+v", w)
					}
				}
			}
		}
	}
}
