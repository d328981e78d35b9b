package cli

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/wsconverge/converge/judge"
	oraclejudge "github.com/wsconverge/converge/judge/oracle"
	"github.com/wsconverge/converge/sim/engine"
	oracleconform "github.com/wsconverge/converge/sim/oracle/conform"
)

// oracleConformCommand is `converge oracle conform`: black-box judging of
// an oracle daemon binary.
func (c *config) oracleConformCommand() *cobra.Command {
	var daemon, args, configPath, keyFormat, keyCmd, junit, dir string
	var seed uint64
	var short, asJSON, admitUnverified bool
	var allow []string
	cmd := &cobra.Command{
		Use:   "conform",
		Short: "judge an oracle daemon binary black-box through a CometBFT RPC façade",
		Long: `Serves, on loopback, a CometBFT JSON-RPC endpoint (HTTP POST and
/websocket: status, abci_query, broadcast_tx_sync, subscribe; no gRPC)
backed by the simulated chain producing a block a second on the wall
clock, and fake data sources (ORACLE-SPEC §6). It writes the daemon's
config.toml (chain.endpoint = the façade, worker.timeout_sec = 5,
worker.pool_size = 3) and key into a sandbox home, launches the daemon, and
drives a scenario whose steps each wait for what the daemon does in answer:
five requests with a 5 s period, a failing data source, more ready jobs
than the pool, an update and a bogus-nonce update, injected CheckTx codes
20, 13 and 11, a same-key intruder, a WebSocket drop, a lost broadcast
answer with the chain stalled, SIGKILL and restart, a quiet phase of three
rounds, and SIGTERM during a GET. It records every request, answer and
event frame, and runs the oracle checkers O1–O28 in black-box mode (O15,
white-box only, is not exercised).

The launch. The daemon's command line is --daemon's words followed by
--args's, split like a shell would (no shell runs), with these
placeholders substituted and nothing else added:
  {home}             the sandbox home (HOME is set to it too)
  {config}           the config file the harness wrote (--config-path)
  {endpoint} {ws}    the façade's RPC URL and its WebSocket URL
  {chain_id}         the chain id
  {key_name}         the key's name in the keyring
  {keyring_dir}      the keyring's root (the home)
  {keyring_backend}  "test"
  {address}          the provider address the key signs as
--args defaults to "--home {home}" when --daemon names no placeholder, and
to nothing when it does; the report's first lines show the command as
launched. --config-path (default "{home}/config.toml") is where the config
is written, inside the home. The key is written as --key-format says:
converge-json (the reference's HOME/keyring-test/NAME.json) or
cosmos-test-keyring (a Cosmos SDK keyring, "test" backend:
HOME/keyring-test/NAME.info and HEXADDRESS.address, the cosmos/evm
eth_secp256k1 key); --key-cmd provisions it instead, with {name} and {key}
(hex) substituted as well.

The report starts with what happened: the daemon's broadcasts admitted and
rejected by code with the chain's log, its txs committed, rounds completed,
its calls, each lifetime's end and where its whole stdout and stderr are
kept (--dir/output/life-N.stdout and .stderr; without --dir the sandbox is
a temporary directory, removed when the run passes and kept, its path
printed, when it does not), and the cause when one stands out. Then the
verdict of each checker and the violations grouped by checker (the first
with its evidence, then how many more; --json lists every one).

--admit-unverified is a diagnostic mode for a daemon that fails admission:
the chain admits its txs that fail only the message and signature checks
(CheckTx codes 4, 7, 18), so that what it does next (its duplicate
submissions, nonces, retries) is judged. Such a run is no conformance
claim: the report says so in its first and last lines, and it exits 4.

How long a run takes: measured on 2026-12-02 on this project's 2-core
machine at a load average of 8–16, the reference daemon's run took 100 s
end to end (the script 98 s; --short: 7.7 s):
  time converge oracle conform --daemon "converge oracled"
The scenario waits for what the daemon does, not for a clock: the first
lifetime lasts past the daemon's second health check (60 s) and its
re-execution a minute after the fetch failure, and the quiet phase waits for
three 5 s rounds. A slower daemon meets each wait later, up to the step's
budget; the script stops at its limit of 140 s (--short: 75 s) and then
only the final SIGTERM step runs (up to 30 s), so no run takes more than
about 3 minutes.

A pass is evidence: every checker's situation must arise at least once,
except those on the allow-list, printed in every report with why. By default
it is the scenario's own list of checkers it cannot reach (O15, white-box
only; O20, O26, O27 for the full scenario; most of them for --short);
--allow-unexercised replaces it ("" demands every checker).

Exit status: 0 every contract held, 1 a violation, 2 bad usage, 3 the run
could not be carried out, 4 a diagnostic run (--admit-unverified) finished,
5 a checker's situation never arose and the allow-list does not name it
(nothing violated).`,
		Example: `  converge oracle conform --daemon "converge oracled"
  converge oracle conform --daemon ./mydaemon --args "start --home {home} --node {endpoint}" --junit conform.xml
  converge oracle conform --daemon "converge oracled" --short --json

  # A Cosmos SDK daemon with a test keyring that reads its config from
  # its own path: under $HOME (= {home}) --config-path is enough,
  converge oracle conform --daemon ./oracled --args "start --home {home}" \
    --config-path "{home}/.oracled/config.toml" --key-format cosmos-test-keyring
  # elsewhere a wrapper copies {config} there and runs the daemon. wrap.sh:
  #   #!/bin/sh
  #   # $1: the config the harness wrote; the rest: the daemon's arguments
  #   cp "$1" /etc/oracled/config.toml && shift
  #   exec /usr/local/bin/oracled "$@"
  converge oracle conform --daemon ./wrap.sh \
    --args "{config} start --home {home} --keyring-backend test" \
    --key-format cosmos-test-keyring --dir ./conform-run`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if daemon == "" {
				return usagef("--daemon is required")
			}
			argv, err := engine.SplitArgs(daemon)
			if err != nil {
				return usagef("--daemon: %v", err)
			}
			extra := oracleconform.DefaultArgs
			switch {
			case cmd.Flags().Changed("args"):
				extra = nil
				if strings.TrimSpace(args) != "" {
					if extra, err = engine.SplitArgs(args); err != nil {
						return usagef("--args: %v", err)
					}
				}
			case oracleconform.HasPlaceholder(argv):
				extra = nil // --daemon is the whole command line, as before
			}
			prof := oracleconform.Profile{Argv: append(argv, extra...), ConfigPath: configPath}
			if prof.KeyFormat, err = oracleconform.ParseKeyFormat(keyFormat); err != nil {
				return usagef("--key-format: %v", err)
			}
			if keyCmd != "" {
				if prof.KeyCmd, err = engine.SplitArgs(keyCmd); err != nil {
					return usagef("--key-cmd: %v", err)
				}
			}
			if err := oracleconform.CheckProfile(prof); err != nil {
				return usagef("%v", err)
			}
			if junit != "" {
				if err := checkWritable("--junit", junit); err != nil {
					return err
				}
			}
			tempDir := dir == ""
			if tempDir {
				if dir, err = os.MkdirTemp("", "oracle-conform-"); err != nil {
					return &codeError{code: ExitError, err: err}
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opts := oracleconform.Options{Profile: prof, Dir: dir, Seed: seed, AdmitUnverified: admitUnverified,
				Log: slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
			if short {
				opts.Script = oracleconform.ShortScript()
			}
			if cmd.Flags().Changed("allow-unexercised") {
				opts.Allow = append([]string{}, allow...)
				rule := judge.Rule{Allow: opts.Allow}
				if err := rule.Check(oraclejudge.Names()); err != nil {
					return usagef("--allow-unexercised: %v", err)
				}
				if err := rule.CheckParts(oraclejudge.ObligationsIn(oraclejudge.ModeBlackBox)); err != nil {
					return usagef("--allow-unexercised: %v", err)
				}
			}
			if c.progress != nil {
				fmt.Fprintf(c.progress, "judging %q in real time (at most %s)…\n", strings.Join(prof.Argv, " "), runLength(opts.Script))
			}
			res, err := oracleconform.Run(ctx, opts)
			if err != nil {
				if tempDir {
					fmt.Fprintf(c.stderr, "the sandbox is kept in %s\n", dir)
				}
				if ctx.Err() != nil && cmd.Context().Err() == nil {
					return &codeError{code: ExitInterrupted, err: err}
				}
				return &codeError{code: ExitError, err: err}
			}
			if tempDir && res.Passed() {
				res.SandboxRemoved = true
				defer os.RemoveAll(dir)
			}
			write := res.WriteTable
			if asJSON {
				write = func(w io.Writer) error { return writeJSON(w, newConformReport(daemon, res)) }
			}
			if err := write(c.stdout); err != nil {
				return &codeError{code: ExitError, err: err}
			}
			if junit != "" {
				if err := WriteFile(junit, res.JUnit("converge oracle conform").Write); err != nil {
					return &codeError{code: ExitError, err: err}
				}
			}
			switch {
			case res.Diagnostic:
				return exitWith(ExitDiagnostic)
			case res.Failed():
				return exitWith(ExitFailed)
			case len(res.Unexercised()) > 0:
				return exitWith(ExitUnmet)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&daemon, "daemon", "", `the daemon's command, e.g. "converge oracled" or ./oracled (required)`)
	f.StringVar(&args, "args", "", `the arguments after --daemon's words, with placeholders (default "--home {home}" when --daemon names no placeholder, else none)`)
	f.StringVar(&configPath, "config-path", oracleconform.DefaultConfigPath, "where the harness writes the daemon's config.toml, inside {home}")
	f.StringVar(&keyFormat, "key-format", string(oracleconform.KeyFormatConverge), "how the key is written: converge-json or cosmos-test-keyring")
	f.StringVar(&keyCmd, "key-cmd", "", "a command that puts the key into the daemon's keyring instead ({home} {name} {key} {address} …)")
	f.BoolVar(&admitUnverified, "admit-unverified", false, "diagnostic: admit txs that fail only the message and signature checks (no conformance claim; exit 4)")
	f.StringVar(&junit, "junit", "", "also write a JUnit XML report to this file (a case per checker)")
	f.BoolVar(&asJSON, "json", false, "print one JSON object (summary, verdicts, every violation, script steps, the machine's stalls) instead of the table")
	f.StringVar(&dir, "dir", "", "keep the sandbox (the daemon's home, config, key and whole output) in this directory")
	f.Uint64Var(&seed, "seed", 1, "names the keys and seeds the data sources")
	f.BoolVar(&short, "short", false, "the short scenario: code 13, an intruder, a crash and restart, SIGTERM")
	f.StringSliceVar(&allow, "allow-unexercised", nil, "checkers that may stay unexercised (default: those the scenario cannot reach; \"\" for none)")
	return cmd
}

// conformReport is `converge oracle conform --json`'s object.
type conformReport struct {
	Daemon string `json:"daemon"`
	// Pass is false for a failed run and for every diagnostic run.
	Pass bool `json:"pass"`
	// Diagnostic: --admit-unverified; the run is no conformance claim.
	Diagnostic bool                     `json:"diagnostic"`
	Summary    oracleconform.Summary    `json:"summary"`
	Command    []string                 `json:"command"`
	ConfigPath string                   `json:"config_path"`
	KeyFiles   []string                 `json:"key_files,omitempty"`
	Lifetimes  []oracleconform.Lifetime `json:"lifetimes"`
	// OutputKept: the lifetimes' output files are still there (false when
	// the temporary sandbox of a passing run was removed).
	OutputKept bool              `json:"output_kept"`
	DurationMS int64             `json:"duration_ms"`
	Verdicts   map[string]string `json:"verdicts"`
	// Coverage is each checker's obligation, how often it arose and
	// whether the allow-list names it; Unexercised the checkers whose
	// situation never arose that it does not name (a run with one is not
	// a pass); AllowedWhy why the scenario cannot reach each it declares.
	Coverage    *judge.Claim      `json:"coverage"`
	Unexercised []string          `json:"unexercised"`
	AllowedWhy  map[string]string `json:"allowed_why,omitempty"`
	Violations  []oracleViolation `json:"violations,omitempty"`
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
	rep := conformReport{Daemon: daemon, Pass: res.Passed(), Diagnostic: res.Diagnostic, Summary: res.Summary,
		Command: res.Command, ConfigPath: res.ConfigPath, KeyFiles: res.KeyFiles, Lifetimes: res.Lifetimes,
		OutputKept: !res.SandboxRemoved, DurationMS: res.Duration.Milliseconds(),
		Verdicts: map[string]string{}, Coverage: res.Claim, Unexercised: append([]string{}, res.Unexercised()...), AllowedWhy: res.Why,
		Unmet: res.Unmet, Problems: res.Problems, Steps: []conformStep{},
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
