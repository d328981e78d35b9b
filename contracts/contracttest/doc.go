// Package contracttest is the behaviour suite of the ports: one suite per
// port, run against every implementation of it. The in-memory fakes run it
// in this package's own tests; the real adapters (PostgreSQL, Redis, MinIO,
// Docker) run it against real services in theirs. A fake that passes the
// same suite as the real adapter behaves, as far as the coordinator can
// tell, like the service it stands for — which is what makes the
// simulator's verdicts mean something.
//
// Each suite takes a constructor that returns a fresh, empty target for a
// subtest:
//
//	contracttest.Objects(t, func(t *testing.T) ports.Objects { … })
//	contracttest.Bus(t, func(t *testing.T) contracttest.BusTarget { … })
//	contracttest.Store(t, func(t *testing.T) contracttest.StoreTarget { … })
//	contracttest.Instances(t, func(t *testing.T) contracttest.InstancesTarget { … })
//	contracttest.Storage(t, func(t *testing.T) contracttest.StorageTarget { … })
//
// A target may carry real time (a real Redis, a real PostgreSQL session):
// everything that waits for something to arrive waits on the port's Ready
// signal with a bounded deadline, and never sleeps for a fixed time except
// where a real TTL must run out.
//
// The data-plane suites name their workspaces with random UUIDs (a Docker
// engine may be shared by several test runs) and remove what they created
// when the test ends; the other suites expect the constructor to hand out
// a fresh target (an empty database, bucket or Redis).
package contracttest
