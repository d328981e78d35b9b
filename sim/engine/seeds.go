package engine

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Shard is one part of a seed range split for CI matrices: shard I of N
// (1 ≤ I ≤ N) takes every N-th seed of the range, starting with its I-th.
// The zero Shard is the whole range.
type Shard struct{ I, N int }

// ParseShard reads "i/n".
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n || n > 1_000_000 {
		return Shard{}, fmt.Errorf("%w: shard %q: want i/n with 1 ≤ i ≤ n", ErrBadInput, s)
	}
	return Shard{I: i, N: n}, nil
}

func (s Shard) String() string {
	if s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

// Seeds lists the seeds of first … first+count-1 that belong to the shard.
func (s Shard) Seeds(first uint64, count int) []uint64 {
	out := make([]uint64, 0, count)
	for k := range count {
		if s.N == 0 || k%s.N == s.I-1 {
			out = append(out, first+uint64(k))
		}
	}
	return out
}

// Outcome is one seed's run.
type Outcome[R any] struct {
	Seed uint64
	R    R
	Err  error
	// Wall is the run's wall time.
	Wall time.Duration
}

// DefaultJobs is the default number of seeds run at once: the cores Go
// may use.
func DefaultJobs() int { return runtime.GOMAXPROCS(0) }

// RunSeeds runs run for every seed on up to jobs goroutines (each run is a
// self-contained single-threaded simulation, so its result does not depend
// on jobs) and hands the outcomes to emit in seed order, as soon as each
// and all before it are done. Runs start at most 2 × jobs seeds ahead of
// the last one emitted. When emit returns false, or ctx ends, no new seed
// starts and RunSeeds returns once the runs in progress end (their
// outcomes are not emitted). now is the wall clock for Outcome.Wall.
func RunSeeds[R any](ctx context.Context, seeds []uint64, jobs int, now func() time.Time,
	run func(ctx context.Context, seed uint64) (R, error), emit func(Outcome[R]) bool) {
	if jobs < 1 {
		jobs = 1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type slot struct {
		done chan struct{}
		out  Outcome[R]
	}
	slots := make([]slot, len(seeds))
	for i := range slots {
		slots[i].done = make(chan struct{})
	}
	next := make(chan int)
	// window holds a token per seed that may run ahead of emission.
	window := make(chan struct{}, 2*jobs)
	var wg sync.WaitGroup
	for range min(jobs, len(seeds)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				start := now()
				r, err := run(ctx, seeds[i])
				slots[i].out = Outcome[R]{Seed: seeds[i], R: r, Err: err, Wall: now().Sub(start)}
				close(slots[i].done)
			}
		}()
	}
	go func() {
		defer close(next)
		for i := range seeds {
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	for i := range slots {
		select {
		case <-slots[i].done:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		if !emit(slots[i].out) {
			cancel()
			break
		}
		<-window
	}
	cancel()
	wg.Wait()
}
