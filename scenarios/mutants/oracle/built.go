package oracle

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
	oraclejudge "github.com/wsconverge/converge/judge/oracle"
	oraclesim "github.com/wsconverge/converge/sim/oracle"
)

// runTimeout bounds one run of a built mutant: a run takes a second or
// two; a hang is a bug of the mutant's making, reported as an error.
const runTimeout = 2 * time.Minute

// Built is a source mutant compiled: a command that runs the oracle world
// on the patched daemon and hands its history back.
type Built struct {
	Name string
	bin  string
}

// Run runs seed o.Seed of shape o (o.System is ignored: the daemon is the
// one built in) and judges the history with this process's checkers,
// compiled from the unedited tree. It returns the report and the run's
// history hash.
func (x *Built) Run(ctx context.Context, o oraclesim.Options) (*judge.Report, string, error) {
	hdr, events, err := x.history(ctx, o)
	if err != nil {
		return nil, "", err
	}
	rep, err := oraclejudge.Check(oraclesim.Params(o), events)
	if err != nil {
		return nil, "", fmt.Errorf("mutant %s seed %d: %w", x.Name, o.Seed, err)
	}
	return rep, hdr.Hash, nil
}

// history runs the built command and reads back the run's records.
func (x *Built) history(ctx context.Context, o oraclesim.Options) (historyHeader, []history.Event, error) {
	ctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, x.bin, RunArgs(o)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return historyHeader{}, nil, fmt.Errorf("mutant %s seed %d: %w: %s", x.Name, o.Seed, err, tail(stderr.Bytes(), 2000))
	}
	hdr, events, err := readHistory(&stdout)
	if err != nil {
		return hdr, nil, fmt.Errorf("mutant %s seed %d: %w", x.Name, o.Seed, err)
	}
	if hdr.Seed != o.Seed {
		return hdr, nil, fmt.Errorf("mutant %s: asked for seed %d, ran seed %d", x.Name, o.Seed, hdr.Seed)
	}
	return hdr, events, nil
}
