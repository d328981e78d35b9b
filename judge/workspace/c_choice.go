package workspace

import (
	"fmt"
	"strings"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// operationChoice: SPEC 4.2 steps 2 and 5 and the table of 4.2.1, with
// the amendment on unrestored workspaces: the operation a reconciler
// claims is the one the table gives for the row. A soft-deleted STANDBY
// workspace is archived before it is deleted, a PENDING one with an
// archive is restored rather than provisioned empty, a RUNNING one is
// stopped before anything else.
//
// A reconciler decides from a row it read some time before its claim,
// and the claim's compare-and-set guards only the operation and the
// terminal error. So a claim is judged against every version of the row
// since its operation was last NONE (a reader that follows step 3 plans
// nothing while an operation is set): the claimed operation must be the
// table's choice for one of them. The table is written out here from
// SPEC, not taken from the reference's decide.ChooseOperation (a test
// holds the two equal).
//
// And the amendment's ARCHIVING of an unrestored workspace (4.2.1: "for
// desired PENDING, ARCHIVING reuses the op_id of archive_key (the archive
// is complete, so nothing is uploaded) and deletes the volume"): an
// ARCHIVING claimed on a STANDBY row whose archive_key is set, whose
// home_ctx.restore_marker names another archive or none, and whose op_id
// is null (an op_id an ERROR entry kept is resumed, 4.2.5), must set as
// op_id, in its claim or in the write that ensures it, the op_id of that
// archive_key. A new op_id archives the empty volume under a new key, and
// the archive that holds the user's data loses its protection.
type operationChoice struct {
	base
	// allowed is, per workspace whose operation is NONE, the set of
	// operations the table gave for some version of its row since then.
	allowed map[string]opSet
	// reuse: workspace → the op_id its ARCHIVING of an unrestored
	// volume must take, until it sets one.
	reuse map[string]string
}

// opSet is a set of operations (bit i: opOrder[i]).
type opSet uint8

var opOrder = [...]contracts.Operation{contracts.OpProvisioning, contracts.OpRestoring, contracts.OpStarting,
	contracts.OpStopping, contracts.OpArchiving, contracts.OpDeleting}

func opBit(op contracts.Operation) opSet {
	for i, o := range opOrder {
		if o == op {
			return 1 << i
		}
	}
	return 0
}

func (s opSet) String() string {
	var names []string
	for i, o := range opOrder {
		if s&(1<<i) != 0 {
			names = append(names, string(o))
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, " or ")
}

// TableChoice is SPEC 4.2.1's choice for row w (with steps 2 and 4 of
// 4.2): the operation to claim, or OpNone.
func TableChoice(w *contracts.Workspace) contracts.Operation {
	deleted := !w.DeletedAt.IsZero()
	failing := w.HealthStatus == contracts.HealthError || (w.ErrorInfo != nil && w.ErrorInfo.IsTerminal)
	restored := w.ArchiveKey == "" || (w.HomeCtx != nil && w.HomeCtx.RestoreMarker == w.ArchiveKey)
	switch {
	case w.ObservedStatus == contracts.ObservedDeleted:
		return contracts.OpNone // step 1: terminal
	case deleted && (w.ObservedStatus == contracts.ObservedPending || failing):
		return contracts.OpDeleting // rows 1 and 2; step 2's exception
	case failing:
		return contracts.OpNone // step 2: skipped (C11)
	case deleted && w.ObservedStatus == contracts.ObservedRunning:
		return contracts.OpStopping // row 3: step down first
	case deleted && w.ObservedStatus == contracts.ObservedStandby:
		return contracts.OpArchiving // row 4
	case deleted:
		return contracts.OpNone
	}
	desired := contracts.ObservedStatus(w.DesiredState)
	switch w.ObservedStatus {
	case contracts.ObservedPending:
		if desired == contracts.ObservedStandby || desired == contracts.ObservedRunning {
			if w.ArchiveKey == "" {
				return contracts.OpProvisioning // row 5
			}
			return contracts.OpRestoring // row 6
		}
	case contracts.ObservedStandby:
		switch {
		case desired == contracts.ObservedPending:
			return contracts.OpArchiving // row 8 (an unrestored one reuses its op_id)
		case !restored:
			// The amendment: "for desired STANDBY or RUNNING the
			// reconciler chooses RESTORING". For desired STANDBY step 4
			// (observed == desired: nothing) reads otherwise; a reader
			// may follow either, and not claiming is never judged here.
			return contracts.OpRestoring
		case desired == contracts.ObservedRunning:
			return contracts.OpStarting // row 7
		}
	case contracts.ObservedRunning:
		if desired == contracts.ObservedStandby || desired == contracts.ObservedPending {
			return contracts.OpStopping // row 9
		}
	}
	return contracts.OpNone // step 4: converged, or no row applies
}

func (*operationChoice) Name() string     { return "operation-choice" }
func (*operationChoice) Contract() string { return "4.2.1" }

func (c *operationChoice) Observe(s *State, e *history.Event, r *Report) {
	if !reconcilerWrite(e) {
		return
	}
	row := s.Row(e.Workspace)
	if row == nil {
		return
	}
	if c.reuse == nil {
		c.reuse = map[string]string{}
	}
	t := classify(row, e.Patch)
	if t == tClaim && row.Operation == contracts.OpNone && e.Patch.Operation.V == contracts.OpArchiving && row.OpID == "" &&
		row.ObservedStatus == contracts.ObservedStandby && row.ArchiveKey != "" && row.RestoreMarker() != row.ArchiveKey {
		if id, opID, ok := specParseArchiveKey(row.ArchiveKey); ok && id == e.Workspace {
			c.reuse[e.Workspace] = opID
		}
	}
	if want, ok := c.reuse[e.Workspace]; ok {
		if e.Patch.OpID.Set && e.Patch.OpID.V != "" {
			delete(c.reuse, e.Workspace)
			if e.Patch.OpID.V != want {
				r.Flag(e.Workspace, e.At, fmt.Sprintf("ARCHIVING of an unrestored volume (archive_key %q, restore_marker %q) took op_id %s: it reuses the op_id of archive_key (%s)",
					row.ArchiveKey, row.RestoreMarker(), e.Patch.OpID.V, want), e.Seq)
			}
		} else if t == tComplete || t == tError {
			delete(c.reuse, e.Workspace)
		}
	}
	if t != tClaim || row.Operation != contracts.OpNone {
		return // a change of a running operation is C4's to judge
	}
	r.Exercise()
	op := e.Patch.Operation.V
	allowed := c.allowed[e.Workspace] | opBit(TableChoice(row))
	if allowed&opBit(op) == 0 {
		r.Flag(e.Workspace, e.At, fmt.Sprintf("%s claimed on a row (observed %s, health %s, desired %s, deleted %t, archive_key %q) for which the table chose %s since its last operation ended",
			op, row.ObservedStatus, row.HealthStatus, row.DesiredState, row.Deleted(), row.ArchiveKey, allowed), e.Seq)
	}
}

// AfterApply adds the table's choice for the row as e left it, while its
// operation is NONE.
func (c *operationChoice) AfterApply(s *State, e *history.Event, _ *Report) {
	if e.Kind != history.KindWrite && e.Kind != history.KindInsert {
		return
	}
	id := e.Workspace
	if id == "" && e.Row != nil {
		id = e.Row.ID
	}
	w := s.Row(id)
	if c.allowed == nil {
		c.allowed = map[string]opSet{}
	}
	if w == nil || w.Operation != contracts.OpNone {
		delete(c.allowed, id)
		return
	}
	c.allowed[id] |= opBit(TableChoice(w))
}
