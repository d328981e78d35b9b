package archive

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzExtract feeds arbitrary tar streams (compressed here, so the fuzzer
// explores tar structure rather than zstd framing) to ExtractTo and Unpack,
// and asserts nothing is ever written outside the target directory, no link
// inside points out of it and no special file is created.
func FuzzExtract(f *testing.F) {
	for _, tc := range unsafeArchives {
		f.Add(rawTar(f, tc.entries...))
	}
	f.Add(rawTar(f, dir("a/"), file("a/f", "x"), symlink("a/l", "f"), hardlink("h", "a/f")))
	f.Add(rawTar(f, symlink("l", "."), file("l/x", "through a loop")))
	f.Add(rawTar(f, file("f", "1"), symlink("f", "../outside/secret"), file("f", "2")))

	f.Fuzz(func(t *testing.T, raw []byte) {
		data := testEncoder.EncodeAll(raw, nil)
		files, err := Unpack(data)
		if err == nil {
			for p := range files {
				require.NoError(t, CheckPath(p))
			}
		}

		parent := t.TempDir()
		outside := filepath.Join(parent, "outside")
		require.NoError(t, os.Mkdir(outside, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644))
		target := filepath.Join(parent, "root")
		_ = ExtractTo(bytes.NewReader(data), target) // refusing is fine; escaping is not

		names, err := os.ReadDir(parent)
		require.NoError(t, err)
		require.Len(t, names, 2, "only root and outside in the parent")
		require.Equal(t, map[string]string{"secret": "s"}, readTree(t, outside))

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
			}
			return nil
		})
		if !os.IsNotExist(err) {
			require.NoError(t, err)
		}
	})
}
