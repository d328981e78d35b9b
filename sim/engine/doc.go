// Package engine is the simulation engine converge's two worlds share —
// the workspace control plane (sim/workspace) and the oracle daemon
// (sim/oracle). It knows nothing of either; a world implements World
// (run a configuration, its history hash, the checkers it violated):
//
//   - Twice: the double run, a seed run twice and its history hashes
//     compared;
//   - Shrink and Shrinking: a failing run shrunk by the world's steps
//     within a budget of runs;
//   - Queue and Loop: a single-threaded event queue on a virtual clock,
//     ordered by (time, late, sequence), so Go's scheduler never decides
//     an ordering;
//   - Gate: fail-stop crashes at an instance's k-th port call;
//   - ShrinkList: delta debugging over a counterexample's actions;
//   - replay files: a common header, strict decoding and bounded sizes,
//     and writing without overwriting another run's file;
//   - RunSeeds and Shard: seeds across cores and CI shards with results
//     in seed order;
//   - Hunt: the kill matrix's search, over the world run with the mutant
//     and with the reference, for a seed on which the mutant fails a
//     checker the reference passes, then shrinking and a stored corpus;
//   - JUnit: test reports for CI;
//   - chart: the HTML timeline page of a judged run, filled by each
//     world from its history.
//
// The checkers' engine and the history recorder live in judge,
// beside the contracts they serve.
package engine
