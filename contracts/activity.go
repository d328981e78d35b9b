package contracts

// Activity is the bus state the TTL rules read for one workspace.
type Activity struct {
	Connections  int64
	IdleTimerSet bool
}
