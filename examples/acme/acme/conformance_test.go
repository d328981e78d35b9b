package acme_test

import (
	"testing"

	"github.com/wsconverge/converge/scenarios/conformance"

	"example.com/acme/acme"
)

// TestConformance judges acme with converge's public suite: SPEC 6's
// scenarios, seeds of the default fault mix (each run twice: the history
// hashes must match), a verdict per checker, and the rapid state machine.
// A failing seed prints its violations and a replay file, which
// `go run ./cmd/acme-converge replay FILE` re-runs.
//
// 120 seeds of 5 workspaces × 24 simulated hours keep the whole test
// under a minute and a half on two cores; `go run ./cmd/acme-converge sim
// --system acme --seeds 1000 --workspaces 5` judges more.
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Config{
		NewSystem:     acme.NewSystem,
		Seeds:         120,
		ReplayCommand: "go run ./cmd/acme-converge replay",
	})
}
