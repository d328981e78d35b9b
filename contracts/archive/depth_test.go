package archive

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// deepName is a path of n components: n-1 directories, then "f".
func deepName(n int) string {
	return strings.Repeat("d/", n-1) + "f"
}

// A file deeper than MaxDepth is refused, by ExtractTo and Unpack alike,
// before anything is written (issue 23: a 146-byte archive nesting one
// file 4,000 directories deep took 137 s to extract); Pack and PackDir
// refuse to archive such a tree, which could not be restored. A file
// exactly MaxDepth deep extracts correctly.
func TestDeepPathsAreBounded(t *testing.T) {
	deep := tarZst(t, file(deepName(4000), "x"))
	out := filepath.Join(t.TempDir(), "staging")
	err := ExtractTo(bytes.NewReader(deep), out, Limits{})
	require.ErrorIs(t, err, ErrUnsafeEntry)
	require.ErrorContains(t, err, fmt.Sprintf("a path 4000 components deep (at most %d)", MaxDepth))
	entries, rerr := os.ReadDir(out)
	require.NoError(t, rerr)
	require.Empty(t, entries, "nothing was written")
	_, err = Unpack(deep)
	require.ErrorIs(t, err, ErrUnsafeEntry)

	_, err = Pack(map[string][]byte{deepName(MaxDepth + 1): []byte("x")})
	require.ErrorIs(t, err, ErrInvalidPath)

	// Exactly MaxDepth components: extracted, and packed again to the
	// same bytes.
	files := map[string][]byte{deepName(MaxDepth): []byte("deep"), "d/g": []byte("shallow")}
	data, err := Pack(files)
	require.NoError(t, err)
	out = filepath.Join(t.TempDir(), "staging")
	require.NoError(t, ExtractTo(bytes.NewReader(data), out, Limits{}))
	require.Equal(t, treeOf(files), readTree(t, out))
	got, err := Unpack(data)
	require.NoError(t, err)
	require.Equal(t, files, got)
	var again bytes.Buffer
	_, err = PackDir(out, &again)
	require.NoError(t, err)
	require.Equal(t, data, again.Bytes())
}

// PackDir refuses a real tree deeper than MaxDepth (the archive would be
// one no restore accepts).
func TestPackDirRefusesTooDeepTrees(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, filepath.FromSlash(strings.Repeat("d/", MaxDepth+1)))
	require.NoError(t, os.MkdirAll(p, 0o755))
	_, err := PackDir(root, &bytes.Buffer{})
	require.ErrorIs(t, err, ErrInvalidPath)
}

// Data that is no tar.zst is ErrCorrupt (issue 23: a 0-byte .tar.zst
// extracted as success): empty, not zstd, a truncated stream.
func TestCorruptArchivesAreErrors(t *testing.T) {
	good, err := Pack(sampleFiles())
	require.NoError(t, err)
	for name, data := range map[string][]byte{
		"0 bytes":   nil,
		"not zstd":  []byte("this is not an archive"),
		"truncated": good[:len(good)/2],
	} {
		err := ExtractTo(bytes.NewReader(data), filepath.Join(t.TempDir(), "x"), Limits{})
		require.ErrorIs(t, err, ErrCorrupt, name)
		_, err = Unpack(data)
		require.ErrorIs(t, err, ErrCorrupt, name)
	}
}

// BenchmarkExtractEntries extracts archives of 256 to 4,096 files spread
// over directories up to 64 deep: ns/entry stays flat as the archive
// grows (extraction is linear in its entries). BenchmarkExtractDepth holds
// the files at 512 and varies the depth: ns/entry does not grow with it.
// Run: go test ./contracts/archive/ -run '^$' -bench Extract -benchtime 10x
func BenchmarkExtractEntries(b *testing.B) {
	for _, n := range []int{256, 1024, 4096} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			files := map[string][]byte{}
			for i := range n {
				files[strings.Repeat("d/", 1+i%63)+fmt.Sprintf("f%d", i)] = []byte("x")
			}
			data, err := Pack(files)
			require.NoError(b, err)
			for b.Loop() {
				b.StopTimer()
				out := filepath.Join(b.TempDir(), "x")
				b.StartTimer()
				if err := ExtractTo(bytes.NewReader(data), out, Limits{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n+63), "ns/entry")
		})
	}
}

func BenchmarkExtractDepth(b *testing.B) {
	for _, depth := range []int{16, 64, 256} {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			// 512 files, each in a directory of the chain: entries grow
			// with depth only through the directories' own entries.
			files := map[string][]byte{}
			for i := range 512 {
				d := 1 + i%(depth-1)
				files[strings.Repeat("d/", d)+fmt.Sprintf("f%d", i)] = []byte("x")
			}
			data, err := Pack(files)
			require.NoError(b, err)
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				out := filepath.Join(b.TempDir(), "x")
				b.StartTimer()
				if err := ExtractTo(bytes.NewReader(data), out, Limits{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(512+depth), "ns/entry")
		})
	}
}

// BenchmarkExtractOneDeepFile is issue 23's archive at the deepest depth
// allowed: one file MaxDepth components deep.
func BenchmarkExtractOneDeepFile(b *testing.B) {
	data := tarZst(b, file(deepName(MaxDepth), "x"))
	for b.Loop() {
		b.StopTimer()
		out := filepath.Join(b.TempDir(), "x")
		b.StartTimer()
		if err := ExtractTo(bytes.NewReader(data), out, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
