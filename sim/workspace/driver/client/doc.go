// Package client is the Go client of the driver protocol
// (docs/driver-protocol.md): it runs any Go ports.System as a child
// process of the simulator. The child's main is one line,
//
//	func main() { client.Main(mysystem.New()) }
//
// and `converge sim --exec ./mychild` judges it: Serve answers the
// harness's hello with the system's coordinator or API, turns each step
// and API call into a call of it, and hands it ports whose every method
// is a port call over the protocol — so the system runs exactly as it
// does in process, on the simulator's clock, ids and world.
//
// cmd/refchild serves the reference this way; the driver's tests
// show it records the same history as in process.
package client
