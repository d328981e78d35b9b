package workspace

import (
	"fmt"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// archivingOpID: SPEC 4.2.2, the claim write: "ARCHIVING: op_id, committed
// by the claim before any actuator call: the op_id already on the row if
// an ERROR entry kept one (4.2.5); else, for an unrestored workspace, the
// op_id of its archive_key (archives/{id}/{op_id}/home.tar.zst); else a
// new UUID", and "any operation other than ARCHIVING and DELETING: op_id
// cleared, if an ERROR entry kept one. The volume may change from now on,
// so a later ARCHIVING must not reuse that op_id (and with it a key
// holding older data)"; with C7 (archiving is idempotent per op_id: a new
// op_id is a new archive) and 4.2.5 ("op_id is left as it is: it still
// protects the archive it names").
//
// Judged at every applied claim of the StateReconciler on a row whose
// operation was NONE, on the row just after it:
//
//   - a claim of ARCHIVING leaves an op_id on the row (the claim commits
//     it; a claim that sets none leaves the archive call without one);
//   - on a row that carried an op_id (an ERROR entry kept it), ARCHIVING
//     keeps that op_id;
//   - otherwise, unless the row is unrestored (its archive's op_id is
//     then reused: operation-choice judges that), the op_id is new: no
//     op_id the history has shown before, on any row or in any archive
//     key or archive call, of this workspace or another;
//   - a claim of any other operation but DELETING leaves no op_id.
//
// What happens to op_id while ARCHIVING runs (c7-archive-idempotent), at
// its completion (completion-stamp) and at an ERROR entry
// (c11-error-skip) is judged there.
type archivingOpID struct {
	base
	// seen: every op_id the history has shown.
	seen map[string]bool
}

func (*archivingOpID) Name() string     { return "archiving-op-id" }
func (*archivingOpID) Contract() string { return "4.2.2" }

func (c *archivingOpID) Observe(s *State, e *history.Event, r *Report) {
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if e.Kind == history.KindCall && e.Method == MArchive && e.Args != "" {
		c.seen[e.Args] = true
		return
	}
	if !reconcilerWrite(e) {
		return
	}
	row := s.Row(e.Workspace)
	if row == nil || row.Operation != contracts.OpNone || classify(row, e.Patch) != tClaim {
		return
	}
	op := e.Patch.Operation.V
	a := after(row, e.Patch, e.At)
	switch {
	case op == contracts.OpArchiving:
		r.Exercise()
		switch {
		case a.OpID == "":
			r.Flag(e.Workspace, e.At, "ARCHIVING claimed without an op_id: the claim commits it before any actuator call (SPEC 4.2.2)", e.Seq)
		case row.OpID != "" && a.OpID != row.OpID:
			r.Flag(e.Workspace, e.At, fmt.Sprintf("ARCHIVING claimed with op_id %s on a row whose ERROR entry kept op_id %s: the claim takes the op_id already on the row (SPEC 4.2.2)", a.OpID, row.OpID), e.Seq)
		case row.OpID == "" && !(row.ObservedStatus == contracts.ObservedStandby && specUnrestored(row)) && c.seen[a.OpID]:
			r.Flag(e.Workspace, e.At, fmt.Sprintf("ARCHIVING claimed with op_id %s, which the history already used: a claim with no op_id to keep or reuse takes a new one (SPEC 4.2.2)", a.OpID), e.Seq)
		}
	case op != contracts.OpDeleting && row.OpID != "":
		r.Exercise()
		if a.OpID != "" {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("%s claimed leaving op_id %s on the row: a claim other than ARCHIVING and DELETING clears an op_id an ERROR entry kept, so that no later ARCHIVING reuses it (SPEC 4.2.2)", op, a.OpID), e.Seq)
		}
	}
}

// AfterApply adds the op_ids the row now shows, in op_id or archive_key.
func (c *archivingOpID) AfterApply(s *State, e *history.Event, _ *Report) {
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	id, ok := changedRow(e)
	if !ok {
		return
	}
	w := s.Row(id)
	if w == nil {
		return
	}
	if w.OpID != "" {
		c.seen[w.OpID] = true
	}
	if _, opID, ok := specParseArchiveKey(w.ArchiveKey); ok {
		c.seen[opID] = true
	}
}
