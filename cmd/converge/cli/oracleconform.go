package cli

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	oraclejudge "github.com/wsconverge/converge/judge/oracle"
	oracleconform "github.com/wsconverge/converge/sim/oracle/conform"
)

// oracleConformCommand is `converge oracle conform`: black-box judging of
// an oracle daemon binary.
func (c *config) oracleConformCommand() *cobra.Command {
	var daemon, keyCmd, junit, dir string
	var seed uint64
	var short, asJSON bool
	cmd := &cobra.Command{
		Use:   "conform",
		Short: "judge an oracle daemon binary black-box through a CometBFT RPC façade",
		Long: `Serves, on loopback, a CometBFT JSON-RPC endpoint (HTTP POST and
/websocket: status, abci_query, broadcast_tx_sync, subscribe) backed by the
simulated chain producing a block a second on the wall clock, and fake data
sources (ORACLE-SPEC §6). It writes the daemon's config.toml (chain.endpoint
= the façade, worker.timeout_sec = 5, worker.pool_size = 3) and key into a
sandbox home, launches --daemon, and drives a scenario whose steps each wait
for what the daemon does in answer: five requests with a 5 s period, a
failing data source, more ready jobs than the pool, an update and a
bogus-nonce update, injected CheckTx codes 20, 13 and 11, a same-key
intruder, a WebSocket drop, a lost broadcast answer with the chain stalled,
SIGKILL and restart, a quiet phase of three rounds, and SIGTERM during a GET.
It records every request, answer and event frame, and runs the oracle
checkers O1–O28 in black-box mode (O15, white-box only, is not exercised).

--daemon is split like a shell would (no shell runs); each {home} becomes
the sandbox home, and "--home HOME" is appended when none appears. HOME is
set to the sandbox too. The key is written as HOME/keyring-test/NAME.json
(the reference's format) unless --key-cmd provisions it: {home}, {name},
{key} (hex) and {address} are substituted.

A run takes about 95 s (--short: about 10 s) and never more than 3 minutes:
a step whose wait runs out is reported and the scenario goes on. Exit status:
0 every contract held, 1 a violation, 2 bad usage, 3 the run could not be
carried out.`,
		Example: `  converge oracle conform --daemon "converge oracled"
  converge oracle conform --daemon "./mydaemon start --home {home}" --junit conform.xml
  converge oracle conform --daemon "converge oracled" --short --json`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if daemon == "" {
				return usagef("--daemon is required")
			}
			argv, err := oracleconform.SplitArgs(daemon)
			if err != nil {
				return usagef("--daemon: %v", err)
			}
			prof := oracleconform.Profile{Argv: argv}
			if keyCmd != "" {
				if prof.KeyCmd, err = oracleconform.SplitArgs(keyCmd); err != nil {
					return usagef("--key-cmd: %v", err)
				}
			}
			if dir == "" {
				if dir, err = os.MkdirTemp("", "oracle-conform-"); err != nil {
					return &codeError{code: ExitError, err: err}
				}
				defer os.RemoveAll(dir)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opts := oracleconform.Options{Profile: prof, Dir: dir, Seed: seed,
				Log: slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
			if short {
				opts.Script = oracleconform.ShortScript()
			}
			if c.progress != nil {
				fmt.Fprintf(c.progress, "judging %q in real time (at most %s)…\n", daemon, runLength(opts.Script))
			}
			res, err := oracleconform.Run(ctx, opts)
			if err != nil {
				if ctx.Err() != nil && cmd.Context().Err() == nil {
					return &codeError{code: ExitInterrupted, err: err}
				}
				return &codeError{code: ExitError, err: err}
			}
			write := res.WriteTable
			if asJSON {
				write = func(w io.Writer) error { return writeJSON(w, newConformReport(daemon, res)) }
			}
			if err := write(c.stdout); err != nil {
				return &codeError{code: ExitError, err: err}
			}
			if junit != "" {
				if err := writeFile(junit, res.JUnit("converge oracle conform").Write); err != nil {
					return &codeError{code: ExitError, err: err}
				}
			}
			if res.Failed() {
				return exitWith(ExitFailed)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&daemon, "daemon", "", `the daemon's command line, e.g. "converge oracled" (required)`)
	f.StringVar(&keyCmd, "key-cmd", "", "a command that puts the key into the daemon's keyring ({home} {name} {key} {address})")
	f.StringVar(&junit, "junit", "", "also write a JUnit XML report to this file (a case per checker)")
	f.BoolVar(&asJSON, "json", false, "print one JSON object (verdicts, violations, script steps, the machine's stalls) instead of the table")
	f.StringVar(&dir, "dir", "", "keep the sandbox (the daemon's home, config and logs) in this directory")
	f.Uint64Var(&seed, "seed", 1, "names the keys and seeds the data sources")
	f.BoolVar(&short, "short", false, "the short scenario: code 13, an intruder, a crash and restart, SIGTERM")
	return cmd
}

// conformReport is `converge oracle conform --json`'s object.
type conformReport struct {
	Daemon     string            `json:"daemon"`
	Pass       bool              `json:"pass"`
	DurationMS int64             `json:"duration_ms"`
	Verdicts   map[string]string `json:"verdicts"`
	Violations []oracleViolation `json:"violations,omitempty"`
	// Unmet are the script's waits the daemon did not meet; Problems the
	// harness's findings outside the checkers (a run with one fails).
	Unmet    []string      `json:"unmet,omitempty"`
	Problems []string      `json:"problems,omitempty"`
	Steps    []conformStep `json:"steps"`
	// The machine: the longest the harness's own timer fired late, and
	// the longest one of the daemon's threads waited for a CPU (Linux);
	// past the 50 ms tolerance, a timing verdict may be the machine's.
	HarnessLateMS   int64 `json:"harness_late_ms"`
	DaemonCPUWaitMS int64 `json:"daemon_cpu_wait_ms"`
	Stalled         bool  `json:"stalled"`
	Starved         bool  `json:"starved"`
}

// conformStep is one script step, its times in milliseconds from the
// first launch.
type conformStep struct {
	Name    string `json:"name"`
	StartMS int64  `json:"start_ms"`
	TookMS  int64  `json:"took_ms"`
	Unmet   bool   `json:"unmet,omitempty"`
}

func newConformReport(daemon string, res *oracleconform.Result) conformReport {
	rep := conformReport{Daemon: daemon, Pass: !res.Failed(), DurationMS: res.Duration.Milliseconds(),
		Verdicts: map[string]string{}, Unmet: res.Unmet, Problems: res.Problems, Steps: []conformStep{},
		HarnessLateMS: res.MaxStall.Milliseconds(), DaemonCPUWaitMS: res.MaxWait.Milliseconds(),
		Stalled: res.Stalled(), Starved: res.Starved()}
	for _, n := range oraclejudge.Names() {
		rep.Verdicts[n] = string(res.Report.Verdict(n))
	}
	for _, v := range res.Report.Violations {
		rep.Violations = append(rep.Violations, newOracleViolation(v, res.Genesis))
	}
	for _, st := range res.Steps {
		rep.Steps = append(rep.Steps, conformStep{Name: st.Name, StartMS: st.Start.Milliseconds(), TookMS: st.Took.Milliseconds(), Unmet: st.Unmet})
	}
	return rep
}

// runLength is the script's budget and the few seconds around it.
func runLength(s oracleconform.Script) time.Duration {
	if len(s.Steps) == 0 {
		s = oracleconform.DefaultScript()
	}
	return (s.Budget() + 5*time.Second).Round(time.Second)
}
