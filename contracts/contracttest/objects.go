package contracttest

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// Objects runs the ports.Objects suite. newObjects returns an empty bucket.
func Objects(t *testing.T, newObjects func(t *testing.T) ports.Objects) {
	t.Run("PutGetExactBytes", func(t *testing.T) {
		x := newObjects(t)
		ctx := t.Context()
		cases := map[string][]byte{
			"archives/a/op/empty":        {},
			"archives/a/op/binary":       {0, 1, 2, 0xff, 0, '\n', '\r', 0x80},
			"archives/a/op/home.tar.zst": bytes.Repeat([]byte("0123456789abcdef"), 64<<10), // 1 MiB
		}
		for key, data := range cases {
			require.NoError(t, x.Put(ctx, key, data), key)
		}
		for key, data := range cases {
			got, err := x.Get(ctx, key)
			require.NoError(t, err, key)
			require.Len(t, got, len(data), key)
			require.True(t, bytes.Equal(data, got), "%s: bytes differ", key)
		}
	})

	t.Run("PutAndGetDoNotAlias", func(t *testing.T) {
		x := newObjects(t)
		ctx := t.Context()
		data := []byte("original")
		require.NoError(t, x.Put(ctx, "k", data))
		data[0] = 'X'
		got, err := x.Get(ctx, "k")
		require.NoError(t, err)
		require.Equal(t, "original", string(got), "changing the caller's slice after Put changed the object")
		got[0] = 'Y'
		again, err := x.Get(ctx, "k")
		require.NoError(t, err)
		require.Equal(t, "original", string(again), "changing a returned slice changed the object")
	})

	t.Run("GetMissingIsNotFound", func(t *testing.T) {
		x := newObjects(t)
		ctx := t.Context()
		_, err := x.Get(ctx, "archives/none/op/home.tar.zst")
		require.ErrorIs(t, err, contracts.ErrNotFound)
		require.NoError(t, x.Put(ctx, "archives/none/op/home.tar.zst.meta", []byte("sha256:00")))
		_, err = x.Get(ctx, "archives/none/op/home.tar.zst")
		require.ErrorIs(t, err, contracts.ErrNotFound, "a key that is only a prefix of another is still missing")
	})

	t.Run("Head", func(t *testing.T) {
		x := newObjects(t)
		ctx := t.Context()
		ok, err := x.Head(ctx, "k")
		require.NoError(t, err)
		require.False(t, ok)
		require.NoError(t, x.Put(ctx, "k", []byte("v")))
		ok, err = x.Head(ctx, "k")
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, x.Put(ctx, "empty", nil))
		ok, err = x.Head(ctx, "empty")
		require.NoError(t, err)
		require.True(t, ok, "an empty object exists")
		require.NoError(t, x.Delete(ctx, "k"))
		ok, err = x.Head(ctx, "k")
		require.NoError(t, err)
		require.False(t, ok)
	})

	t.Run("ListByPrefixSortedWithSizes", func(t *testing.T) {
		x := newObjects(t)
		ctx := t.Context()
		// Put out of order; nested keys and a prefix that is a prefix of a
		// longer workspace id.
		put := []struct {
			key  string
			size int
		}{
			{"archives/b/op1/home.tar.zst.meta", 71},
			{"archives/a/op2/home.tar.zst", 5},
			{"archives/ab/op1/home.tar.zst", 3},
			{"archives/a/op1/home.tar.zst.meta", 71},
			{"archives/a/op1/home.tar.zst", 1000},
			{"other/x", 1},
			{"archives/a/op3/deep/er/file", 0},
		}
		for _, p := range put {
			require.NoError(t, x.Put(ctx, p.key, bytes.Repeat([]byte{'z'}, p.size)), p.key)
		}
		sizes := make(map[string]int64, len(put))
		for _, p := range put {
			sizes[p.key] = int64(p.size)
		}
		want := func(keys ...string) []ports.ObjectInfo {
			out := make([]ports.ObjectInfo, 0, len(keys))
			for _, k := range keys {
				out = append(out, ports.ObjectInfo{Key: k, Size: sizes[k]})
			}
			return out
		}
		list := func(prefix string) []ports.ObjectInfo {
			t.Helper()
			got, err := x.List(ctx, prefix)
			require.NoError(t, err, prefix)
			return got
		}
		require.Equal(t, want(
			"archives/a/op1/home.tar.zst",
			"archives/a/op1/home.tar.zst.meta",
			"archives/a/op2/home.tar.zst",
			"archives/a/op3/deep/er/file",
			"archives/ab/op1/home.tar.zst",
			"archives/b/op1/home.tar.zst.meta",
		), list(contracts.ArchivePrefix))
		require.Equal(t, want(
			"archives/a/op1/home.tar.zst",
			"archives/a/op1/home.tar.zst.meta",
			"archives/a/op2/home.tar.zst",
			"archives/a/op3/deep/er/file",
		), list("archives/a/"))
		require.Equal(t, want(
			"archives/a/op1/home.tar.zst",
			"archives/a/op1/home.tar.zst.meta",
			"archives/a/op2/home.tar.zst",
			"archives/a/op3/deep/er/file",
			"archives/ab/op1/home.tar.zst",
		), list("archives/a"), "a prefix is a string prefix, not a directory")
		require.Equal(t, want(
			"archives/a/op1/home.tar.zst",
			"archives/a/op1/home.tar.zst.meta",
		), list("archives/a/op1/home.tar.zst"))
		require.Len(t, list(""), len(put), "the empty prefix lists everything")
		require.Empty(t, list("archives/c/"))
	})

	t.Run("ListOfEmptyBucket", func(t *testing.T) {
		x := newObjects(t)
		got, err := x.List(t.Context(), "")
		require.NoError(t, err)
		require.Empty(t, got)
	})

	t.Run("DeleteAbsentIsSuccess", func(t *testing.T) {
		x := newObjects(t)
		ctx := t.Context()
		require.NoError(t, x.Delete(ctx, "never/was"))
		require.NoError(t, x.Put(ctx, "k", []byte("v")))
		require.NoError(t, x.Put(ctx, "k2", []byte("v2")))
		require.NoError(t, x.Delete(ctx, "k"))
		_, err := x.Get(ctx, "k")
		require.ErrorIs(t, err, contracts.ErrNotFound)
		require.NoError(t, x.Delete(ctx, "k"), "deleting twice")
		got, err := x.Get(ctx, "k2")
		require.NoError(t, err, "deleting one key left another alone")
		require.Equal(t, "v2", string(got))
		list, err := x.List(ctx, "")
		require.NoError(t, err)
		require.Equal(t, []ports.ObjectInfo{{Key: "k2", Size: 2}}, list)
	})

	t.Run("Overwrite", func(t *testing.T) {
		x := newObjects(t)
		ctx := t.Context()
		require.NoError(t, x.Put(ctx, "k", []byte("a longer first version")))
		require.NoError(t, x.Put(ctx, "k", []byte("second")))
		got, err := x.Get(ctx, "k")
		require.NoError(t, err)
		require.Equal(t, "second", string(got))
		list, err := x.List(ctx, "k")
		require.NoError(t, err)
		require.Equal(t, []ports.ObjectInfo{{Key: "k", Size: 6}}, list, "one object with the new size")
	})
}
