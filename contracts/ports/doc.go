// Package ports declares the interfaces between a coordinator and the world:
// the workspace store (with compare-and-set claims, attributed writes and
// leader election), container instances, storage (volumes, archive and
// restore), the object store, the bus (pub/sub, counters, expiring keys),
// the store's change feed, the clock and id source. It also declares
// System, the interface through which the simulator and the real-service
// harness drive any implementation under test.
//
// Every port is implemented in memory by package fakes and against real
// services by refimpl's adapters; both pass contracts/contracttest.
package ports
