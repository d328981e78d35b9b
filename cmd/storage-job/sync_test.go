package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSyncFromStagingMakesDataEqual(t *testing.T) {
	data := t.TempDir()
	outside := t.TempDir()
	writeTree(t, data, map[string]string{
		"same.txt":      "same",
		"changed.txt":   "before",
		"extra.txt":     "extra",
		"dir/extra/x":   "x",
		"dir/kept.txt":  "kept?",
		"file-to-dir":   "f",
		"dir-to-file/y": "y",
		"link-to-file":  "->same.txt",
		"escape":        "->" + outside,
	})
	stage := filepath.Join(data, stagingPrefix+"t")
	writeTree(t, stage, map[string]string{
		"same.txt":       "same",
		"changed.txt":    "after, and longer",
		"dir/kept.txt":   "kept",
		"dir/new/deep/z": "+xz",
		"file-to-dir/a":  "a",
		"dir-to-file":    "now a file",
		"link-to-file":   "a file now",
		"escape/inside":  "stays inside",
		"brand-new-dir/": "",
		"new-link":       "->dir/kept.txt",
	})
	want := snapshot(t, stage)

	require.NoError(t, syncFromStaging(data, stagingPrefix+"t"))
	require.Equal(t, want, snapshot(t, data))
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	require.Empty(t, entries)
}

func TestSyncFromStagingOfEmptyStagingEmptiesData(t *testing.T) {
	data := t.TempDir()
	writeTree(t, data, map[string]string{"a/b/c": "c", "d": "d", "l": "->a"})
	require.NoError(t, os.Mkdir(filepath.Join(data, stagingPrefix+"e"), 0o700))
	require.NoError(t, syncFromStaging(data, stagingPrefix+"e"))
	require.Empty(t, snapshot(t, data))
}

func TestSyncFromStagingRefusesOddStagingNames(t *testing.T) {
	data := t.TempDir()
	for _, name := range []string{"", ".", "a/b", "../x"} {
		require.Error(t, syncFromStaging(data, name), "%q", name)
	}
}

func TestRemoveLeftoverStaging(t *testing.T) {
	data := t.TempDir()
	writeTree(t, data, map[string]string{
		stagingPrefix + "1/x":         "x",
		stagingPrefix + "2/":          "",
		stagingPrefix + "file":        "a user's file, not a directory",
		"sub/" + stagingPrefix + "3/": "",
	})
	require.NoError(t, removeLeftoverStaging(data))
	var left []string
	for p := range snapshot(t, data) {
		left = append(left, p)
	}
	require.ElementsMatch(t, []string{stagingPrefix + "file", "sub", "sub/" + stagingPrefix + "3"}, left,
		"only top-level staging directories go")
}
