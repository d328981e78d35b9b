package oracle

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/wsconverge/converge/contracts/oracle/history"
	oraclesim "github.com/wsconverge/converge/sim/oracle"
)

// The pipe between a built source mutant (internal/oraclerun) and the
// runner: the run's shape goes down as flags, its history comes back as
// JSON lines. JSON (not gob) because it keeps what the checkers may tell
// apart: a nil pointer from a pointer to a zero value, nil from empty.

// historyHeader is the first line of a run's output.
type historyHeader struct {
	Seed uint64 `json:"seed"`
	// Hash is the run's history hash (every record, as oraclesim gives it).
	Hash    string `json:"hash"`
	Records int64  `json:"records"`
	// Events is how many event lines follow; KeptHash is the hex SHA-256
	// of their canonical encodings (history.AppendEvent), so the reader
	// proves it decoded every field as written.
	Events   int    `json:"events"`
	KeptHash string `json:"kept_hash"`
}

// RunArgs are the flags that give internal/oraclerun the run shape o
// (its System and recording switches are the command's own).
func RunArgs(o oraclesim.Options) []string {
	return []string{"-seed", strconv.FormatUint(o.Seed, 10), "-requests", strconv.Itoa(o.Requests),
		"-fault-phase", o.FaultPhase.String(), "-quiet-phase", o.QuietPhase.String(),
		"-faults", strconv.Itoa(o.Faults), "-ops", strconv.Itoa(o.Ops), "-pool-size", strconv.Itoa(o.PoolSize),
		"-partial-quorums=" + strconv.FormatBool(o.PartialQuorums), "-long-reorder=" + strconv.FormatBool(o.LongReorder),
		"-late-duplicates=" + strconv.FormatBool(o.LateDuplicates), "-ragged-completes=" + strconv.FormatBool(o.RaggedCompletes)}
}

// ParseRunArgs reads RunArgs' flags back.
func ParseRunArgs(args []string) (oraclesim.Options, error) {
	fs := flag.NewFlagSet("oraclerun", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o oraclesim.Options
	fs.Uint64Var(&o.Seed, "seed", 1, "seed")
	fs.IntVar(&o.Requests, "requests", 0, "requests at genesis (0: the default)")
	fs.DurationVar(&o.FaultPhase, "fault-phase", 0, "fault phase (0: the default)")
	fs.DurationVar(&o.QuietPhase, "quiet-phase", 0, "quiet phase (0: the default)")
	fs.IntVar(&o.Faults, "faults", 0, "faults (0: the default, negative: none)")
	fs.IntVar(&o.Ops, "ops", 0, "moderator actions (0: the default, negative: none)")
	fs.IntVar(&o.PoolSize, "pool-size", 0, "worker.pool_size (0: the default)")
	fs.BoolVar(&o.PartialQuorums, "partial-quorums", false, "quorums below the provider count")
	fs.BoolVar(&o.LongReorder, "long-reorder", false, "F5 holds a Complete frame past the next round")
	fs.BoolVar(&o.LateDuplicates, "late-duplicates", false, "F4 repeats a moderator frame 5-60 s later")
	fs.BoolVar(&o.RaggedCompletes, "ragged-completes", false, "Complete frames carry one block_time too many")
	if err := fs.Parse(args); err != nil {
		return o, fmt.Errorf("flags: %w", err)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return o, o.Validate()
}

// keptHash is the hex SHA-256 of the events' canonical encodings.
func keptHash(events []history.Event) string {
	h := sha256.New()
	var buf []byte
	for i := range events {
		buf = history.AppendEvent(buf[:0], &events[i])
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// WriteHistory writes a run's kept records (Options.Keep) for the runner to read back.
func WriteHistory(w io.Writer, res *oraclesim.Result) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	hdr := historyHeader{Seed: res.Seed, Hash: res.Hash, Records: res.Records, Events: len(res.Events), KeptHash: keptHash(res.Events)}
	if err := enc.Encode(hdr); err != nil {
		return fmt.Errorf("write history header: %w", err)
	}
	for i := range res.Events {
		if err := enc.Encode(&res.Events[i]); err != nil {
			return fmt.Errorf("write history event %d: %w", i, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	return nil
}

var errHistory = errors.New("mutant run: bad history")

// readHistory reads WriteHistory's output and checks that every event
// came back exactly as written.
func readHistory(r io.Reader) (historyHeader, []history.Event, error) {
	dec := json.NewDecoder(bufio.NewReader(r))
	var hdr historyHeader
	if err := dec.Decode(&hdr); err != nil {
		return hdr, nil, fmt.Errorf("%w: header: %v", errHistory, err)
	}
	if hdr.Events < 0 {
		return hdr, nil, fmt.Errorf("%w: %d events", errHistory, hdr.Events)
	}
	events := make([]history.Event, hdr.Events)
	for i := range events {
		if err := dec.Decode(&events[i]); err != nil {
			return hdr, nil, fmt.Errorf("%w: event %d of %d: %v", errHistory, i+1, hdr.Events, err)
		}
	}
	if got := keptHash(events); got != hdr.KeptHash {
		return hdr, nil, fmt.Errorf("%w: the events decode to hash %.16s, written as %.16s", errHistory, got, hdr.KeptHash)
	}
	return hdr, events, nil
}
