package mutants

import (
	"fmt"

	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/refimpl"
	"github.com/wsconverge/converge/refimpl/coordinator"
)

// Mutant is one broken variant.
type Mutant struct {
	// Name is the bug's stable name (the --mutant flag).
	Name string
	// Contract is the rule it breaks ("C8", "4.2.4", …).
	Contract string
	// Description says what the bug does, in a sentence.
	Description string
	// System builds the mutant.
	System ports.System
}

type entry struct {
	bug      coordinator.Bug
	contract string
	desc     string
}

var entries = []entry{
	{coordinator.BugDeleteVolumeBeforeKey, "C8", "ARCHIVING deletes the volume before committing archive_key"},
	{coordinator.BugReconcileError, "C11", "workspaces in ERROR are reconciled like healthy ones"},
	{coordinator.BugGCIgnoresOpID, "C9", "the GC ignores op_id protection of an archive in progress"},
	{coordinator.BugNonOwnerWrite, "C3", "the reconciler marks a workspace RUNNING itself when it claims STARTING"},
	{coordinator.BugNoCAS, "C4", "claims are written without compare-and-set on operation = NONE"},
	{coordinator.BugRunningToPending, "C5", "RUNNING → PENDING is done as one ARCHIVING step"},
	{coordinator.BugRestoreWithoutMarker, "C7", "RESTORING completes on observed STANDBY without the restore marker"},
	{coordinator.BugNoTimeouts, "4.2.3", "operations never time out"},
	{coordinator.BugFourthAttempt, "4.2.4", "a failing operation gets a fourth attempt"},
	{coordinator.BugNoRetrySpacing, "4.2.4", "retries are made on the next tick instead of 30 s later"},
	{coordinator.BugNoLeaseRecheck, "C10", "a deposed leader keeps acting: no lock re-check, writes not fenced"},
	{coordinator.BugIgnoreRestoreError, "C12", "a failed restore (checksum mismatch, missing archive) is taken as done"},
	{coordinator.BugNewOpIDOnRetry, "C7", "a retried ARCHIVING takes a new op_id and uploads a second archive"},
	{coordinator.BugTTLWritesDesired, "C3", "the TTL Manager writes desired_state itself instead of through the API"},
	{coordinator.BugHealthRunningIfExists, "C1", "the HealthMonitor reports a stopped container as RUNNING"},
	{coordinator.BugGCNoDelay, "C9", "the GC deletes an orphan at first sighting, without the 2 h delay"},
	{coordinator.BugCompleteOnActuator, "C1", "an operation completes when its actuator returns, not when observed"},
	{coordinator.BugStartWithoutVolume, "C6", "a container without its volume is not flagged ERROR"},
	{coordinator.BugGCDeleteProtectedError, "C9", "the GC deletes archives of workspaces in ERROR"},
	{coordinator.BugTTLIgnoresActivity, "4.4", "the standby TTL stops workspaces with open connections or a running idle timer"},
	{coordinator.BugNeverStops, "C12", "the decision table misses RUNNING → STANDBY: a workspace asked to stand by keeps running"},
	{coordinator.BugIgnoreLimits, "4.3", "the API accepts desired RUNNING over the per-user and global running limits"},
}

// Catalogue returns every mutant, in a stable order.
func Catalogue() []Mutant {
	out := make([]Mutant, 0, len(entries))
	for _, e := range entries {
		out = append(out, Mutant{
			Name:        string(e.bug),
			Contract:    e.contract,
			Description: e.desc,
			System:      named{refimpl.NewSystemWith(coordinator.Options{Bug: e.bug}), "mutant:" + string(e.bug)},
		})
	}
	return out
}

// Lookup finds a mutant by name.
func Lookup(name string) (Mutant, error) {
	for _, m := range Catalogue() {
		if m.Name == name {
			return m, nil
		}
	}
	return Mutant{}, fmt.Errorf("no mutant named %q (see `converge mutants --list`)", name)
}

// named renames a system so reports and replay files say which mutant ran.
type named struct {
	ports.System
	name string
}

func (n named) Name() string { return n.name }
