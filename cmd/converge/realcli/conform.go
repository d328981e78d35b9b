package realcli

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/wsconverge/converge/cmd/converge/cli"
	wssim "github.com/wsconverge/converge/sim/workspace"
	wsconform "github.com/wsconverge/converge/sim/workspace/conform"
)

const conformLong = `Drills a running workspace control plane, in any language and unmodified,
on real services, with real faults, and judges what the world recorded with
the same checkers as the simulator.

It starts PostgreSQL (a database of its own with SPEC 1's canonical schema
and the audit trigger of SPEC 1.6), Redis and MinIO (a bucket of its own)
from the local images (or uses those named by CONVERGE_POSTGRES_DSN,
CONVERGE_REDIS_URL and CONVERGE_MINIO_ENDPOINT/_ACCESS_KEY/_SECRET_KEY),
puts a TCP proxy of its own on loopback in front of each (one per instance
for PostgreSQL), and launches --instances copies of --system-cmd. Each gets
its settings in its environment, and the same values as placeholders for
its command line and the config's env:
  DATABASE_URL {database_url}  its own login role, through its own proxy
  REDIS_URL {redis_url}  S3_ENDPOINT {s3_endpoint}  S3_ACCESS_KEY {s3_access_key}
  S3_SECRET_KEY {s3_secret_key}  S3_BUCKET {s3_bucket}  DOCKER_HOST {docker_host}
  LISTEN_ADDR {listen} ({port})  CONVERGE_INSTANCE {instance}
  CONVERGE_TOKENS {tokens}  (token=user,…,token=admin:admin)
  CONVERGE_TIME_SCALE {time_scale}  CONVERGE_TIME_ORIGIN {time_origin}
  CONVERGE_MAX_RUNNING_PER_USER {max_running_per_user}
  CONVERGE_MAX_RUNNING_GLOBAL {max_running_global}
  CONVERGE_MANAGED_VALUE {managed}  CONVERGE_WORKSPACE_IMAGE {image}
  CONVERGE_INSTANCE_DIR {dir}  CONVERGE_JOB_NETWORK=host
It waits for each instance's /healthz, then runs a fault phase: a workload
through the implementation's own SPEC 4.3 HTTP API as the config's users
and administrator (drawn from --seed by the simulator's generator, with the
API's bad inputs and concurrent limit races) while real faults strike
(SIGKILL and restart, SIGSTOP/SIGCONT, pg_terminate_backend of the leader's
sessions, a silent partition of one instance from PostgreSQL, docker kill,
docker rm -f, docker volume rm, a MinIO outage and slow responses, corrupt
and removed archives, Redis flushed and restarted). Then a quiet phase:
every fault ends and every workspace must converge.

The history comes from the world: the audit trail with the writers the
implementation declared (SPEC 1.6) or, when it declares none, writers
inferred from the columns written, the session's login role and the lock
holder in pg_locks; the API calls it answered; the faults. Every checker
that this evidence can judge runs unchanged; the others are reported "not
judgeable black-box" with the reason, never as passed.

--from-replay FILE replays a simulator replay file's fault plan on the real
system (its times compressed into the fault phase); faults with no real
counterpart are listed as not reproduced.

Profiles: short (2 instances, 4 workspaces, a 75 s fault phase, a quiet
phase of at most 100 s: about 3 minutes on a 2-core machine) and long
(12 workspaces, 20 min of faults, up to 15 min of quiet). conform.toml
(--config) overrides any field: profile, instances, seed, time_scale,
workspaces, fault_phase, quiet_phase, faults, start_timeout, health_path,
workspace_image, users, admin, max_running_per_user, max_running_global,
env. See docs/conform.md.

A pass is evidence, as in the simulator: every judged checker's situation
(its obligation) must arise at least once, except those on the
allow-list, printed in every report with why. By default it names the
checkers the configuration cannot reach (c12-convergence when its 91-minute
bound, divided by time_scale, does not fit in the quiet phase);
--allow-unexercised replaces it ("" demands every judged checker). The
checkers not judgeable black-box are not on it: they are out of reach of
any black-box run, and listed apart.

Exit status: 0 every judged contract held and every obligation was met, 1
a violation or a problem, 2 bad usage, 3 the run could not be carried out,
5 nothing violated but a judged checker's situation never arose and the
allow-list does not name it.`

func (c *config) conformCommand() *cobra.Command {
	var systemCmd, configPath, prof, dir, junit, html, replay string
	var instances int
	var seed uint64
	var asJSON bool
	var allow []string
	cmd := &cobra.Command{
		Use:   "conform",
		Short: "drill a running workspace control plane black-box on real services with real faults",
		Long:  conformLong,
		Example: `  converge conform --system-cmd "converge serve"
  converge conform --system-cmd "./wrap.sh {instance}" --instances 3 --config conform.toml --junit conform.xml
  converge conform --system-cmd "converge serve" --from-replay failing-seed.json --html run.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if systemCmd == "" {
				return usagef("--system-cmd is required")
			}
			argv, err := wsconform.SplitCommand(systemCmd)
			if err != nil {
				return usagef("--system-cmd: %v", err)
			}
			cfg, err := wsconform.LoadConfig(configPath, prof)
			if err != nil {
				return usagef("--config: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
			}
			if cmd.Flags().Changed("instances") {
				cfg.Instances = instances
			}
			if cmd.Flags().Changed("seed") {
				cfg.Seed = seed
			}
			if err := cfg.Validate(); err != nil {
				return usagef("%s", strings.ReplaceAll(err.Error(), "\n", "; "))
			}
			opts := wsconform.Options{Config: cfg, Command: argv, Progress: c.progress}
			if cmd.Flags().Changed("allow-unexercised") {
				opts.Allow = []string{}
				for _, a := range allow {
					if a = strings.TrimSpace(a); a != "" {
						opts.Allow = append(opts.Allow, a)
					}
				}
				if err := wsconform.CheckAllow(opts.Allow); err != nil {
					return usagef("--allow-unexercised: %v", err)
				}
			}
			if replay != "" {
				rf, err := wssim.ReadReplay(replay)
				if err != nil {
					return usagef("--from-replay: %v", err)
				}
				simD, err := time.ParseDuration(rf.Duration)
				if err != nil || simD <= 0 {
					return usagef("--from-replay: the file's duration %q", rf.Duration)
				}
				opts.Faults, opts.Skipped = wsconform.FromPlan(rf.Plan, simD, time.Duration(cfg.FaultPhase))
				if opts.Faults == nil {
					opts.Faults = []wsconform.Fault{}
				}
				opts.Replay = fmt.Sprintf("%s (seed %d, %d plan actions over %s)", replay, rf.Seed, rf.Plan.Len(), simD)
			}
			// The reports are written after minutes of drills: a path
			// that cannot take them is refused first.
			for _, out := range []struct{ flag, path string }{{"--junit", junit}, {"--html", html}} {
				if out.path != "" {
					if err := cli.CheckWritable(out.flag, out.path); err != nil {
						return err
					}
				}
			}
			if dir == "" {
				if dir, err = os.MkdirTemp("", "converge-conform-"); err != nil {
					return cli.Exit(cli.ExitError, err)
				}
			}
			opts.Dir = dir
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			res, err := wsconform.Run(ctx, opts)
			if err != nil {
				fmt.Fprintf(c.stderr, "the evidence is kept in %s\n", dir)
				if ctx.Err() != nil && cmd.Context().Err() == nil {
					return cli.Exit(cli.ExitInterrupted, err)
				}
				return cli.Exit(cli.ExitError, err)
			}
			write := res.WriteText
			if asJSON {
				write = res.WriteJSON
			}
			if err := write(c.stdout); err != nil {
				return cli.Exit(cli.ExitError, err)
			}
			if junit != "" {
				if err := cli.WriteFile(junit, res.WriteJUnit); err != nil {
					return cli.Exit(cli.ExitError, err)
				}
			}
			if html != "" {
				if err := cli.WriteFile(html, res.WriteHTML); err != nil {
					return cli.Exit(cli.ExitError, err)
				}
			}
			switch {
			case res.Failed():
				return exitWith(cli.ExitFailed)
			case len(res.Unmet()) > 0:
				return exitWith(cli.ExitUnmet)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&systemCmd, "system-cmd", "", `the implementation's command line, split like a shell would, with placeholders (required)`)
	f.IntVar(&instances, "instances", 2, "how many instances to run (overrides the config)")
	f.StringVar(&configPath, "config", "", "a conform.toml (users and tokens, phases, faults, env)")
	f.StringVar(&prof, "profile", "", "short or long (default: the config's, else short)")
	f.Uint64Var(&seed, "seed", 1, "the seed of the workload and the faults (overrides the config)")
	f.StringVar(&dir, "dir", "", "where the evidence is kept: each instance's log, report.txt, report.json, timeline.txt (default: a new temporary directory)")
	f.StringVar(&replay, "from-replay", "", "replay a simulator replay file's fault plan on the real system")
	f.BoolVar(&asJSON, "json", false, "print the result as one JSON object")
	f.StringVar(&junit, "junit", "", "also write a JUnit XML report (a case per checker) to this file")
	f.StringVar(&html, "html", "", "also write the HTML timeline to this file")
	f.StringSliceVar(&allow, "allow-unexercised", nil, "judged checkers whose situation may never arise without failing the run (default: those the configuration cannot reach; \"\" for none)")
	return cmd
}

var _ io.Writer = os.Stdout
