package judge

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRecorderAddRefIsAddInPlace(t *testing.T) {
	a, b := newToyRecorder(), newToyRecorder()
	var scratch ev
	for _, e := range events(1, 0, 2, 3) {
		a.Add(e)
		scratch = e
		seq := b.AddRef(&scratch)
		require.Equal(t, seq, scratch.seq, "the event is numbered in place")
		scratch.add = 99 // a kept event is a copy, not the scratch
	}
	require.Equal(t, a.Hash(), b.Hash())
	require.Equal(t, a.Events(), b.Events())
	require.Equal(t, a.Folded(), b.Folded())
}

func TestHashIsXXH3AndOldHashesAreKnown(t *testing.T) {
	r := newToyRecorder()
	empty := r.Hash()
	require.Len(t, empty, 2*HashSize)
	r.Add(events(1)[0])
	require.NotEqual(t, empty, r.Hash())
	require.False(t, OldHash(r.Hash()))
	require.True(t, OldHash("52d980d15f832b1d75dd7215eb596458728b8d24bf49b6338319e45d65b6d357"), "a SHA-256 history hash")
	require.False(t, OldHash("52d980d15f832b1d75dd7215eb596458728b8d24bf49b6338319e45d65b6d35z"))
}
