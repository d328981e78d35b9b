package archive

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// fuzzLimits bound every extraction of the fuzzer: whatever the input,
// no more than this is written.
var fuzzLimits = Limits{MaxBytes: 1 << 20, MaxEntries: 64}

// fuzzScratch is where the fuzzer extracts: tmpfs when the machine has one
// (extraction is file-system work; tmpfs keeps each execution cheap), else
// the test's temporary directory.
func fuzzScratch(f *testing.F) string {
	f.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		dir, err := os.MkdirTemp("/dev/shm", "converge-fuzz-")
		if err == nil {
			f.Cleanup(func() { _ = os.RemoveAll(dir) })
			return dir
		}
	}
	return f.TempDir()
}

// FuzzExtract feeds arbitrary tar streams (compressed here, so the fuzzer
// explores tar structure rather than zstd framing) to ExtractTo and Unpack,
// and asserts nothing is ever written outside the target directory, no link
// inside points out of it, no special file is created, and never more file
// bytes than the limits allow (no unbounded write, sparse or not).
//
// Each worker extracts into one scratch directory, emptied between
// executions, beside an "outside" directory holding a secret that must
// stay as it is: no temporary directory is made per execution, so an
// execution costs about the extraction itself.
func FuzzExtract(f *testing.F) {
	for _, tc := range unsafeArchives {
		f.Add(rawTar(f, tc.entries...))
	}
	f.Add(rawTar(f, dir("a/"), file("a/f", "x"), symlink("a/l", "f"), hardlink("h", "a/f")))
	f.Add(rawTar(f, symlink("l", "."), file("l/x", "through a loop")))
	f.Add(rawTar(f, file("f", "1"), symlink("f", "../outside/secret"), file("f", "2")))
	bomb, err := os.ReadFile(bombFixture)
	require.NoError(f, err)
	raw, err := decodeAll(bomb)
	require.NoError(f, err)
	f.Add(bytes.TrimRight(raw, "\x00")) // the sparse bomb, without its record padding

	x := newFuzzScratch(f, fuzzScratch(f))
	f.Fuzz(func(t *testing.T, raw []byte) { x.check(t, raw) })
}

// fuzzRig is one worker's scratch directory: root, the extraction target,
// and outside, holding a secret.
type fuzzRig struct{ scratch, outside, secret, target string }

func newFuzzScratch(tb testing.TB, scratch string) fuzzRig {
	tb.Helper()
	x := fuzzRig{scratch: scratch, outside: filepath.Join(scratch, "outside"), target: filepath.Join(scratch, "root")}
	x.secret = filepath.Join(x.outside, "secret")
	require.NoError(tb, os.MkdirAll(x.outside, 0o755))
	require.NoError(tb, os.WriteFile(x.secret, []byte("s"), 0o644))
	return x
}

// check is one execution of FuzzExtract.
func (x fuzzRig) check(t testing.TB, raw []byte) {
	scratch, outside, secret, target := x.scratch, x.outside, x.secret, x.target
	{
		data := testEncoder.EncodeAll(raw, nil)
		files, err := UnpackWithin(data, fuzzLimits)
		if err == nil {
			for p := range files {
				require.NoError(t, CheckPath(p))
			}
			require.LessOrEqual(t, len(files), int(fuzzLimits.MaxEntries))
		}

		require.NoError(t, os.RemoveAll(target))
		_ = ExtractTo(bytes.NewReader(data), target, fuzzLimits) // refusing is fine; escaping is not

		names, err := os.ReadDir(scratch)
		require.NoError(t, err)
		require.Len(t, names, 2, "only root and outside in the scratch directory")
		inOutside, err := os.ReadDir(outside)
		require.NoError(t, err)
		require.Len(t, inOutside, 1, "nothing added beside the secret")
		got, err := os.ReadFile(secret)
		require.NoError(t, err)
		require.Equal(t, "s", string(got), "the secret is untouched")

		var (
			written int64
			seen    []fs.FileInfo
		)
		err = filepath.WalkDir(target, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch {
			case d.Type()&fs.ModeSymlink != 0:
				link, err := os.Readlink(p)
				require.NoError(t, err)
				require.False(t, filepath.IsAbs(link), "absolute link %s -> %s", p, link)
				require.True(t, isInside(target, filepath.Join(filepath.Dir(p), link)), "link %s -> %s escapes", p, link)
				if real, err := filepath.EvalSymlinks(p); err == nil {
					realTarget, err := filepath.EvalSymlinks(target)
					require.NoError(t, err)
					require.True(t, isInside(realTarget, real), "link %s resolves to %s", p, real)
				}
			case d.Type()&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeSocket) != 0:
				t.Fatalf("special file %s", p)
			case d.Type().IsRegular():
				fi, err := d.Info()
				require.NoError(t, err)
				for _, o := range seen {
					if os.SameFile(o, fi) {
						return nil // a hard link of a file counted already
					}
				}
				seen = append(seen, fi)
				written += fi.Size()
			}
			return nil
		})
		if !os.IsNotExist(err) {
			require.NoError(t, err)
		}
		require.LessOrEqual(t, written, fuzzLimits.MaxBytes, "no unbounded write")
	}
}

// BenchmarkFuzzExtractExec times one FuzzExtract execution on its seeds.
func BenchmarkFuzzExtractExec(b *testing.B) {
	var seeds [][]byte
	for _, tc := range unsafeArchives {
		seeds = append(seeds, rawTar(b, tc.entries...))
	}
	x := newFuzzScratch(b, benchScratch(b))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x.check(b, seeds[i%len(seeds)])
	}
}

func benchScratch(b *testing.B) string {
	b.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "converge-bench-")
	if err != nil {
		return b.TempDir()
	}
	b.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
