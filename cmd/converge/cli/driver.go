package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wsconverge/converge/sim/workspace/driver"
)

// driverCommand groups the tools of the driver protocol.
func (c *config) driverCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "driver",
		Short: "tools for implementations run as child processes over the driver protocol",
		Long: `Tools for an implementation in any language run as child processes that
speak the driver protocol (docs/driver-protocol.md): converge sim --exec
judges one; converge driver selftest checks one in seconds first.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(c.selftestCommand())
	return cmd
}

const selftestLong = `Checks, in a few seconds, a child command meant for the driver protocol
(docs/driver-protocol.md) and names the first problem:

  1. it starts and answers hello, as a coordinator and as an API (the
     protocol version it speaks, its name, whether it marks its standard
     error);
  2. a short run (1 workspace, 10 minutes, a 5-minute quiet phase, no
     faults) in which every message it sends is valid: a known type and
     method, arguments that decode, enum values that exist;
  3. in that run it takes the leader lock, listens to the change feed,
     creates the workspace through the API, observes it, claims an
     operation, publishes its changes and brings it to its desired state,
     and no checker finds a violation;
  4. the same run again records the same history (determinism);
  5. when rows went as their changes (protocol version 3), the same run
     with whole rows (version 2) records the same history too.

Run it before converge sim --exec: a child that passes is ready to be
judged under faults. Exit status 0 when every check passes, 1 at the first
problem (printed with what the child did), 2 for bad usage.`

func (c *config) selftestCommand() *cobra.Command {
	var exec string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:     "selftest",
		Short:   "check a child command's handshake, messages, port use and determinism in seconds",
		Long:    selftestLong,
		Example: `  converge driver selftest --exec "python3 examples/python-coordinator/coordinator.py"`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case strings.TrimSpace(exec) == "":
				return usagef("--exec: want the child's command line")
			case timeout <= 0:
				return usagef("--exec-timeout %s: want a positive duration", timeout)
			}
			// A command line the shell cannot parse, or whose program
			// does not exist, is bad usage, not a child's failure.
			if err := checkExec(exec); err != nil {
				return usagef("--exec: %v", err)
			}
			start := c.now()
			fmt.Fprintf(c.stdout, "converge driver selftest: %s\n", exec)
			ok := driver.SelfTest(cmd.Context(), driver.Options{Command: driver.ShellCommand(exec), Timeout: timeout}, func(s driver.SelfCheck) {
				verdict := "ok  "
				if s.Err != nil {
					verdict = "FAIL"
				}
				line := fmt.Sprintf("  %s %s", verdict, s.What)
				if s.Found != "" {
					line += ": " + s.Found
				}
				fmt.Fprintln(c.stdout, line)
				if s.Err != nil {
					fmt.Fprintf(c.stdout, "       %s\n", indent(s.Err.Error(), "       "))
				}
			})
			took := c.now().Sub(start).Round(time.Millisecond)
			if !ok {
				fmt.Fprintf(c.stdout, "FAIL (%s): fix the first problem and run it again\n", took)
				return exitWith(ExitFailed)
			}
			fmt.Fprintf(c.stdout, "PASS (%s): judge it under faults with %s\n", took, c.commandLine("sim", "--exec", exec, "--seeds", "20", "--workspaces", "10", "--duration", "6h"))
			return nil
		},
	}
	cmd.Flags().StringVar(&exec, "exec", "", `the child's command line, e.g. "python3 coordinator.py"`)
	cmd.Flags().DurationVar(&timeout, "exec-timeout", driver.SelfTestTimeout, "how long to wait, in wall-clock time, for each message of the child before killing it")
	return cmd
}
