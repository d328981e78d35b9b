package archive

import (
	"archive/tar"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
)

// entry is one tar entry of a hand-built (possibly malicious) archive.
type entry struct {
	hdr  tar.Header
	body string
}

func file(name, body string) entry {
	return entry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(body))}, body: body}
}

func dir(name string) entry {
	return entry{hdr: tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755}}
}

func symlink(name, target string) entry {
	return entry{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777}}
}

func hardlink(name, target string) entry {
	return entry{hdr: tar.Header{Typeflag: tar.TypeLink, Name: name, Linkname: target, Mode: 0o644}}
}

func special(name string, typ byte) entry {
	return entry{hdr: tar.Header{Typeflag: typ, Name: name, Mode: 0o644, Devmajor: 1, Devminor: 3}}
}

// rawTar builds an uncompressed tar of entries.
func rawTar(tb testing.TB, entries ...entry) []byte {
	tb.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := e.hdr
		require.NoError(tb, tw.WriteHeader(&hdr))
		if e.body != "" {
			_, err := tw.Write([]byte(e.body))
			require.NoError(tb, err)
		}
	}
	require.NoError(tb, tw.Close())
	return buf.Bytes()
}

var testEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))

// tarZst builds a tar.zst of entries.
func tarZst(tb testing.TB, entries ...entry) []byte {
	tb.Helper()
	return testEncoder.EncodeAll(rawTar(tb, entries...), nil)
}

// readTree returns every file, directory and link under root, by slash path
// ("d/" for directories, "l -> target" for links).
func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := make(map[string]string)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, err := filepath.Rel(root, p)
		require.NoError(t, err)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			require.NoError(t, err)
			out[rel] = "-> " + target
		case d.IsDir():
			out[rel+"/"] = ""
		default:
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			out[rel] = string(b)
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// writeTree creates files (slash paths) under root with mode 0644.
func writeTree(t *testing.T, root string, files map[string][]byte) {
	t.Helper()
	for p, b := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, b, 0o644))
		require.NoError(t, os.Chmod(full, 0o644))
	}
}

func treeOf(files map[string][]byte) map[string]string {
	out := make(map[string]string)
	for p, b := range files {
		out[p] = string(b)
		for i := range len(p) {
			if p[i] == '/' {
				out[p[:i]+"/"] = ""
			}
		}
	}
	return out
}

func isInside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
