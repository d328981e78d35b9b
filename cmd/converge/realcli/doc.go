// Package realcli holds converge's commands on real services, apart from
// package cli so that a binary built with cli alone (a third party's, with
// its system registered) pulls in no Docker, testcontainers, PostgreSQL,
// MinIO or Redis client:
//
//   - serve (Serve) runs the reference control plane, a coordinator
//     instance and the HTTP API, on PostgreSQL, Redis, MinIO and Docker
//     (--dev starts them in containers; --fake runs on the fakes),
//     configured by one table of flags and environment variables;
//   - conform (Conform) drills any running workspace control plane
//     black-box on real services with real faults and judges what the
//     world recorded.
//
// The converge binary adds both to cli's commands:
//
//	func main() { cli.Main(cli.WithCommands(realcli.Serve, realcli.Conform)) }
//
// Built with the conformmutants tag, serve runs as the catalogue mutant
// CONVERGE_MUTANT names (serve_mutant.go), for conform's demonstration.
package realcli
