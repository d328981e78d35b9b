// Package cli is converge's command line as a library. Main runs it on the
// process's arguments; Run on any arguments and writers (tests). Options
// register more systems under test, so a third party builds its own
// converge binary in a few lines and then judges its coordinator with
// every command:
//
//	func main() { cli.Main(cli.WithSystem("acme", acme.NewSystem)) }
//
//	acme-converge sim --system acme --seeds 100
//	acme-converge replay ~/.local/state/converge/replays/acme-seed-7.json
//
// The commands:
//
//   - sim judges a system (or a mutant of the reference) for a range of
//     seeds, each run twice to check determinism, in parallel on --jobs
//     cores or split into CI shards; it prints a legend, one line per seed,
//     the totals and each checker's verdict, writes a replay file for each
//     failing seed and prints complete commands to rerun and replay it
//     (--json and --junit for CI);
//   - replay reruns a replay file exactly and shows the timeline around
//     each violation; the file is validated strictly;
//   - mutants is the kill matrix over the reference's mutants;
//   - oracle, oracled and driver: the oracle world's simulator, mutants,
//     replay and black-box run, its reference daemon, and the tools of the
//     driver protocol.
//
// Package cli carries only commands that need no real service, so a
// module whose binary is built with it pulls in no Docker, testcontainers,
// PostgreSQL, MinIO or Redis client (go mod tidy leaves them out). The
// commands on real services, serve (the reference control plane) and
// conform (any running control plane drilled with real faults), live in
// package realcli; the converge binary adds them with WithCommands, and so
// may a third party that wants them, taking those clients with them:
//
//	func main() {
//		cli.Main(cli.WithSystem("acme", acme.NewSystem), cli.WithCommands(realcli.Conform))
//	}
//
// A binary built with cli.Main alone has neither serve nor conform.
//
// Exit codes are the same for every command: 0 success, 1 a contract
// violated or a run failed, 2 bad usage or input, 3 the run could not be
// carried out, 130 interrupted. Flags are GNU style (pflag): --flag=value,
// flags after positional arguments; a usage error prints one line and a
// pointer to --help.
package cli
