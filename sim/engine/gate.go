package engine

// Gate stands between one simulated process and the ports it was given,
// and makes it crash fail-stop: once crashed, every call fails with Err
// and has no effect. A crash at the process's k-th port call (the
// simulator's "crash anywhere") is a gate with FailFrom = k: calls are
// counted, and the k-th and every later one fail. Any implementation that
// returns errors properly can be crashed at every step this way, with no
// hooks inside it.
type Gate struct {
	// Err is the error every call of a crashed process gets.
	Err error
	// Crashed is set once the process is dead.
	Crashed bool
	// Calls counts the calls admitted so far.
	Calls int64
	// FailFrom, when positive, is the call number that crashes the
	// process.
	FailFrom int64
	// OnTrip, when set, is called once, when a planned crash trips.
	OnTrip func()
}

// Pass admits one call, or fails it when the process is (now) dead.
func (g *Gate) Pass() error {
	if g.Crashed {
		return g.Err
	}
	g.Calls++
	if g.FailFrom > 0 && g.Calls >= g.FailFrom {
		g.Crashed = true
		if g.OnTrip != nil {
			g.OnTrip()
		}
		return g.Err
	}
	return nil
}

// CrashAt plans a crash at the k-th call from now (k ≥ 1).
func (g *Gate) CrashAt(k int64) {
	g.FailFrom = g.Calls + max(k, 1)
}
