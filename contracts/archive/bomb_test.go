package archive

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// bombFixture is a 212-byte tar.zst holding one PAX sparse entry that
// declares 20 GiB (made with GNU tar --sparse from a 20 GiB hole and one
// byte). Before extraction was bounded, ExtractTo wrote it out as a 20 GiB
// file without error.
const bombFixture = "testdata/sparse-bomb-20GiB.tar.zst"

// treeBytes is the sum of the sizes of the regular files under root, each
// file counted once however many hard links name it.
func treeBytes(t *testing.T, root string) int64 {
	t.Helper()
	var (
		n    int64
		seen []fs.FileInfo
	)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		for _, o := range seen {
			if os.SameFile(o, fi) {
				return nil
			}
		}
		seen = append(seen, fi)
		n += fi.Size()
		return nil
	})
	if !os.IsNotExist(err) {
		require.NoError(t, err)
	}
	return n
}

func TestSparseBombIsRefused(t *testing.T) {
	data, err := os.ReadFile(bombFixture)
	require.NoError(t, err)
	require.Less(t, len(data), 256, "a small committed fixture")

	for name, lim := range map[string]Limits{
		"no quota":             {},
		"a generous quota":     {MaxBytes: 64 << 30, MaxEntries: 1 << 20},
		"an old, unsized meta": {Declared: &Meta{SHA256: strings.Repeat("0", 64)}},
	} {
		target := filepath.Join(t.TempDir(), "root")
		err := ExtractTo(bytes.NewReader(data), target, lim)
		require.ErrorIs(t, err, ErrUnsafeEntry, name)
		require.Contains(t, err.Error(), "sparse", name)
		require.Zero(t, treeBytes(t, target), "%s: nothing written", name)
	}
	_, err = Unpack(data)
	require.ErrorIs(t, err, ErrUnsafeEntry, "the fakes' in-memory restore refuses it too")

	// Declared in its .meta as what it is not, it lies about itself.
	meta, err := MetaOf(data)
	require.NoError(t, err)
	require.Equal(t, int64(20<<30), meta.Bytes, "the entry declares 20 GiB")
	meta.Bytes = 1
	err = ExtractTo(bytes.NewReader(data), filepath.Join(t.TempDir(), "root"), Limits{Declared: &meta})
	require.ErrorIs(t, err, ErrUnsafeEntry, "refused as sparse before anything is counted")
}

// zeros is a tar.zst of one regular file of n zero bytes: a few KiB that
// decompress to n.
func zeros(t *testing.T, n int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "zeros", Mode: 0o644, Size: n}))
	_, err := io.CopyN(tw, zeroReader{}, n)
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	return testEncoder.EncodeAll(buf.Bytes(), nil)
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestQuotaStopsAtTheFirstExcessBeforeWriting(t *testing.T) {
	bomb := zeros(t, 64<<20)
	require.Less(t, len(bomb), 16<<10, "64 MiB of zeros compress to little")
	target := filepath.Join(t.TempDir(), "root")
	err := ExtractTo(bytes.NewReader(bomb), target, Limits{MaxBytes: 1 << 20, MaxEntries: 100})
	require.ErrorIs(t, err, ErrQuotaExceeded)
	require.Zero(t, treeBytes(t, target), "the entry over the quota is not started")
	_, err = UnpackWithin(bomb, Limits{MaxBytes: 1 << 20})
	require.ErrorIs(t, err, ErrQuotaExceeded)

	files := map[string][]byte{"a": bytes.Repeat([]byte("a"), 600), "b": bytes.Repeat([]byte("b"), 600), "c": []byte("c")}
	data, err := Pack(files)
	require.NoError(t, err)
	target = filepath.Join(t.TempDir(), "root")
	err = ExtractTo(bytes.NewReader(data), target, Limits{MaxBytes: 1000})
	require.ErrorIs(t, err, ErrQuotaExceeded)
	require.Equal(t, int64(600), treeBytes(t, target), "a fits, b would not: stopped at b")

	err = ExtractTo(bytes.NewReader(data), filepath.Join(t.TempDir(), "root"), Limits{MaxEntries: 2})
	require.ErrorIs(t, err, ErrQuotaExceeded, "three entries over a quota of two")
	require.NoError(t, ExtractTo(bytes.NewReader(data), filepath.Join(t.TempDir(), "root"), Limits{MaxBytes: 1201, MaxEntries: 3}),
		"exactly at the quota is fine")
}

func TestDeclaredMetaBindsTheArchive(t *testing.T) {
	files := sampleFiles()
	data, meta, err := PackMeta(files)
	require.NoError(t, err)
	require.True(t, meta.Sized)

	ok := meta
	require.NoError(t, ExtractTo(bytes.NewReader(data), filepath.Join(t.TempDir(), "root"), Limits{Declared: &ok}))
	got, err := UnpackWithin(data, Limits{Declared: &ok})
	require.NoError(t, err)
	require.Equal(t, files, got)

	for name, mut := range map[string]func(m *Meta){
		"fewer bytes than it holds":   func(m *Meta) { m.Bytes-- },
		"fewer entries than it holds": func(m *Meta) { m.Entries-- },
		"more bytes than it holds":    func(m *Meta) { m.Bytes++ },
		"more entries than it holds":  func(m *Meta) { m.Entries++ },
	} {
		lie := meta
		mut(&lie)
		target := filepath.Join(t.TempDir(), "root")
		require.ErrorIs(t, ExtractTo(bytes.NewReader(data), target, Limits{Declared: &lie}), ErrMetaMismatch, name)
		_, err := UnpackWithin(data, Limits{Declared: &lie})
		require.ErrorIs(t, err, ErrMetaMismatch, name)
		if lie.Bytes < meta.Bytes || lie.Entries < meta.Entries {
			require.LessOrEqual(t, treeBytes(t, target), lie.Bytes, "%s: never more than declared", name)
		}
	}
	// A .meta of the original format declares nothing: only the quota binds.
	old := Meta{SHA256: meta.SHA256}
	require.NoError(t, ExtractTo(bytes.NewReader(data), filepath.Join(t.TempDir(), "root"), Limits{Declared: &old}))
}

func TestOnlyRegularFilesCarryData(t *testing.T) {
	// A directory claiming data would have the reader skip (and
	// decompress) it without a byte written: refused, not skipped.
	raw := retype(rawTar(t, file("d", "abc")), tar.TypeDir)
	data := testEncoder.EncodeAll(raw, nil)
	require.ErrorIs(t, ExtractTo(bytes.NewReader(data), filepath.Join(t.TempDir(), "root"), Limits{}), ErrUnsupportedEntry)
	_, err := Unpack(data)
	require.ErrorIs(t, err, ErrUnsupportedEntry)
}

func TestBoundedReader(t *testing.T) {
	r := &boundedReader{r: zeroReader{}, n: 1000, over: ErrQuotaExceeded}
	n, err := io.Copy(io.Discard, r)
	require.ErrorIs(t, err, ErrQuotaExceeded)
	require.LessOrEqual(t, n, int64(1001))
	_, err = r.Read(make([]byte, 10))
	require.ErrorIs(t, err, ErrQuotaExceeded, "and stays failed")

	n, err = io.Copy(io.Discard, &boundedReader{r: io.LimitReader(zeroReader{}, 1000), n: 1000, over: ErrQuotaExceeded})
	require.NoError(t, err, "exactly the bound is fine")
	require.Equal(t, int64(1000), n)
}

// retype changes the type flag of the first header of raw, which no
// tar.Writer would produce with data, and fixes its checksum.
func retype(raw []byte, typ byte) []byte {
	raw = bytes.Clone(raw)
	raw[156] = typ
	copy(raw[148:156], "        ")
	sum := 0
	for _, c := range raw[:512] {
		sum += int(c)
	}
	copy(raw[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return raw
}
