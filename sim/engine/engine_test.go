package engine

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestQueuePopsByTimeThenLateThenSchedulingOrder(t *testing.T) {
	var q Queue[string]
	q.Push(30, false, "c")
	q.Push(10, true, "a-late")
	q.Push(10, false, "a1")
	q.Push(20, false, "b")
	q.Push(10, false, "a2")
	var got []string
	for q.Len() > 0 {
		got = append(got, q.Pop().P)
	}
	require.Equal(t, []string{"a1", "a2", "a-late", "b", "c"}, got)
	_, ok := q.Peek()
	require.False(t, ok)
}

// Whatever is pushed, in whatever interleaving with pops, each pop returns
// the least (time, late, sequence) pending.
func TestQueueProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var q Queue[int]
		var pending []Item[int]
		steps := rapid.IntRange(1, 200).Draw(t, "steps")
		for range steps {
			if len(pending) > 0 && rapid.Bool().Draw(t, "pop") {
				best := 0
				for j := range pending {
					if pending[j].before(&pending[best]) {
						best = j
					}
				}
				top, ok := q.Peek()
				if !ok || top.Seq != pending[best].Seq {
					t.Fatalf("peek: got %+v, want seq %d", top, pending[best].Seq)
				}
				got := q.Pop()
				if got.Seq != pending[best].Seq || got.At != pending[best].At {
					t.Fatalf("pop: got (%d,%d), want (%d,%d)", got.At, got.Seq, pending[best].At, pending[best].Seq)
				}
				pending = append(pending[:best], pending[best+1:]...)
				continue
			}
			at := rapid.Int64Range(0, 20).Draw(t, "at")
			late := rapid.Bool().Draw(t, "late")
			seq := q.Push(at, late, 0)
			pending = append(pending, Item[int]{At: at, Late: late, Seq: seq})
		}
		if q.Len() != len(pending) {
			t.Fatalf("len %d, want %d", q.Len(), len(pending))
		}
	})
}

type testClock struct{ t time.Time }

func (c *testClock) Now() time.Time  { return c.t }
func (c *testClock) Set(t time.Time) { c.t = t }

func TestLoopRunsInOrderMovesTheClockAndStopsOnPredicate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &testClock{t0}
	var l Loop[string]
	var seen []string
	l.Clock = clock
	l.Dispatch = func(it *Item[string]) {
		seen = append(seen, fmt.Sprintf("%s@%s", it.P, clock.Now().Sub(t0)))
		if it.P == "a" {
			l.Q.Push(clock.Now().Add(time.Second).UnixNano(), false, "a+1s")
		}
	}
	l.Q.Push(t0.Add(2*time.Second).UnixNano(), false, "a")
	l.Q.Push(t0.Add(10*time.Second).UnixNano(), false, "z")
	ok, err := l.RunUntil(context.Background(), t0.Add(5*time.Second), nil)
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, []string{"a@2s", "a+1s@3s"}, seen)
	require.Equal(t, t0.Add(5*time.Second), clock.Now(), "the clock moves to the end")
	require.Equal(t, int64(2), l.Processed)

	ok, err = l.RunUntil(context.Background(), t0.Add(time.Hour), func() bool { return len(seen) == 3 })
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, t0.Add(10*time.Second), clock.Now(), "a satisfied predicate stops at the event")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = l.RunUntil(ctx, t0.Add(2*time.Hour), nil)
	require.ErrorIs(t, err, context.Canceled)
}

func TestGateCrashesAtTheKthCall(t *testing.T) {
	boom := errors.New("crashed")
	tripped := 0
	g := &Gate{Err: boom, OnTrip: func() { tripped++ }}
	require.NoError(t, g.Pass())
	g.CrashAt(2)
	require.NoError(t, g.Pass())
	require.ErrorIs(t, g.Pass(), boom)
	require.True(t, g.Crashed)
	require.ErrorIs(t, g.Pass(), boom, "fail-stop: every later call fails")
	require.Equal(t, 1, tripped)
	require.Equal(t, int64(3), g.Calls)
}

func TestShrinkListFindsTheFailingCore(t *testing.T) {
	items := make([]int, 40)
	for i := range items {
		items[i] = i
	}
	runs := 0
	// Fails while 7 and 31 are both present.
	got, err := ShrinkList(items, func(l []int) (bool, error) {
		runs++
		has7, has31 := false, false
		for _, x := range l {
			has7 = has7 || x == 7
			has31 = has31 || x == 31
		}
		return has7 && has31, nil
	})
	require.NoError(t, err)
	require.Equal(t, []int{7, 31}, got)
	require.Less(t, runs, 200)

	boom := errors.New("boom")
	_, err = ShrinkList(items, func([]int) (bool, error) { return false, boom })
	require.ErrorIs(t, err, boom)
	none, err := ShrinkList([]int(nil), func([]int) (bool, error) { return true, nil })
	require.NoError(t, err)
	require.Empty(t, none)
}

type replayFile struct {
	Header
	Workspaces int `json:"workspaces"`
}

func TestDecodeStrictRejectsUnknownFieldsTrailingDataAndHugeFiles(t *testing.T) {
	var f replayFile
	require.NoError(t, DecodeStrict(strings.NewReader(`{"version":1,"system":"reference","seed":3,"hash":"x","workspaces":5}`), &f))
	require.Equal(t, 5, f.Workspaces)
	require.Equal(t, uint64(3), f.Seed)
	for name, in := range map[string]string{
		"unknown field": `{"version":1,"system":"reference","wrokspaces":5}`,
		"trailing":      `{"version":1,"system":"reference"} {}`,
		"garbage":       `{"version":1,`,
		"wrong type":    `{"workspaces":"five"}`,
		"too big":       `{"x":"` + strings.Repeat("a", MaxReplayBytes) + `"}`,
	} {
		err := DecodeStrict(strings.NewReader(in), &replayFile{})
		require.ErrorIs(t, err, ErrBadInput, name)
	}
}

func TestHeaderCheckSystem(t *testing.T) {
	require.NoError(t, (&Header{System: "reference"}).CheckSystem())
	require.NoError(t, (&Header{System: "mutant:no-cas-claim", Mutant: "no-cas-claim"}).CheckSystem())
	require.ErrorContains(t, (&Header{System: "reference", Mutant: "no-cas-claim"}).CheckSystem(), "contradicts")
	require.ErrorContains(t, (&Header{System: "mutant:x"}).CheckSystem(), "missing")
	require.ErrorContains(t, (&Header{}).CheckSystem(), "missing")
}

func TestWriteNewNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	p1, err := WriteNew(filepath.Join(dir, "sub"), "reference-seed-1", map[string]int{"run": 1})
	require.NoError(t, err)
	p2, err := WriteNew(filepath.Join(dir, "sub"), "reference-seed-1", map[string]int{"run": 2})
	require.NoError(t, err)
	require.NotEqual(t, p1, p2)
	require.True(t, strings.HasSuffix(p2, "reference-seed-1-2.json"))
	b1, _ := os.ReadFile(p1)
	b2, _ := os.ReadFile(p2)
	require.Contains(t, string(b1), `"run": 1`)
	require.Contains(t, string(b2), `"run": 2`)
	again, err := WriteNew(filepath.Join(dir, "sub"), "reference-seed-1", map[string]int{"run": 2})
	require.NoError(t, err)
	require.Equal(t, p2, again, "the same bytes reuse their file: one run, one file")
	entries, err := os.ReadDir(filepath.Join(dir, "sub"))
	require.NoError(t, err)
	require.Len(t, entries, 2)
	require.Equal(t, "mutant-no-cas-claim", SafeName("mutant:no-cas-claim"))
}

func TestDefaultReplayDirIsPerUser(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/var/state-x")
	require.Equal(t, "/var/state-x/converge/replays", DefaultReplayDir())
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "/home/someone")
	require.Equal(t, "/home/someone/.local/state/converge/replays", DefaultReplayDir())
}

func TestShards(t *testing.T) {
	s, err := ParseShard("2/3")
	require.NoError(t, err)
	require.Equal(t, []uint64{11, 14, 17}, s.Seeds(10, 9))
	var all []uint64
	for i := 1; i <= 3; i++ {
		all = append(all, Shard{I: i, N: 3}.Seeds(10, 9)...)
	}
	require.ElementsMatch(t, Shard{}.Seeds(10, 9), all, "the shards cover the range exactly once")
	for _, bad := range []string{"0/3", "4/3", "x/3", "1", "1/0", "-1/2", "1/2/3"} {
		_, err := ParseShard(bad)
		require.ErrorIs(t, err, ErrBadInput, bad)
	}
}

func TestRunSeedsEmitsInSeedOrderWhateverTheJobs(t *testing.T) {
	seeds := Shard{}.Seeds(1, 40)
	for _, jobs := range []int{1, 3, 8} {
		var got []uint64
		RunSeeds(context.Background(), seeds, jobs, time.Now, func(_ context.Context, seed uint64) (uint64, error) {
			return seed * seed, nil
		}, func(o Outcome[uint64]) bool {
			require.Equal(t, o.Seed*o.Seed, o.R)
			got = append(got, o.Seed)
			return true
		})
		require.Equal(t, seeds, got, "jobs %d", jobs)
	}
}

func TestRunSeedsStopsAtTheFirstFailure(t *testing.T) {
	var started atomic.Int64
	var got []uint64
	RunSeeds(context.Background(), Shard{}.Seeds(1, 1000), 2, time.Now, func(ctx context.Context, seed uint64) (bool, error) {
		started.Add(1)
		return seed != 5, nil
	}, func(o Outcome[bool]) bool {
		got = append(got, o.Seed)
		return o.R
	})
	require.Equal(t, []uint64{1, 2, 3, 4, 5}, got)
	require.Less(t, started.Load(), int64(20), "no new seed starts after the failure is seen")
}

// huntWorld is a toy world whose run is the list of checkers it violates.
type huntWorld struct{ violated func(seed uint64) []string }

func (huntWorld) Seed(c uint64) uint64 { return c }

func (w huntWorld) Run(_ context.Context, c uint64, _ bool) ([]string, error) {
	return w.violated(c), nil
}

func (huntWorld) Hash(r []string) string { return fmt.Sprint(r) }

func (huntWorld) Violated(r []string) []string { return r }

func TestHuntKillsShrinksAndFallsBackToTheCorpus(t *testing.T) {
	// A toy world: a "run" is the set of checkers it violates. The
	// mutant fails "b" on seeds ≥ 3 (the reference fails "a" on seed 3).
	violated := func(seed uint64, mutant bool) []string {
		var out []string
		if seed == 3 {
			out = append(out, "a")
		}
		if mutant && seed >= 3 {
			out = append(out, "a", "b")
		}
		return out
	}
	clock := time.Unix(0, 0)
	h := &Hunt[uint64, []string]{
		Seeds:     10,
		Config:    func(seed uint64) uint64 { return seed },
		Mutant:    huntWorld{violated: func(c uint64) []string { return violated(c, true) }},
		Reference: huntWorld{violated: func(c uint64) []string { return violated(c, false) }},
		Shrink: func(_ context.Context, c uint64, r []string, checker string) (uint64, []string, int, error) {
			require.Equal(t, "b", checker)
			return 4, violated(4, true), 7, nil
		},
		Now: func() time.Time { clock = clock.Add(time.Second); return clock },
	}
	k, err := h.Run(context.Background())
	require.NoError(t, err)
	require.True(t, k.Killed)
	require.False(t, k.ByCorpus)
	require.Equal(t, uint64(3), k.Seed)
	require.Equal(t, []string{"b"}, k.Checkers, "a is failed by the reference too")
	require.True(t, k.Shrunk)
	require.Equal(t, uint64(4), k.Config)
	require.Equal(t, 7, k.ShrinkRuns)

	h.Seeds = 2
	h.Corpus = func() ([]uint64, error) { return []uint64{1, 9}, nil }
	k, err = h.Run(context.Background())
	require.NoError(t, err)
	require.True(t, k.Killed)
	require.True(t, k.ByCorpus)
	require.Equal(t, uint64(9), k.Seed)

	h.Corpus = nil
	k, err = h.Run(context.Background())
	require.NoError(t, err)
	require.False(t, k.Killed)
	require.Equal(t, 2, k.Seeds)
}

// A hunt may start at any seed, and a catalogue that names the checkers
// expected to catch a mutant has a run kill it only through one of them;
// the shrink then keeps that checker failing.
func TestHuntFromAFirstSeedByExpectedCheckers(t *testing.T) {
	// The mutant fails "x" on every seed and "e" on seeds ≥ 6; the
	// reference fails "e" on seed 6.
	var refRuns []uint64
	h := &Hunt[uint64, []string]{
		First: 4, Seeds: 5, Expected: []string{"e"},
		Config: func(seed uint64) uint64 { return seed },
		Mutant: huntWorld{violated: func(c uint64) []string {
			if c >= 6 {
				return []string{"x", "e"}
			}
			return []string{"x"}
		}},
		Reference: huntWorld{violated: func(c uint64) []string {
			refRuns = append(refRuns, c)
			if c == 6 {
				return []string{"e"}
			}
			return nil
		}},
		Shrink: func(_ context.Context, c uint64, r []string, checker string) (uint64, []string, int, error) {
			require.Equal(t, "e", checker, "the shrink keeps the expected checker failing")
			return c, r, 1, nil
		},
		Now: time.Now,
	}
	k, err := h.Run(context.Background())
	require.NoError(t, err)
	require.True(t, k.Killed)
	require.Equal(t, uint64(7), k.Seed, "seeds 4 and 5 fail only an unexpected checker; on 6 the reference fails e too")
	require.Equal(t, 4, k.Seeds)
	require.Equal(t, []string{"x", "e"}, k.Checkers)
	require.Equal(t, "e", k.Target)
	require.Equal(t, []uint64{6, 7, 7}, refRuns, "the reference runs only where an expected checker failed, and on the shrunk run")

	h.Seeds = 2
	k, err = h.Run(context.Background())
	require.NoError(t, err)
	require.False(t, k.Killed, "seeds 4 and 5 only")
	require.Equal(t, 2, k.Seeds)
}

func TestJUnitIsWellFormed(t *testing.T) {
	var s JUnitSuite
	s.Name = "seed 1"
	s.Add(JUnitCase{Name: "c4", Classname: "reference"})
	s.Add(JUnitCase{Name: "c8", Classname: "reference", Failure: &JUnitFailure{Message: "volume deleted <early> & \"badly\"", Text: "timeline"}})
	s.Add(JUnitCase{Name: "c9", Classname: "reference", Skipped: &JUnitSkipped{Message: "not exercised"}})
	var b bytes.Buffer
	require.NoError(t, (&JUnitSuites{Name: "converge", Suites: []JUnitSuite{s}}).Write(&b))
	var back JUnitSuites
	require.NoError(t, xml.Unmarshal(b.Bytes(), &back))
	require.Len(t, back.Suites, 1)
	require.Equal(t, 3, back.Suites[0].Tests)
	require.Equal(t, 1, back.Suites[0].Failures)
	require.Equal(t, 1, back.Suites[0].Skipped)
	require.Equal(t, `volume deleted <early> & "badly"`, back.Suites[0].Cases[1].Failure.Message)
}

// A replay file is read within a time bound and a size bound: a reader
// that never delivers is given up on, and one byte over the limit is "too
// large" without reading on.
func TestReadWithinBoundsTimeAndSize(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	_, err := readWithin(pr, 10, 20*time.Millisecond)
	require.ErrorContains(t, err, "not read within 20ms")

	_, err = readWithin(strings.NewReader(strings.Repeat("x", 11)), 10, time.Minute)
	require.ErrorContains(t, err, "too large (more than 10 bytes)")
	b, err := readWithin(strings.NewReader(strings.Repeat("x", 10)), 10, time.Minute)
	require.NoError(t, err)
	require.Len(t, b, 10)

	path := filepath.Join(t.TempDir(), "f.json")
	require.NoError(t, os.WriteFile(path, []byte("{}"), 0o644))
	b, err = ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "{}", string(b))
	_, err = readFile(path, 1, time.Minute)
	require.ErrorIs(t, err, ErrBadInput)
	require.ErrorContains(t, err, "is too large (2 bytes; a replay file has at most 1)")
}
