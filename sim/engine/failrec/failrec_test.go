package failrec

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRecorderRecordsInsteadOfFailing(t *testing.T) {
	r := &Recorder{TestName: "T/sub"}
	require.False(t, r.Failed())
	r.Logf("step %d", 1)
	require.False(t, r.Failed())
	r.Fatalf("boom %s", "here")
	require.True(t, r.Failed())
	require.Equal(t, "step 1\nboom here\n", r.String())
	require.Equal(t, "T/sub", r.Name())
}

var probe = flag.String("failrec.probe", "a", "a flag for the test")

func TestSetFlagsRestores(t *testing.T) {
	t.Run("set", func(t *testing.T) {
		SetFlags(t, map[string]string{"failrec.probe": "b"})
		require.Equal(t, "b", *probe)
	})
	require.Equal(t, "a", *probe)
}
