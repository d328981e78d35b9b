package workspace

import (
	"slices"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// Recorded method names the checkers understand. Provider and bus calls are
// history.KindCall; world faults injected by a harness are history.KindFault.
const (
	MStart        = "instances.Start"
	MDelete       = "instances.Delete"
	MProvision    = "storage.Provision"
	MArchive      = "storage.Archive"
	MRestore      = "storage.Restore"
	MDeleteVolume = "storage.DeleteVolume"
	MObjPut       = "objects.Put"
	MObjDelete    = "objects.Delete"

	FKill        = "instances.Kill"   // container stops (still exists)
	FRemove      = "instances.Remove" // container vanishes
	FLoseVolume  = "storage.Lose"     // volume vanishes
	FRemoveObj   = "objects.Remove"   // object vanishes
	FCorruptObj  = "objects.Corrupt"  // object bytes change
	FKillSession = "store.KillSession"
	FQuiet       = "quiet" // faults stop here (Result: the convergence bound)

	// ArchiveUploaded / ArchiveSkipped prefix the Result of a successful
	// storage.Archive call: "uploaded <key>" or "skipped <key>";
	// ArchiveDone ("archived <key>") when the provider cannot tell which.
	ArchiveUploaded = "uploaded "
	ArchiveSkipped  = "skipped "
	ArchiveDone     = "archived "
)

// Mutating reports whether a call changes the world (reads and listings
// do not).
func Mutating(method string) bool {
	switch method {
	case MStart, MDelete, MProvision, MArchive, MRestore, MDeleteVolume, MObjPut, MObjDelete:
		return true
	}
	return false
}

// World is the checkers' model of real resources, built from successful
// calls and faults.
type World struct {
	// Containers: id → running.
	Containers map[string]bool
	Volumes    map[string]bool
	// Objects: key → when it was (last) written.
	Objects map[string]time.Time
}

// Leadership is the replayed election state.
type Leadership struct {
	Epoch  int64
	Holder string
	// EpochOf is each instance's epoch from its latest acquisition.
	EpochOf map[string]int64
	// FirstAct is the sequence number of the first write or mutating
	// call made under each epoch.
	FirstAct map[int64]int64
}

// State is the replayed system just before an event.
type State struct {
	Rows map[string]*contracts.Workspace
	// rows: Rows in id order, kept by insert (sortedRows).
	rows   []*contracts.Workspace
	World  World
	Leader Leadership
	// Now is the time of the event being judged.
	Now time.Time
	// Quiet is when faults stopped (zero while they go on).
	Quiet time.Time
}

func newState() *State {
	return &State{
		Rows:   map[string]*contracts.Workspace{},
		World:  World{Containers: map[string]bool{}, Volumes: map[string]bool{}, Objects: map[string]time.Time{}},
		Leader: Leadership{EpochOf: map[string]int64{}, FirstAct: map[int64]int64{}},
	}
}

// Row is the replayed row of id, or nil.
func (s *State) Row(id string) *contracts.Workspace { return s.Rows[id] }

// apply advances the state past e.
func (s *State) apply(e *history.Event) {
	switch e.Kind {
	case history.KindInsert:
		if e.Row != nil && e.Err == "" {
			r := e.Row.Clone()
			s.insert(&r)
		}
	case history.KindWrite:
		if e.Applied && e.Patch != nil {
			if r := s.Rows[e.Workspace]; r != nil {
				e.Patch.Apply(r, e.At)
			}
			s.markAct(e)
		}
	case history.KindLeader:
		switch e.Method {
		case "acquire":
			s.Leader.Epoch, s.Leader.Holder = e.Epoch, e.Instance
			s.Leader.EpochOf[e.Instance] = e.Epoch
		case "lost", "release":
			if s.Leader.Holder == e.Instance {
				s.Leader.Holder = ""
			}
		}
	case history.KindCall:
		if e.Err == "" {
			s.applyCall(e)
		}
		if Mutating(e.Method) {
			s.markAct(e)
		}
	case history.KindFault:
		s.applyFault(e)
	}
}

// insert puts w in Rows, and where sortedRows gives it.
func (s *State) insert(w *contracts.Workspace) {
	i, found := slices.BinarySearchFunc(s.rows, w.ID, func(r *contracts.Workspace, id string) int { return strings.Compare(r.ID, id) })
	if found {
		s.rows[i] = w
	} else {
		s.rows = slices.Insert(s.rows, i, w)
	}
	s.Rows[w.ID] = w
}

func (s *State) markAct(e *history.Event) {
	ep := e.Epoch
	if ep == 0 {
		ep = s.Leader.EpochOf[e.Instance]
	}
	if ep == 0 {
		return
	}
	if _, ok := s.Leader.FirstAct[ep]; !ok {
		s.Leader.FirstAct[ep] = e.Seq
	}
}

func (s *State) applyCall(e *history.Event) {
	w := &s.World
	id := e.Workspace
	switch e.Method {
	case MStart:
		w.Containers[id] = true
	case MDelete:
		delete(w.Containers, id)
	case MProvision:
		w.Volumes[id] = true
	case MDeleteVolume:
		delete(w.Volumes, id)
	case MArchive:
		if key, ok := cutPrefix(e.Result, ArchiveUploaded); ok {
			w.Objects[key] = e.At
			w.Objects[specMetaKey(key)] = e.At
		} else if key, ok := cutPrefix(e.Result, ArchiveDone); ok {
			for _, k := range []string{key, specMetaKey(key)} {
				if _, had := w.Objects[k]; !had {
					w.Objects[k] = e.At
				}
			}
		}
	case MObjPut:
		w.Objects[e.Args] = e.At
	case MObjDelete:
		delete(w.Objects, e.Args)
	}
}

func (s *State) applyFault(e *history.Event) {
	w := &s.World
	id := e.Workspace
	switch e.Method {
	case FKill:
		if _, ok := w.Containers[id]; ok {
			w.Containers[id] = false
		}
	case FRemove:
		delete(w.Containers, id)
	case FLoseVolume:
		delete(w.Volumes, id)
	case FRemoveObj:
		delete(w.Objects, e.Args)
	case FQuiet:
		s.Quiet = e.At
	}
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return "", false
}
