// Command converge is converge's command line: the reference and its
// mutants judged in the deterministic simulator (sim, replay, mutants, the
// oracle's commands) in package cli, and the commands on real services
// (serve, conform) in package realcli, added here:
//
//	func main() { cli.Main(cli.WithCommands(realcli.Serve, realcli.Conform)) }
//
// A third party builds its own converge with its system registered from
// package cli alone, and its module then needs no client of a real
// service:
//
//	func main() { cli.Main(cli.WithSystem("acme", acme.NewSystem)) }
//
// Run "converge --help" for every command.
package main
