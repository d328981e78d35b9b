package workspace

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// Objects is the archive bucket (ports.Objects): real bytes by key.
type Objects struct {
	w    *World
	data map[string][]byte
	keys []string // sorted keys of data
	// corrupted counts the corruptions of each object since it was
	// written, so that a second one flips another byte and never undoes
	// the first.
	corrupted map[string]int
}

var _ ports.Objects = (*Objects)(nil)

// Put stores a copy of data under key (ports.Objects).
func (x *Objects) Put(ctx context.Context, key string, data []byte) error {
	return x.put(ctx, "", key, data)
}

// Get returns a copy of key's data, or contracts.ErrNotFound (ports.Objects).
func (x *Objects) Get(ctx context.Context, key string) ([]byte, error) { return x.get(ctx, "", key) }

// Head reports whether key exists (ports.Objects).
func (x *Objects) Head(ctx context.Context, key string) (bool, error) { return x.head(ctx, "", key) }

// List returns every object under prefix, ordered by key (ports.Objects).
func (x *Objects) List(ctx context.Context, prefix string) ([]ports.ObjectInfo, error) {
	return x.list(ctx, "", prefix)
}

// Delete removes key; absent is success (ports.Objects).
func (x *Objects) Delete(ctx context.Context, key string) error { return x.delete(ctx, "", key) }

// Corrupt flips the bits of one byte of key's data, the middle one first
// and a further one at each later corruption, so that corruptions never
// cancel (an empty object gains a byte); a missing key is left alone
// (world method).
func (x *Objects) Corrupt(key string) {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	old, ok := x.data[key]
	if !ok {
		return
	}
	bad := slices.Clone(old)
	if len(bad) == 0 {
		bad = []byte{0xff}
	} else {
		if x.corrupted == nil {
			x.corrupted = map[string]int{}
		}
		// The n-th corruption since the object was written flips the n-th
		// byte after the middle: corruptions accumulate, never cancel.
		bad[(len(bad)/2+x.corrupted[key])%len(bad)] ^= 0xff
		x.corrupted[key]++
	}
	x.data[key] = bad
	x.w.recordFault("objects.Corrupt", workspaceOf(key), key)
}

// Remove deletes key behind everyone's back (world method).
func (x *Objects) Remove(key string) {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	x.deleteLocked(key)
	x.w.recordFault("objects.Remove", workspaceOf(key), key)
}

// Keys lists every key, sorted (world method).
func (x *Objects) Keys() []string {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	return slices.Clone(x.keys)
}

// Peek returns a copy of key's data without a call being made (world
// method, for checkers).
func (x *Objects) Peek(key string) ([]byte, bool) {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	b, ok := x.data[key]
	return slices.Clone(b), ok
}

func (x *Objects) putLocked(key string, data []byte) {
	if _, ok := x.data[key]; !ok {
		i, _ := slices.BinarySearch(x.keys, key)
		x.keys = slices.Insert(x.keys, i, key)
	}
	x.data[key] = data
	delete(x.corrupted, key)
}

func (x *Objects) deleteLocked(key string) bool {
	if _, ok := x.data[key]; !ok {
		return false
	}
	delete(x.data, key)
	if i, found := slices.BinarySearch(x.keys, key); found {
		x.keys = slices.Delete(x.keys, i, i+1)
	}
	return true
}

// workspaceOf is the workspace an archive key belongs to, or "".
func workspaceOf(key string) string {
	id, _, _ := contracts.ParseArchiveKey(key)
	return id
}

func (x *Objects) put(ctx context.Context, inst, key string, data []byte) error {
	ws := workspaceOf(key)
	if err := x.w.gate(ctx, mObjPut, inst, ws, key); err != nil {
		x.w.recordCall(inst, mObjPut, ws, key, "", err)
		return err
	}
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	x.putLocked(key, slices.Clone(data))
	x.w.recordCall(inst, mObjPut, ws, key, strconv.Itoa(len(data))+" bytes", nil)
	return nil
}

func (x *Objects) get(ctx context.Context, inst, key string) ([]byte, error) {
	ws := workspaceOf(key)
	if err := x.w.gate(ctx, mObjGet, inst, ws, key); err != nil {
		x.w.recordCall(inst, mObjGet, ws, key, "", err)
		return nil, err
	}
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	b, ok := x.data[key]
	if !ok {
		err := fmt.Errorf("get object %s: %w", key, contracts.ErrNotFound)
		x.w.recordCall(inst, mObjGet, ws, key, "", err)
		return nil, err
	}
	x.w.recordCall(inst, mObjGet, ws, key, strconv.Itoa(len(b))+" bytes", nil)
	return slices.Clone(b), nil
}

func (x *Objects) head(ctx context.Context, inst, key string) (bool, error) {
	ws := workspaceOf(key)
	if err := x.w.gate(ctx, mObjHead, inst, ws, key); err != nil {
		x.w.recordCall(inst, mObjHead, ws, key, "", err)
		return false, err
	}
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	_, ok := x.data[key]
	x.w.recordCall(inst, mObjHead, ws, key, strconv.FormatBool(ok), nil)
	return ok, nil
}

func (x *Objects) list(ctx context.Context, inst, prefix string) ([]ports.ObjectInfo, error) {
	ws := workspaceOf(prefix)
	if err := x.w.gate(ctx, mObjList, inst, ws, prefix); err != nil {
		x.w.recordCall(inst, mObjList, ws, prefix, "", err)
		return nil, err
	}
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	var out []ports.ObjectInfo
	i, _ := slices.BinarySearch(x.keys, prefix)
	for ; i < len(x.keys) && strings.HasPrefix(x.keys[i], prefix); i++ {
		k := x.keys[i]
		out = append(out, ports.ObjectInfo{Key: k, Size: int64(len(x.data[k]))})
	}
	x.w.recordCall(inst, mObjList, ws, prefix, strconv.Itoa(len(out)), nil)
	return out, nil
}

func (x *Objects) delete(ctx context.Context, inst, key string) error {
	ws := workspaceOf(key)
	if err := x.w.gate(ctx, mObjDelete, inst, ws, key); err != nil {
		x.w.recordCall(inst, mObjDelete, ws, key, "", err)
		return err
	}
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	result := "absent"
	if x.deleteLocked(key) {
		result = "deleted"
	}
	x.w.recordCall(inst, mObjDelete, ws, key, result, nil)
	return nil
}
