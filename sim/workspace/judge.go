package workspace

import (
	"sort"

	"github.com/wsconverge/converge/contracts"
	"strings"

	"github.com/wsconverge/converge/contracts/history"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
)

// Final is the world now, as the end-of-run checks see it: the rows, every
// volume's files, the archives (read as a restore would) and the
// durability model. The model leaves out a workspace whose data is known
// destroyed by a fault and not yet discovered: the data lived only in the
// archive at its archive_key (no volume, or an unrestored one) and that
// archive was removed or corrupted (a restore must then end in DataLost,
// which the checker accepts; before one is tried nothing is owed).
func (s *Sim) Final() *wsjudge.Final {
	f := &wsjudge.Final{
		End:      s.clock.Now(),
		Rows:     s.world.Store.Snapshot(),
		Volumes:  map[string]map[string][]byte{},
		Archives: s.faults.readArchive,
		Expected: make(map[string]map[string][]byte, len(s.work.model)),
	}
	for _, id := range s.world.Storage.Volumes() {
		files, _ := s.world.Storage.Files(id)
		f.Volumes[id] = files
	}
	rows := make(map[string]*contracts.Workspace, len(f.Rows))
	for i := range f.Rows {
		rows[f.Rows[i].ID] = &f.Rows[i]
	}
	for id, files := range s.work.model {
		_, hasVolume := f.Volumes[id]
		if w := rows[id]; w != nil && w.ArchiveKey != "" && s.faults.destroyed[w.ArchiveKey] && (!hasVolume || unrestored(w)) {
			continue
		}
		f.Expected[id] = files
	}
	return f
}

// Judge runs every checker of package invariant over the history so far
// (the recorder's own events, not a copy) and, with final, the world now
// (Final).
func (s *Sim) Judge(final bool) *wsjudge.Report {
	in := wsjudge.Input{Each: s.rec.All(), Limits: s.cfg.Limits}
	if final {
		in.Final = s.Final()
	}
	return wsjudge.Check(in)
}

// Evidence renders the timeline around violation v: the non-routine events
// near each of its evidence events (marked with ">>"), or, for a
// violation found at the end, the last events of its workspace.
func (s *Sim) Evidence(v wsjudge.Violation) []string { return s.evidence(&v, s.rec.Events()) }

func (s *Sim) evidence(v *wsjudge.Violation, events []history.Event) []string {
	const around, ofWorkspace = 8, 30
	// Context leaves out what history.Routine does and the EventListener's
	// republishing of every change (a line per write already says it).
	quiet := func(e *history.Event) bool {
		return history.Routine(e) || e.Kind == history.KindCall && e.Method == "bus.Publish" && strings.HasPrefix(e.Args, "workspace:")
	}
	var keep []int
	mark := map[int]bool{}
	if len(v.Evidence) > 0 {
		for _, seq := range v.Evidence {
			i := sort.Search(len(events), func(i int) bool { return events[i].Seq >= seq })
			if i == len(events) || events[i].Seq != seq {
				continue
			}
			mark[i] = true
			keep = append(keep, i)
			for j, n := i-1, 0; j >= 0 && n < around; j-- {
				if !quiet(&events[j]) {
					keep = append(keep, j)
					n++
				}
			}
			for j, n := i+1, 0; j < len(events) && n < around/2; j++ {
				if !quiet(&events[j]) {
					keep = append(keep, j)
					n++
				}
			}
		}
	} else if v.Subject != "" {
		for j := len(events) - 1; j >= 0 && len(keep) < ofWorkspace; j-- {
			if events[j].Workspace == v.Subject && !quiet(&events[j]) {
				keep = append(keep, j)
			}
		}
	}
	sort.Ints(keep)
	var out []string
	last := -2
	for _, i := range keep {
		if i == last {
			continue
		}
		if last >= 0 && i != last+1 {
			out = append(out, "   …")
		}
		prefix := "   "
		if mark[i] {
			prefix = ">> "
		}
		out = append(out, prefix+history.Line(events[i], s.cfg.Start))
		last = i
	}
	return out
}

// unrestored is SPEC 4.2.1's reading of a volume that does not hold its
// archive: archive_key is set and home_ctx.restore_marker names another
// archive, or none. The user's files are then in the archive, not in the
// volume. (The world reads SPEC itself, as the judge does: it never asks
// the reference.)
func unrestored(w *contracts.Workspace) bool {
	return w.ArchiveKey != "" && w.RestoreMarker() != w.ArchiveKey
}
