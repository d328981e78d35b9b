package oraclesim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pinnedShapes are option shapes whose histories are pinned: the default
// run, the lean and the discarding recorders, and a bigger run with a
// quiet stretch like the figure's benchmark.
var pinnedShapes = []struct {
	name string
	o    Options
}{
	{"default", Options{}},
	{"lean", Options{Lean: true}},
	{"discard", Options{Discard: true}},
	{"figure", Options{Requests: 20, FaultPhase: 2 * time.Minute, QuietPhase: 10 * time.Minute, Faults: -1, Ops: -1,
		PoolSize: 16, Discard: true}},
}

// pinnedHashes are the history hashes of seeds 1–5 in every pinned shape,
// with a digest of the checkers' report, recorded from main before the simulator was made faster (commit
// e275e24). A speed-up must not change a single record: a changed hash
// here means a changed history, not a faster one.
var pinnedHashes = map[string][5]string{
	"default": {
		"52d980d15f832b1d75dd7215eb596458728b8d24bf49b6338319e45d65b6d357 2077 d0460924e5b59ee5",
		"7503634cfd9ac5d8360735f6f6108a9accf580e34d114f395c374c8423466789 1948 dcca19b4fa1a443d",
		"cadfed7f199215b65a65caf6ecc927270ec1b5842ec547e850aeb2d85d590e2d 2195 731b698fdbf41417",
		"3e7db8b3f3846f5735de8ecaba74e67251c3b9aecad44e74f87be99a0db75039 1182 23325389cf08f0e3",
		"2cffc4fe378749db666a84446a597337690f8935211dfcc9fc4daa0de0a352af 2494 5e586a21cf278879",
	},
	"lean": {
		"9b50cb519a64d531d97a70c3fc8eb3e7f6afebf38e01c2200c7288820dc005f7 1466 d0460924e5b59ee5",
		"75d103d102aaf9e515563dd386c18f6624d65c4b11bc793046decfa0d95129a5 1555 dcca19b4fa1a443d",
		"c499aaa929cd1fdc311f040cb48017dc47337e4e3ef2322fcc3a9d55f2b7abe8 1619 731b698fdbf41417",
		"00f95399b2451fccfefbfe70e03b3d05ae1dea217da358f5734a6b93f85eddaf 998 23325389cf08f0e3",
		"67208877ae0b7b9ea3074184fb8327dee9d3f9b79ff9353a9d6462e8c665abf1 1772 5e586a21cf278879",
	},
	"discard": {
		"9b50cb519a64d531d97a70c3fc8eb3e7f6afebf38e01c2200c7288820dc005f7 1466 d0460924e5b59ee5",
		"75d103d102aaf9e515563dd386c18f6624d65c4b11bc793046decfa0d95129a5 1555 dcca19b4fa1a443d",
		"c499aaa929cd1fdc311f040cb48017dc47337e4e3ef2322fcc3a9d55f2b7abe8 1619 731b698fdbf41417",
		"00f95399b2451fccfefbfe70e03b3d05ae1dea217da358f5734a6b93f85eddaf 998 23325389cf08f0e3",
		"67208877ae0b7b9ea3074184fb8327dee9d3f9b79ff9353a9d6462e8c665abf1 1772 5e586a21cf278879",
	},
	"figure": {
		"9370269ca0c285f4e775449130d3c89add6abfeb7c0e769ec0992bfbec519b5b 6434 71fa9d1f98f9f363",
		"95b4cf38cba87c13082c9a31b4fcb3617122a7cdaa57d497124c767371f4ae7e 7851 f54524ff3582d852",
		"85c89d27d32e211ca5e3168675884805f76e4ef2bc30264ab8805b090ecb090b 8390 01f015312d1de165",
		"a0ecb83fa831860a9b5a37235869841d768b0ad4e9baff3542924e9c032c55d4 5847 c0d5a42ff39502fd",
		"e51018d514114e46b8e3ddc97649075240f52a46cb1a0485c1a6bb050b777aa4 8046 d320d1f18cde1329",
	},
}

// judgeDigest is a short digest of what the checkers made of a run: the
// violations, how often each checker's situation arose, the figures and
// the coverage. It pins that the checkers saw the same records.
func judgeDigest(t *testing.T, res *Result) string {
	t.Helper()
	var vs []string
	for _, v := range res.Report.Violations {
		vs = append(vs, v.String())
	}
	b, err := json.Marshal(struct {
		V []string
		E map[string]int
		F map[string]float64
		C map[string]map[string]int
	}{vs, res.Report.Exercised, res.Report.Figures, res.Coverage})
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// TestPinnedHistories: the simulator's histories of fixed seeds, and the
// checkers' verdicts on them, are exactly the recorded ones.
func TestPinnedHistories(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 20 seeds")
	}
	for _, s := range pinnedShapes {
		for i := range 5 {
			o := s.o
			o.Seed = uint64(i + 1)
			res, err := Run(context.Background(), o)
			require.NoError(t, err)
			require.False(t, res.Report.Failed(), "%s seed %d: the reference fails", s.name, o.Seed)
			got := fmt.Sprintf("%s %d %s", res.Hash, res.Records, judgeDigest(t, res))
			t.Logf("%s/%d %s", s.name, o.Seed, got)
			assert.Equal(t, pinnedHashes[s.name][i], got, "%s seed %d", s.name, o.Seed)
		}
	}
}
