package oracle

import "slices"

// denseIDs bounds the ids a byID keeps in its slice: a chain numbers its
// requests 1, 2, …, so every id of a run fits; a larger one (a record
// naming a request no chain made) goes to the map.
const denseIDs = 1 << 12

// byID is a table of *T by request id: a slice indexed by the id for the
// small ids a chain assigns, a map for any other. The judge looks a
// request and its model up on nearly every record, and a slice lookup is
// a fraction of a map's (map order is never used: each lists in id order).
type byID[T any] struct {
	dense  []*T
	sparse map[uint64]*T
	n      int
}

// get is the entry of id (nil when none).
func (t *byID[T]) get(id uint64) *T {
	if id < denseIDs {
		if id < uint64(len(t.dense)) {
			return t.dense[id]
		}
		return nil
	}
	return t.sparse[id]
}

// set makes v (not nil) the entry of id.
func (t *byID[T]) set(id uint64, v *T) {
	if t.get(id) == nil {
		t.n++
	}
	if id < denseIDs {
		if id >= uint64(len(t.dense)) {
			t.dense = slices.Grow(t.dense, int(id)+1-len(t.dense))[:id+1]
		}
		t.dense[id] = v
		return
	}
	if t.sparse == nil {
		t.sparse = map[uint64]*T{}
	}
	t.sparse[id] = v
}

// sorted lists the entries by id.
func (t *byID[T]) sorted() []*T {
	out := make([]*T, 0, t.n)
	for _, v := range t.dense {
		if v != nil {
			out = append(out, v)
		}
	}
	if len(t.sparse) > 0 {
		ids := make([]uint64, 0, len(t.sparse))
		for id := range t.sparse {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			out = append(out, t.sparse[id])
		}
	}
	return out
}
