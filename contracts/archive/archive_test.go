package archive

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func sampleFiles() map[string][]byte {
	return map[string][]byte{
		"notes.txt":                              []byte("hello"),
		"a/b/c.txt":                              []byte("deep"),
		"a-b/x":                                  []byte("sibling sorting before a/ by bytes"),
		"a/empty":                                {},
		"big.bin":                                bytes.Repeat([]byte("0123456789abcdef"), 40_000),
		"dir with space/ü.md":                    []byte("unicode"),
		strings.Repeat("long/", 30) + "name.txt": []byte("long path needs PAX"),
	}
}

func TestPackUnpackRoundTrip(t *testing.T) {
	for name, files := range map[string]map[string][]byte{
		"sample": sampleFiles(),
		"empty":  {},
		"one":    {"f": []byte("x")},
	} {
		t.Run(name, func(t *testing.T) {
			data, err := Pack(files)
			require.NoError(t, err)
			got, err := Unpack(data)
			require.NoError(t, err)
			require.Equal(t, len(files), len(got))
			for p, b := range files {
				require.Equal(t, b, got[p], p)
			}
		})
	}
}

func TestPackIsDeterministic(t *testing.T) {
	files := sampleFiles()
	first, err := Pack(files)
	require.NoError(t, err)
	for range 5 {
		// A fresh map has a different iteration order.
		again := make(map[string][]byte, len(files))
		for p, b := range files {
			again[p] = bytes.Clone(b)
		}
		data, err := Pack(again)
		require.NoError(t, err)
		require.Equal(t, first, data)
	}
	other, err := Pack(map[string][]byte{"notes.txt": []byte("hellO")})
	require.NoError(t, err)
	require.NotEqual(t, first, other)
}

func TestPackWritesFixedHeaders(t *testing.T) {
	data, err := Pack(map[string][]byte{"b/f": []byte("1"), "a": []byte("2")})
	require.NoError(t, err)
	raw, err := decodeAll(data)
	require.NoError(t, err)
	tr := tar.NewReader(bytes.NewReader(raw))
	var names []string
	for {
		hdr, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, hdr.Name)
		require.Equal(t, int64(0), hdr.ModTime.Unix(), hdr.Name)
		require.Zero(t, hdr.Uid)
		require.Zero(t, hdr.Gid)
		if hdr.Typeflag == tar.TypeDir {
			require.Equal(t, int64(0o755), hdr.Mode)
		} else {
			require.Equal(t, int64(0o644), hdr.Mode)
		}
	}
	require.Equal(t, []string{"a", "b/", "b/f"}, names)
}

func TestPackDirMatchesPack(t *testing.T) {
	files := sampleFiles()
	root := t.TempDir()
	writeTree(t, root, files)
	var buf bytes.Buffer
	meta, err := PackDir(root, &buf)
	require.NoError(t, err)
	want, wantMeta, err := PackMeta(files)
	require.NoError(t, err)
	require.Equal(t, want, buf.Bytes(), "a directory and a map of the same tree pack alike")
	require.Equal(t, wantMeta, meta, "and declare the same .meta")
	require.Equal(t, "sha256:"+meta.SHA256, Checksum(buf.Bytes()))
	fromData, err := MetaOf(buf.Bytes())
	require.NoError(t, err)
	require.Equal(t, meta, fromData, "what the archive unpacks to, counted from its bytes")
}

func TestPackDirKeepsLinksAndSkipsSpecialFiles(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string][]byte{"bin/run.sh": []byte("#!/bin/sh\n"), "data/x": []byte("x")})
	require.NoError(t, os.Chmod(filepath.Join(root, "bin/run.sh"), 0o750))
	require.NoError(t, os.Symlink("../data/x", filepath.Join(root, "bin/x")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "data/pipe"), 0o644))

	var buf bytes.Buffer
	_, err := PackDir(root, &buf)
	require.NoError(t, err)

	out := filepath.Join(t.TempDir(), "out")
	require.NoError(t, ExtractTo(bytes.NewReader(buf.Bytes()), out, Limits{}))
	require.Equal(t, map[string]string{
		"bin/":       "",
		"bin/run.sh": "#!/bin/sh\n",
		"bin/x":      "-> ../data/x",
		"data/":      "",
		"data/x":     "x",
	}, readTree(t, out))
	fi, err := os.Stat(filepath.Join(out, "bin/run.sh"))
	require.NoError(t, err)
	require.NotZero(t, fi.Mode().Perm()&0o100, "the executable bit survives")

	_, err = Unpack(buf.Bytes())
	require.ErrorIs(t, err, ErrUnsupportedEntry, "a map cannot hold a symbolic link")
}

func TestExtractToRoundTrip(t *testing.T) {
	files := sampleFiles()
	data, err := Pack(files)
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "staging")
	require.NoError(t, ExtractTo(bytes.NewReader(data), out, Limits{}))
	require.Equal(t, treeOf(files), readTree(t, out))
}

func TestPackRejectsInvalidPaths(t *testing.T) {
	for _, p := range []string{"", "/abs", "../up", "a/../b", "a/", "./a", "a//b", ".", "..", "nul\x00"} {
		_, err := Pack(map[string][]byte{p: []byte("x")})
		require.ErrorIs(t, err, ErrInvalidPath, "%q", p)
	}
	_, err := Pack(map[string][]byte{"a": []byte("file"), "a/b": []byte("under a file")})
	require.ErrorIs(t, err, ErrConflict)
}

// unsafeArchives are malicious archives every reader must refuse. Each
// tries to place something outside the root (the "outside" sibling of the
// target in the tests) or a special file inside it.
var unsafeArchives = []struct {
	name    string
	entries []entry
	// unpackErr is what Unpack reports when it differs from ErrUnsafeEntry
	// (it refuses every symbolic link, safe or not, as unsupported).
	unpackErr error
}{
	{name: "absolute name", entries: []entry{file("/tmp/evil", "x")}},
	{name: "dot-dot name", entries: []entry{file("../outside/evil", "x")}},
	{name: "dot-dot inside name", entries: []entry{file("a/../../outside/evil", "x")}},
	{name: "dot-dot directory", entries: []entry{dir("../outside/d/")}},
	{name: "absolute symlink", entries: []entry{symlink("l", "/etc")}},
	{name: "escaping symlink", entries: []entry{symlink("l", "../outside")}},
	{name: "deep escaping symlink", entries: []entry{dir("a/"), symlink("a/l", "../../outside")}},
	{name: "symlink stepping back", entries: []entry{symlink("s", "."), symlink("l", "s/../outside")}, unpackErr: ErrUnsupportedEntry},
	{name: "write through symlink", entries: []entry{dir("d/"), symlink("l", "d"), file("l/f", "x")}, unpackErr: ErrUnsupportedEntry},
	{name: "absolute hard link", entries: []entry{hardlink("h", "/etc/passwd")}},
	{name: "escaping hard link", entries: []entry{hardlink("h", "../outside/secret")}},
	{name: "hard link to missing file", entries: []entry{hardlink("h", "nothing")}},
	{name: "char device", entries: []entry{special("null", tar.TypeChar)}},
	{name: "block device", entries: []entry{special("sda", tar.TypeBlock)}},
	{name: "fifo", entries: []entry{special("pipe", tar.TypeFifo)}},
}

func TestUnsafeEntriesAreRefused(t *testing.T) {
	for _, tc := range unsafeArchives {
		t.Run(tc.name, func(t *testing.T) {
			data := tarZst(t, tc.entries...)

			_, err := Unpack(data)
			want := ErrUnsafeEntry
			if tc.unpackErr != nil {
				want = tc.unpackErr
			}
			require.ErrorIs(t, err, want)

			parent := t.TempDir()
			outside := filepath.Join(parent, "outside")
			require.NoError(t, os.Mkdir(outside, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644))
			target := filepath.Join(parent, "root")
			err = ExtractTo(bytes.NewReader(data), target, Limits{})
			require.ErrorIs(t, err, ErrUnsafeEntry)
			require.Equal(t, map[string]string{"secret": "s"}, readTree(t, outside), "nothing written outside")
		})
	}
}

func TestExtractToRefusesPreexistingSymlinkParent(t *testing.T) {
	parent := t.TempDir()
	target := filepath.Join(parent, "root")
	require.NoError(t, os.Mkdir(target, 0o755))
	require.NoError(t, os.Symlink(parent, filepath.Join(target, "up")))
	err := ExtractTo(bytes.NewReader(tarZst(t, file("up/evil", "x"))), target, Limits{})
	require.ErrorIs(t, err, ErrUnsafeEntry)
	require.NoFileExists(t, filepath.Join(parent, "evil"))
}

func TestExtractToAcceptsSafeLinksAndReplacesFiles(t *testing.T) {
	out := filepath.Join(t.TempDir(), "root")
	data := tarZst(t,
		dir("a/"), file("a/f", "v1"),
		symlink("a/up", "../b"), symlink("here", "a/f"),
		hardlink("a/h", "a/f"),
		file("a/f", "v2"), // a later entry of the same name wins
	)
	require.NoError(t, ExtractTo(bytes.NewReader(data), out, Limits{}))
	require.Equal(t, map[string]string{
		"a/":   "",
		"a/f":  "v2",
		"a/h":  "v1",
		"a/up": "-> ../b",
		"here": "-> a/f",
	}, readTree(t, out))

	got, err := Unpack(tarZst(t, file("f", "v"), hardlink("g", "f"), file("f", "w")))
	require.NoError(t, err)
	require.Equal(t, map[string][]byte{"f": []byte("w"), "g": []byte("v")}, got)
}

func TestExtractToDoesNotPreserveOwnersOrSpecialBits(t *testing.T) {
	e := file("f", "x")
	e.hdr.Uid, e.hdr.Gid, e.hdr.Uname = 4242, 4242, "mallory"
	e.hdr.Mode = 0o4777 // setuid
	out := filepath.Join(t.TempDir(), "root")
	require.NoError(t, ExtractTo(bytes.NewReader(tarZst(t, e)), out, Limits{}))
	fi, err := os.Lstat(filepath.Join(out, "f"))
	require.NoError(t, err)
	st, ok := fi.Sys().(*syscall.Stat_t)
	require.True(t, ok)
	require.Equal(t, uint32(os.Getuid()), st.Uid)
	require.Equal(t, uint32(os.Getgid()), st.Gid)
	require.Zero(t, fi.Mode()&os.ModeSetuid)
}

func TestConflictingEntries(t *testing.T) {
	data := tarZst(t, file("a", "file"), file("a/b", "under a file"))
	_, err := Unpack(data)
	require.ErrorIs(t, err, ErrConflict)
	require.ErrorIs(t, ExtractTo(bytes.NewReader(data), filepath.Join(t.TempDir(), "r"), Limits{}), ErrConflict)

	data = tarZst(t, dir("a/"), file("a", "file over a directory"))
	_, err = Unpack(data)
	require.ErrorIs(t, err, ErrConflict)
	require.ErrorIs(t, ExtractTo(bytes.NewReader(data), filepath.Join(t.TempDir(), "r"), Limits{}), ErrConflict)
}

func TestCorruptedArchiveFails(t *testing.T) {
	data, err := Pack(sampleFiles())
	require.NoError(t, err)
	meta := []byte(Checksum(data))
	require.NoError(t, VerifyMeta(data, meta))
	// Every single flipped byte is caught by the checksum; one past the
	// frame header is caught by zstd itself too.
	for _, i := range []int{0, 5, len(data) / 3, len(data) / 2, len(data) - 1} {
		bad := bytes.Clone(data)
		bad[i] ^= 0x40
		require.ErrorIs(t, VerifyMeta(bad, meta), ErrChecksumMismatch, "byte %d", i)
	}
	for _, i := range []int{len(data) / 3, len(data) / 2, len(data) - 1} {
		bad := bytes.Clone(data)
		bad[i] ^= 0x40
		_, err := Unpack(bad)
		require.Error(t, err, "byte %d", i)
		require.Error(t, ExtractTo(bytes.NewReader(bad), filepath.Join(t.TempDir(), "r"), Limits{}), "byte %d", i)
	}
	_, err = Unpack(data[:len(data)/2])
	require.Error(t, err, "truncated")
	_, err = Unpack([]byte("not zstd at all"))
	require.Error(t, err)
}

func TestChecksumAndVerifyMeta(t *testing.T) {
	sum := Checksum([]byte("abc"))
	require.Equal(t, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", sum)
	require.NoError(t, VerifyMeta([]byte("abc"), []byte(sum+"\n")))
	require.ErrorIs(t, VerifyMeta([]byte("abd"), []byte(sum)), ErrChecksumMismatch)
	require.ErrorIs(t, VerifyMeta([]byte("abc"), []byte("md5:900150983cd24fb0d6963f7d28e17f72")), ErrChecksumMismatch)
	require.ErrorIs(t, VerifyMeta([]byte("abc"), nil), ErrChecksumMismatch)
}

func TestConcurrentUse(t *testing.T) {
	files := sampleFiles()
	want, err := Pack(files)
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 8 {
		wg.Go(func() {
			data, err := Pack(files)
			if err != nil {
				errs <- err
				return
			}
			if !bytes.Equal(data, want) {
				errs <- os.ErrInvalid
				return
			}
			if _, err := Unpack(data); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func TestTreeCompareMatchesWalkOrder(t *testing.T) {
	require.Negative(t, treeCompare("a/x", "a-b"))
	require.Negative(t, treeCompare("a", "a/x"))
	require.Positive(t, treeCompare("b", "a/z"))
	require.Zero(t, treeCompare("a/b", "a/b"))
}

func TestGlobalHeaderIsIgnored(t *testing.T) {
	g := entry{hdr: tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": "x"}}}
	data := tarZst(t, g, file("f", "v"))
	files, err := Unpack(data)
	require.NoError(t, err)
	require.Equal(t, map[string][]byte{"f": []byte("v")}, files)
	out := filepath.Join(t.TempDir(), "r")
	require.NoError(t, ExtractTo(bytes.NewReader(data), out, Limits{}))
	require.Equal(t, map[string]string{"f": "v"}, readTree(t, out))
}
