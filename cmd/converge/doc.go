// Command converge is converge's command line: the reference and its
// mutants judged in the deterministic simulator (sim, replay, mutants) and
// the reference control plane on real services (serve). All of it lives in
// package cli, so that a third party can build its own converge with its
// system registered:
//
//	func main() { cli.Main(cli.WithSystem("acme", acme.NewSystem)) }
//
// Run "converge --help" for every command.
package main
