package contracts

// Observation is what the providers reported of one workspace's resources.
type Observation struct {
	ContainerExists  bool
	ContainerRunning bool
	VolumeExists     bool
}
