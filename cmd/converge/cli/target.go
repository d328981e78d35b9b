package cli

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wsconverge/converge/contracts/ports"
	wsmutants "github.com/wsconverge/converge/scenarios/mutants/workspace"
	"github.com/wsconverge/converge/sim/workspace/driver"
)

// target is what a command judges: a system registered in the binary, a
// mutant of the reference, or an implementation in any language run as a
// child process over the driver protocol (--exec).
type target struct {
	system  string
	mutant  string
	exec    string
	timeout time.Duration
}

// register adds the flags that choose a target.
func (t *target) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&t.system, "system", ReferenceSystem, "the system to judge, as registered in this binary")
	f.StringVar(&t.mutant, "mutant", "", "judge this mutant of the reference instead (see converge mutants --list)")
	f.StringVar(&t.exec, "exec", "", `judge an implementation in any language: the command line of its child process, speaking the driver protocol (docs/driver-protocol.md), e.g. "python3 coordinator.py"`)
	f.DurationVar(&t.timeout, "exec-timeout", driver.DefaultTimeout, "with --exec: how long to wait, in wall-clock time, for each message of a child before killing it")
}

func (t *target) validate(cmd *cobra.Command) error {
	switch {
	case t.mutant != "" && t.system != ReferenceSystem:
		return usagef("--mutant picks a variant of the reference; it cannot be combined with --system %s", t.system)
	case t.exec != "" && (t.mutant != "" || changed(cmd.Flags(), "system")):
		return usagef("--exec judges a child process; it cannot be combined with --system or --mutant")
	case strings.TrimSpace(t.exec) == "" && changed(cmd.Flags(), "exec"):
		return usagef("--exec: want a command line")
	case t.timeout <= 0:
		return usagef("--exec-timeout %s: want a positive duration", t.timeout)
	}
	return nil
}

// flags renders the target as command-line flags, for printed commands.
func (t *target) flags() []string {
	switch {
	case t.exec != "":
		out := []string{"--exec", t.exec}
		if t.timeout != driver.DefaultTimeout {
			out = append(out, "--exec-timeout", shortDuration(t.timeout))
		}
		return out
	case t.mutant != "":
		return []string{"--mutant", t.mutant}
	}
	return []string{"--system", t.system}
}

// targetOfSystem is the target a replay file's system and mutant name.
func targetOfSystem(system, mutant string) target {
	if cmd, ok := strings.CutPrefix(system, driver.ExecPrefix); ok && mutant == "" {
		return target{exec: cmd, timeout: driver.DefaultTimeout}
	}
	return target{system: system, mutant: mutant}
}

// build makes a fresh system for one run, and the function that ends it
// (a child process's system must be closed after its run).
func (c *config) build(t target) (ports.System, func(), error) {
	switch {
	case t.exec != "":
		sys, err := driver.New(driver.Options{Command: driver.ShellCommand(t.exec), Timeout: t.timeout})
		if err != nil {
			return nil, nil, usagef("--exec: %v", err)
		}
		return sys, func() { _ = sys.Close() }, nil
	case t.mutant != "":
		m, err := wsmutants.Lookup(t.mutant)
		if err != nil {
			return nil, nil, usagef("%v", err)
		}
		return m.System, func() {}, nil
	}
	s, err := c.system(t.system)
	if err != nil {
		return nil, nil, err
	}
	return s, func() {}, nil
}
