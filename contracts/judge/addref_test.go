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
