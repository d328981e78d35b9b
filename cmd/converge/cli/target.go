package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"mvdan.cc/sh/v3/syntax"

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
	if t.exec != "" {
		if err := checkExec(t.exec); err != nil {
			return usagef("--exec: %v", err)
		}
	}
	return nil
}

// checkExec checks an --exec command line before anything runs (and
// before any replay file is written for it): it must parse as the shell
// that will run it parses it (an unbalanced quote is a usage error, not a
// failed run), and its program, when it names one plainly, must exist and
// be executable. A program named through an expansion, or a shell
// builtin, is left to the shell.
func checkExec(cmdline string) error {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(cmdline), "")
	if err != nil {
		return fmt.Errorf("%s is not a valid shell command line: %v", shellQuote(cmdline), err)
	}
	if len(f.Stmts) == 0 {
		return errors.New("want a command line")
	}
	prog := firstProgram(f.Stmts[0].Cmd)
	if prog == "" {
		return nil
	}
	if strings.Contains(prog, "/") {
		fi, err := os.Stat(prog)
		switch {
		case err != nil:
			return fmt.Errorf("program %s: %v", prog, errors.Unwrap(err))
		case fi.IsDir() || fi.Mode().Perm()&0o111 == 0:
			return fmt.Errorf("program %s is not an executable file", prog)
		}
		return nil
	}
	if _, err := exec.LookPath(prog); err != nil {
		return fmt.Errorf("program %q not found in PATH", prog)
	}
	return nil
}

// shellBuiltins are the POSIX shell's builtins and keywords a command line
// may start with: not programs to look for.
var shellBuiltins = map[string]bool{
	".": true, ":": true, "break": true, "cd": true, "command": true, "continue": true, "eval": true,
	"exit": true, "export": true, "readonly": true, "return": true, "set": true, "shift": true,
	"times": true, "trap": true, "ulimit": true, "umask": true, "unset": true, "wait": true,
	"true": true, "false": true, "test": true, "[": true, "echo": true, "printf": true, "read": true,
}

// firstProgram is the program the first simple command of cmd runs, when
// it is a plain word ("" otherwise); "exec" is looked through.
func firstProgram(cmd syntax.Command) string {
	switch c := cmd.(type) {
	case *syntax.BinaryCmd:
		return firstProgram(c.X.Cmd)
	case *syntax.CallExpr:
		args := c.Args
		for len(args) > 0 {
			word := args[0].Lit()
			switch {
			case word == "exec":
				args = args[1:]
				continue
			case word == "" || shellBuiltins[word]:
				return ""
			}
			return word
		}
	}
	return ""
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
