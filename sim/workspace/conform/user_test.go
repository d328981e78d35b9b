package conform

import (
	"archive/tar"
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/archive"
)

// The reference's archive format decodes to the files packed; a flipped
// byte of the archive or of its .meta, a .meta that declares other sizes,
// or a stream that is no tar.zst is an error, never an empty archive.
func TestDecodeArchiveRefusesWhatARestoreRefuses(t *testing.T) {
	files := map[string][]byte{userDir + "notes.md": []byte("hello\n"), "other": []byte("x")}
	data, m, err := archive.PackMeta(files)
	require.NoError(t, err)
	meta := m.Encode()
	got, err := decodeArchive("k", data, meta)
	require.NoError(t, err)
	require.Equal(t, files, got)
	require.Equal(t, map[string][]byte{userDir + "notes.md": []byte("hello\n")}, userFiles(got))

	bad := bytes.Clone(data)
	bad[len(bad)/2] ^= 0xff
	_, err = decodeArchive("k", bad, meta)
	require.ErrorIs(t, err, archive.ErrChecksumMismatch)

	badMeta := bytes.Clone(meta)
	badMeta[10] ^= 0x01
	_, err = decodeArchive("k", data, badMeta)
	require.Error(t, err)

	lying := m
	lying.Bytes++
	_, err = decodeArchive("k", data, lying.Encode())
	require.ErrorIs(t, err, archive.ErrChecksumMismatch)

	junk := []byte("not an archive")
	_, err = decodeArchive("k", junk, []byte(archive.Checksum(junk)))
	require.Error(t, err)
}

// A user's file may be found as last acknowledged, or as any write sent
// since whose answer never came; absent only when nothing was
// acknowledged; anything once the loss was acknowledged.
func TestFileStateAcceptsOnlyWhatTheUserMayFind(t *testing.T) {
	f := &fileState{want: []byte("v1"), has: true, alts: [][]byte{[]byte("v2")}}
	require.True(t, f.accepts([]byte("v1"), true))
	require.True(t, f.accepts([]byte("v2"), true))
	require.False(t, f.accepts([]byte("v0"), true))
	require.False(t, f.accepts(nil, false))

	never := &fileState{alts: [][]byte{[]byte("v1")}}
	require.True(t, never.accepts(nil, false))
	require.True(t, never.accepts([]byte("v1"), true))
	require.False(t, never.accepts([]byte("zz"), true))

	lost := &fileState{any: true}
	require.True(t, lost.accepts(nil, false))
	require.True(t, lost.accepts([]byte("zz"), true))
}

// docker cp's stream of "dir/." names entries "./path": the files keep
// their path in the volume, directories and links are left out.
func TestFilesOfTarReadsDockerCpStreams(t *testing.T) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "./", Mode: 0o755}))
	require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "./conform-user/", Mode: 0o755}))
	require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "./conform-user/a", Mode: 0o644, Size: 2}))
	_, err := tw.Write([]byte("hi"))
	require.NoError(t, err)
	require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "./l", Linkname: "conform-user/a"}))
	require.NoError(t, tw.Close())
	files, err := filesOfTar(&b)
	require.NoError(t, err)
	require.Equal(t, map[string][]byte{"conform-user/a": []byte("hi")}, files)
}

// At the end a user is owed each file as last acknowledged, or as found
// when what is found is what they may find; the checker then compares.
func TestOwedResolvesUnansweredWritesAgainstWhatIsFound(t *testing.T) {
	model := map[string]*fileState{
		"a": {want: []byte("a1"), has: true, alts: [][]byte{[]byte("a2")}},
		"b": {want: []byte("b1"), has: true},
		"c": {alts: [][]byte{[]byte("c1")}},
		"d": {any: true},
	}
	found := map[string][]byte{"a": []byte("a2"), "b": []byte("b0"), "d": []byte("d9")}
	require.Equal(t, map[string][]byte{"a": []byte("a2"), "b": []byte("b1"), "d": []byte("d9")}, owed(model, found))
	require.Equal(t, map[string][]byte{"a": []byte("a1"), "b": []byte("b1")}, owed(model, nil))
}
